#!/usr/bin/python3
"""Full greedy parity between kvscope (the C++ engine) and the PyTorch model on tinygsm.

  /usr/bin/python3 tools/train/compare_kvscope.py --kvscope build/kvscope --gguf models/kvscope-reasoner.gguf \
      --ckpt tools/train/out/run/ckpt.pt --vocab tools/train/out/run/vocab.json --split test --n 1000
Runs `kvscope eval --details` per mode and compares each output text with PyTorch's greedy text.
Exit 1 when fewer than --min-match of them are identical."""
import argparse, json, os, subprocess, sys, tempfile
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Llama
from tokenizer import Tokenizer
from eval import run_mode

ap = argparse.ArgumentParser()
ap.add_argument("--kvscope", required=True)
ap.add_argument("--gguf", required=True)
ap.add_argument("--ckpt", required=True)
ap.add_argument("--vocab", required=True)
ap.add_argument("--split", default="test")
ap.add_argument("--modes", nargs="+", default=["fast", "mixed", "slow"])
ap.add_argument("--n", type=int, default=1000)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--min-match", type=float, default=0.99)
args = ap.parse_args()
torch.set_num_threads(args.threads)
tok = Tokenizer.load(args.vocab)
ck = torch.load(args.ckpt, map_location="cpu")
model = Llama(Config(**ck["config"]))
model.load_state_dict(ck["model"])
r = subprocess.run([args.kvscope, "tinygsm", "--split", args.split, "--n", str(args.n), "--jsonl"],
                   capture_output=True, text=True, check=True)
items = [json.loads(l) for l in r.stdout.splitlines()]
total = same = 0
for mode in args.modes:
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as tmp:
        subprocess.run([args.kvscope, "eval", "-m", args.gguf, "--task", "tinygsm", "--split", args.split, "--mode", mode,
                        "--n", str(args.n), "-t", str(args.threads), "--max-tokens", "256", "--details", tmp.name, "-q",
                        "--json"], check=True, stdout=subprocess.DEVNULL)
        eng = [json.loads(l) for l in open(tmp.name)]
    ours = run_mode(model, tok, items, mode, 64, 256)
    s = sum(a["output"] == b["output"] for a, b in zip(ours, eng))
    for it, a, b in zip(items, ours, eng):
        if a["output"] != b["output"] and total - same < 5:
            print(f"DIFF [{mode}] {it['question']}\n  torch  {a['output']!r}\n  kvscope {b['output']!r}")
    print(f"{mode}: {s}/{len(items)} identical; accuracy torch {sum(a['correct'] for a in ours) / len(items):.3f} "
          f"kvscope {sum(b['correct'] for b in eng) / len(items):.3f}", flush=True)
    total += len(items)
    same += s
print(f"overall: {same}/{total} identical ({same / total * 100:.2f}%)")
sys.exit(0 if same >= args.min_match * total else 1)
