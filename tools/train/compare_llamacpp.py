#!/usr/bin/python3
"""Greedy parity: the exported GGUF run by llama.cpp must generate what the PyTorch model does.

  /usr/bin/python3 tools/train/compare_llamacpp.py --ckpt out/run/ckpt.pt --vocab out/run/vocab.json \
      --gguf out/run/kvscope-reasoner.gguf --data out/data/test.jsonl --n 30
Also checks that llama.cpp tokenizes every prompt as tokenizer.py does. Exit 1 below --min-match."""
import argparse, json, os, subprocess, sys
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Llama, greedy_generate
from tokenizer import EOS, Tokenizer

ap = argparse.ArgumentParser()
ap.add_argument("--ckpt", required=True)
ap.add_argument("--vocab", required=True)
ap.add_argument("--gguf", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--n", type=int, default=30, help="problems (each in every mode)")
ap.add_argument("--max-new", type=int, default=200)
ap.add_argument("--min-match", type=float, default=0.99)
ap.add_argument("--json", default="", help="write details here")
args = ap.parse_args()
torch.set_num_threads(1)
tok = Tokenizer.load(args.vocab)
ck = torch.load(args.ckpt, map_location="cpu")
cfg = Config(**ck["config"])
model = Llama(cfg)
model.load_state_dict(ck["model"])
items = [json.loads(l) for _, l in zip(range(args.n), open(args.data))]
cases = [(it, m) for it in items for m in ("fast", "mixed", "slow")]
texts = [it["prompt"][m] for it, m in cases]
prompts = [tok.encode(t, add_prefix=True, bos=True) for t in texts]

r = subprocess.run(["node", os.path.join(HERE, "..", "oracle", "tokenize.mjs"), args.gguf], input=json.dumps(texts),
                   capture_output=True, text=True, check=True)
ref_tok = json.loads(r.stdout)["tokens"]
tok_ok = sum([1] + p[1:] == [1] + q for p, q in zip(prompts, ref_tok))

ours = [greedy_generate(model, [p], EOS, args.max_new)[0] for p in prompts]
r = subprocess.run(["node", os.path.join(HERE, "compare_llamacpp.mjs")],
                   input=json.dumps({"model": os.path.abspath(args.gguf), "prompts": prompts, "max_new": args.max_new}),
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("llama.cpp failed: " + r.stderr[-2000:])
theirs = json.loads(r.stdout)["outputs"]
same = 0
details = []
for (it, m), a, b in zip(cases, ours, theirs):
    eq = a == b
    same += eq
    if not eq:
        k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        print(f"DIFF [{m}] at token {k}: torch {tok.decode(a)!r}\n                 llama {tok.decode(b)!r}")
    details.append({"mode": m, "question": it["question"], "torch": a, "llama": b, "same": eq})
frac = same / len(cases)
print(f"prompt tokenization identical: {tok_ok}/{len(cases)}")
print(f"greedy generations identical: {same}/{len(cases)} ({frac * 100:.1f}%)")
print("example:", repr(texts[-1]), "->", repr(tok.decode(ours[-1])))
if args.json:
    json.dump({"identical": same, "total": len(cases), "tokenization_identical": tok_ok, "details": details},
              open(args.json, "w"), indent=1)
sys.exit(0 if frac >= args.min_match and tok_ok == len(cases) else 1)
