"""Items of the training grammars in tools/grammars/: checked, then rendered as tinygsm --jsonl does.

A grammar yields plain dicts:

    {"user_text": "Keiko had 48 plums and ate 6. How many are left?",
     "reasoning": ["(1) Keiko has 48 plums.", "(2) Keiko has 48 - 6 = 42 plums."],
     "worked": [{"op": "-", "a": 48, "b": 6, "result": 42}],
     "answer": 42}

check() names what is wrong with one (an arithmetic slip, an equation the reasoning does not show,
a value out of the model's range); render() adds the fields train.py reads (prompt/target and
chat_prompt/chat_target per mode, steps, messages), the same text src/tinygsm/tinygsm.cpp makes,
so these items mix with the generator's in one training set.
"""
import json
import os
import re

MODES = ("fast", "mixed", "slow")
LEVEL = {"fast": "low", "mixed": "medium", "slow": "high"}
MAX_VALUE = 100     # every operand, intermediate result and answer, as tinygsm (kMaxValue)
MAX_MUL_INPUT = 25  # the larger factor of a product, as tinygsm (kMaxMulInput)


def compute(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a // b if b and a % b == 0 else None
    return None


def equation(s, spaced=True):
    sp = " " if spaced else ""
    return f"{s['a']}{sp}{s['op']}{sp}{s['b']}{sp}={sp}{s['result']}"


def check(item):
    """A list of problems with one item (empty: usable)."""
    bad = []
    text = item.get("user_text")
    if not isinstance(text, str) or not text.strip() or text != text.strip():
        bad.append("user_text must be non-empty text without surrounding spaces")
    if any(ord(c) > 126 or (ord(c) < 32 and c != "\n") for c in text or ""):
        bad.append("user_text must be printable ASCII")
    worked, reasoning = item.get("worked") or [], item.get("reasoning") or []
    if not worked or len(worked) > 6:
        bad.append("1 to 6 worked steps")
    if not reasoning or not all(isinstance(r, str) and r.strip() == r and r for r in reasoning):
        bad.append("reasoning must be non-empty sentences without surrounding spaces")
    for s in worked:
        if s.get("op") not in ("+", "-", "*", "/"):
            bad.append(f"unknown op {s.get('op')!r}")
            continue
        r = compute(s["op"], s["a"], s["b"])
        if r is None or r != s["result"]:
            bad.append(f"{equation(s)} is wrong")
        for v in (s["a"], s["b"], s["result"]):
            if not isinstance(v, int) or not 1 <= v <= MAX_VALUE:
                bad.append(f"{equation(s)}: values must be integers in 1..{MAX_VALUE}")
                break
        if s["op"] == "*" and min(s["a"], s["b"]) > MAX_MUL_INPUT:
            bad.append(f"{equation(s)}: a factor must be at most {MAX_MUL_INPUT}")
    # the slow reasoning shows every step's equation, in order
    joined, pos = " ".join(reasoning), 0
    for s in worked:
        k = joined.find(equation(s), pos)
        if k < 0:
            bad.append(f"reasoning does not show {equation(s)} (in order)")
            break
        pos = k + 1
    if worked and item.get("answer") != worked[-1].get("result"):
        bad.append("answer must be the last step's result")
    for r in reasoning:
        if not re.match(r"^(\(\d\) )?[A-Z0-9\"(]", r):
            bad.append(f"reasoning sentence {r!r} must start with a capital, a digit or a (k) marker")
            break
    return bad


def chat_prompt(item, mode):
    return (f"<|im_start|>user\n{item['user_text']}<|im_end|>\n<|im_start|>system\nReasoning: {LEVEL[mode]}"
            "<|im_end|>\n<|im_start|>assistant\n<think>\n")


def thinking(item, mode):
    if mode == "mixed":
        return " ".join(equation(s, spaced=False) + "." for s in item["worked"])
    if mode == "slow":
        return " ".join(item["reasoning"])
    return ""


def render(item, grammar):
    """The item with every field train.py and kvscope eval read."""
    out = dict(item)
    out["grammar"] = grammar
    out["steps"] = len(item["worked"])
    out["question"] = item["user_text"]
    out["messages"] = [{"role": "user", "content": item["user_text"]}]
    out["prompt"], out["target"], out["chat_prompt"], out["chat_target"] = {}, {}, {}, {}
    for m in MODES:
        t = thinking(item, m)
        out["prompt"][m] = f"{item['user_text']}\nMode: {m}\n"
        out["target"][m] = (t + " " if t else "") + f"Answer: {item['answer']}"
        out["chat_prompt"][m] = chat_prompt(item, m)
        out["chat_target"][m] = f"{t}\n</think>\n\nAnswer: {item['answer']}<|im_end|>"
    return out


EVAL_SETS = ("heldout", "dev", "calibration", "calibration2", "select")  # data/natural/: never trained on


def normalised(text):
    return " ".join(text.lower().split())


def evaluation_questions():
    """The questions of the evaluation sets in data/natural/, normalised (a short bare-arithmetic
    question can come out of a grammar word for word)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "natural")
    out = set()
    for name in EVAL_SETS:
        with open(os.path.join(root, name + ".jsonl")) as f:
            out.update(normalised(json.loads(line)["question"]) for line in f if line.strip())
    return out


def write(items, grammar, path, avoid=None):
    """Checks and renders items into JSON lines; drops repeats and questions equal to one in `avoid`
    (default: the evaluation sets' questions). Raises on the first bad item, naming it."""
    seen, n = set(evaluation_questions() if avoid is None else avoid), 0
    with open(path, "w") as f:
        for it in items:
            bad = check(it)
            if bad:
                raise ValueError(f"{grammar}: {it.get('user_text')!r}: {'; '.join(bad)}")
            key = normalised(it["user_text"])
            if key in seen:
                continue
            seen.add(key)
            f.write(json.dumps(render(it, grammar)) + "\n")
            n += 1
    return n


def main(grammar, generate, doc):
    """The command line every grammar shares: NAME.py --n N --seed S -o OUT.jsonl, where
    generate(n, seed) returns n item dicts."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    n = write(generate(args.n, args.seed), grammar, args.out)
    print(f"{grammar}: wrote {n} items to {args.out}")
