#!/usr/bin/python3
"""Greedy tinygsm accuracy of a trained checkpoint, overall and by number of steps, per mode.

  /usr/bin/python3 tools/train/eval.py --ckpt out/run/ckpt.pt --vocab out/run/vocab.json \
      --kvscope build/kvscope --splits test heldout --n 1000 --json out/run/eval.json
Problems come from `kvscope tinygsm --split S --n N --jsonl` (default seed), or --data-dir S.jsonl.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Llama, greedy_generate  # noqa: E402
from tokenizer import EOS, Tokenizer  # noqa: E402
from train import parse_answer  # noqa: E402

MODES = ("fast", "mixed", "slow")


def load_items(args, split):
    path = os.path.join(args.data_dir, f"{split}.jsonl") if args.data_dir else ""
    if path and os.path.exists(path):
        lines = open(path).read().splitlines()
    else:
        if not args.kvscope:
            sys.exit(f"no data for {split}: give --kvscope BIN or --data-dir")
        r = subprocess.run([args.kvscope, "tinygsm", "--split", split, "--n", str(args.n), "--jsonl"],
                           capture_output=True, text=True, check=True)
        lines = r.stdout.splitlines()
    items = [json.loads(l) for l in lines[:args.n]]
    if len(items) < args.n:
        sys.exit(f"{split}: only {len(items)} problems")
    return items


def run_mode(model, tok, items, mode, batch, max_new):
    prompts = [tok.encode(it["prompt"][mode], add_prefix=True, bos=True) for it in items]
    order = sorted(range(len(items)), key=lambda i: len(prompts[i]))
    outs = [None] * len(items)
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        for i, o in zip(idx, greedy_generate(model, [prompts[i] for i in idx], EOS, max_new)):
            outs[i] = o
        print(f"\r  {mode}: {min(s + batch, len(order))}/{len(order)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows = []
    for it, o in zip(items, outs):
        text = tok.decode(o)
        rows.append({"steps": it["steps"], "correct": parse_answer(text) == it["answer"], "tokens": len(o) + 1,
                     "output": text})
    return rows


def summarize(rows):
    out = {"n": len(rows), "accuracy": sum(r["correct"] for r in rows) / len(rows),
           "mean_tokens": sum(r["tokens"] for r in rows) / len(rows), "by_steps": {}}
    for k in range(1, 7):
        rs = [r for r in rows if r["steps"] == k]
        if rs:
            out["by_steps"][str(k)] = {"n": len(rs), "accuracy": sum(r["correct"] for r in rs) / len(rs),
                                       "mean_tokens": sum(r["tokens"] for r in rs) / len(rs)}
    return out


def table(split, res):
    lines = [f"### {split} (n={next(iter(res.values()))['n']}, greedy)", "",
             "| mode | all | 1 | 2 | 3 | 4 | 5 | 6 | 4+ | mean tokens |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for mode, s in res.items():
        cells = [f"{s['by_steps'][str(k)]['accuracy'] * 100:.1f}" if str(k) in s["by_steps"] else "-"
                 for k in range(1, 7)]
        hard = [s["by_steps"][str(k)] for k in (4, 5, 6) if str(k) in s["by_steps"]]
        n4 = sum(h["n"] for h in hard)
        a4 = sum(h["accuracy"] * h["n"] for h in hard) / max(1, n4)
        lines.append(f"| {mode} | {s['accuracy'] * 100:.1f} | " + " | ".join(cells) +
                     f" | {a4 * 100:.1f} | {s['mean_tokens']:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--kvscope", default="")
    ap.add_argument("--data-dir", default="")
    ap.add_argument("--splits", nargs="+", default=["test", "heldout"])
    ap.add_argument("--modes", nargs="+", default=list(MODES))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-new", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tok = Tokenizer.load(args.vocab)
    ck = torch.load(args.ckpt, map_location="cpu")
    cfg = Config(**ck["config"])
    model = Llama(cfg)
    model.load_state_dict(ck["model"])
    report, md = {}, []
    for split in args.splits:
        items = load_items(args, split)
        res = {}
        for mode in args.modes:
            t = time.time()
            rows = run_mode(model, tok, items, mode, args.batch, args.max_new)
            res[mode] = summarize(rows)
            res[mode]["wall_s"] = time.time() - t
            res[mode]["errors"] = [dict(r, question=it["question"], answer=it["answer"])
                                   for r, it in zip(rows, items) if not r["correct"]][:20]
        report[split] = res
        md.append(table(split, res))
        print(md[-1] + "\n", flush=True)
    if args.json:
        json.dump(report, open(args.json, "w"), indent=1)
    if args.markdown:
        open(args.markdown, "w").write("\n\n".join(md) + "\n")


if __name__ == "__main__":
    main()
