#!/usr/bin/python3
"""Writes data/natural/heldout.jsonl: the held-out natural set of the embedded model.

A small grammar of its own, written apart from tinygsm's generator (src/tinygsm/natural.cpp) and
on purpose unlike it: other names, other objects and units (kilometres, litres, cups of flour),
other verbs (bakes, plants, catches, hands out, throws away ...), other sentence shapes ("At the
start of the day ...", "By lunch ...", "How many ... remain?") and other ways of asking for plain
arithmetic. The hand-written questions in handwritten.jsonl are added as they are. The set is
never used for training or for choosing a model; `kvscope eval --file data/natural/heldout.jsonl`
measures it.

Each line: {"question", "answer", "steps", "source", "messages"} (messages: the user turn, so
`kvscope eval --data` reads it too). Deterministic: python3 data/natural/make_heldout.py rewrites
the same file.
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

NAMES = [("Bruno", "he"), ("Carmen", "she"), ("Farid", "he"), ("Greta", "she"), ("Hugo", "he"), ("Imani", "she"),
         ("Jamal", "he"), ("Keiko", "she"), ("Lars", "he"), ("Marisol", "she"), ("Nadia", "she"), ("Otto", "he"),
         ("Paloma", "she"), ("Quentin", "he"), ("Rosa", "she"), ("Sanjay", "he"), ("Tamar", "she"), ("Umar", "he"),
         ("Valentina", "she"), ("Wanjiru", "she"), ("Xavier", "he"), ("Yara", "she"), ("Zoltan", "he"),
         ("Astrid", "she"), ("Bilal", "he"), ("Chen", "he"), ("Dara", "she"), ("Esme", "she"), ("Felix", "he"),
         ("Gita", "she"), ("Hassan", "he"), ("Ilse", "she"), ("Joao", "he"), ("Kemal", "he"), ("Leilani", "she")]
OBJ = ["seeds", "pebbles", "postcards", "tulips", "strawberries", "lemons", "paperclips", "magnets", "comics",
       "dumplings", "badges", "candles", "socks", "puzzles", "acorns", "feathers", "bottle caps", "plums"]
FOOD = {"strawberries", "lemons", "dumplings", "plums"}
PRON = {"he": ("He", "him", "his"), "she": ("She", "her", "her")}


def person(rng, avoid=()):
    while True:
        n = rng.choice(NAMES)
        if n[0] not in avoid:
            return n


# ---- stories: a start, then events; answers tracked here
def start_sentence(rng, who, obj, n):
    return rng.choice([
        f"At the start of the day, {who} had {n} {obj}.",
        f"{who} keeps {n} {obj} in a drawer.",
        f"There are {n} {obj} in {who}'s basket.",
        f"{who} counted {n} {obj} this morning.",
        f"{who}'s collection holds {n} {obj}.",
    ])


def add_event(rng, who, pr, obj, n):
    return rng.choice([
        f"By lunch, {who} had gathered {n} more.",
        f"{pr[0]} bakes {n} more." if obj in FOOD else f"{pr[0]} trades for {n} more {obj}.",
        f"{who}'s aunt hands {pr[1]} {n} more {obj}.",
        f"In the afternoon {pr[0].lower()} picks up another {n}.",
        f"A neighbour drops off {n} {obj} for {pr[1]}.",
    ])


def sub_event(rng, who, pr, obj, n):
    opts = [f"{pr[0]} hands out {n} {obj} at school.",
            f"{who} throws away {n} of them.",
            f"{n} of the {obj} go missing.",
            f"{pr[0]} mails {n} {obj} to a cousin.",
            f"Later {pr[0].lower()} trades away {n}."]
    if obj in FOOD:
        opts.append(f"{pr[0]} and {pr[2]} brother snack on {n} of them.")
    return rng.choice(opts)


def mul_event(rng, who, pr, obj, k):
    word = {2: "twice", 3: "three times"}.get(k, f"{k} times")
    return rng.choice([
        f"After a lucky week, {who} owns {word} as many {obj} as before.",
        f"The pile of {obj} grows to {word} its size.",
    ])


def half_event(rng, who, pr, obj):
    return rng.choice([
        f"{pr[0]} puts half of the {obj} in the attic and forgets them.",
        f"{who} gives half of them to the school fair.",
    ])


QUESTIONS_ONE = ["How many {o} does {w} have now?", "How many {o} remain?", "How many {o} are in {w}'s hands at the end?",
                 "What's {w}'s total now?", "Count {w}'s {o} now. How many?", "So how many {o} is that?"]


def story(rng, steps):
    w, g = person(rng)
    pr = PRON[g]
    o = rng.choice(OBJ)
    v = rng.randint(5, 45)
    sents = [start_sentence(rng, w, o, v)]
    done = 0
    while done < steps:
        r = rng.random()
        if r < 0.4 and v <= 90:
            n = rng.randint(2, min(25, 100 - v))
            sents.append(add_event(rng, w, pr, o, n))
            v += n
        elif r < 0.75 and v >= 5:
            n = rng.randint(2, min(25, v - 2))
            sents.append(sub_event(rng, w, pr, o, n))
            v -= n
        elif r < 0.87 and v <= 33:
            k = rng.choice([2, 3]) if v <= 33 else 2
            sents.append(mul_event(rng, w, pr, o, k))
            v *= k
        elif v % 2 == 0 and v >= 4:
            sents.append(half_event(rng, w, pr, o))
            v //= 2
        else:
            continue
        done += 1
    if rng.random() < 0.25:  # a sentence that changes nothing
        x, _ = person(rng, (w,))
        sents.insert(rng.randint(1, len(sents)), rng.choice([f"{x} is visiting from out of town.",
                                                             f"The weather is cold and windy.",
                                                             f"{x} has {rng.randint(3, 40)} stamps."]))
    q = rng.choice(QUESTIONS_ONE).format(o=o, w=w)
    return " ".join(sents) + " " + q, v


def compare_story(rng):
    """Two people: one is said relative to the other; asked about the second or both."""
    a, _ = person(rng)
    b, _ = person(rng, (a,))
    unit, past, base = rng.choice([("km", "cycled", "cycle"), ("litres of water", "drank", "drink"),
                                   ("cups of flour", "used", "use"), ("euros", "spent", "spend")])
    va = rng.randint(6, 45)
    kind = rng.random()
    if kind < 0.4:
        n = rng.randint(2, 30)
        s = f"{a} {past} {va} {unit} this week, and {b} {past} {n} {unit} more than that."
        vb = va + n
    elif kind < 0.8:
        n = rng.randint(2, va - 2)
        s = f"{a} {past} {va} {unit} this week, while {b} {past} {n} fewer."
        vb = va - n
    else:
        s = f"{b} {past} double what {a} {past}, and {a} {past} {va} {unit}."
        vb = 2 * va
    q = unit.split(" ")[0]
    if rng.random() < 0.5:
        return s + f" How many {q} did {b} {base}?", vb, 1
    return s + f" How many {q} did the two of them {base} combined?", va + vb, 2


def rate_story(rng):
    w, g = person(rng)
    k, n = rng.randint(2, 7), rng.randint(2, 12)
    kind = rng.random()
    if kind < 0.35:
        return f"{w} bikes {n} kilometres every day for {k} days. How far is that altogether?", k * n, 1
    if kind < 0.7:
        return f"Each box holds {n} candles. {w} fills {k} boxes. How many candles go in the boxes?", k * n, 1
    s = rng.randint(2, 30)
    return (f"{w} already had {s} badges, then won {n} badges at each of {k} tournaments. How many badges now?",
            s + k * n, 2)


def split_story(rng):
    w, g = person(rng)
    k = rng.randint(2, 6)
    each = rng.randint(2, 12)
    total = k * each
    return rng.choice([f"{w} shares {total} plums equally among {k} children. How many plums does each child get?",
                       f"{total} socks are packed into {k} equal bundles. How many socks are in each bundle?",
                       f"If {total} euros are split evenly between {k} friends, how much does each friend get?"]), each, 1


# ---- bare arithmetic, asked in this set's own words
def arithmetic(rng, n_ops):
    if n_ops == 1:
        op = rng.choice("+-*/")
        if op == "+":
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            r = a + b
        elif op == "-":
            a = rng.randint(10, 99)
            b = rng.randint(1, a - 1)
            r = a - b
        elif op == "*":
            a, b = rng.randint(2, 12), rng.randint(2, 12)
            r = a * b
        else:
            b = rng.randint(2, 9)
            r = rng.randint(2, 12)
            a = b * r
        word = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}[op]
        form = rng.choice([f"what's {a} {op} {b}", f"Find {a} {op} {b}.", f"Tell me {a} {word} {b}.",
                           f"What does {a}{op}{b} equal?", f"{a} {word} {b} is what?", f"quick one: {a}{op}{b}",
                           f"I need {a} {op} {b}", f"What do you get from {a} {word} {b}?"])
        return form, r, 1
    # two operations, no precedence traps beyond the usual rule
    while True:
        a, b, c = rng.randint(2, 40), rng.randint(2, 9), rng.randint(2, 40)
        kind = rng.random()
        if kind < 0.35:
            r = a + b * c if rng.random() < 0.5 else None
            if r is None:
                if a - b < 0:
                    continue
                text, r = f"{a} - {b} + {c}", a - b + c
            else:
                text = f"{a} + {b} * {c}"
        elif kind < 0.7:
            if a - b * 2 < 0:
                continue
            text, r = f"{a} - {b} * 2", a - b * 2
        else:
            text, r = f"({a} + {c}) * {b}", (a + c) * b
        if 0 <= r <= 198:
            break
    return rng.choice([f"Find {text}.", f"what's {text}", f"What does {text} equal?", f"{text} is what?"]), r, 2


def main():
    rng = random.Random(20261206)
    rows = []
    seen = set()

    def add(q, a, steps, source="grammar"):
        if q in seen:
            return
        seen.add(q)
        rows.append({"question": q, "answer": a, "steps": steps, "source": source})

    while sum(r["source"] == "grammar" for r in rows) < 300:
        k = rng.random()
        if k < 0.2:
            add(*arithmetic(rng, 1 if rng.random() < 0.7 else 2))
        elif k < 0.55:
            steps = rng.choice([1, 1, 1, 2, 2, 3])
            q, a = story(rng, steps)
            add(q, a, steps)
        elif k < 0.7:
            add(*compare_story(rng))
        elif k < 0.85:
            add(*rate_story(rng))
        else:
            add(*split_story(rng))
    with open(os.path.join(HERE, "handwritten.jsonl")) as f:
        for line in f:
            if line.strip():
                h = json.loads(line)
                add(h["question"], h["answer"], h["steps"], "hand")
    for r in rows:
        r["messages"] = [{"role": "user", "content": r["question"]}]
    with open(os.path.join(HERE, "heldout.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    by = {}
    for r in rows:
        by[r["steps"]] = by.get(r["steps"], 0) + 1
    print(f"{len(rows)} questions; by steps {dict(sorted(by.items()))}")


if __name__ == "__main__":
    main()
