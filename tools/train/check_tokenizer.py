#!/usr/bin/python3
"""Check that tokenizer.py gives llama.cpp's ids (via tools/oracle/tokenize.mjs) on tinygsm text.

  /usr/bin/python3 tools/train/check_tokenizer.py --vocab out/run/vocab.json --data out/data/test.jsonl
Exit 0 when every string matches."""
import argparse, json, os, subprocess, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tokenizer import Tokenizer
from export_gguf import export
from model import Config, Llama

ap = argparse.ArgumentParser()
ap.add_argument("--vocab", required=True)
ap.add_argument("--data", required=True, help="tinygsm JSON lines")
ap.add_argument("--n", type=int, default=300)
ap.add_argument("--gguf", default="", help="use this GGUF instead of a vocab-only export")
args = ap.parse_args()
tok = Tokenizer.load(args.vocab)
texts = []
with open(args.data) as f:
    for i, line in enumerate(f):
        if i >= args.n:
            break
        it = json.loads(line)
        for m in ("fast", "mixed", "slow"):
            texts += [it["prompt"][m], it["target"][m]]
texts += ["", " ", "  two  spaces", "héllo wörld ✓ 日本", "tab\there", "new\nline\n\nx", "Answer: -12", "a\u2581b", "<s> </s>",
          "$5.50 costs 1,000!", "ÄÖÜ ß € 🙂",
          "Arithmetic:\n145 + 38 = 183. 105/5=21.", "300 1234 $200 0 007 255 256 2550 9999", "<unused:300>"]
gguf = args.gguf
tmp = None
if not gguf:
    tmp = tempfile.NamedTemporaryFile(suffix=".gguf", delete=False)
    cfg = Config(vocab=len(tok), dim=32, layers=1, heads=4, kv_heads=2, ffn=64)
    export(Llama(cfg), cfg, tok, tmp.name)
    gguf = tmp.name
r = subprocess.run(["node", os.path.join(HERE, "..", "oracle", "tokenize.mjs"), gguf], input=json.dumps(texts),
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("oracle failed: " + r.stderr)
ref = json.loads(r.stdout)["tokens"]
bad = 0
for t, want in zip(texts, ref):
    got = tok.encode(t, add_prefix=True)
    if got != want:
        bad += 1
        if bad <= 5:
            print("MISMATCH", repr(t), "\n python", got, "\n llama ", want)
# decode round trip (prefix space removed)
rtf = [t for t in texts if t and "\u2581" not in t and tok.decode(tok.encode(t))[1:] != t]
rt = len(rtf)
if rtf:
    print('round-trip failures:', [(t, tok.decode(tok.encode(t))) for t in rtf[:3]])
print(f"{len(texts) - bad}/{len(texts)} strings tokenize identically to llama.cpp; decode round-trip failures: {rt}")
if tmp:
    os.unlink(tmp.name)
sys.exit(1 if bad else 0)
