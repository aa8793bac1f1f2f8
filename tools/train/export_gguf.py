#!/usr/bin/python3
"""Write kvscope-reasoner as a GGUF v3 file (llama architecture, SPM "llama" tokenizer).

  /usr/bin/python3 tools/train/export_gguf.py --ckpt out/run/ckpt.pt --vocab out/run/vocab.json -o x.gguf
  /usr/bin/python3 tools/train/export_gguf.py --random --vocab out/run/vocab.json -o tok.gguf   # tiny random model

Layout: 'GGUF', u32 version 3, u64 tensor_count, u64 kv_count, typed key/values, tensor infos
(name, u32 n_dims, u64 ne[] with ne[0] the row length (PyTorch shape reversed), u32 type,
u64 offset), padding to 32, tensor data (each aligned to 32). Weights are F32 (or F16 with --f16
for the 2-D matrices).
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ALIGN = 32
T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16 = 0, 1


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _val(t, v):
    if t == T_U32:
        return struct.pack("<I", v)
    if t == T_I32:
        return struct.pack("<i", v)
    if t == T_F32:
        return struct.pack("<f", v)
    if t == T_BOOL:
        return struct.pack("<B", 1 if v else 0)
    if t == T_STR:
        return _str(v)
    raise ValueError(t)


def write_gguf(path, kvs, tensors):
    """kvs: list of (key, type, value) where value of T_ARR is (elem_type, list).
    tensors: list of (name, np.ndarray float32/float16 C-contiguous)."""
    out = bytearray(b"GGUF")
    out += struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += _str(k) + struct.pack("<I", t)
        if t == T_ARR:
            et, items = v
            out += struct.pack("<IQ", et, len(items))
            if et == T_F32:
                out += np.asarray(items, dtype="<f4").tobytes()
            elif et == T_I32:
                out += np.asarray(items, dtype="<i4").tobytes()
            else:
                for it in items:
                    out += _val(et, it)
        else:
            out += _val(t, v)
    offset = 0
    blobs = []
    for name, a in tensors:
        a = np.ascontiguousarray(a)
        gt = GGML_F16 if a.dtype == np.float16 else GGML_F32
        ne = list(reversed(a.shape))
        out += _str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        out += struct.pack("<IQ", gt, offset)
        data = a.astype("<f2" if gt == GGML_F16 else "<f4").tobytes()
        blobs.append(data)
        offset += len(data)
        offset += (-offset) % ALIGN
    out += b"\0" * ((-len(out)) % ALIGN)
    with open(path, "wb") as f:
        f.write(out)
        for data in blobs:
            f.write(data)
            f.write(b"\0" * ((-len(data)) % ALIGN))


# The chat template of the chat-convention reasoner (tokenizer.chat_template). ChatML turns; the
# effort level goes into a system message as gpt-oss does (none/minimal mean low), after the
# conversation so that every level shares its KV; the generation prompt opens the think block. kvscope recognises it (ChatML family, "Reasoning:" with <think>);
# a Jinja engine (llama.cpp --jinja) renders the same text.
CHAT_TEMPLATE = (
    "{%- set effort = reasoning_effort if reasoning_effort is defined and reasoning_effort else 'high' -%}"
    "{%- if effort in ['none', 'minimal'] %}{% set effort = 'low' %}{% endif -%}"
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>system\nReasoning: {{ effort }}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n{% endif %}")


def export(model, cfg, tok, path, f16=False, name="kvscope-reasoner", chat=False):
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    hd = cfg.dim // cfg.heads
    kvs = [
        ("general.architecture", T_STR, "llama"),
        ("general.name", T_STR, name),
        ("general.file_type", T_U32, 1 if f16 else 0),
        ("llama.context_length", T_U32, cfg.ctx),
        ("llama.embedding_length", T_U32, cfg.dim),
        ("llama.block_count", T_U32, cfg.layers),
        ("llama.feed_forward_length", T_U32, cfg.ffn),
        ("llama.attention.head_count", T_U32, cfg.heads),
        ("llama.attention.head_count_kv", T_U32, cfg.kv_heads),
        ("llama.attention.layer_norm_rms_epsilon", T_F32, cfg.eps),
        ("llama.rope.freq_base", T_F32, cfg.rope_base),
        ("llama.rope.dimension_count", T_U32, hd),
        ("llama.vocab_size", T_U32, len(tok)),
        ("tokenizer.ggml.model", T_STR, "llama"),
        ("tokenizer.ggml.tokens", T_ARR, (T_STR, tok.tokens)),
        ("tokenizer.ggml.scores", T_ARR, (T_F32, tok.scores)),
        ("tokenizer.ggml.token_type", T_ARR, (T_I32, tok.types)),
        ("tokenizer.ggml.unknown_token_id", T_U32, 0),
        ("tokenizer.ggml.bos_token_id", T_U32, 1),
        ("tokenizer.ggml.eos_token_id", T_U32, tok.token_id("<|im_end|>") if chat else 2),
        ("tokenizer.ggml.add_bos_token", T_BOOL, True),
        ("tokenizer.ggml.add_eos_token", T_BOOL, False),
        ("tokenizer.ggml.add_space_prefix", T_BOOL, True),
    ]
    if chat:
        kvs.append(("tokenizer.chat_template", T_STR, CHAT_TEMPLATE))
    else:
        kvs.append(("kvscope.tinygsm.prompt", T_STR, "Question: {question}\nMode: {fast|mixed|slow}\n"))

    def mat(a):
        return a.astype(np.float16) if f16 and a.ndim == 2 else a.astype(np.float32)

    tensors = [("token_embd.weight", mat(sd["tok_emb.weight"]))]
    names = {"attn_norm.weight": "attn_norm.weight", "wq.weight": "attn_q.weight", "wk.weight": "attn_k.weight",
             "wv.weight": "attn_v.weight", "wo.weight": "attn_output.weight", "ffn_norm.weight": "ffn_norm.weight",
             "w_gate.weight": "ffn_gate.weight", "w_up.weight": "ffn_up.weight", "w_down.weight": "ffn_down.weight"}
    for i in range(cfg.layers):
        for src, dst in names.items():
            tensors.append((f"blk.{i}.{dst}", mat(sd[f"blocks.{i}.{src}"])))
    tensors.append(("output_norm.weight", sd["norm.weight"].astype(np.float32)))
    tensors.append(("output.weight", mat(sd["out.weight"])))
    write_gguf(path, kvs, tensors)


def main():
    from model import Config, Llama
    from tokenizer import Tokenizer
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="")
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--random", action="store_true", help="tiny random-weight model (tokenizer tests)")
    ap.add_argument("--f16", action="store_true")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    tok = Tokenizer.load(args.vocab)
    if args.random:
        torch.manual_seed(0)
        cfg = Config(vocab=len(tok), dim=32, layers=1, heads=4, kv_heads=2, ffn=64, ctx=512)
        model = Llama(cfg)
    else:
        ck = torch.load(args.ckpt, map_location="cpu")
        cfg = Config(**ck["config"])
        model = Llama(cfg)
        model.load_state_dict(ck["model"])
    export(model, cfg, tok, args.output, f16=args.f16)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    main()


def read_gguf(path):
    """Minimal reader (for self-checks): returns (kv dict, {name: (shape, type, offset)})."""
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return v if len(v) > 1 else v[0]

    def s():
        nonlocal pos
        n = take("<Q")
        v = buf[pos:pos + n].decode("utf-8")
        pos += n
        return v

    def val(t):
        if t == T_STR:
            return s()
        if t == T_ARR:
            et, n = take("<IQ")
            return [val(et) for _ in range(n)]
        fmt = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}[t]
        return take(fmt)

    assert buf[:4] == b"GGUF", "not a GGUF file"
    pos = 4
    version, n_t, n_kv = take("<IQQ")
    assert version == 3
    kv = {}
    for _ in range(n_kv):
        k = s()
        kv[k] = val(take("<I"))
    tensors = {}
    for _ in range(n_t):
        name = s()
        nd = take("<I")
        ne = [take("<Q") for _ in range(nd)]
        t, off = take("<IQ")
        tensors[name] = (tuple(reversed(ne)), t, off)
    return kv, tensors


def load_gguf_model(path):
    """The Llama (F32/F16 tensors) and tokenizer of a GGUF this module wrote: (cfg, model, tok)."""
    import numpy as np
    import torch
    from model import Config, Llama
    from tokenizer import Tokenizer
    kv, tensors = read_gguf(path)
    with open(path, "rb") as f:
        buf = f.read()
    # Tensor data starts at the first aligned offset after the header: find it from the last tensor.
    end_hdr = _header_end(buf)
    data0 = end_hdr + (-end_hdr) % kv.get("general.alignment", ALIGN)
    a = "llama."
    cfg = Config(vocab=len(kv["tokenizer.ggml.tokens"]), dim=kv[a + "embedding_length"], layers=kv[a + "block_count"],
                 heads=kv[a + "attention.head_count"], kv_heads=kv[a + "attention.head_count_kv"],
                 ffn=kv[a + "feed_forward_length"], ctx=kv[a + "context_length"],
                 eps=kv[a + "attention.layer_norm_rms_epsilon"], rope_base=kv[a + "rope.freq_base"])

    def arr(name):
        shape, t, off = tensors[name]
        dt = {0: np.float32, 1: np.float16}[t]
        n = int(np.prod(shape))
        return torch.from_numpy(np.frombuffer(buf, dtype=dt, count=n, offset=data0 + off).astype(np.float32).reshape(shape))

    model = Llama(cfg)
    sd = {"tok_emb.weight": arr("token_embd.weight"), "norm.weight": arr("output_norm.weight"),
          "out.weight": arr("output.weight")}
    names = {"attn_norm.weight": "attn_norm.weight", "wq.weight": "attn_q.weight", "wk.weight": "attn_k.weight",
             "wv.weight": "attn_v.weight", "wo.weight": "attn_output.weight", "ffn_norm.weight": "ffn_norm.weight",
             "w_gate.weight": "ffn_gate.weight", "w_up.weight": "ffn_up.weight", "w_down.weight": "ffn_down.weight"}
    for i in range(cfg.layers):
        for src, dst in names.items():
            sd[f"blocks.{i}.{src}"] = arr(f"blk.{i}.{dst}")
    model.load_state_dict(sd)
    tok = Tokenizer(kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.scores"], kv["tokenizer.ggml.token_type"])
    return cfg, model, tok


def _header_end(buf):
    """Byte offset just past the GGUF header and tensor infos."""
    import struct as st
    pos = 4 + 4 + 8 + 8
    n_t, n_kv = st.unpack_from("<QQ", buf, 8)

    def skip_val(t):
        nonlocal pos
        if t == T_STR:
            n = st.unpack_from("<Q", buf, pos)[0]
            pos += 8 + n
        elif t == T_ARR:
            et, n = st.unpack_from("<IQ", buf, pos)
            pos += 12
            for _ in range(n):
                skip_val(et)
        else:
            pos += {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}[t]

    for _ in range(n_kv):
        n = st.unpack_from("<Q", buf, pos)[0]
        pos += 8 + n
        t = st.unpack_from("<I", buf, pos)[0]
        pos += 4
        skip_val(t)
    for _ in range(n_t):
        n = st.unpack_from("<Q", buf, pos)[0]
        pos += 8 + n
        nd = st.unpack_from("<I", buf, pos)[0]
        pos += 4 + 8 * nd + 4 + 8
    return pos
