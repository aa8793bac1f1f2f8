#!/usr/bin/env python3
"""Write calibration2.jsonl: a second, independently authored calibration set.

400 user-style arithmetic questions (260 one-step, 115 two-step, 25 three-step;
80 of them bare arithmetic) for the Platt scaling of the answer confidence,
pooled with calibration.jsonl so that no single author's difficulty sets the
scale. Written without sight of the training grammars or the other sets.

Every answer is computed from the quantities drawn, through Calc, which records
each arithmetic step; the checks at the end assert that every operand,
intermediate value and answer is an integer in 1..100, that the smaller factor
of every product is at most 25, that every division is exact, that the number of
recorded steps is the declared one, and that no question repeats.

    python3 data/natural/make_calibration2.py

Seeded: the same file every run.
"""
import json
import os
import random

SEED = 20261209
R = random.Random(SEED)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibration2.jsonl")

PLAN = {  # (steps, kind) -> count
    (1, "bare"): 52, (1, "story"): 208,
    (2, "bare"): 22, (2, "story"): 93,
    (3, "bare"): 6, (3, "story"): 19,
}
INFORMAL_RATE = 0.13  # share of story questions retyped casually


class Bad(Exception):
    """The drawn quantities break a limit; draw again."""


class Calc:
    def __init__(self):
        self.ops = []

    @staticmethod
    def _ok(v):
        if not (isinstance(v, int) and 1 <= v <= 100):
            raise Bad

    def _rec(self, op, a, b, r):
        for v in (a, b, r):
            self._ok(v)
        self.ops.append((op, a, b, r))
        return r

    def add(self, a, b):
        return self._rec("+", a, b, a + b)

    def sub(self, a, b):
        return self._rec("-", a, b, a - b)

    def mul(self, a, b):
        if min(a, b) > 25:
            raise Bad
        return self._rec("*", a, b, a * b)

    def div(self, a, b):
        if b == 0 or a % b:
            raise Bad
        return self._rec("/", a, b, a // b)


def n(lo, hi):
    return R.randint(lo, hi)


def pick(seq):
    return R.choice(seq)


# ---------------------------------------------------------------- people, money
FEMALE = ["Priya", "Ingrid", "Mei", "Anouk", "Aroha", "Lucia", "Zanele", "Noa", "Fatima",
          "Amara", "Leilani", "Nadia", "Astrid", "Yara", "Elif", "Rosa", "Maelle", "Ines",
          "Marisol", "Saoirse", "Agnieszka", "Malia", "Sakura", "Folake", "Daria", "Ximena",
          "Hana", "Oksana", "Mbali", "Paulina"]
MALE = ["Mateus", "Yusuf", "Kofi", "Lars", "Chidi", "Dmitri", "Farid", "Oskar", "Hamid",
        "Emeka", "Ravi", "Jonas", "Tomasz", "Bilal", "Pablo", "Kwame", "Dario", "Sven",
        "Tariq", "Arjun", "Olu", "Kenji", "Bongani", "Ilya", "Tane", "Rafael", "Joao",
        "Anders", "Matteo", "Diego"]


class P:
    def __init__(self, name, female):
        self.name = name
        self.he = "she" if female else "he"
        self.him = "her" if female else "him"
        self.his = "her" if female else "his"
        self.He = self.he.capitalize()
        self.His = self.his.capitalize()

    def __str__(self):
        return self.name


def people(k):
    names = R.sample([(x, True) for x in FEMALE] + [(x, False) for x in MALE], k)
    return [P(a, f) for a, f in names]


class Cur:
    def __init__(self, amt, note, unit):
        self.amt, self.note, self.unit = amt, note, unit


CURS = [
    Cur(lambda v: f"${v}", lambda v: f"a ${v} bill", "dollars"),
    Cur(lambda v: f"{v} euros", lambda v: f"a {v}-euro note", "euros"),
    Cur(lambda v: f"{v} pounds", lambda v: f"a {v}-pound note", "pounds"),
    Cur(lambda v: f"{v} dollars", lambda v: f"a {v}-dollar note", "dollars"),
]


# ---------------------------------------------------------------- registry
TEMPLATES = {key: [] for key in PLAN}


def t(steps, kind="story", informal=True):
    def reg(f):
        f.informal_ok = informal
        TEMPLATES[(steps, kind)].append(f)
        return f
    return reg


# ================================================================ bare, one step
@t(1, "bare")
def b_add_sym(c):
    a, b = n(11, 70), n(5, 60)
    r = c.add(a, b)
    return pick([f"What is {a} + {b}?", f"{a}+{b}=?", f"what's {a} + {b}", f"Calculate {a} + {b}.",
                 f"{a} + {b} = ?", f"quick one: {a}+{b}"])


@t(1, "bare")
def b_add_words(c):
    a, b = n(11, 70), n(5, 60)
    c.add(a, b)
    return pick([f"What do you get when you add {a} and {b}?", f"Add {b} to {a}.",
                 f"What is the sum of {a} and {b}?", f"{a} plus {b} is how much?",
                 f"hey what is {a} plus {b}", f"Can you add up {a} and {b} for me?"])


@t(1, "bare")
def b_sub_sym(c):
    a, b = n(25, 99), n(4, 60)
    c.sub(a, b)
    return pick([f"What is {a} - {b}?", f"{a}-{b}=?", f"whats {a} - {b}", f"Work out {a} - {b}.",
                 f"{a} - {b} = ?", f"Compute {a}-{b} please."])


@t(1, "bare")
def b_sub_words(c):
    a, b = n(25, 99), n(4, 60)
    c.sub(a, b)
    return pick([f"Subtract {b} from {a}.", f"What is {a} minus {b}?", f"take {b} away from {a}",
                 f"If you take {b} from {a}, what's left?", f"What is {b} less than {a}?",
                 f"How much is {a} take away {b}?", f"What is the difference between {a} and {b}?",
                 f"Knock {b} off {a}. What do you get?"])


@t(1, "bare")
def b_mul_sym(c):
    a, b = n(2, 12), n(3, 25)
    if R.random() < 0.5:
        a, b = b, a
    c.mul(a, b)
    return pick([f"What is {a} x {b}?", f"{a}*{b}", f"what's {a} times {b}", f"{a} × {b} = ?",
                 f"Calculate {a} * {b}.", f"{a}x{b}=?"])


@t(1, "bare")
def b_mul_words(c):
    a, b = n(2, 12), n(3, 25)
    c.mul(a, b)
    return pick([f"Multiply {b} by {a}.", f"What is {a} multiplied by {b}?",
                 f"What is the product of {a} and {b}?", f"how much is {a} lots of {b}",
                 f"What are {a} groups of {b}?", f"Can you multiply {a} and {b} for me?"])


@t(1, "bare")
def b_div_sym(c):
    d, q = n(2, 12), n(2, 15)
    a = d * q
    c.div(a, d)
    return pick([f"What is {a} / {d}?", f"{a}/{d}=?", f"what's {a} ÷ {d}", f"Work out {a} ÷ {d}.",
                 f"{a} / {d} = ?", f"calc {a}/{d}"])


@t(1, "bare")
def b_div_words(c):
    d, q = n(2, 12), n(2, 15)
    a = d * q
    c.div(a, d)
    return pick([f"Divide {a} by {d}.", f"What is {a} divided by {d}?",
                 f"How many {d}s are there in {a}?", f"Split {a} into {d} equal parts. How big is each part?",
                 f"what do you get if you divide {a} by {d}", f"{a} shared by {d} is how much?"])


@t(1, "bare")
def b_half(c):
    which = pick([(2, "Half"), (3, "A third"), (4, "A quarter"), (2, "half")])
    d = which[0]
    a = d * n(3, 33)
    c.div(a, d)
    w = which[1]
    return pick([f"What is {w.lower()} of {a}?", f"{w} of {a} is how much?", f"whats {w.lower()} of {a}"])


@t(1, "bare")
def b_double(c):
    a = n(6, 50)
    c.mul(a, 2)
    return pick([f"What is double {a}?", f"Double {a}.", f"what's twice {a}", f"What is {a} doubled?"])


# ================================================================ bare, two steps
@t(2, "bare")
def b2_add_sub(c):
    a, b, d = n(10, 60), n(5, 40), n(3, 40)
    c.sub(c.add(a, b), d)
    return pick([f"What is {a} + {b} - {d}?", f"{a}+{b}-{d}=?", f"Add {a} and {b}, then take away {d}.",
                 f"what's {a} plus {b} minus {d}"])


@t(2, "bare")
def b2_sub_add(c):
    a, b, d = n(30, 90), n(5, 40), n(3, 40)
    c.add(c.sub(a, b), d)
    return pick([f"What is {a} - {b} + {d}?", f"{a} - {b} + {d} = ?",
                 f"Start with {a}, subtract {b}, then add {d}. What do you get?"])


@t(2, "bare")
def b2_three_sum(c):
    a, b, d = n(5, 40), n(5, 40), n(5, 30)
    c.add(c.add(a, b), d)
    return pick([f"What is {a} + {b} + {d}?", f"Add up {a}, {b} and {d}.", f"{a}+{b}+{d}"])


@t(2, "bare")
def b2_paren_mul(c):
    a, b, k = n(2, 12), n(2, 12), n(2, 9)
    c.mul(c.add(a, b), k)
    return pick([f"What is ({a} + {b}) × {k}?", f"({a}+{b})*{k}=?",
                 f"Add {a} and {b}, then multiply the result by {k}."])


@t(2, "bare")
def b2_mul_add(c):
    a, b, d = n(2, 9), n(3, 12), n(2, 30)
    c.add(c.mul(a, b), d)
    return pick([f"What is {a} × {b} + {d}?", f"Multiply {a} by {b} and then add {d}.",
                 f"{a}*{b} + {d} = ?"])


@t(2, "bare")
def b2_mul_sub(c):
    a, b, d = n(3, 9), n(4, 12), n(2, 30)
    c.sub(c.mul(a, b), d)
    return pick([f"What is {a} × {b} - {d}?", f"Take {d} away from the product of {a} and {b}.",
                 f"{a}x{b}-{d}"])


@t(2, "bare")
def b2_div_add(c):
    d, q, e = n(2, 9), n(2, 12), n(3, 40)
    a = d * q
    c.add(c.div(a, d), e)
    return pick([f"What is {a} / {d} + {e}?", f"Divide {a} by {d}, then add {e}.",
                 f"{a}÷{d}+{e} = ?"])


@t(2, "bare")
def b2_sub_div(c):
    d, q, e = n(2, 9), n(2, 10), n(2, 30)
    a = d * q + e
    c.div(c.sub(a, e), d)
    return pick([f"What is ({a} - {e}) / {d}?", f"Subtract {e} from {a} and divide what is left by {d}."])


# ================================================================ bare, three steps
@t(3, "bare")
def b3_chain(c):
    a, b, d, e = n(10, 50), n(5, 30), n(3, 30), n(2, 30)
    c.add(c.sub(c.add(a, b), d), e)
    return pick([f"What is {a} + {b} - {d} + {e}?", f"{a}+{b}-{d}+{e}=?"])


@t(3, "bare")
def b3_words(c):
    k, q, add_, sub_ = n(2, 6), n(2, 10), n(2, 20), n(2, 20)
    a = k * q - add_
    minus = R.random() < 0.5
    x = c.div(c.add(a, add_), k)
    (c.sub if minus else c.add)(x, sub_)
    tail = f"subtract {sub_}" if minus else f"add {sub_}"
    return f"Start with {a}, add {add_}, divide by {k}, then {tail}. What number do you end up with?"


@t(3, "bare")
def b3_paren(c):
    a, b, k, d = n(2, 10), n(2, 10), n(2, 6), n(2, 30)
    c.sub(c.mul(c.add(a, b), k), d)
    return pick([f"What is ({a} + {b}) × {k} - {d}?", f"({a}+{b})*{k}-{d} = ?"])


# ================================================================ stories, one step
@t(1)
def s_gain(c):
    a = people(1)[0]
    hobby, item, gain = pick([
        ("keeps a jar of buttons", "buttons", "found {y} more in an old coat"),
        ("collects bottle caps", "bottle caps", "got {y} more from the cafe down the street"),
        ("has a box of seashells", "seashells", "picked up {y} more at the beach"),
        ("saves foreign coins", "coins", "brought back {y} more from a trip to Peru"),
        ("grows cactuses on the balcony", "cactuses", "bought {y} more at the garden centre"),
        ("collects enamel pins", "pins", "traded for {y} more at a convention"),
        ("builds model trains", "train cars", "got {y} more for her birthday"),
    ])
    x, y = n(8, 70), n(3, 40)
    c.add(x, y)
    gain = gain.format(y=y).replace("her birthday", f"{a.his} birthday")
    return f"{a} {hobby}. {a.He} had {x} {item} and {gain}. How many {item} does {a} have now?"


@t(1)
def s_lose(c):
    a = people(1)[0]
    item, act = pick([
        ("postcards", "sent {y} of them to friends"),
        ("balloons", "let {y} float away at the fair"),
        ("paper cups", "used {y} at the picnic"),
        ("jars of honey", "sold {y} at the Saturday market"),
        ("seed packets", "gave {y} to the school garden"),
        ("trading cards", "swapped away {y}"),
        ("candles", "burned {y} during a power cut"),
    ])
    x, y = n(15, 95), n(3, 50)
    c.sub(x, y)
    return pick([f"{a} had {x} {item}. {a.He} {act.format(y=y)}. How many {item} does {a.he} have left?",
                 f"{a} started the week with {x} {item} and {act.format(y=y)}. How many {item} are left?"])


@t(1)
def s_change(c):
    cur = pick(CURS)
    note = pick([20, 50, 100, 10])
    thing = pick(["a board game", "a kite", "a pair of running socks", "a cookbook", "a phone case",
                  "a bag of dog food", "a watering can", "a jigsaw puzzle"])
    p = n(3, note - 1)
    c.sub(note, p)
    return pick([f"I paid for {thing} that cost {cur.amt(p)} with {cur.note(note)}. How much change did I get?",
                 f"You hand the cashier {cur.note(note)} for {thing} priced at {cur.amt(p)}. How much change should you get back?",
                 f"{thing[0].upper() + thing[1:]} costs {cur.amt(p)}. If I pay with {cur.note(note)}, what's my change?"])


@t(1)
def s_share(c):
    a = people(1)[0]
    item = pick(["stickers", "grapes", "marbles", "crayons", "dumplings", "raffle tickets", "strawberries"])
    who = pick(["friends", "cousins", "classmates", "teammates"])
    k, q = n(2, 10), n(2, 12)
    tot = k * q
    c.div(tot, k)
    return pick([f"{a} shares {tot} {item} equally among {k} {who}. How many {item} does each of them get?",
                 f"{tot} {item} are split evenly between {k} {who}. How many does each get?",
                 f"{a} has {tot} {item} and wants to give the same number to each of {k} {who}, with none left over. How many should each one get?"])


ONE = {"boxes": "box", "trays": "tray", "bags": "bag", "shelves": "shelf", "racks": "rack",
       "bunches": "bunch", "envelopes": "envelope"}


@t(1)
def s_groups(c):
    k, q = n(2, 10), n(3, 12)
    cont, inner = pick([("boxes", "crayons"), ("trays", "eggs"), ("bags", "oranges"),
                        ("shelves", "jars"), ("racks", "bikes"), ("bunches", "bananas"),
                        ("envelopes", "stamps")])
    c.mul(k, q)
    return pick([f"There are {k} {cont} with {q} {inner} in each. How many {inner} are there in total?",
                 f"a shop has {k} {cont} of {inner}, {q} {inner} per {ONE[cont]}. how many {inner} altogether?",
                 f"If each of {k} {cont} holds {q} {inner}, how many {inner} is that?"])


@t(1)
def s_more_than(c):
    a, b = people(2)
    item, verb = pick([("goals", "scored"), ("pancakes", "made"), ("photos", "took"),
                       ("push-ups", "did"), ("kites", "sold"), ("emails", "answered")])
    x, y = n(5, 60), n(2, 35)
    c.add(x, y)
    return f"{a} {verb} {x} {item}. {b} {verb} {y} more {item} than {a}. How many {item} did {b} {'do' if verb == 'did' else {'scored': 'score', 'made': 'make', 'took': 'take', 'sold': 'sell', 'answered': 'answer'}[verb]}?"


@t(1)
def s_fewer_than(c):
    a, b = people(2)
    x, y = n(15, 90), n(2, 30)
    c.sub(x, y)
    item = pick(["laps", "pages", "songs", "flowers", "sandcastles"])
    verb, base = {"laps": ("ran", "run"), "pages": ("read", "read"), "songs": ("learned", "learn"),
                  "flowers": ("painted", "paint"), "sandcastles": ("built", "build")}[item]
    return pick([f"{a} {verb} {x} {item}. {b} {verb} {y} fewer {item} than {a}. How many {item} did {b} {base}?",
                 f"{b} {verb} {y} fewer {item} than {a}, and {a} {verb} {x}. How many {item} did {b} {base}?"])


@t(1)
def s_times(c):
    a = people(1)[0]
    rel = pick(["brother", "sister", "uncle", "grandmother", "best friend"])
    item, verb, base = pick([("muffins", "baked", "bake"), ("books", "read", "read"),
                             ("fish", "caught", "catch"), ("paper cranes", "folded", "fold"),
                             ("tomatoes", "picked", "pick")])
    x, k = n(2, 20), n(2, 6)
    c.mul(x, k)
    times = {2: "twice"}.get(k, f"{k} times")
    return f"{a} {verb} {x} {item}. {a.His} {rel} {verb} {times} as many. How many {item} did {a.his} {rel} {base}?"


@t(1)
def s_diff(c):
    a, b = people(2)
    item = pick(["comic books", "board games", "houseplants", "vinyl records", "chess trophies"])
    x, y = n(20, 95), n(4, 60)
    c.sub(x, y)
    return pick([f"{a} owns {x} {item} and {b} owns {y}. How many more {item} does {a} own than {b}?",
                 f"{b} has {y} {item}. {a} has {x}. How many fewer {item} does {b} have than {a}?"])


@t(1)
def s_together(c):
    a, b = people(2)
    game = pick(["basketball game", "spelling bee", "darts match", "quiz night", "video game tournament"])
    x, y = n(5, 55), n(5, 45)
    c.add(x, y)
    return pick([f"In the {game}, {a} scored {x} points and {b} scored {y}. How many points did they score together?",
                 f"{a} and {b} were on the same team at the {game}. {a} got {x} points, {b} got {y}. What was their combined score?"])


@t(1)
def s_ferry(c):
    x, y = n(8, 60), n(5, 40)
    c.add(x, y)
    return pick([f"A ferry sails {x} km to the first island and then {y} km to the next one. How far does it sail in all?",
                 f"On our road trip we drove {x} km on Saturday and {y} km on Sunday. How many km did we drive over the weekend?"])


@t(1)
def s_trail_left(c):
    tot, w = n(12, 95), n(3, 60)
    c.sub(tot, w)
    return pick([f"The hiking trail is {tot} km long. We have walked {w} km so far. How many km do we still have to walk?",
                 f"Our bike tour is {tot} km. After {w} km we stop for lunch. How much farther is it to the end?",
                 f"It's {tot} km from the campsite to the town and I've already cycled {w} km. How many km are left?"])


@t(1)
def s_practice(c):
    a = people(1)[0]
    act = pick(["practised the violin", "studied Spanish", "worked on a puzzle", "played chess online",
                "swam laps", "did yoga"])
    x, y = n(10, 55), n(10, 45)
    c.add(x, y)
    return f"{a} {act} for {x} minutes on Monday and {y} minutes on Tuesday. How many minutes is that altogether?"


@t(1)
def s_oven(c):
    tot, w = n(20, 90), n(5, 60)
    c.sub(tot, w)
    dish = pick(["The bread", "The lasagna", "The banana cake", "The roast chicken", "The pie"])
    return pick([f"{dish} needs {tot} minutes in the oven. It has been in for {w} minutes. How many more minutes does it need?",
                 f"{dish} bakes for {tot} minutes and I put it in {w} minutes ago. how many minutes until it's done"])


@t(1)
def s_rate(c):
    r, h = n(3, 20), n(2, 9)
    c.mul(r, h)
    return pick([f"A machine in the workshop cuts {r} planks every hour. How many planks does it cut in {h} hours?",
                 f"A printer prints {r} pages a minute. How many pages does it print in {h} minutes?",
                 f"A boat moves {r} km each hour. How far does it go in {h} hours?",
                 f"The pet shop sells about {r} goldfish a day. At that rate, how many goldfish does it sell in {h} days?"])


@t(1)
def s_price_each(c):
    cur = pick(CURS)
    p, q = n(2, 15), n(2, 9)
    thing = pick(["notebooks", "mangoes", "tennis balls", "bus tickets", "paintbrushes", "cupcakes"])
    c.mul(p, q)
    return pick([f"{thing.capitalize()} cost {cur.amt(p)} each. How much do {q} {thing} cost?",
                 f"I want to buy {q} {thing} at {cur.amt(p)} each. What's the total?",
                 f"how much would {q} {thing} cost if one costs {cur.amt(p)}"])


@t(1)
def s_one_price(c):
    cur = pick(CURS)
    k, p = n(2, 8), n(3, 15)
    tot = k * p
    c.div(tot, k)
    thing = pick(["concert tickets", "cinema tickets", "museum passes", "pizzas", "T-shirts"])
    return f"{k} {thing} cost {cur.amt(tot)} in total. They all cost the same. How much is one?"


@t(1)
def s_cartons(c):
    a = people(1)[0]
    item, box = pick([("eggs", "carton"), ("cookies", "tin"), ("apples", "crate"),
                      ("tea bags", "packet"), ("seedlings", "pot")])
    k, q = n(4, 12), n(3, 10)
    tot = k * q
    c.div(tot, k)
    return pick([f"{a} has {tot} {item} and packs them {k} to a {box}. How many {box}s does {a.he} fill?",
                 f"{a} puts {tot} {item} into {box}s, {k} in each. How many {box}s does {a.he} need?"])


@t(1)
def s_fraction(c):
    d, w = pick([(2, "Half"), (3, "A third"), (4, "A quarter")])
    tot = d * n(4, 25)
    c.div(tot, d)
    return pick([f"There are {tot} people on the tour bus. {w} of them are from Canada. How many people on the bus are from Canada?",
                 f"{w} of the {tot} fish in the pond are orange. How many orange fish are there?",
                 f"{w} of the {tot} books on the library cart are mysteries. How many mysteries are on the cart?"])


@t(1)
def s_before(c):
    a = people(1)[0]
    y, before = n(3, 40), n(5, 55)
    tot = before + y
    c.sub(tot, y)
    item = pick(["marbles", "stamps", "seashells", "badges"])
    return pick([f"{a} had some {item}. After winning {y} more, {a.he} has {tot}. How many did {a.he} have to begin with?",
                 f"After {a}'s uncle gave {a.him} {y} {item}, {a} had {tot} {item}. How many {item} did {a} have before that?"])


@t(1)
def s_you_spend(c):
    x, y = n(15, 90), n(3, 50)
    c.sub(x, y)
    return pick([f"You have {x} tokens at the arcade and spend {y} on a racing game. How many tokens do you have left?",
                 f"You had {x} gold coins in the game and paid {y} for a new sword. How many coins do you have now?"])


@t(1)
def s_we_need(c):
    tot, w = n(15, 95), n(3, 70)
    c.sub(tot, w)
    what = pick(["chairs for the meeting", "cups for the party", "sandbags along the river",
                 "volunteers for the race", "pieces for the mosaic"])
    word, verb = {"chairs for the meeting": ("chairs", "set out"), "cups for the party": ("cups", "washed"),
                  "sandbags along the river": ("sandbags", "filled"),
                  "volunteers for the race": ("volunteers", "signed up"),
                  "pieces for the mosaic": ("pieces", "cut")}[what]
    return f"We need {tot} {what} and we have {verb} {w} so far. How many more {word} do we need?"


@t(1)
def s_distractor_fruit(c):
    a = people(1)[0]
    x, z, y = n(10, 60), n(2, 20), n(2, 40)
    c.sub(x, y)
    other = pick(["melons", "pineapples", "lemons", "avocados"])
    return pick([f"{a} bought {x} oranges and {z} {other}. {a.He} ate {y} of the oranges. How many oranges does {a.he} have left?",
                 f"{a} bought {z} {other} and {x} oranges. Over the week {a.he} squeezed {y} oranges for juice. How many oranges are left?"])


@t(1)
def s_distractor_petshop(c):
    x, z, w, y = n(15, 80), n(3, 40), n(2, 20), n(2, 50)
    c.sub(x, y)
    return pick([f"The pet shop has {x} goldfish, {z} hamsters and {w} parrots. It sells {y} goldfish today. How many goldfish does it have now?",
                 f"A pet shop had {z} rabbits and {x} guinea pigs. {y} of the guinea pigs were adopted. How many guinea pigs are still at the shop?"])


@t(1)
def s_shelves(c):
    q, k = n(4, 12), n(2, 9)
    c.mul(q, k)
    return pick([f"Each shelf in the library corner holds {q} books. There are {k} full shelves. How many books are on them?",
                 f"Every team in the tournament has {q} players. {k} teams turned up. How many players are there?",
                 f"Each row in the garden has {q} cabbages. There are {k} rows. How many cabbages are there?"])


@t(1)
def s_age_older(c):
    a = people(1)[0]
    x, y = n(6, 40), n(20, 60)
    c.add(x, y)
    rel = pick(["grandmother", "grandfather", "aunt", "neighbour"])
    return f"{a} is {x} years old. {a.His} {rel} is {y} years older. How old is {a.his} {rel}?"


@t(1)
def s_age_diff(c):
    a, b = people(2)
    x, y = n(30, 90), n(5, 40)
    c.sub(x, y)
    return pick([f"{a} is {x} and {b} is {y}. How many years older is {a} than {b}?",
                 f"{b} is {y} years old and {a} is {x}. What's the age difference between them?"])


@t(1)
def s_me_gain(c):
    x, y = n(10, 70), n(3, 30)
    c.add(x, y)
    return pick([f"I had {x} stamps in my album and my aunt sent me {y} more. How many stamps do I have now?",
                 f"I've knitted {x} rows of my scarf and I knit {y} more tonight. How many rows will that make?",
                 f"My fish tank had {x} snails and then {y} more hatched. How many snails are in the tank now?"])


@t(1)
def s_me_rows(c):
    k, q = n(2, 10), n(3, 12)
    c.mul(k, q)
    return pick([f"I planted {k} rows of lettuce with {q} plants in each row. How many lettuce plants did I plant?",
                 f"i bought {k} packs of stickers with {q} stickers in each. how many stickers is that in total"])


@t(1)
def s_me_pages(c):
    tot, w = n(30, 100), n(5, 80)
    c.sub(tot, w)
    return pick([f"My book has {tot} pages and I've read {w}. How many pages do I still have to read?",
                 f"i need {tot} points to reach the next level and i have {w}. how many more points do i need?"])


@t(1)
def s_weekly(c):
    a = people(1)[0]
    cur = pick(CURS)
    r, w = n(2, 15), n(2, 10)
    c.mul(r, w)
    return f"{a} saves {cur.amt(r)} every week. How much has {a.he} saved after {w} weeks?"


@t(1)
def s_bill(c):
    cur = pick(CURS)
    k, p = n(2, 8), n(4, 20)
    tot = k * p
    c.div(tot, k)
    return pick([f"{k} friends split a dinner bill of {cur.amt(tot)} equally. How much does each friend pay?",
                 f"We are {k} people and the taxi costs {cur.amt(tot)}. If we share it equally, how much does each of us pay?"])


@t(1)
def s_bus(c):
    x, y = n(12, 60), n(2, 30)
    c.sub(x, y)
    return f"A bus had {x} passengers. At the next stop {y} got off and nobody got on. How many passengers are on the bus now?"


@t(1)
def s_trips(c):
    q, k = n(3, 12), n(2, 9)
    tot = q * k
    c.div(tot, q)
    return pick([f"A van can carry {q} boxes at a time. How many trips does it take to move {tot} boxes?",
                 f"The little ferry takes {q} campers at a time. How many ferry trips does it take to get {tot} campers across the lake?"])


@t(1)
def s_recipe(c):
    q, k = n(2, 8), n(2, 9)
    c.mul(q, k)
    ing = pick(["eggs", "spoons of sugar", "bananas", "cups of milk"])
    dish = pick(["cake", "batch of pancakes", "loaf of banana bread"])
    plural = {"cake": "cakes", "batch of pancakes": "batches of pancakes",
              "loaf of banana bread": "loaves of banana bread"}[dish]
    return f"One {dish} takes {q} {ing}. How many {ing} do I need for {k} {plural}?"


@t(1)
def s_temperature(c):
    if R.random() < 0.5:
        x, y = n(2, 20), n(2, 15)
        c.add(x, y)
        return f"It was {x} degrees at 7 in the morning, and by noon the temperature had gone up by {y} degrees. What was the temperature at noon?"
    x, y = n(14, 28), n(1, 6)
    c.add(x, y)
    return f"The pool was {x} degrees. The heater warmed it by {y} degrees. How warm is the pool now?"


@t(1)
def s_other_person(c):
    a, b, d = people(3)
    x, y = n(3, 40), n(2, 30)
    c.add(x, y)
    return f"{a}, {b} and {d} went berry picking. {a} filled {n(2, 9)} baskets. {b} picked {x} berries and {d} picked {y} more berries than {b}. How many berries did {d} pick?"


@t(1)
def s_left_after_party(c):
    x, y = n(20, 90), n(3, 60)
    c.sub(x, y)
    return pick([f"We made {x} dumplings for the party and the guests ate {y}. How many dumplings were left over?",
                 f"The office ordered {x} bagels for the meeting. {y} were eaten. How many bagels are left?"])


@t(1)
def s_gym(c):
    a = people(1)[0]
    x, y = n(10, 60), n(5, 40)
    c.add(x, y)
    return pick([f"{a} cycled {x} km to the lake and then {y} km along the shore. How many km did {a} cycle in total?",
                 f"{a} walked {x} minutes to the station and then rode the train for {y} minutes. How long did the trip take in minutes?"])


# ================================================================ stories, two steps
@t(2)
def s2_buy_give(c):
    a, b = people(2)
    item = pick(["pencils", "stickers", "guitar picks", "balloons", "beads"])
    x, y, z = n(5, 50), n(3, 30), n(2, 40)
    c.sub(c.add(x, y), z)
    return pick([f"{a} had {x} {item}. {a.He} bought {y} more and then gave {z} to {b}. How many {item} does {a} have now?",
                 f"{a} has {x} {item}, buys another {y}, then hands {z} to {b}. How many {item} does {a} end up with?"])


@t(2)
def s2_change_many(c):
    cur = pick(CURS)
    note = pick([20, 50, 100])
    k, p = n(2, 9), n(2, 15)
    thing = pick(["postcards", "coffees", "bus tickets", "notebooks", "ice creams", "bags of chips"])
    c.sub(note, c.mul(k, p))
    return pick([f"I bought {k} {thing} at {cur.amt(p)} each and paid with {cur.note(note)}. How much change did I get?",
                 f"{k} {thing} cost {cur.amt(p)} each. You pay with {cur.note(note)}. How much change do you get?"])


@t(2)
def s2_change_two(c):
    cur = pick(CURS)
    note = pick([20, 50, 100])
    (t1, m1), (t2, m2) = R.sample([("a sandwich", 9), ("a magazine", 8), ("a scarf", 45),
                                   ("a bottle of water", 4), ("a map", 12), ("a hat", 35),
                                   ("a jar of paint", 15), ("a dog toy", 20), ("a rain jacket", 60),
                                   ("a pair of sandals", 40)], 2)
    p, q = n(2, m1), n(2, m2)
    c.sub(note, c.add(p, q))
    return pick([f"You buy {t1} for {cur.amt(p)} and {t2} for {cur.amt(q)}, and pay with {cur.note(note)}. What is your change?",
                 f"At the market I got {t1} for {cur.amt(p)} and {t2} for {cur.amt(q)}. I paid with {cur.note(note)}. How much did I get back?"])


@t(2)
def s2_more_total(c):
    a, b = people(2)
    item = pick(["shells", "acorns", "bird photos", "pine cones", "stones"])
    x, y = n(5, 40), n(2, 25)
    c.add(x, c.add(x, y))
    return pick([f"{a} found {x} {item}. {b} found {y} more than {a}. How many {item} did they find altogether?",
                 f"{b} collected {y} more {item} than {a}, who collected {x}. How many {item} did the two of them collect?"])


@t(2)
def s2_fewer_total(c):
    a, b = people(2)
    x, y = n(15, 60), n(2, 14)
    c.add(x, c.sub(x, y))
    return pick([f"{a} ran {x} laps of the track this month. {b} ran {y} fewer. How many laps did they run together?",
                 f"{a} has {x} songs on a playlist and {b} has {y} fewer songs. How many songs do they have in all?"])


@t(2)
def s2_times_total(c):
    a, b = people(2)
    x, k = n(4, 15), n(2, 5)
    c.add(x, c.mul(x, k))
    times = {2: "twice"}.get(k, f"{k} times")
    item = pick(["cherries", "mushrooms", "blackberries", "walnuts"])
    return f"{a} picked {x} {item}. {b} picked {times} as many as {a}. How many {item} did they pick in all?"


@t(2)
def s2_packs_used(c):
    a = people(1)[0]
    k, q, z = n(2, 8), n(4, 12), n(2, 40)
    item, pack = pick([("batteries", "packs"), ("nails", "bags"), ("juice boxes", "crates"),
                       ("tea lights", "boxes"), ("screws", "packets")])
    c.sub(c.mul(k, q), z)
    return f"{a} bought {k} {pack} of {item} with {q} in each and used {z} of them. How many {item} are left?"


@t(2)
def s2_share_then(c):
    a = people(1)[0]
    k, q = n(2, 8), n(4, 12)
    z = n(1, q - 1)
    tot = k * q
    c.sub(c.div(tot, k), z)
    return f"{a} split {tot} trading cards equally among {k} friends. One of the friends then gave {z} of his cards to his little brother. How many cards does that friend have now?"


@t(2)
def s2_movie_left(c):
    tot, x, y = n(60, 100), n(10, 40), n(10, 40)
    c.sub(tot, c.add(x, y))
    return pick([f"The movie is {tot} minutes long. We watched {x} minutes before dinner and {y} minutes after. How many minutes are left?",
                 f"A podcast episode lasts {tot} minutes. I listened to {x} minutes on the bus and {y} minutes at the gym. How many minutes do I have left?"])


@t(2)
def s2_three_legs(c):
    a = people(1)[0]
    x, y, z = n(5, 40), n(5, 35), n(3, 25)
    c.add(c.add(x, y), z)
    return f"{a} drove {x} km to the market, {y} km to a friend's farm and then {z} km home. How far did {a.he} drive in total?"


@t(2)
def s2_earn_spend(c):
    a = people(1)[0]
    cur = pick(CURS)
    r, d, z = n(3, 15), n(2, 7), n(2, 40)
    c.sub(c.mul(r, d), z)
    job = pick(["walking dogs", "babysitting", "washing cars", "mowing lawns"])
    return f"{a} earns {cur.amt(r)} a day {job}. After {d} days {a.he} spends {cur.amt(z)} on a video game. How much money does {a.he} have left?"


@t(2)
def s2_unit_price(c):
    cur = pick(CURS)
    k, p, m = n(2, 6), n(2, 15), n(2, 9)
    if m == k:
        raise Bad
    tot = k * p
    c.mul(c.div(tot, k), m)
    thing = pick(["bags of coffee", "movie tickets", "sketchbooks", "potted herbs"])
    return f"{k} {thing} cost {cur.amt(tot)}. Each one costs the same. How much would {m} {thing} cost?"


@t(2)
def s2_boxes_left(c):
    q, k, z = n(3, 12), n(3, 12), n(1, 8)
    tot = q * k
    c.sub(c.div(tot, q), z)
    return f"A bakery packs {tot} cupcakes into boxes of {q}. It gives {z} of the boxes to a school. How many boxes does the bakery keep?"


@t(2)
def s2_distractor_books(c):
    a = people(1)[0]
    age, x, y, z = n(8, 15), n(5, 40), n(2, 15), n(2, 30)
    c.sub(c.add(x, y), z)
    return f"{a} is {age} years old. {a.He} has {x} books at home and borrows {y} more from the library. Later {a.he} donates {z} books to a charity shop. How many books does {a.he} have now?"


@t(2)
def s2_tulips(c):
    k, q, z = n(3, 9), n(4, 12), n(2, 20)
    c.sub(c.mul(k, q), z)
    return pick([f"We planted {k} rows of tulips with {q} bulbs in each row. {z} of the bulbs never came up. How many tulips came up?",
                 f"we set out {k} tables with {q} chairs each for the wedding, then took away {z} chairs. how many chairs are left"])


@t(2)
def s2_bus(c):
    x, y, z = n(12, 60), n(2, 30), n(2, 30)
    c.add(c.sub(x, y), z)
    return pick([f"A bus had {x} passengers. At the first stop {y} got off and {z} got on. How many passengers are on the bus now?",
                 f"The train car had {x} people in it. At the station {y} people got off and then {z} got on. How many people are in the car now?"])


@t(2)
def s2_third_person(c):
    a, b, d = people(3)
    x, k, z = n(3, 15), n(2, 5), n(2, 20)
    c.sub(c.mul(x, k), z)
    times = {2: "twice"}.get(k, f"{k} times")
    return f"{a} has {x} cards. {b} has {times} as many cards as {a}. {d} has {z} fewer cards than {b}. How many cards does {d} have?"


@t(2)
def s2_you_score(c):
    x, y, z = n(5, 45), n(5, 45), n(5, 80)
    c.sub(c.add(x, y), z)
    return f"You scored {x} points in the first round and {y} in the second. Your friend scored {z} points in total. How many more points did you score than your friend?"


@t(2)
def s2_coupon(c):
    a = people(1)[0]
    cur = pick(CURS)
    p, k, z = n(3, 15), n(2, 8), n(2, 20)
    c.sub(c.mul(p, k), z)
    return f"Each ticket to the water park costs {cur.amt(p)}. {a} buys {k} tickets and uses a coupon for {cur.amt(z)} off the total. How much does {a.he} pay?"


@t(2)
def s2_half_then(c):
    a = people(1)[0]
    tot, y = 2 * n(5, 45), n(2, 30)
    c.add(c.div(tot, 2), y)
    return f"{a} had {tot} stickers and gave half of them to {a.his} sister. Then {a.he} bought {y} more. How many stickers does {a} have now?"


@t(2)
def s2_laps(c):
    a = people(1)[0]
    q, k, z = n(2, 6), n(2, 9), n(1, 20)
    c.add(c.mul(q, k), z)
    return f"One lap around the park is {q} km. {a} jogged {k} laps and then walked {z} km home. How many km did {a.he} cover in total?"


@t(2)
def s2_cart(c):
    x, y, z = n(30, 95), n(3, 40), n(3, 40)
    c.sub(c.sub(x, y), z)
    return pick([f"There were {x} books on the library cart. Volunteers shelved {y} in the morning and {z} in the afternoon. How many books are still on the cart?",
                 f"i had {x} euros at the start of the trip, spent {y} on the hostel and {z} on food. how much do i have left?"])


@t(2)
def s2_garden_share(c):
    a = people(1)[0]
    x, y, k = n(5, 40), n(5, 40), n(2, 8)
    s = x + y
    if s % k:
        raise Bad
    c.div(c.add(x, y), k)
    return f"{a} picked {x} tomatoes on Friday and {y} on Saturday. {a.He} shares all of them equally among {k} neighbours. How many tomatoes does each neighbour get?"


@t(2)
def s2_workshop(c):
    x, k, q = n(5, 50), n(2, 6), n(3, 12)
    c.add(x, c.mul(k, q))
    return f"A carpenter has {x} hinges in her workshop. She orders {k} more boxes of hinges with {q} hinges in each box. How many hinges will she have?"


# ================================================================ stories, three steps
@t(3)
def s3_chain(c):
    a, b = people(2)
    x, y, z, w = n(10, 40), n(3, 30), n(2, 30), n(2, 20)
    c.add(c.sub(c.add(x, y), z), w)
    item = pick(["marbles", "golf balls", "shells", "keyrings"])
    return f"{a} had {x} {item}. {a.He} won {y} more, gave {z} to {b}, and then found {w} under the sofa. How many {item} does {a} have now?"


@t(3)
def s3_change(c):
    cur = pick(CURS)
    note = pick([50, 100])
    k, p, q = n(2, 6), n(2, 12), n(2, 30)
    thing, extra = pick([("notebooks", "a backpack"), ("apples", "a loaf of bread"),
                         ("bus passes", "a city map"), ("packs of seeds", "a trowel")])
    c.sub(note, c.add(c.mul(k, p), q))
    return f"I bought {k} {thing} at {cur.amt(p)} each and {extra} for {cur.amt(q)}. I paid with {cur.note(note)}. How much change did I get?"


@t(3)
def s3_three_people(c):
    a, b, d = people(3)
    x, k, z = n(3, 12), n(2, 4), n(2, 15)
    bb = c.mul(x, k)
    dd = c.sub(bb, z)
    c.add(bb, dd)
    times = {2: "twice"}.get(k, f"{k} times")
    return f"{a} has {x} comics. {b} has {times} as many comics as {a}. {d} has {z} fewer comics than {b}. How many comics do {b} and {d} have together?"


@t(3)
def s3_road_trip(c):
    tot, x = n(40, 100), n(5, 30)
    dbl = c.mul(x, 2)
    c.sub(tot, c.add(x, dbl))
    return f"The road trip is {tot} km long. On the first day we drove {x} km, and on the second day we drove twice as far as on the first day. How many km are left?"


@t(3)
def s3_cookies(c):
    a, b = people(2)
    k, q, z = n(2, 6), n(4, 12), n(1, 20)
    c.div(c.sub(c.mul(k, q), z), 2)
    return f"{a} baked {k} trays of cookies with {q} cookies on each tray. {a.He} ate {z} and gave half of the rest to {b}. How many cookies did {b} get?"


@t(3)
def s3_wage(c):
    a = people(1)[0]
    cur = pick(CURS)
    r, h, z, w = n(4, 15), n(2, 8), n(2, 30), n(2, 15)
    c.sub(c.sub(c.mul(r, h), z), w)
    return f"{a} earns {cur.amt(r)} an hour at the bike shop. {a.He} worked {h} hours, then spent {cur.amt(z)} on lunch and {cur.amt(w)} on a bus ticket. How much of that pay does {a.he} have left?"


@t(3)
def s3_screws(c):
    a = people(1)[0]
    x, k, q, z = n(5, 40), n(2, 6), n(4, 12), n(2, 40)
    c.sub(c.add(x, c.mul(k, q)), z)
    return f"{a} has {x} screws. {a.He} buys {k} boxes with {q} screws in each and uses {z} to build a shelf. How many screws does {a.he} have now?"


@t(3)
def s3_we_pets(c):
    x, y, k, z = n(3, 12), n(3, 12), n(2, 5), n(2, 20)
    c.sub(c.mul(c.add(x, y), k), z)
    return f"We look after {x} cats and {y} dogs at the animal shelter. Each animal gets {k} treats a day. We have already handed out {z} treats today. How many more treats do we need to hand out today?"


# ================================================================ build
def informal(q):
    s = q.lower()
    s = s.replace("what's", "whats").replace("don't", "dont").replace("it's", "its").replace("i've", "ive")
    if R.random() < 0.3:
        s = s.replace(" you ", " u ")
    if s.endswith("?") and R.random() < 0.6:
        s = s[:-1]
    if R.random() < 0.4:
        s = s.replace(". ", ", ")
    return s


def main():
    rows, seen = [], set()
    for (steps, kind), count in PLAN.items():
        pool = TEMPLATES[(steps, kind)]
        order = []
        while len(order) < count:
            cyc = pool[:]
            R.shuffle(cyc)
            order += cyc
        for f in order[:count]:
            for _ in range(1000):
                c = Calc()
                try:
                    q = f(c)
                except Bad:
                    continue
                if kind == "story" and f.informal_ok and R.random() < INFORMAL_RATE:
                    q = informal(q)
                if q in seen:
                    continue
                break
            else:
                raise SystemExit(f"could not draw from {f.__name__}")
            # ---- the checks
            assert len(c.ops) == steps, (f.__name__, c.ops)
            for op, a, b, r in c.ops:
                for v in (a, b, r):
                    assert isinstance(v, int) and 1 <= v <= 100, (f.__name__, c.ops)
                if op == "*":
                    assert min(a, b) <= 25 and a * b == r
                elif op == "/":
                    assert a % b == 0 and a // b == r
                elif op == "+":
                    assert a + b == r
                else:
                    assert a - b == r
            assert q not in seen
            seen.add(q)
            ans = c.ops[-1][3]
            rows.append({"question": q, "answer": ans, "steps": steps, "source": "grammar",
                         "messages": [{"role": "user", "content": q}], "_t": f.__name__})
    R.shuffle(rows)
    assert len(rows) == 400 and len({r["question"] for r in rows}) == 400
    with open(OUT, "w", encoding="utf-8") as fh:
        for r in rows:
            r.pop("_t")
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    by = {}
    for r in rows:
        by[r["steps"]] = by.get(r["steps"], 0) + 1
    print(f"wrote {len(rows)} questions to {OUT}; by steps: {dict(sorted(by.items()))}")


if __name__ == "__main__":
    main()
