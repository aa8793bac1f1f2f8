#!/usr/bin/python3
"""Writes data/natural/calibration.jsonl: questions that calibrate the embedded model's answer confidence.

The confidence probe is fitted on tinygsm's own validation questions, which the model answers right
more often than what users type, so its raw scores are too high on users' questions. Its Platt
scaling (tools/train/calibrate_probe.py, run by tools/train/companions.sh) is fitted on questions
the model never trained on: tinygsm's held-out templates and this set, a third small grammar of
user-style questions written apart from tinygsm's generator (src/tinygsm/natural.cpp), from the
held-out natural set's grammar (make_heldout.py) and from the dev set (make_dev.py), with names,
objects, verbs and question shapes of its own. It is used for calibration only: never for training
or for choosing a model, and the held-out set stays apart from it.

Each line: {"question", "answer", "steps", "source", "messages"}, as in heldout.jsonl.
Deterministic: python3 data/natural/make_calibration.py rewrites the same file.
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

NAMES = [("Radu", "he"), ("Solveig", "she"), ("Thabo", "he"), ("Mirela", "she"), ("Oskar", "he"), ("Ayumi", "she"),
         ("Signe", "she"), ("Nuno", "he"), ("Vesna", "she"), ("Jorge", "he"), ("Mbali", "she"), ("Henrik", "he"),
         ("Anouk", "she"), ("Ciaran", "he"), ("Teodor", "he"), ("Liesel", "she"), ("Oona", "she"), ("Ezekiel", "he"),
         ("Malia", "she"), ("Tadeo", "he"), ("Beatrix", "she"), ("Cosmin", "he"), ("Halvard", "he"), ("Kalinda", "she"),
         ("Lorcan", "he"), ("Mireille", "she"), ("Nandi", "she"), ("Piet", "he"), ("Sunniva", "she"), ("Viggo", "he"),
         ("Wren", "she"), ("Zuri", "she")]
# (plural, container or place they are kept in)
THINGS = [("conkers", "a tin"), ("origami cranes", "a shoebox"), ("jars of jam", "the pantry"),
          ("guitar picks", "a pouch"), ("pieces of sea glass", "a jar"), ("rubber ducks", "the bathtub"),
          ("lanterns", "the shed"), ("sketches", "a folder"), ("tea bags", "a caddy"), ("paper boats", "a crate"),
          ("chestnuts", "a sack"), ("coupons", "a wallet"), ("flower pots", "the greenhouse"),
          ("comic strips", "a binder")]
SUBJ = {"he": ("He", "him", "his"), "she": ("She", "her", "her")}


def name(rng, avoid=()):
    while True:
        n = rng.choice(NAMES)
        if n[0] not in avoid:
            return n


def opening(rng, w, thing, place, n):
    return rng.choice([f"{w} keeps {n} {thing} in {place}.",
                       f"There were {n} {thing} in {place} that belongs to {w}.",
                       f"{w} starts the week with {n} {thing}.",
                       f"So {w} has got {n} {thing}.",
                       f"{w} owned {n} {thing} last month."])


def gain(rng, w, s, thing, n):
    return rng.choice([f"{s[0]} makes another {n}.",
                       f"Then {w} swaps a poster for {n} more {thing}.",
                       f"{w}'s grandpa sends {s[1]} {n} {thing} in the post.",
                       f"On Sunday {s[0].lower()} got {n} more from a flea market.",
                       f"{n} more {thing} turn up under the sofa."])


def loss(rng, w, s, thing, n):
    return rng.choice([f"{s[0]} donates {n} of them to the library sale.",
                       f"{w} lends {n} {thing} to a classmate.",
                       f"The dog ruins {n} of {s[2]} {thing}.",
                       f"Then {s[0].lower()} packs up {n} and ships them to a friend.",
                       f"{n} {thing} got lost on the train."])


def times(rng, w, s, thing, k):
    word = {2: "doubles", 3: "triples"}[k]
    return rng.choice([f"By the end of the month the number of {thing} {word}.",
                       f"{w} {word} {s[2]} stock of {thing}."])


def halve(rng, w, s, thing):
    return rng.choice([f"{s[0]} sells half of them.", f"Half of {w}'s {thing} go to {s[2]} sister."])


ASK = ["How many {t} does {w} end up with?", "What is the number of {t} {w} has now?",
       "How many {t} are left with {w}?", "Work out how many {t} {w} has.", "{w} has how many {t} now?",
       "how many is that now?"]


def story(rng, steps):
    w, g = name(rng)
    s = SUBJ[g]
    thing, place = rng.choice(THINGS)
    v = rng.randint(6, 48)
    sents = [opening(rng, w, thing, place, v)]
    done = 0
    while done < steps:
        r = rng.random()
        if r < 0.38 and v <= 88:
            n = rng.randint(2, min(29, 99 - v))
            sents.append(gain(rng, w, s, thing, n))
            v += n
        elif r < 0.76 and v >= 6:
            n = rng.randint(2, min(29, v - 2))
            sents.append(loss(rng, w, s, thing, n))
            v -= n
        elif r < 0.88 and v <= 30:
            k = rng.choice([2, 3]) if v <= 30 else 2
            sents.append(times(rng, w, s, thing, k))
            v *= k
        elif v % 2 == 0 and v >= 6:
            sents.append(halve(rng, w, s, thing))
            v //= 2
        else:
            continue
        done += 1
    if rng.random() < 0.2:  # nothing to compute in it
        x, _ = name(rng, (w,))
        sents.insert(rng.randint(1, len(sents)), rng.choice([f"{x} collects {rng.randint(3, 60)} stickers.",
                                                             f"It rained all afternoon.",
                                                             f"{x} helps out on weekends."]))
    return " ".join(sents) + " " + rng.choice(ASK).format(t=thing, w=w), v


def compare(rng):
    a, _ = name(rng)
    b, _ = name(rng, (a,))
    what, verb, verb_base = rng.choice([("goals", "scored", "score"), ("laps", "swam", "swim"),
                                        ("songs", "learned", "learn"), ("loaves", "baked", "bake")])
    va = rng.randint(6, 44)
    kind = rng.random()
    if kind < 0.35:
        n = rng.randint(2, 30)
        s, vb = f"{a} {verb} {va} {what}. {b} {verb} {n} more {what} than {a}.", va + n
    elif kind < 0.7:
        n = rng.randint(2, va - 2)
        s, vb = f"{a} {verb} {va} {what}, and {b} {verb} {n} less than {a} did.", va - n
    elif va <= 33:
        k = rng.choice([2, 3])
        s, vb = f"{b} {verb} {'twice' if k == 2 else 'three times'} as many {what} as {a}. {a} {verb} {va}.", k * va
    else:
        s, vb = f"{b} {verb} half as many {what} as {a}, who {verb} {va - va % 2}.", (va - va % 2) // 2
        va -= va % 2
    if rng.random() < 0.55:
        return s + f" How many {what} did {b} {verb_base}?", vb, 1
    return s + f" How many {what} did {a} and {b} {verb_base} between them?", va + vb, 2


def rate(rng):
    w, g = name(rng)
    k, n = rng.randint(2, 9), rng.randint(2, 11)
    kind = rng.random()
    if kind < 0.3:
        return f"A bus ticket costs {n} euros. {w} buys {k} of them. What does {w} pay in total?", k * n, 1
    if kind < 0.6:
        return f"{w} paints {n} flower pots an hour. How many does {SUBJ[g][1]} paint in {k} hours?", k * n, 1
    if kind < 0.8:
        return f"There are {k} shelves with {n} lanterns on each. How many lanterns are there?", k * n, 1
    s = rng.randint(3, 30)
    return (f"{w} had {s} coupons and collects {n} more each week for {k} weeks. How many coupons does "
            f"{SUBJ[g][0].lower()} have at the end?", s + k * n, 2)


def share(rng):
    w, g = name(rng)
    k = rng.randint(2, 8)
    each = rng.randint(2, 11)
    total = k * each
    return rng.choice([f"{w} splits {total} chestnuts evenly into {k} bags. How many chestnuts go in each bag?",
                       f"{total} tea bags are shared equally by {k} roommates. How many does each roommate get?",
                       f"{w} has {total} sketches to hang on {k} walls, the same number on every wall. "
                       f"How many sketches per wall?"]), each, 1


def arithmetic(rng, ops):
    if ops == 1:
        op = rng.choice("+-*/")
        if op == "+":
            a, b = rng.randint(3, 98), rng.randint(3, 98)
            r = a + b
        elif op == "-":
            a = rng.randint(12, 99)
            b = rng.randint(2, a - 2)
            r = a - b
        elif op == "*":
            a, b = rng.randint(2, 11), rng.randint(2, 11)
            r = a * b
        else:
            b, r = rng.randint(2, 9), rng.randint(2, 11)
            a = b * r
        word = {"+": "and", "-": "from", "*": "by", "/": "by"}[op]
        forms = {"+": [f"Add {a} and {b}.", f"{a} and {b} added together?", f"total of {a} {word} {b}"],
                 "-": [f"Take {b} from {a}.", f"What's left if you subtract {b} from {a}?", f"{a} take away {b}"],
                 "*": [f"Multiply {a} by {b}.", f"What is the product of {a} and {b}?", f"{a} lots of {b}?"],
                 "/": [f"Divide {a} by {b}.", f"How many times does {b} go into {a}?", f"{a} shared by {b} is?"]}
        return rng.choice(forms[op] + [f"compute {a}{op}{b}", f"= ? {a} {op} {b}"]), r, 1
    while True:
        a, b, c = rng.randint(3, 45), rng.randint(2, 8), rng.randint(3, 45)
        kind = rng.random()
        if kind < 0.4:
            text, r = f"{a} + {c} - {b}", a + c - b
        elif kind < 0.7:
            text, r = f"{b} * {c} + {a}", b * c + a
        else:
            text, r = f"{a} + {b} + {c}", a + b + c
        if 0 <= r <= 198:
            break
    return rng.choice([f"compute {text}", f"Evaluate {text}, please.", f"{text} = ?"]), r, 2


def main():
    rng = random.Random(20261207)
    rows, seen = [], set()
    while len(rows) < 400:
        k = rng.random()
        if k < 0.2:
            q, a, steps = arithmetic(rng, 1 if rng.random() < 0.7 else 2)
        elif k < 0.55:
            steps = rng.choice([1, 1, 1, 2, 2, 3])
            q, a = story(rng, steps)
        elif k < 0.7:
            q, a, steps = compare(rng)
        elif k < 0.85:
            q, a, steps = rate(rng)
        else:
            q, a, steps = share(rng)
        if q in seen:
            continue
        seen.add(q)
        rows.append({"question": q, "answer": a, "steps": steps, "source": "calibration",
                     "messages": [{"role": "user", "content": q}]})
    with open(os.path.join(HERE, "calibration.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    by = {}
    for r in rows:
        by[r["steps"]] = by.get(r["steps"], 0) + 1
    print(f"{len(rows)} questions; by steps {dict(sorted(by.items()))}")


if __name__ == "__main__":
    main()
