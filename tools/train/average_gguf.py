#!/usr/bin/python3
"""Interpolate two models of the same shape and vocabulary: (1 - alpha) * A + alpha * B.

With A a model and B the same model fine-tuned further (WiSE-FT, Wortsman et al. 2022), the
interpolation often keeps what B learned and what A knew, and holds up better on questions unlike
either's training data. Both must be GGUFs this directory's exporter wrote (F32/F16, same config and
tokens); the output is F32, with A's chat template setting.

  average_gguf.py A.gguf B.gguf --alpha 0.5 -o OUT.gguf
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_gguf import export, load_gguf_model, read_gguf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--alpha", type=float, default=0.5, help="weight of B")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    if not 0.0 <= args.alpha <= 1.0:
        sys.exit(f"--alpha {args.alpha}: must be in [0, 1]")
    cfg_a, model_a, tok_a = load_gguf_model(args.a)
    cfg_b, model_b, tok_b = load_gguf_model(args.b)
    if cfg_a.to_dict() != cfg_b.to_dict():
        sys.exit(f"different shapes: {cfg_a.to_dict()} vs {cfg_b.to_dict()}")
    if tok_a.tokens != tok_b.tokens:
        sys.exit("different vocabularies")
    sd_b = model_b.state_dict()
    merged = {k: (1 - args.alpha) * v + args.alpha * sd_b[k] for k, v in model_a.state_dict().items()}
    model_a.load_state_dict(merged)
    chat = "tokenizer.chat_template" in read_gguf(args.a)[0]
    export(model_a, cfg_a, tok_a, args.output, chat=chat)
    # Read back: every tensor is the interpolation (the exporter's names and layout round-trip).
    _, model_o, _ = load_gguf_model(args.output)
    for k, v in model_o.state_dict().items():
        err = (v - merged[k]).abs().max().item()
        if err > 1e-6:
            sys.exit(f"{args.output}: {k} read back differs by {err}")
    print(f"wrote {args.output}: {1 - args.alpha:g} * {args.a} + {args.alpha:g} * {args.b}")


if __name__ == "__main__":
    main()
