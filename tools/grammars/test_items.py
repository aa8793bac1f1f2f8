#!/usr/bin/python3
"""Checks of items.py (the gate every grammar's items pass) and of each grammar's output.

  /usr/bin/python3 tools/grammars/test_items.py [--n 400]

A wrong equation, a step the reasoning skips, a value out of range and a wrong answer must each be
refused; a good item must render as tinygsm --jsonl renders one. Then every grammar in this folder
writes --n items through items.write (which checks each one) and a few properties of the whole are
asserted: all step counts 1-4 occur, questions are unique, several first words open them.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import items  # noqa: E402

GOOD = {"user_text": "Keiko had 48 plums and ate 6. How many are left?",
        "reasoning": ["(1) Keiko has 48 plums.", "(2) Keiko has 48 - 6 = 42 plums."],
        "worked": [{"op": "-", "a": 48, "b": 6, "result": 42}], "answer": 42}


def with_(**kw):
    return {**json.loads(json.dumps(GOOD)), **kw}


def self_test():
    assert items.check(GOOD) == [], items.check(GOOD)
    bad = {
        "arithmetic slip": with_(worked=[{"op": "-", "a": 48, "b": 6, "result": 41}], answer=41),
        "equation not shown": with_(reasoning=["(1) Keiko has 48 plums.", "(2) Keiko has 42 plums."]),
        "value out of range": with_(worked=[{"op": "+", "a": 48, "b": 60, "result": 108}], answer=108,
                                    reasoning=["(1) Keiko has 48 + 60 = 108 plums."]),
        "answer not the last result": with_(answer=48),
        "inexact division": with_(worked=[{"op": "/", "a": 48, "b": 5, "result": 9}], answer=9,
                                  reasoning=["(1) Keiko has 48 / 5 = 9 plums."]),
        "non-ASCII question": with_(user_text="Keiko had 48 plums \u00f7 6"),
    }
    for name, item in bad.items():
        assert items.check(item), f"{name}: accepted"
    r = items.render(GOOD, "test")
    assert r["chat_prompt"]["slow"] == ("<|im_start|>user\nKeiko had 48 plums and ate 6. How many are left?<|im_end|>\n"
                                        "<|im_start|>system\nReasoning: high<|im_end|>\n<|im_start|>assistant\n<think>\n")
    assert r["chat_target"]["slow"] == "(1) Keiko has 48 plums. (2) Keiko has 48 - 6 = 42 plums.\n</think>\n\nAnswer: 42<|im_end|>"
    assert r["chat_target"]["mixed"] == "48-6=42.\n</think>\n\nAnswer: 42<|im_end|>"
    assert r["chat_target"]["fast"] == "\n</think>\n\nAnswer: 42<|im_end|>"
    assert r["steps"] == 1 and r["messages"][0]["content"] == GOOD["user_text"]
    # a question of an evaluation set is never written, whatever its case and spacing
    held = json.loads(open(os.path.join(HERE, "..", "..", "data", "natural", "heldout.jsonl")).readline())["question"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.jsonl")
        n = items.write([GOOD, with_(user_text="  ".join(held.upper().split()))], "test", out)
        assert n == 1 and json.loads(open(out).readline())["user_text"] == GOOD["user_text"]


def grammar_test(n):
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "*.py"))
                   if os.path.basename(p) not in ("items.py", "test_items.py"))
    assert names, "no grammars"
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            out = os.path.join(tmp, name + ".jsonl")
            subprocess.run([sys.executable, os.path.join(HERE, name + ".py"), "--n", str(n), "--seed", "3", "-o", out],
                           check=True, stdout=subprocess.DEVNULL)
            rows = [json.loads(line) for line in open(out)]
            assert len(rows) >= 0.95 * n, f"{name}: {len(rows)} of {n} items"
            steps = {r["steps"] for r in rows}
            assert {1, 2, 3} <= steps, f"{name}: steps {sorted(steps)}"
            texts = [r["user_text"] for r in rows]
            assert len(set(texts)) == len(texts), f"{name}: repeated questions"
            openers = {t.split()[0].lower() for t in texts}
            assert len(openers) >= 10, f"{name}: questions open with only {sorted(openers)}"
            again = os.path.join(tmp, name + "2.jsonl")
            subprocess.run([sys.executable, os.path.join(HERE, name + ".py"), "--n", str(n), "--seed", "3", "-o", again],
                           check=True, stdout=subprocess.DEVNULL)
            assert open(again).read() == open(out).read(), f"{name}: not deterministic for one seed"
            print(f"{name}: {len(rows)} items ok, steps {sorted(steps)}, {len(openers)} first words")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    args = ap.parse_args()
    self_test()
    grammar_test(args.n)
    print("grammar items ok")
