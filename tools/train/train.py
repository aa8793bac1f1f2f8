#!/usr/bin/python3
"""Train kvscope-reasoner on tinygsm (CPU, one thread, fixed seed) and export it to GGUF.

Data comes from the C++ generator: `kvscope tinygsm --split S --n N --seed X --jsonl` (give the
binary with --kvscope, or pre-generated JSON lines in --data-dir). Each training problem is shown
in one answer style (slow 45%, mixed 30%, fast 25%); the loss is on the answer tokens, plus a
weak (--prompt-loss) language-model loss on the question.

  nice -n 19 /usr/bin/python3 tools/train/train.py --kvscope build/kvscope   # the release run
  /usr/bin/python3 tools/train/train.py --smoke --kvscope build/kvscope       # CI: tiny, < 1 min
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Llama, greedy_generate  # noqa: E402
from tokenizer import BOS, EOS, Tokenizer, train_vocab  # noqa: E402

MODES = ("fast", "mixed", "slow")


def log(f, msg):
    if f is False:  # a data-parallel rank other than 0 stays quiet
        return
    line = time.strftime("%H:%M:%S ") + msg
    print(line, flush=True)
    if f:
        f.write(line + "\n")
        f.flush()


def load_split(args, split, n, seed, style="broad"):
    """Items of a split from --data-dir/<split>.jsonl (<split>_<style>.jsonl for a style other than
    broad) when it holds enough, else from kvscope."""
    path = os.path.join(args.data_dir, f"{split}.jsonl" if style == "broad" else f"{split}_{style}.jsonl")
    meta = path + ".meta"
    want = f"{n} {seed}"
    if not (os.path.exists(path) and os.path.exists(meta) and open(meta).read().strip() == want):
        if not args.kvscope:
            sys.exit(f"no {path} for n={n} seed={seed}; give --kvscope BIN to generate it")
        os.makedirs(args.data_dir, exist_ok=True)
        subprocess.run([args.kvscope, "tinygsm", "--split", split, "--n", str(n), "--seed", str(seed), "--style", style,
                        "--jsonl", "-o", path], check=True)
        with open(meta, "w") as f:
            f.write(want + "\n")
    items = []
    with open(path) as f:
        for line in f:
            items.append(json.loads(line))
            if len(items) >= n:
                break
    return items


def load_grammar_items(path, n):
    """The first n items of a tools/grammars/ output file; too few is an error, not a smaller mix."""
    items = []
    with open(path) as f:
        for line in f:
            if len(items) == n:
                break
            items.append(json.loads(line))
    if len(items) < n:
        sys.exit(f"{path}: {len(items)} items, {n} asked for")
    return items


def mode_of(i):
    r = (i * 2654435761 + 12345) % 100
    return "slow" if r < 45 else ("mixed" if r < 75 else "fast")


def encode_example(tok, item, mode, chat=False):
    if chat:  # the prompt as kvscope tokenizes a rendered conversation; the target as generated
        return [BOS] + tok.encode_special(item["chat_prompt"][mode]), tok.encode_special(item["chat_target"][mode], False)
    p = tok.encode(item["prompt"][mode], add_prefix=True, bos=True)
    t = tok.encode(item["target"][mode], add_prefix=False) + [EOS]
    return p, t


def drill_equation(rng, max_value=100):
    """One equation drawn like tinygsm's steps: a+b, a-b, a*k, k*n, a/k (exact), values in [2, max_value]."""
    while True:
        op = rng.choice("+-*/")
        if op == "+":
            a = rng.randint(2, max_value - 2)
            b = rng.randint(2, min(20, max_value - a))
            return a, op, b, a + b
        if op == "-":
            a = rng.randint(4, max_value)
            b = rng.randint(2, min(20, a - 2))
            return a, op, b, a - b
        if op == "*":
            if rng.random() < 0.4:
                a, b = rng.randint(2, 5), rng.randint(2, 9)
            else:
                a = rng.randint(2, 25)
                b = rng.randint(2, min(4, max_value // a))
            return a, op, b, a * b
        k = rng.randint(2, 5)
        r = rng.randint(2, max_value // k)
        return r * k, op, k, r


def make_drill(rng, n_eq=24):
    """Arithmetic practice: a sequence of equations in the slow (spaced) or mixed (compact) style.
    Auxiliary training data only (not part of the benchmark): dense supervision on the results."""
    spaced = rng.random() < 0.5
    eqs = []
    for _ in range(n_eq):
        a, op, b, r = drill_equation(rng)
        eqs.append(f"{a} {op} {b} = {r}." if spaced else f"{a}{op}{b}={r}.")
    return "Arithmetic:\n", " ".join(eqs)


def number_features(n, dim):
    """A fixed code for the integer n: one-hot hundreds / tens / units digits and cos/sin of n at
    periods 10, 100, 1000. Number tokens start from it (input and output embeddings), so the model
    does not have to discover that "▁47" is 4 tens and 7 units before it can learn arithmetic."""
    f = torch.zeros(dim)
    f[(n // 100) % 10] = 1.0
    f[10 + (n // 10) % 10] = 1.0
    f[20 + n % 10] = 1.0
    for j, period in enumerate((10, 100, 1000)):
        f[30 + 2 * j] = math.cos(2 * math.pi * n / period)
        f[31 + 2 * j] = math.sin(2 * math.pi * n / period)
    return f


def init_number_embeddings(model, tok, scale=0.5):
    count = 0
    if model.cfg.dim < 36:  # the code needs 36 channels (tiny smoke-test models go without)
        return count
    with torch.no_grad():
        for i, t in enumerate(tok.tokens):
            if tok.types[i] != 1:
                continue
            s = t[1:] if t.startswith("\u2581") else t
            if s.isdigit() and str(int(s)) == s:
                f = number_features(int(s), model.cfg.dim) * scale
                model.tok_emb.weight[i, :36] = f[:36]
                model.out.weight[i, :36] = f[:36]
                count += 1
    return count


def allreduce_mean_grads(model, world):
    """Average gradients over the data-parallel ranks in one flat all-reduce."""
    import torch.distributed as dist
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for g in grads:
        g.copy_(flat[off:off + g.numel()].view_as(g))
        off += g.numel()


def make_batches(examples, batch_tokens, rng):
    """Length-bucketed batches: shuffle, sort windows by length, cut to the token budget."""
    order = list(range(len(examples)))
    rng.shuffle(order)
    batches = []
    win = 2000
    for w in range(0, len(order), win):
        chunk = sorted(order[w:w + win], key=lambda i: len(examples[i][0]) + len(examples[i][1]))
        cur, cur_max = [], 0
        for i in chunk:
            L = len(examples[i][0]) + len(examples[i][1]) - 1
            if cur and max(cur_max, L) * (len(cur) + 1) > batch_tokens:
                batches.append(cur)
                cur, cur_max = [], 0
            cur.append(i)
            cur_max = max(cur_max, L)
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


def collate(examples, idxs, prompt_w=0.0):
    seqs = [examples[i][0] + examples[i][1] for i in idxs]
    T = max(len(s) for s in seqs) - 1
    x = torch.zeros(len(seqs), T, dtype=torch.long)
    y = torch.zeros(len(seqs), T, dtype=torch.long)
    w = torch.zeros(len(seqs), T)
    for b, i in enumerate(idxs):
        p, t = examples[i]
        s = p + t
        x[b, :len(s) - 1] = torch.tensor(s[:-1])
        y[b, :len(s) - 1] = torch.tensor(s[1:])
        w[b, :len(p) - 1] = prompt_w  # the question's text: a weak language-model signal
        w[b, len(p) - 1:len(s) - 1] = 1.0
    return x, y, w


def evaluate(model, tok, items, modes=MODES, max_new=200, batch=64, chat=False):
    """Greedy accuracy per mode on the given items; also mean generated tokens."""
    res = {}
    eos = tok.token_id("<|im_end|>") if chat else EOS
    for mode in modes:
        correct, ntok = 0, 0
        for s in range(0, len(items), batch):
            chunk = items[s:s + batch]
            prompts = [encode_example(tok, it, mode, chat)[0] for it in chunk]
            outs = greedy_generate(model, prompts, eos, max_new)
            for it, o in zip(chunk, outs):
                ntok += len(o) + 1
                correct += parse_answer(tok.decode(o)) == it["answer"]
        res[mode] = (correct / max(1, len(items)), ntok / max(1, len(items)))
    return res


def parse_answer(text):
    """Same rule as tinygsm::parse_answer: integer after the last 'Answer:'."""
    k = text.rfind("Answer:")
    if k < 0:
        return None
    s = text[k + 7:].lstrip(" ")
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    d = ""
    for c in s:
        if c.isdigit() and len(d) < 10:
            d += c
        else:
            break
    if not d or len(d) >= 10:
        return None
    return -int(d) if neg else int(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvscope", default="", help="kvscope binary used to generate the data")
    ap.add_argument("--data-dir", default=os.path.join(HERE, "out", "data"))
    ap.add_argument("--out", default=os.path.join(HERE, "out", "run"))
    ap.add_argument("--gguf", default="", help="export path (default OUT/kvscope-reasoner.gguf)")
    ap.add_argument("--n-train", type=int, default=100000)
    ap.add_argument("--num-init", type=int, default=1, help="structured init of number-token embeddings")
    ap.add_argument("--drill-frac", type=float, default=0.25, help="arithmetic drill sequences per problem")
    ap.add_argument("--train-seed", type=int, default=1)
    ap.add_argument("--natural-frac", type=float, default=0.0,
                    help="share of the training problems drawn from tinygsm's natural style (questions as people "
                         "type them); the rest stay broad, so the old formats stay in the mix")
    ap.add_argument("--grammar-data", default="",
                    help="FILE:N,... training items of tools/grammars/ (first N lines of each, rendered by "
                         "tools/grammars/items.py), added to the --n-train items")
    ap.add_argument("--resume", action="store_true",
                    help="continue from OUT/ckpt.pt (weights, optimizer, step); the batch order restarts from a "
                         "seed derived from the step")
    ap.add_argument("--vocab-items", type=int, default=6000)
    ap.add_argument("--merges", type=int, default=1000)
    ap.add_argument("--markers", type=int, default=9, help="single-token statement markers (1)..(N)")
    ap.add_argument("--prompt-loss", type=float, default=0.2, help="loss weight of prompt tokens (targets: 1)")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=688)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1,
                    help="data-parallel processes (one thread each; each takes its own batch per step)")
    ap.add_argument("--extra-fast-steps", type=int, default=0,
                    help="problems with at most this many steps also get a fast-mode example ...")
    ap.add_argument("--extra-fast-frac", type=float, default=0.0, help="... with this probability")
    ap.add_argument("--extra-slow-min-steps", type=int, default=0,
                    help="problems with at least this many steps also get a slow-mode (high-effort) example ...")
    ap.add_argument("--extra-slow-frac", type=float, default=0.0, help="... with this probability (0: none)")
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--eval-n", type=int, default=48)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--bf16", action="store_true",
                    help="bfloat16 autocast for the forward pass (weights, optimizer and loss stay float32); "
                         "about 2x faster on CPUs with AVX512_BF16 or AMX")
    ap.add_argument("--bench", type=int, default=0, help="time this many steps and exit")
    ap.add_argument("--smoke", action="store_true", help="tiny config, a few steps, export (CI)")
    ap.add_argument("--chat", action="store_true",
                    help="the chat convention: ChatML turns, the level in the system message, a <think> block "
                         "(the tinygsm chat_prompt/chat_target fields); the GGUF gets the chat template")
    ap.add_argument("--init-gguf", default="",
                    help="start from this model (weights and vocabulary; the chat tokens are appended) instead "
                         "of a new one: the second stage of the release recipe")
    ap.add_argument("--grow-after", default="",
                    help="with --init-gguf: comma-separated layer indices; a copy of each of these layers is "
                         "inserted after it with its attention and FFN output projections zeroed, so the deeper "
                         "model starts as exactly the initial model's function (block expansion)")
    ap.add_argument("--grow-dim", type=int, default=0,
                    help="with --init-gguf: widen the residual stream to this size (query and kv heads grow with it, "
                         "head size kept); new residual dims start at zero and every new unit's output projection "
                         "is zero, so the wider model starts as exactly the initial model's function")
    ap.add_argument("--grow-ffn", type=int, default=0, help="with --init-gguf: widen the feed-forward layer to this")
    args = ap.parse_args()
    grow_after = sorted({int(x) for x in args.grow_after.split(",") if x.strip()})
    if args.smoke:
        args.n_train, args.vocab_items, args.merges = 400, 300, 200
        args.dim, args.layers, args.heads, args.kv_heads, args.ffn = 32, 2, 4, 2, 64
        args.steps, args.batch_tokens, args.warmup, args.eval_every, args.eval_n, args.log_every = 8, 1024, 2, 8, 4, 2
        if args.out == ap.get_default("out"):
            args.out = os.path.join(HERE, "out", "smoke")
        if args.data_dir == ap.get_default("data_dir"):
            args.data_dir = os.path.join(HERE, "out", "smoke_data")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    lf = open(os.path.join(args.out, "train.log"), "a")
    log(lf, "args " + json.dumps(vars(args)))
    t0 = time.time()

    n_nat = int(round(args.n_train * args.natural_frac))
    train_items = load_split(args, "train", args.n_train - n_nat, args.train_seed)
    val_items = load_split(args, "validation", max(args.eval_n, 200), 2024)
    if n_nat:
        train_items += load_split(args, "train", n_nat, args.train_seed, "natural")
        # validation: broad and natural problems alternate, so the eval watches both
        nat_val = load_split(args, "validation", max(args.eval_n, 200), 2024, "natural")
        val_items = [x for pair in zip(val_items, nat_val) for x in pair]
    for spec in filter(None, args.grammar_data.split(",")):
        path, _, count = spec.rpartition(":")
        if not path or not count.isdigit():
            sys.exit(f"--grammar-data {spec!r}: expected FILE:N")
        got = load_grammar_items(path, int(count))
        log(lf, f"grammar data {path}: {len(got)} items")
        train_items += got
    log(lf, f"data: {len(train_items)} train, {len(val_items)} validation ({time.time() - t0:.0f}s)")

    texts = []
    for it in train_items[:args.vocab_items if not args.init_gguf else 0]:
        for m in MODES:
            texts.append((it["prompt"][m], True))
            texts.append((it["target"][m], False))
    drng = random.Random(args.seed + 1)
    drills = [make_drill(drng) for _ in range(int(len(train_items) * args.drill_frac))]
    texts += [(p, True) for p, _ in drills[:200]] + [(t, False) for _, t in drills[:200]]
    if args.init_gguf:
        from export_gguf import load_gguf_model
        cfg0, model0, tok = load_gguf_model(args.init_gguf)
        log(lf, f"initial model {args.init_gguf}: {json.dumps(cfg0.to_dict())}")
    else:
        tok = Tokenizer(*train_vocab(texts, args.merges, n_markers=args.markers))
    if args.chat:
        log(lf, f"chat tokens added: {tok.add_special()}")
    tok.save(os.path.join(args.out, "vocab.json"))
    log(lf, f"vocab: {len(tok)} tokens ({time.time() - t0:.0f}s)")

    examples = [encode_example(tok, it, mode_of(i), args.chat) for i, it in enumerate(train_items)]
    xrng = random.Random(args.seed + 2)
    n_extra = 0
    for i, it in enumerate(train_items):
        if (mode_of(i) != "fast" and it["steps"] <= args.extra_fast_steps and
                xrng.random() < args.extra_fast_frac):
            examples.append(encode_example(tok, it, "fast", args.chat))
            n_extra += 1
    if n_extra:
        log(lf, f"{n_extra} extra fast-mode examples of problems with <= {args.extra_fast_steps} steps")
    if args.extra_slow_min_steps > 0 and args.extra_slow_frac > 0:
        # long chains at high effort, where a natural-heavy mix lost accuracy (stage 4 on the test split)
        srng = random.Random(args.seed + 3)
        n_slow = 0
        for i, it in enumerate(train_items):
            if (mode_of(i) != "slow" and it["steps"] >= args.extra_slow_min_steps and
                    srng.random() < args.extra_slow_frac):
                examples.append(encode_example(tok, it, "slow", args.chat))
                n_slow += 1
        log(lf, f"{n_slow} extra slow-mode examples of problems with >= {args.extra_slow_min_steps} steps")
    for p, t in drills:
        examples.append((tok.encode(p, add_prefix=True, bos=True), tok.encode(t, add_prefix=False) + [EOS]))
    log(lf, f"{len(drills)} arithmetic drill sequences added")
    ntok = sum(len(p) + len(t) for p, t in examples)
    log(lf, f"tokenized {len(examples)} examples, {ntok} tokens, mean {ntok / len(examples):.1f} "
        f"({time.time() - t0:.0f}s)")

    if grow_after and not args.init_gguf:
        sys.exit("--grow-after needs --init-gguf")
    if args.init_gguf:
        if grow_after and (grow_after[0] < 0 or grow_after[-1] >= cfg0.layers):
            sys.exit(f"--grow-after: the initial model has layers 0..{cfg0.layers - 1}")
        cfg = Config(**{**cfg0.to_dict(), "vocab": len(tok), "layers": cfg0.layers + len(grow_after)})
        if args.grow_dim or args.grow_ffn:
            cfg = grown_config(cfg, args.grow_dim, args.grow_ffn)
    else:
        cfg = Config(vocab=len(tok), dim=args.dim, layers=args.layers, heads=args.heads, kv_heads=args.kv_heads,
                     ffn=args.ffn, ctx=args.ctx)
    model = Llama(cfg)
    if args.init_gguf:
        # new block j copies old block src_of[j]; an inserted copy starts with zero output projections
        src_of, fresh = [], set()
        for i in range(cfg0.layers):
            src_of.append(i)
            if i in grow_after:
                fresh.add(len(src_of))
                src_of.append(i)
        with torch.no_grad():
            for name, p in model.state_dict().items():
                if name.startswith("blocks."):
                    j, rest = name.split(".", 2)[1:]
                    src = model0.state_dict()[f"blocks.{src_of[int(j)]}.{rest}"]
                    if int(j) in fresh and rest in ("wo.weight", "w_down.weight"):
                        p.zero_()
                        continue
                else:
                    src = model0.state_dict()[name]
                if p.shape != src.shape:
                    widen_into(name, p, src, cfg0.dim)
                elif name in ("tok_emb.weight", "out.weight"):  # new rows start as the mean of the old ones
                    p[:src.shape[0]] = src
                    p[src.shape[0]:] = src.mean(0)
                else:
                    p.copy_(src)
        if grow_after or cfg.dim != cfg0.dim or cfg.ffn != cfg0.ffn:  # growth must not change the function
            ids = torch.tensor([examples[0][0] + examples[0][1]][:1])
            with torch.no_grad():
                diff = (model(ids)[..., :cfg0.vocab] - model0(ids)).abs().max().item()
            log(lf, f"grown {cfg0.layers} -> {cfg.layers} layers (copies after {grow_after}), dim {cfg0.dim} -> "
                f"{cfg.dim}, ffn {cfg0.ffn} -> {cfg.ffn}; max logit change {diff:.2e}")
            if diff > 1e-3:
                sys.exit(f"growing changed the model's output (max logit change {diff})")
    elif args.num_init:
        n_num = init_number_embeddings(model, tok)
        log(lf, f"structured init of {n_num} number-token embeddings")
    nparam = sum(p.numel() for p in model.parameters())
    log(lf, f"model {json.dumps(cfg.to_dict())} params {nparam}")

    if args.workers > 1:
        # fork: the workers inherit data, tokenizer and the identical initial model
        import torch.multiprocessing as mp
        import socket
        with socket.socket() as sk:  # a free local port for the ranks' rendezvous
            sk.bind(("127.0.0.1", 0))
            port = str(sk.getsockname()[1])
        mp.start_processes(train_rank, args=(args.workers, port, args, cfg, model, tok, examples, val_items, lf, t0),
                           nprocs=args.workers, start_method="fork")
    else:
        train_rank(0, 1, "", args, cfg, model, tok, examples, val_items, lf, t0)


def grown_config(cfg, dim, ffn):
    """The wider config: head size and the query/kv grouping kept, so old heads keep their kv heads."""
    hd = cfg.dim // cfg.heads
    dim = dim or cfg.dim
    if dim < cfg.dim or dim % hd or (dim // hd) % (cfg.heads // cfg.kv_heads):
        sys.exit(f"--grow-dim {dim}: must be >= {cfg.dim} and a multiple of the head size {hd} "
                 f"times the grouping {cfg.heads // cfg.kv_heads}")
    if ffn and ffn < cfg.ffn:
        sys.exit(f"--grow-ffn {ffn}: must be >= {cfg.ffn}")
    heads = dim // hd
    # RMSNorm's mean square over the zero-padded stream is dim0/dim of the old one; eps scaled alike
    # keeps every norm's output exactly as before (with the gains scaled in widen_into)
    return Config(**{**cfg.to_dict(), "dim": dim, "heads": heads, "eps": cfg.eps * cfg.dim / dim,
                     "kv_heads": heads // (cfg.heads // cfg.kv_heads), "ffn": ffn or cfg.ffn})


def widen_into(name, p, src, dim0):
    """Copy a smaller tensor into the leading block of a grown one so the function is unchanged.
    Residual dims past dim0 must stay zero at the start: whatever writes them (embeddings, attention
    and FFN output projections) gets zero rows there, and a new head's or FFN unit's output column is
    zero. What reads them (q/k/v, gate/up, the output head) gets small random columns so gradients
    reach the writers. RMSNorm divides by the mean square over all dims, so gains scale by
    sqrt(dim0 / dim)."""
    if p.dim() == 1:
        g = src * math.sqrt(dim0 / p.shape[0])
        p[:src.shape[0]] = g
        p[src.shape[0]:] = g.mean()
        return
    r, c = src.shape
    writer = name == "tok_emb.weight" or name.endswith("wo.weight") or name.endswith("w_down.weight")
    if writer:
        p.zero_()
    else:
        torch.nn.init.normal_(p, std=0.02)
    p[:r, :c] = src
    if name in ("tok_emb.weight", "out.weight"):  # new rows are new tokens: the mean of the old ones
        p[r:, :c] = src.mean(0)


def train_rank(rank, world, port, args, cfg, model, tok, examples, val_items, lf, t0):
    """Training loop of one data-parallel rank (or the only one). Every rank draws the same batch
    order and takes batch (world * step + rank); gradients are averaged, so parameters stay equal."""
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    if world > 1:
        import torch.distributed as dist
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", port
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # all ranks are on this machine
        dist.init_process_group("gloo", rank=rank, world_size=world)
    if rank != 0:
        lf = False
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

    def lr_at(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * (args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))

    first = 0
    ckpt_path = os.path.join(args.out, "ckpt.pt")
    if args.resume:
        ck = torch.load(ckpt_path, weights_only=False)
        model.load_state_dict(ck["model"])
        if "opt" not in ck:
            sys.exit(f"{ckpt_path} has no optimizer state (written before --resume existed)")
        opt.load_state_dict(ck["opt"])
        first = ck["step"]
        rng = random.Random(args.seed + first)  # a fresh batch order: the old one is not stored
        log(lf, f"resumed from {ckpt_path} at step {first}")
    batches, bi, epoch = make_batches(examples, args.batch_tokens, rng), 0, 0
    t_train = time.time()
    seen_tok, loss_acc, loss_n, tgt_acc = 0, 0.0, 0, 0.0
    steps = args.bench if args.bench else args.steps
    for step in range(first, steps):
        if bi + world > len(batches):
            epoch += 1
            batches, bi = make_batches(examples, args.batch_tokens, rng), 0
            log(lf, f"epoch {epoch}")
        x, y, w = collate(examples, batches[bi + rank], args.prompt_loss)
        bi += world
        model.train()
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(x)
        logits = logits.float()
        per_tok = torch.nn.functional.cross_entropy(logits.view(-1, cfg.vocab), y.view(-1), reduction="none")
        loss = (per_tok * w.view(-1)).sum() / w.view(-1).sum()
        tmask = (w.view(-1) == 1.0).float()
        tgt_acc += float((per_tok.detach() * tmask).sum() / tmask.sum())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if world > 1:
            allreduce_mean_grads(model, world)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen_tok += x.numel() * world
        loss_acc += float(loss)
        loss_n += 1
        if (step + 1) % args.log_every == 0 or step + 1 == steps:
            el = max(1e-9, time.time() - t_train)
            log(lf, f"step {step + 1}/{steps} loss {loss_acc / loss_n:.4f} target {tgt_acc / loss_n:.4f} "
                f"lr {lr_at(step):.2e} tok/s {seen_tok / el:.0f} elapsed {el / 60:.1f}m")
            loss_acc, loss_n, tgt_acc = 0.0, 0, 0.0
        if rank == 0 and not args.bench and ((step + 1) % args.eval_every == 0 or step + 1 == steps):
            te = time.time()
            r = evaluate(model, tok, val_items[:args.eval_n], chat=args.chat)
            log(lf, "eval step %d validation n=%d: " % (step + 1, args.eval_n) +
                " ".join(f"{m} {a * 100:.1f}% ({t:.0f} tok)" for m, (a, t) in r.items()) +
                f" [{time.time() - te:.0f}s]")
            # Checkpoint (resumable) and a GGUF of this step, so a run stopped early leaves a usable model.
            torch.save({"config": cfg.to_dict(), "model": model.state_dict(), "opt": opt.state_dict(), "step": step + 1},
                       ckpt_path + ".tmp")
            os.replace(ckpt_path + ".tmp", ckpt_path)
            if args.chat:
                from export_gguf import export
                export(model, cfg, tok, os.path.join(args.out, f"step{step + 1}.gguf"), chat=True)
    if world > 1:  # the ranks must have stayed in lockstep; a drift would be a silent bug
        import torch.distributed as dist
        sums = torch.tensor([float(sum(p.double().sum() for p in model.parameters()))], dtype=torch.float64)
        every = [torch.zeros_like(sums) for _ in range(world)]
        dist.all_gather(every, sums)
        assert all(float(e) == float(sums) for e in every), f"data-parallel ranks diverged: {every}"
    if args.bench or rank != 0:
        return
    log(lf, f"training done in {(time.time() - t_train) / 60:.1f} min (total {(time.time() - t0) / 60:.1f} min)")
    from export_gguf import export
    gguf = args.gguf or os.path.join(args.out, "kvscope-reasoner.gguf")
    export(model, cfg, tok, gguf, chat=args.chat)
    from export_gguf import read_gguf
    kv, tensors = read_gguf(gguf)
    assert kv["general.architecture"] == "llama" and len(kv["tokenizer.ggml.tokens"]) == len(tok)
    assert tensors["token_embd.weight"][0] == (len(tok), cfg.dim) and len(tensors) == 2 + 9 * cfg.layers + 1
    log(lf, f"exported {gguf} ({os.path.getsize(gguf)} bytes, {len(tensors)} tensors, read back ok)")


if __name__ == "__main__":
    main()
