"""Llama-architecture model for kvscope-reasoner, laid out exactly as llama.cpp's "llama" GGUF
expects, so export is a rename (no permutation):
  RMSNorm (weight * x / sqrt(mean(x^2) + eps)), RoPE in llama.cpp's NORM mode (rotates adjacent
  pairs (x[2i], x[2i+1]) by pos * base^(-2i/d)), grouped-query attention (query head h reads kv
  head h // (n_head / n_head_kv)), SwiGLU feed-forward down(silu(gate(x)) * up(x)).
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 1024
    dim: int = 256
    layers: int = 6
    heads: int = 8
    kv_heads: int = 4
    ffn: int = 688
    ctx: int = 512
    eps: float = 1e-5
    rope_base: float = 10000.0

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, positions):
    """positions: LongTensor [B, T] -> cos, sin [B, 1, T, head_dim/2]."""
    hd = cfg.dim // cfg.heads
    inv = cfg.rope_base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = positions.to(torch.float64)[..., None] * inv  # [B, T, hd/2]
    return torch.cos(ang).float()[:, None], torch.sin(ang).float()[:, None]


def apply_rope(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.dim // cfg.heads
        self.attn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.wq = nn.Linear(cfg.dim, cfg.heads * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.heads * hd, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, cfg.dim, bias=False)

    def forward(self, x, cos, sin, mask, cache=None):
        cfg = self.cfg
        B, T, _ = x.shape
        hd = cfg.dim // cfg.heads
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, cfg.heads, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, cfg.kv_heads, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, cfg.kv_heads, hd).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if cache is not None:
            if cache[0] is not None:
                k = torch.cat([cache[0], k], dim=2)
                v = torch.cat([cache[1], v], dim=2)
            cache[0], cache[1] = k, v
        rep = cfg.heads // cfg.kv_heads
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        if mask is None:  # training: plain causal
            mask = torch.ones(T, k.shape[2], dtype=torch.bool, device=x.device).tril(k.shape[2] - T)[None, None]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).reshape(B, T, cfg.heads * hd)
        x = x + self.wo(y)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.norm = RMSNorm(cfg.dim, cfg.eps)
        self.out = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        for n, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if n.endswith("wo.weight") or n.endswith("w_down.weight"):
                    std = 0.02 / math.sqrt(2 * self.cfg.layers)
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx, positions=None, mask=None, caches=None):
        """idx [B, T]. positions [B, T] (default 0..T-1). mask [B, 1, T, S] bool (default causal).
        caches: list of [k, v] per layer for incremental decoding (S = past + T)."""
        B, T = idx.shape
        if positions is None:
            positions = torch.arange(T).expand(B, T)
        cos, sin = rope_tables(self.cfg, positions)
        x = self.tok_emb(idx)
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, mask, None if caches is None else caches[i])
        return self.out(self.norm(x))


@torch.no_grad()
def greedy_generate(model, prompts, eos, max_new=200):
    """Batched greedy decoding with a KV cache. prompts: list of token-id lists (BOS included).
    Returns the generated ids per prompt (without the prompt, EOS excluded)."""
    model.eval()
    B = len(prompts)
    L = max(len(p) for p in prompts)
    pad = [L - len(p) for p in prompts]
    idx = torch.tensor([[0] * pad[b] + prompts[b] for b in range(B)], dtype=torch.long)
    padt = torch.tensor(pad)
    pos = (torch.arange(L)[None, :] - padt[:, None]).clamp(min=0)
    keyok = torch.arange(L)[None, :] >= padt[:, None]  # [B, L]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    # Padding queries see themselves only, so no row is fully masked (NaN would leak through V).
    mask = ((causal[None] & keyok[:, None, :]) | torch.eye(L, dtype=torch.bool)[None])[:, None]
    caches = [[None, None] for _ in model.blocks]
    logits = model(idx, pos, mask, caches)
    nxt = logits[:, -1].argmax(-1)
    outs = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool)
    cur_pos = pos[:, -1]
    for _ in range(max_new):
        for b in range(B):
            if not done[b]:
                if int(nxt[b]) == eos:
                    done[b] = True
                else:
                    outs[b].append(int(nxt[b]))
        if bool(done.all()):
            break
        cur_pos = cur_pos + 1
        keyok = torch.cat([keyok, torch.ones(B, 1, dtype=torch.bool)], dim=1)
        logits = model(nxt[:, None], cur_pos[:, None], keyok[:, None, None, :], caches)
        nxt = logits[:, -1].argmax(-1)
    return outs
