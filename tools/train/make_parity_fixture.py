#!/usr/bin/python3
"""Write tests/tinygsm/reasoner_greedy.jsonl: PyTorch greedy outputs of the trained model on the
first N test problems in every mode (the C++ parity test runs the GGUF on the same prompts).

  /usr/bin/python3 tools/train/make_parity_fixture.py --ckpt out/run/ckpt.pt --vocab out/run/vocab.json \
      --data out/data/test.jsonl --n 30 -o tests/tinygsm/reasoner_greedy.jsonl"""
import argparse, json, os, sys
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Llama, greedy_generate
from tokenizer import EOS, Tokenizer

ap = argparse.ArgumentParser()
ap.add_argument("--ckpt", required=True)
ap.add_argument("--vocab", required=True)
ap.add_argument("--data", required=True, help="test split JSON lines (default seed), from kvscope tinygsm")
ap.add_argument("--n", type=int, default=30)
ap.add_argument("-o", "--output", required=True)
args = ap.parse_args()
torch.set_num_threads(1)
tok = Tokenizer.load(args.vocab)
ck = torch.load(args.ckpt, map_location="cpu")
model = Llama(Config(**ck["config"]))
model.load_state_dict(ck["model"])
with open(args.output, "w") as f:
    for line, _ in zip(open(args.data), range(args.n)):
        it = json.loads(line)
        for mode in ("fast", "mixed", "slow"):
            ids = tok.encode(it["prompt"][mode], add_prefix=True, bos=True)
            out = greedy_generate(model, [ids], EOS, 256)[0]
            f.write(json.dumps({"index": it["index"], "mode": mode, "prompt": it["prompt"][mode], "prompt_ids": ids,
                                "tokens": out, "text": tok.decode(out)}) + "\n")
print("wrote", args.output)
