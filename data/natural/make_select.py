#!/usr/bin/env python3
"""Write data/natural/select.jsonl: 400 user-style arithmetic questions for choosing between models.

A fourth grammar, written apart from tinygsm's generator, the training grammars and the other
evaluation sets of this folder (it was written without reading any of them). Its own names,
objects, units, verbs and question shapes; about a quarter bare arithmetic, the rest short stories.

Every answer is computed from the quantities drawn, through `Calc`, which checks that every
quantity, intermediate value and answer is an integer in 1..100 and that a product's smaller
factor is at most 25; the checks are asserted again over the whole set before it is written.

    python3 data/natural/make_select.py      # seeded: the same file each time
"""

import json
import os
import random
import re

SEED = 20261208
TARGET = {1: 250, 2: 120, 3: 30}
BARE = {1: 70, 2: 25, 3: 5}  # the rest of each step count are stories
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "select.jsonl")


class Reject(Exception):
    """The drawn quantities leave the model's range; draw again."""


def _ok(v):
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 100


class Calc:
    """Records every quantity and every operation of one question."""

    def __init__(self):
        self.values = []    # every quantity drawn and every intermediate value
        self.products = []  # (a, b) of every multiplication, and divisor * quotient of every division
        self.steps = 0

    def q(self, *xs):
        for x in xs:
            if not _ok(x):
                raise Reject
            self.values.append(x)
        return xs[0] if len(xs) == 1 else xs

    def _res(self, v):
        if not _ok(v):
            raise Reject
        self.steps += 1
        self.values.append(v)
        return v

    def add(self, a, b):
        return self._res(a + b)

    def sub(self, a, b):
        return self._res(a - b)

    def mul(self, a, b):
        if min(a, b) > 25:
            raise Reject
        self.products.append((a, b))
        return self._res(a * b)

    def div(self, a, b):
        if b < 1 or a % b:
            raise Reject
        self.products.append((b, a // b))
        return self._res(a // b)


# ---------------------------------------------------------------- vocabulary

NAMES = [  # (name, she/he)
    ("Ifeoma", "f"), ("Dmitri", "m"), ("Paulina", "f"), ("Joaquin", "m"), ("Zeynep", "f"),
    ("Kwame", "m"), ("Lucia", "f"), ("Ravi", "m"), ("Elif", "f"), ("Sven", "m"), ("Nadia", "f"),
    ("Haruto", "m"), ("Chiara", "f"), ("Femi", "m"), ("Astrid", "f"), ("Mateus", "m"),
    ("Anouk", "f"), ("Yusuf", "m"), ("Leilani", "f"), ("Dariusz", "m"), ("Thuy", "f"),
    ("Rafael", "m"), ("Priyanka", "f"), ("Olek", "m"), ("Mirela", "f"), ("Tariq", "m"),
    ("Ingrid", "f"), ("Kenta", "m"), ("Amara", "f"), ("Esteban", "m"), ("Freya", "f"),
    ("Farhan", "m"), ("Noor", "f"), ("Bartek", "m"), ("Sunita", "f"), ("Callum", "m"),
    ("Mariam", "f"), ("Lars", "m"), ("Rosa", "f"), ("Obinna", "m"), ("Hana", "f"),
    ("Diego", "m"), ("Yara", "f"), ("Tevita", "m"), ("Ilse", "f"), ("Arjun", "m"),
    ("Malak", "f"), ("Emeka", "m"), ("Soo-ah", "f"), ("Viktor", "m"),
]


class P:
    def __init__(self, name, g):
        self.n = name
        self.s, self.o, self.p = ("she", "her", "her") if g == "f" else ("he", "him", "his")
        self.S, self.P = self.s.capitalize(), self.p.capitalize()
        self.self = "herself" if g == "f" else "himself"


def people(r, k):
    return [P(*x) for x in r.sample(NAMES, k)]


THINGS = [  # countable things (singular, plural)
    ("pencil", "pencils"), ("bottle cap", "bottle caps"), ("trading card", "trading cards"),
    ("shell", "shells"), ("lemon", "lemons"), ("battery", "batteries"), ("button", "buttons"),
    ("kite", "kites"), ("bead", "beads"), ("comic book", "comic books"), ("tea bag", "tea bags"),
    ("chestnut", "chestnuts"), ("balloon", "balloons"), ("crayon", "crayons"),
    ("pebble", "pebbles"), ("acorn", "acorns"), ("rubber duck", "rubber ducks"),
    ("paper clip", "paper clips"), ("toy car", "toy cars"), ("notebook", "notebooks"),
    ("keychain", "keychains"), ("guitar pick", "guitar picks"), ("tulip bulb", "tulip bulbs"),
    ("dice", "dice"), ("chess puzzle", "chess puzzles"), ("hair clip", "hair clips"),
]
FOODS = [
    ("plum", "plums"), ("mango", "mangoes"), ("dumpling", "dumplings"), ("cupcake", "cupcakes"),
    ("apricot", "apricots"), ("samosa", "samosas"), ("tomato", "tomatoes"), ("egg", "eggs"),
    ("cookie", "cookies"), ("tangerine", "tangerines"), ("empanada", "empanadas"),
    ("pretzel", "pretzels"), ("rice ball", "rice balls"), ("cherry tomato", "cherry tomatoes"),
]
BAKED = [("cookie", "cookies"), ("cupcake", "cupcakes"), ("dumpling", "dumplings"),
         ("samosa", "samosas"), ("empanada", "empanadas"), ("pretzel", "pretzels"),
         ("rice ball", "rice balls"), ("flapjack", "flapjacks")]
FRUIT = [("plum", "plums"), ("mango", "mangoes"), ("apricot", "apricots"),
         ("tangerine", "tangerines"), ("cherry tomato", "cherry tomatoes"), ("pear", "pears"),
         ("fig", "figs"), ("lychee", "lychees")]
EDIBLE = BAKED + FRUIT
CONTAINERS = [
    ("box", "boxes"), ("bag", "bags"), ("crate", "crates"), ("tray", "trays"),
    ("packet", "packets"), ("jar", "jars"), ("basket", "baskets"), ("tin", "tins"),
    ("carton", "cartons"), ("pouch", "pouches"),
]
ITEMS = [  # things bought at a price (singular, plural, lowest price, highest price)
    ("notebook", "notebooks", 2, 6), ("sandwich", "sandwiches", 3, 9),
    ("bus ticket", "bus tickets", 2, 5), ("paintbrush", "paintbrushes", 2, 8),
    ("comic book", "comic books", 3, 9), ("bag of rice", "bags of rice", 4, 12),
    ("bunch of flowers", "bunches of flowers", 5, 15), ("T-shirt", "T-shirts", 6, 20),
    ("pair of socks", "pairs of socks", 2, 7), ("ice cream cone", "ice cream cones", 2, 5),
    ("phone case", "phone cases", 8, 25), ("board game", "board games", 12, 40),
    ("plant pot", "plant pots", 3, 10), ("water bottle", "water bottles", 4, 15),
    ("puzzle", "puzzles", 6, 22), ("scarf", "scarves", 7, 24),
]
GROUPS = ["friends", "cousins", "classmates", "teammates", "neighbours", "children"]


class Money:
    def __init__(self, kind):
        self.kind = kind

    def __call__(self, v):
        if self.kind == "$":
            return f"${v}"
        if self.kind == "£":
            return f"£{v}"
        return f"1 {self.kind[:-1]}" if v == 1 else f"{v} {self.kind}"

    def note(self, v):
        if self.kind == "$":
            return f"a ${v} bill"
        if self.kind == "£":
            if v > 50:  # no such note in everyday use
                raise Reject
            return f"a £{v} note"
        if self.kind == "dollars":
            return f"a {v}-dollar bill"
        return f"a {v}-{self.kind[:-1]} note"

    def adj(self, v):
        """As a word before a noun: "a $40 bill", "a 40-peso bill"."""
        return self(v) if self.kind in ("$", "£") else f"{v}-{self.kind[:-1]}"

    def unit(self):
        return {"$": "dollars", "£": "pounds"}.get(self.kind, self.kind)


def money(r):
    return Money(r.choice(["$", "$", "$", "£", "pesos", "rupees", "dollars"]))


def small(r, lo=2, hi=9):
    return r.randint(lo, hi)


def any_(r, lo=1, hi=100):
    if hi < lo:
        raise Reject
    return r.randint(lo, hi)


# ---------------------------------------------------------------- bare arithmetic

def bare1(r, c):
    op = r.choice("+-*/")
    if op == "+":
        a, b = c.q(any_(r, 2, 90), any_(r, 2, 60))
        ans = c.add(a, b)
        f = r.choice([
            "What's {a} + {b}?", "{a}+{b}", "{a} + {b} = ?", "what is {a} plus {b}",
            "Add {a} and {b}.", "What is the sum of {a} and {b}?", "calculate {a} + {b}",
            "Can you add {b} to {a} for me?", "{a} plus {b} equals what?", "Increase {a} by {b}.",
            "What number is {b} more than {a}?", "{a} + {b}", "whats {a}+{b}",
            "Quick one: {a} + {b}", "If I add {a} and {b}, what do I get?",
            "Total of {a} and {b}?", "{a} and {b} added together is?",
        ])
    elif op == "-":
        a = c.q(any_(r, 10, 100))
        b = c.q(any_(r, 1, a - 1))
        ans = c.sub(a, b)
        f = r.choice([
            "Subtract {b} from {a}.", "{a} - {b}", "What's {a} minus {b}?", "{a}-{b}=?",
            "What is {b} less than {a}?", "How much is {a} take away {b}?", "Decrease {a} by {b}.",
            "what is the difference between {a} and {b}", "If you take {b} away from {a}, what's left?",
            "How much bigger is {a} than {b}?", "{a} minus {b} is what?", "calc {a} - {b}",
            "Start at {a} and count back {b}. Where do you end up?", "whats {a} minus {b}",
            "How much do I need to add to {b} to get {a}?",
        ])
    elif op == "*":
        a = c.q(small(r, 2, 10))
        b = c.q(any_(r, 2, 100 // a))
        ans = c.mul(a, b)
        if r.random() < 0.5:
            a, b = b, a
        f = r.choice([
            "{a} x {b}", "{a} * {b}", "What is {a} times {b}?", "Multiply {a} by {b}.",
            "What's the product of {a} and {b}?", "{a} multiplied by {b}?", "{a}x{b}=?",
            "what's {a} times {b}", "How much is {a} lots of {b}?", "Compute {a} × {b}.",
            "{a} times {b} equals?",
        ])
        if 2 in (a, b) and r.random() < 0.5:
            f = r.choice(["Double {x}.", "What's twice {x}?", "what is {x} doubled"])
            return f.format(x=b if a == 2 else a), ans
        if 3 in (a, b) and r.random() < 0.4:
            f = r.choice(["Triple {x}.", "What is three times {x}?"])
            return f.format(x=b if a == 3 else a), ans
    else:
        b = c.q(small(r, 2, 12))
        ans0 = c.q(any_(r, 2, 100 // b))
        a = c.q(b * ans0)
        ans = c.div(a, b)
        if b in (2, 3, 4) and r.random() < 0.45:
            frac = {2: "half", 3: "a third", 4: "a quarter"}[b]
            f = r.choice([
                "What is {frac} of {a}?", "{frac} of {a}?", "Find {frac} of {a}.",
                "{frac} of {a} is what",
            ])
            q = f.format(frac=frac, a=a)
            return q[0].upper() + q[1:], ans
        f = r.choice([
            "{a} / {b}", "What's {a} divided by {b}?", "Divide {a} by {b}.", "{a} ÷ {b} = ?",
            "{a}/{b}", "What do you get when you divide {a} by {b}?",
            "If {a} is split into {b} equal parts, how big is each part?",
            "{a} divided by {b} equals?", "How many {b}s make {a}?",
            "Split {a} into {b} equal groups. How many are in each group?",
        ])
    return f.format(a=a, b=b), ans


def bare2(r, c):
    k = r.randrange(12)
    if k == 0:
        a, b, cc = c.q(any_(r, 5, 60), any_(r, 2, 40), any_(r, 1, 50))
        ans = c.sub(c.add(a, b), cc)
        f = r.choice(["{a} + {b} - {c}", "What is {a} + {b} - {c}?", "{a}+{b}-{c}=?"])
    elif k == 1:
        a, b, cc = c.q(any_(r, 20, 90), any_(r, 1, 40), any_(r, 2, 40))
        ans = c.add(c.sub(a, b), cc)
        f = r.choice(["What's {a} - {b} + {c}?", "{a} - {b} + {c}", "calculate {a}-{b}+{c}"])
    elif k == 2:
        a = c.q(small(r, 2, 9))
        b = c.q(any_(r, 2, 90 // a))
        cc = c.q(any_(r, 1, 30))
        ans = c.add(c.mul(a, b), cc)
        f = r.choice(["{a} x {b} + {c}", "What is {a} times {b}, plus {c}?", "{a}*{b}+{c}"])
    elif k == 3:
        a = c.q(small(r, 2, 9))
        b = c.q(any_(r, 3, 100 // a))
        cc = c.q(any_(r, 1, 40))
        ans = c.sub(c.mul(a, b), cc)
        f = r.choice(["Multiply {a} by {b}, then subtract {c}.", "{a} * {b} - {c} = ?",
                      "Take the product of {a} and {b} and subtract {c} from it."])
    elif k == 4:
        a, b, cc = c.q(any_(r, 3, 60), any_(r, 3, 50), small(r, 2, 9))
        ans = c.div(c.add(a, b), cc)
        f = r.choice(["({a} + {b}) / {c}", "Add {a} and {b}, then divide by {c}.",
                      "What's ({a}+{b}) divided by {c}?"])
    elif k == 5:
        a, b, cc = c.q(any_(r, 3, 60), any_(r, 2, 50), any_(r, 1, 40))
        ans = c.sub(c.add(a, b), cc)
        f = r.choice(["What is {c} less than the sum of {a} and {b}?",
                      "Subtract {c} from the sum of {a} and {b}.",
                      "add {a} and {b} then take away {c}"])
    elif k == 6:
        c.q(2)
        a, b = c.q(any_(r, 2, 50), any_(r, 1, 50))
        cc = None
        ans = c.add(c.mul(2, a), b)
        f = r.choice(["Double {a}, then add {b}.", "What's twice {a}, plus {b}?"])
    elif k == 7:
        a, b, cc = c.q(any_(r, 10, 60), any_(r, 1, 40), small(r, 2, 6))
        ans = c.mul(c.sub(a, b), cc)
        f = r.choice(["({a} - {b}) x {c}", "Take {b} from {a} and multiply the result by {c}.",
                      "what's ({a}-{b})*{c}"])
    elif k == 8:
        b = c.q(small(r, 2, 10))
        a = c.q(b * any_(r, 2, 100 // b))
        cc = c.q(any_(r, 1, 50))
        ans = c.add(c.div(a, b), cc)
        f = r.choice(["{a} / {b} + {c}", "Divide {a} by {b} and add {c}.",
                      "What is {a} divided by {b}, plus {c}?"])
    elif k == 9:
        a, b, cc = c.q(any_(r, 30, 100), any_(r, 2, 40), any_(r, 2, 40))
        ans = c.sub(c.sub(a, b), cc)
        f = r.choice(["{a} - {b} - {c}", "Start with {a}, subtract {b}, then subtract {c}.",
                      "What's {a} minus {b} minus {c}?"])
    elif k == 10:
        c.q(2)
        a = c.q(2 * any_(r, 3, 50))
        b = c.q(any_(r, 1, 50))
        cc = None
        ans = c.add(c.div(a, 2), b)
        f = r.choice(["Take half of {a}, then add {b}.", "What is half of {a}, plus {b}?"])
    else:
        a, b, cc = c.q(any_(r, 2, 40), any_(r, 2, 40), any_(r, 2, 30))
        ans = c.add(c.add(a, b), cc)
        f = r.choice(["{a} + {b} + {c}", "What's {a} plus {b} plus {c}?", "Add up {a}, {b} and {c}."])
    return f.format(a=a, b=b, c=cc), ans


def bare3(r, c):
    k = r.randrange(5)
    if k == 0:
        a, b, cc, d = c.q(any_(r, 2, 20), any_(r, 2, 20), small(r, 2, 5), any_(r, 1, 40))
        ans = c.sub(c.mul(c.add(a, b), cc), d)
        f = r.choice(["({a} + {b}) x {c} - {d}", "What is ({a}+{b})*{c} - {d}?"])
    elif k == 1:
        a, b, cc, d = c.q(any_(r, 2, 30), any_(r, 2, 30), any_(r, 2, 30), any_(r, 2, 20))
        ans = c.add(c.add(c.add(a, b), cc), d)
        f = r.choice(["{a} + {b} + {c} + {d}", "Add {a}, {b}, {c} and {d}."])
    elif k == 2:
        a, b, cc, d = c.q(any_(r, 5, 60), any_(r, 2, 40), small(r, 2, 9), any_(r, 1, 10))
        ans = c.sub(c.div(c.add(a, b), cc), d)
        f = r.choice(["Start with {a}, add {b}, divide by {c}, then subtract {d}.",
                      "take {a}, add {b}, divide the result by {c} and then subtract {d}"])
    elif k == 3:
        a = c.q(small(r, 2, 9))
        b = c.q(any_(r, 3, 100 // a))
        cc, d = c.q(any_(r, 1, 30), any_(r, 1, 30))
        ans = c.sub(c.sub(c.mul(a, b), cc), d)
        f = r.choice(["{a} x {b} - {c} - {d}", "What's {a} times {b}, minus {c}, minus {d}?"])
    else:
        a, b, cc, d = c.q(any_(r, 30, 100), any_(r, 1, 40), any_(r, 1, 40), any_(r, 1, 40))
        ans = c.add(c.sub(c.sub(a, b), cc), d)
        f = r.choice(["What is {a} - {b} - {c} + {d}?", "{a} - {b} - {c} + {d} = ?"])
    return f.format(a=a, b=b, c=cc, d=d), ans


# ---------------------------------------------------------------- stories
# Each returns (sentences, question, answer, allows_distractor, kind).

def s_gain(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS)
    a = c.q(any_(r, 3, 80))
    b = c.q(any_(r, 2, 100 - a))
    ans = c.add(a, b)
    v = r.choice([
        f"{x.S} finds {b} more under the sofa.", f"{y.n} gives {x.o} another {b}.",
        f"At the market {x.s} buys {b} more.", f"Later {x.s} picks up {b} more.",
        f"{x.P} aunt sends {x.o} {b} more in a parcel.", f"{x.S} wins {b} more at the school fair.",
    ])
    q = r.choice([f"How many {pl} does {x.n} have now?", f"How many {pl} has {x.n} got now?",
                  f"What's the number of {pl} {x.n} has now?"])
    return [f"{x.n} has {a} {pl}.", v], q, ans, True, "count"


def s_loss(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS)
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    v = r.choice([
        f"{x.S} gave {b} of them to {y.n}.", f"{x.S} lost {b} on the walk home.",
        f"{x.S} sold {b} at the flea market.", f"{x.S} traded {b} away.",
        f"{y.n} borrowed {b} of them and hasn't brought them back.",
        f"{x.S} threw {b} broken ones into the bin.",
    ])
    q = r.choice([f"How many {pl} does {x.n} have left?", f"How many {pl} does {x.n} still have?",
                  f"How many {pl} are left with {x.n}?"])
    return [f"{x.n} had {a} {pl}.", v], q, ans, True, "count"


def s_eat(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(EDIBLE)
    a = c.q(any_(r, 6, 60))
    b = c.q(any_(r, 1, min(a - 1, 15)))
    ans = c.sub(a, b)
    form = r.randrange(3)
    if form == 0:
        return ([f"There were {a} {pl} on the table.", f"{x.n} and {x.p} friends ate {b}."],
                f"How many {pl} are still on the table?", ans, True, "count")
    if form == 1:
        sg, pl = r.choice(BAKED)
        return ([f"I made {a} {pl} for the party and my guests ate {b} of them."],
                f"How many {pl} do I have left over?", ans, True, "count")
    return ([f"{x.n} packed {a} {pl} for the trip.", f"On the first day {x.s} ate {b}."],
            f"How many {pl} are left for the rest of the trip?", ans, True, "count")


def s_change(r, c):
    x, = people(r, 1)
    m = money(r)
    sg, pl, lo, hi = r.choice(ITEMS)
    p = c.q(any_(r, lo, hi))
    B = c.q(r.choice([n for n in (10, 20, 50, 100) if n > p]))
    ans = c.sub(B, p)
    form = r.randrange(3)
    if form == 0:
        return ([f"{x.n} buys a {sg} for {m(p)} and pays with {m.note(B)}."],
                f"How much change should {x.s} get?", ans, True, "money")
    if form == 1:
        return ([f"I paid for a {sg} that cost {m(p)} with {m.note(B)}."],
                f"How much change did I get back?", ans, True, "money")
    return ([f"You hand the cashier {m.note(B)} for a {sg} priced at {m(p)}."],
            f"How much change do you get?", ans, True, "money")


def s_share(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(THINGS + FOODS)
    k = c.q(small(r, 2, 10))
    n = c.q(k * any_(r, 2, 100 // k))
    ans = c.div(n, k)
    form = r.randrange(4)
    g = r.choice(GROUPS)
    if form == 0:
        return ([f"{x.n} has {n} {pl} and gives all of them away, the same number to each of "
                 f"{x.p} {k} {g}."], f"How many {pl} does each of them get?", ans, True, "count")
    if form == 1:
        cs, cp = r.choice(CONTAINERS)
        return ([f"{x.n} puts {n} {pl} into {k} {cp}, the same number in every {cs}."],
                f"How many {pl} go in each {cs}?", ans, True, "count")
    if form == 2:
        return ([f"{n} {pl} are shared out equally among {k} {g}, with none left over."],
                f"How many {pl} does each one get?", ans, True, "count")
    return ([f"I want to split {n} {pl} evenly between my {k} {g}."],
            f"How many should each of them get?", ans, True, "count")


def s_teams(r, c):
    k = c.q(small(r, 2, 12))
    n = c.q(k * any_(r, 2, 100 // k))
    ans = c.div(n, k)
    form = r.randrange(4)
    if form == 0:
        return ([f"There are {n} kids at a summer camp and they are put into teams of {k}."],
                "How many teams are there?", ans, True, "count")
    if form == 1:
        sg, pl = r.choice(BAKED)
        return ([f"A baker has {n} {pl} and packs them {k} to a box."],
                "How many boxes does the baker fill?", ans, True, "count")
    if form == 2:
        return ([f"{n} chairs are set out in rows of {k}."], "How many rows are there?",
                ans, True, "count")
    return ([f"A small ferry carries {k} cars on every trip."],
            f"How many trips does it make to carry {n} cars across, if every trip is full?",
            ans, True, "count")


def s_groups(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(THINGS + FOODS)
    cs, cp = r.choice(CONTAINERS)
    k = c.q(small(r, 2, 10))
    n = c.q(any_(r, 2, 100 // k))
    if r.random() < 0.5:
        k, n = n, k
        if n > 25 or k > 25:
            raise Reject
    ans = c.mul(k, n)
    form = r.randrange(4)
    if form == 0:
        return ([f"There are {k} {cp} with {n} {pl} in each."],
                f"How many {pl} are there in total?", ans, True, "count")
    if form == 1:
        return ([f"{x.n} fills {k} {cp} with {n} {pl} each."],
                f"How many {pl} did {x.s} use?", ans, True, "count")
    if form == 2:
        return ([f"One {cs} holds {n} {pl}."], f"How many {pl} are in {k} full {cp}?",
                ans, True, "count")
    return ([f"A hall has {k} rows of chairs with {n} chairs in every row."],
            "How many chairs are in the hall?", ans, True, "count")


def s_price(r, c):
    x, = people(r, 1)
    m = money(r)
    sg, pl, lo, hi = r.choice(ITEMS)
    p = c.q(any_(r, lo, min(hi, 50)))
    k = c.q(any_(r, 2, min(10, 100 // p)))
    ans = c.mul(k, p)
    form = r.randrange(3)
    if form == 0:
        return ([f"One {sg} costs {m(p)}."], f"How much do {k} {pl} cost?", ans, True, "money")
    if form == 1:
        return ([f"{x.n} buys {k} {pl} at {m(p)} each."], f"How much does {x.s} spend?",
                ans, True, "money")
    return ([f"You need {k} {pl} and each one is {m(p)}."],
            f"How many {m.unit()} is that altogether?", ans, True, "money")


def s_rate(r, c):
    x, = people(r, 1)
    k = c.q(small(r, 2, 10))
    n = c.q(any_(r, 2, 100 // k))
    ans = c.mul(n, k)
    form = r.randrange(4)
    if form == 0:
        m = money(r)
        return ([f"{x.n} earns {m(n)} an hour walking dogs."],
                f"How much does {x.s} earn in {k} hours?", ans, True, "money")
    if form == 1:
        return ([f"A printer prints {n} pages a minute."],
                f"How many pages does it print in {k} minutes?", ans, True, "pages")
    if form == 2:
        return ([f"{x.n} reads {n} pages every evening."],
                f"How many pages does {x.s} read in {k} evenings?", ans, True, "pages")
    if n > 12:
        raise Reject
    return ([f"A tap drips {n} drops every second."], f"How many drops fall in {k} seconds?",
            ans, True, "count")


def s_more(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS)
    a = c.q(any_(r, 3, 80))
    b = c.q(any_(r, 2, 100 - a))
    ans = c.add(a, b)
    return ([f"{x.n} has {a} {pl}.", f"{y.n} has {b} more {pl} than {x.n}."],
            f"How many {pl} does {y.n} have?", ans, True, "count")


def s_fewer(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS)
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    v = r.choice([f"{y.n} collected {b} fewer {pl} than {x.n}.",
                  f"{y.n} collected {b} fewer than {x.o}."])
    return ([f"{x.n} collected {a} {pl}.", v],
            f"How many {pl} did {y.n} collect?", ans, True, "count")


def s_times(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    k = c.q(small(r, 2, 5))
    a = c.q(any_(r, 2, 100 // k))
    ans = c.mul(k, a)
    w = {2: r.choice(["twice as many", "2 times as many"]), 3: "three times as many",
         4: "4 times as many", 5: "five times as many"}[k]
    return ([f"{x.n} has {a} {pl}.", f"{y.n} has {w} {pl} as {x.n}."],
            f"How many {pl} does {y.n} have?", ans, True, "count")


def s_compare(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    q = r.choice([f"How many more {pl} does {x.n} have than {y.n}?",
                  f"How many fewer {pl} does {y.n} have than {x.n}?"])
    first = [f"{x.n} has {a} {pl} and {y.n} has {b}."]
    if r.random() < 0.5:
        first = [f"{y.n} has {b} {pl}.", f"{x.n} has {a}."]
    return first, q, ans, True, "count"


def s_together(r, c):
    x, y = people(r, 2)
    a = c.q(any_(r, 2, 80))
    b = c.q(any_(r, 2, 100 - a))
    ans = c.add(a, b)
    verb, base = r.choice([("picked", "pick"), ("collected", "collect"), ("brought", "bring"),
                           ("counted", "count")])
    sg, pl = r.choice(FRUIT if verb == "picked" else THINGS + FOODS)
    q = r.choice([f"How many {pl} did they {base} altogether?",
                  f"How many {pl} is that in total?"])
    return [f"{x.n} {verb} {a} {pl} and {y.n} {verb} {b}."], q, ans, True, "count"


def s_distance(r, c):
    x, = people(r, 1)
    unit = r.choice(["km", "miles", "kilometers"])
    if r.random() < 0.5:
        a = c.q(any_(r, 2, 60))
        b = c.q(any_(r, 2, 100 - a))
        ans = c.add(a, b)
        verb = r.choice(["cycled", "ran", "rowed", "drove", "skated"])
        return ([f"{x.n} {verb} {a} {unit} in the morning and {b} {unit} in the afternoon."],
                f"How many {unit} did {x.s} cover that day?", ans, True, "distance")
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    form = r.randrange(2)
    if form == 0:
        return ([f"A hiking trail is {a} {unit} long.", f"{x.n} has already hiked {b} {unit} of it."],
                f"How many {unit} does {x.s} still have to go?", ans, True, "distance")
    return ([f"We're driving to a town {a} {unit} away and we've done {b} {unit} so far."],
            f"How many {unit} are left?", ans, True, "distance")


def s_time(r, c):
    x, = people(r, 1)
    if r.random() < 0.5:
        a = c.q(any_(r, 5, 60))
        b = c.q(any_(r, 3, 100 - a))
        ans = c.add(a, b)
        form = r.randrange(2)
        if form == 0:
            return ([f"{x.n} rides the tram for {a} minutes and then walks for {b} minutes."],
                    "How many minutes does the whole journey take?", ans, True, "time")
        return ([f"My piano lesson is {a} minutes long and afterwards I practise for {b} minutes."],
                "How many minutes of piano is that in all?", ans, True, "time")
    a = c.q(any_(r, 15, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    form = r.randrange(2)
    if form == 0:
        return ([f"A stew has to simmer for {a} minutes.", f"It has been simmering for {b} minutes."],
                "How many more minutes does it need?", ans, True, "time")
    return ([f"The film lasts {a} minutes and we're {b} minutes in."],
            "How many minutes of the film are left?", ans, True, "time")


def s_recipe(r, c):
    k = c.q(small(r, 2, 10))
    n = c.q(any_(r, 2, min(12, 100 // k)))
    if r.random() < 0.6:
        ans = c.mul(n, k)
        ing = r.choice(["eggs", "bananas", "tablespoons of butter", "cups of oat milk",
                        "spoons of honey", "carrots"])
        return ([f"A recipe uses {n} {ing} for one batch."],
                f"How many {ing} are needed for {k} batches?", ans, True, "recipe")
    tot = c.q(n * k)
    ans = c.div(tot, k)
    return ([f"A jug holds {tot} cups of lemonade.", f"Every glass takes {k} cups."],
            "How many glasses can be filled from the jug?", ans, True, "recipe")


def s_pages(r, c):
    a = c.q(any_(r, 20, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    form = r.randrange(2)
    if form == 0:
        return ([f"My book has {a} pages and I've read {b} of them."],
                "How many pages do I still have to read?", ans, True, "pages")
    x, = people(r, 1)
    return ([f"{x.n}'s workbook has {a} exercises.", f"{x.S} has finished {b}."],
            "How many exercises are left?", ans, True, "pages")


def s_half(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(FOODS + THINGS)
    d = c.q(r.choice([2, 2, 3, 4]))
    n = c.q(d * any_(r, 2, 100 // d))
    ans = c.div(n, d)
    frac = {2: "half", 3: "a third", 4: "a quarter"}[d]
    return ([f"{x.n} had {n} {pl} and gave {frac} of them to {y.n}."],
            f"How many {pl} did {y.n} get?", ans, True, "count")


def s_you(r, c):
    sg, pl = r.choice(THINGS + FOODS)
    if r.random() < 0.5:
        a = c.q(any_(r, 3, 80))
        b = c.q(any_(r, 2, 100 - a))
        ans = c.add(a, b)
        return ([f"You have {a} {pl} and a friend gives you {b} more."],
                f"How many {pl} do you have now?", ans, True, "count")
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 2, a - 1))
    ans = c.sub(a, b)
    return ([f"You start the day with {a} {pl} and hand out {b} of them."],
            f"How many {pl} do you have at the end of the day?", ans, True, "count")


def s_I(r, c):
    sg, pl = r.choice(THINGS)
    rel = r.choice(["my sister", "my brother", "my cousin", "my best friend", "my neighbour"])
    if r.random() < 0.5:
        a = c.q(any_(r, 10, 100))
        b = c.q(any_(r, 2, a - 1))
        ans = c.sub(a, b)
        return ([f"I had {a} {pl} and gave {b} to {rel}."], f"How many {pl} do I have now?",
                ans, True, "count")
    a = c.q(any_(r, 3, 80))
    b = c.q(any_(r, 2, 100 - a))
    ans = c.add(a, b)
    return ([f"I have {a} {pl}.", f"{rel.capitalize()} has {b} more than I do."],
            f"How many {pl} does {rel} have?", ans, True, "count")


def s_age(r, c):
    x, y = people(r, 2)
    if r.random() < 0.5:
        a = c.q(any_(r, 3, 60))
        b = c.q(any_(r, 2, min(40, 100 - a)))
        ans = c.add(a, b)
        return ([f"{x.n} is {a} years old.", f"{y.n} is {b} years older than {x.o}."],
                f"How old is {y.n}?", ans, False, "age")
    a = c.q(any_(r, 50, 100))
    b = c.q(any_(r, 5, 20))
    ans = c.sub(a, b)
    return ([f"{x.n}'s grandmother is {a} and {x.n} is {b}."],
            f"How many years older than {x.n} is {x.p} grandmother?", ans, False, "age")


def s_temp(r, c):
    a = c.q(any_(r, 5, 60))
    b = c.q(any_(r, 2, 25))
    if r.random() < 0.5:
        ans = c.add(a, b)
        return ([f"It was {a} degrees at 8 in the morning and it got {b} degrees warmer by noon."],
                "What was the temperature at noon?", ans, False, "temp")
    if b >= a:
        raise Reject
    ans = c.sub(a, b)
    return ([f"At sunset it was {a} degrees, and by midnight it had dropped by {b} degrees."],
            "What was the temperature at midnight?", ans, False, "temp")


def s_save(r, c):
    x, = people(r, 1)
    m = money(r)
    sg, pl, lo, hi = r.choice([i for i in ITEMS if i[3] >= 15])
    a = c.q(any_(r, max(lo, 10), min(100, hi * 3)))
    b = c.q(any_(r, 1, a - 1))
    ans = c.sub(a, b)
    return ([f"{x.n} wants a {sg} that costs {m(a)}.", f"{x.S} has saved {m(b)} so far."],
            f"How much more money does {x.s} need?", ans, True, "money")


def s_bill(r, c):
    m = money(r)
    k = c.q(small(r, 2, 8))
    each = c.q(any_(r, 3, 100 // k))
    tot = c.q(k * each)
    ans = c.div(tot, k)
    place = r.choice(["pizza place", "noodle bar", "taqueria", "cafe", "bowling alley"])
    return ([f"{k} friends split a {m.adj(tot)} bill equally at a {place}."],
            "How much does each of them pay?", ans, True, "money")


# ---- two steps

def t_get_give(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS)
    a, b, cc = c.q(any_(r, 3, 60), any_(r, 2, 40), any_(r, 2, 60))
    if r.random() < 0.5:
        ans = c.sub(c.add(a, b), cc)
        return ([f"{x.n} had {a} {pl}.", f"{x.S} bought {b} more, then gave {cc} to {y.n}."],
                f"How many {pl} does {x.n} have now?", ans, True, "count")
    ans = c.add(c.sub(a, b), cc)
    return ([f"{x.n} started with {a} {pl}.", f"{x.S} lost {b} of them, but {y.n} gave {x.o} {cc}."],
            f"How many {pl} does {x.n} end up with?", ans, True, "count")


def t_buy_change(r, c):
    x, = people(r, 1)
    m = money(r)
    sg, pl, lo, hi = r.choice(ITEMS)
    k = c.q(small(r, 2, 6))
    p = c.q(any_(r, lo, hi))
    cost = c.mul(k, p)
    B = c.q(r.choice([n for n in (10, 20, 50, 100) if n > cost] or [0]))
    ans = c.sub(B, cost)
    if r.random() < 0.5:
        return ([f"{x.n} buys {k} {pl} at {m(p)} each and pays with {m.note(B)}."],
                f"How much change does {x.s} get?", ans, True, "money")
    return ([f"I bought {k} {pl}. They were {m(p)} each and I paid with {m.note(B)}."],
            "How much change should I get?", ans, True, "money")


def t_more_total(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    a, b = c.q(any_(r, 2, 45), any_(r, 1, 30))
    w = r.choice(["more", "fewer"])
    yb = c.add(a, b) if w == "more" else c.sub(a, b)
    ans = c.add(a, yb)
    return ([f"{x.n} has {a} {pl}.", f"{y.n} has {b} {w} than {x.n}."],
            f"How many {pl} do they have together?", ans, True, "count")


def t_times_total(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    k = c.q(small(r, 2, 4))
    a = c.q(any_(r, 2, 100 // (k + 1)))
    yb = c.mul(k, a)
    ans = c.add(a, yb)
    w = {2: "twice as many", 3: "three times as many", 4: "four times as many"}[k]
    if r.random() < 0.5:
        return ([f"{x.n} has {a} {pl} and {y.n} has {w}."],
                f"How many {pl} do the two of them have altogether?", ans, True, "count")
    ans2 = ans
    return ([f"On Saturday {x.n} sold {a} {pl}.", f"On Sunday {x.s} sold {w} as on Saturday."],
            f"How many {pl} did {x.s} sell over the weekend?", ans2, True, "count")


def t_groups_extra(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(THINGS + FOODS)
    cs, cp = r.choice(CONTAINERS)
    k = c.q(small(r, 2, 8))
    n = c.q(any_(r, 2, 90 // k))
    tot = c.mul(k, n)
    e = c.q(any_(r, 2, 30))
    if r.random() < 0.5:
        ans = c.add(tot, e)
        return ([f"{x.n} has {k} {cp} of {pl} with {n} in each, plus {e} loose ones."],
                f"How many {pl} does {x.s} have in all?", ans, True, "count")
    ans = c.sub(tot, e)
    return ([f"A shop got {k} {cp} of {pl}, {n} to a {cs}.", f"{e} of the {pl} were damaged."],
            f"How many undamaged {pl} did the shop get?", ans, True, "count")


def t_share_take(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(FOODS)
    cs, cp = r.choice(CONTAINERS)
    k = c.q(small(r, 2, 8))
    n = c.q(k * any_(r, 3, 100 // k))
    each = c.div(n, k)
    m = c.q(any_(r, 2, each - 1))
    ans = c.sub(each, m)
    return ([f"{x.n} puts {n} {pl} equally into {k} {cp}.",
             f"Then {x.s} takes {m} {pl} out of one {cs}."],
            f"How many {pl} are left in that {cs}?", ans, True, "count")


def t_left_share(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(THINGS + FOODS)
    k = c.q(small(r, 2, 8))
    a = c.q(any_(r, 10, 100))
    b = c.q(any_(r, 1, a - 1))
    rest = c.sub(a, b)
    ans = c.div(rest, k)
    g = r.choice(GROUPS)
    return ([f"{x.n} had {a} {pl}.",
             f"{x.S} kept {b} for {x.self} and shared the rest equally among {k} {g}."],
            f"How many {pl} did each of the {g} get?", ans, True, "count")


def t_distance_days(r, c):
    x, = people(r, 1)
    unit = r.choice(["km", "miles"])
    d = c.q(small(r, 2, 7))
    per = c.q(any_(r, 2, min(12, 80 // d)))
    tot = c.mul(d, per)
    b = c.q(any_(r, 2, 15))
    ans = c.add(tot, b)
    return ([f"{x.n} jogs {per} {unit} a day for {d} days.", f"On the next day {x.s} jogs {b} {unit}."],
            f"How many {unit} does {x.s} jog in total?", ans, True, "distance")


def t_pages_plan(r, c):
    x, = people(r, 1)
    d = c.q(small(r, 2, 7))
    p = c.q(any_(r, 2, 90 // d))
    read = c.mul(d, p)
    N = c.q(any_(r, read + 1, 100))
    ans = c.sub(N, read)
    if r.random() < 0.5:
        return ([f"A novel has {N} pages.", f"{x.n} reads {p} pages a day for {d} days."],
                "How many pages are still unread?", ans, True, "pages")
    return ([f"I have a {N}-page book and I read {p} pages each night for {d} nights."],
            "How many pages do I have left?", ans, True, "pages")


def t_recipe_have(r, c):
    k = c.q(small(r, 2, 6))
    n = c.q(any_(r, 2, min(12, 90 // k)))
    need = c.mul(n, k)
    if r.random() < 0.5:
        ing = r.choice(["potatoes", "onions", "carrots", "leeks", "tomatoes"])
        h = c.q(any_(r, 1, need - 1) if need > 1 else 0)
        ans = c.sub(need, h)
        return ([f"Each batch of soup needs {n} {ing} and I want to make {k} batches.",
                 f"I only have {h} {ing}."], f"How many more {ing} do I need to buy?",
                ans, True, "recipe")
    ing = r.choice(["apples", "pears", "plums", "lemons", "peaches"])
    h = c.q(any_(r, need + 1, 100))
    ans = c.sub(h, need)
    return ([f"You have {h} {ing}.", f"A tart takes {n} {ing} and you bake {k} tarts."],
            f"How many {ing} will be left?", ans, True, "recipe")


def t_spend_both(r, c):
    x, y = people(r, 2)
    m = money(r)
    T = c.q(any_(r, 20, 100))
    a = c.q(any_(r, 1, T - 2))
    b = c.q(any_(r, 1, T - a - 1))
    left = c.sub(T, a)
    ans = c.sub(left, b)
    return ([f"{x.n} and {y.n} had {m(T)} between them.",
             f"{x.n} spent {m(a)} on snacks and {y.n} spent {m(b)} on a present."],
            f"How much money do they have left?", ans, True, "money")


def t_I_together(r, c):
    sg, pl = r.choice(THINGS)
    rel = r.choice(["my brother", "my sister", "my friend", "my cousin"])
    a = c.q(any_(r, 10, 60))
    b = c.q(any_(r, 1, a - 1))
    o = c.sub(a, b)
    ans = c.add(a, o)
    return ([f"I have {a} {pl}.", f"{rel.capitalize()} has {b} fewer than me."],
            f"How many {pl} do the two of us have together?", ans, True, "count")


def t_you_packs(r, c):
    sg, pl = r.choice(THINGS)
    k = c.q(small(r, 2, 8))
    n = c.q(any_(r, 2, 100 // k))
    tot = c.mul(k, n)
    m = c.q(any_(r, 1, tot - 1))
    ans = c.sub(tot, m)
    return ([f"You buy {k} packs of {pl} with {n} in each pack.", f"You give away {m}."],
            f"How many {pl} do you have left?", ans, True, "count")


def t_practice(r, c):
    x, = people(r, 1)
    k = c.q(small(r, 2, 6))
    a = c.q(any_(r, 5, 90 // k))
    tot = c.mul(k, a)
    b = c.q(any_(r, 5, 100 - tot) if tot < 95 else 0)
    ans = c.add(tot, b)
    act = r.choice(["violin", "the drums", "chess", "judo", "the flute"])
    return ([f"{x.n} practises {act} for {a} minutes on each of {k} weekdays and for {b} minutes "
             f"on Saturday."],
            f"How many minutes does {x.s} practise that week?", ans, True, "time")


def t_half_then(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    n = c.q(2 * any_(r, 3, 50))
    c.q(2)
    h = c.div(n, 2)
    m = c.q(any_(r, 1, h - 1))
    ans = c.sub(h, m)
    return ([f"{x.n} had {n} {pl}.", f"{x.S} gave half of them to {y.n} and then lost {m}."],
            f"How many {pl} does {x.n} have left?", ans, True, "count")


def t_savings(r, c):
    x, = people(r, 1)
    m = money(r)
    sg, pl, lo, hi = r.choice([i for i in ITEMS if i[3] >= 20])
    k = c.q(small(r, 2, 8))
    p = c.q(any_(r, 2, 90 // k))
    saved = c.mul(k, p)
    C = c.q(any_(r, saved + 1, 100))
    ans = c.sub(C, saved)
    return ([f"{x.n} saves {m(p)} a week for {k} weeks.", f"The {sg} {x.s} wants costs {m(C)}."],
            f"How much more does {x.s} need to save?", ans, True, "money")


def t_other_person(r, c):
    x, y, z = people(r, 3)
    sg, pl = r.choice(THINGS)
    a, b, cc = c.q(any_(r, 5, 60), any_(r, 2, 30), any_(r, 2, 30))
    yb = c.add(a, b)
    ans = c.sub(yb, cc)
    return ([f"{x.n} has {a} {pl}.", f"{y.n} has {b} more than {x.n}, and {z.n} has {cc} fewer than {y.n}."],
            f"How many {pl} does {z.n} have?", ans, True, "count")


# ---- three steps

def th_chain(r, c):
    x, y = people(r, 2)
    sg, pl = r.choice(THINGS + FOODS)
    a, b, cc, d = c.q(any_(r, 10, 60), any_(r, 2, 40), any_(r, 2, 30), any_(r, 2, 30))
    ans = c.sub(c.sub(c.add(a, b), cc), d)
    return ([f"{x.n} had {a} {pl}.", f"{x.S} got {b} more from {y.n}.",
             f"Then {x.s} gave {cc} to {x.p} teacher and lost {d}."],
            f"How many {pl} does {x.n} have now?", ans, True, "count")


def th_buy_two(r, c):
    x, = people(r, 1)
    m = money(r)
    (s1, p1, lo1, hi1), (s2, p2, lo2, hi2) = r.sample(ITEMS, 2)
    k = c.q(small(r, 2, 5))
    p = c.q(any_(r, lo1, hi1))
    q = c.q(any_(r, lo2, hi2))
    t = c.add(c.mul(k, p), q)
    B = c.q(r.choice([n for n in (20, 50, 100) if n > t] or [0]))
    ans = c.sub(B, t)
    return ([f"{x.n} buys {k} {p1} at {m(p)} each and one {s2} for {m(q)}.",
             f"{x.S} pays with {m.note(B)}."], f"How much change does {x.s} get?", ans, True, "money")


def th_groups_share(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(FOODS)
    cs, cp = r.choice(CONTAINERS)
    k = c.q(small(r, 2, 8))
    n = c.q(any_(r, 3, 100 // k))
    tot = c.mul(k, n)
    e = c.q(any_(r, 1, 20))
    rest = c.sub(tot, e)
    g = c.q(small(r, 2, 9))
    ans = c.div(rest, g)
    return ([f"{x.n} brings {k} {cp} of {pl} to a picnic, {n} in each {cs}.",
             f"{e} of them get eaten by the dog, and the rest are shared equally by {g} people."],
            f"How many {pl} does each person get?", ans, True, "count")


def th_three_people(r, c):
    x, y, z = people(r, 3)
    sg, pl = r.choice(THINGS)
    a, b = c.q(any_(r, 5, 40), any_(r, 1, 30))
    k = c.q(small(r, 2, 3))
    yb = c.sub(a, b)
    zb = c.mul(k, yb)
    ans = c.add(yb, zb)
    w = {2: "twice as many", 3: "three times as many"}[k]
    return ([f"{x.n} has {a} {pl}.", f"{y.n} has {b} fewer than {x.n}.",
             f"{z.n} has {w} as {y.n}."], f"How many {pl} do {y.n} and {z.n} have together?",
            ans, True, "count")


def th_goal(r, c):
    x, = people(r, 1)
    unit = r.choice(["km", "miles", "laps"])
    a, b, cc = c.q(any_(r, 2, 30), any_(r, 2, 30), any_(r, 2, 30))
    s = c.add(c.add(a, b), cc)
    G = c.q(any_(r, s + 1, 100))
    ans = c.sub(G, s)
    return ([f"{x.n}'s goal is {G} {unit} this week.",
             f"{x.S} did {a} {unit} on Monday, {b} on Tuesday and {cc} on Wednesday."],
            f"How many more {unit} does {x.s} need to reach the goal?", ans, True, "distance")


def th_I_money(r, c):
    m = money(r)
    a, b, cc, d = c.q(any_(r, 5, 60), any_(r, 2, 40), any_(r, 2, 40), any_(r, 2, 30))
    ans = c.sub(c.sub(c.add(a, b), cc), d)
    return ([f"I had {m(a)}.", f"I earned {m(b)} washing cars, then spent {m(cc)} on a "
             f"{r.choice(['game', 'jacket', 'book', 'concert ticket'])} and {m(d)} on lunch."],
            "How much money do I have now?", ans, True, "money")


def th_recipe(r, c):
    k = c.q(small(r, 2, 5))
    n = c.q(any_(r, 2, 12))
    h, g = c.q(any_(r, 2, 60), any_(r, 2, 30))
    have = c.add(h, g)
    need = c.mul(n, k)
    ans = c.sub(have, need)
    return ([f"A muffin recipe needs {n} eggs per batch and I'm making {k} batches.",
             f"I have {h} eggs and my neighbour gives me {g} more."],
            "How many eggs will I have left after baking?", ans, True, "recipe")


def th_bags(r, c):
    x, = people(r, 1)
    sg, pl = r.choice(THINGS + FOODS)
    a, b = c.q(any_(r, 5, 60), any_(r, 2, 40))
    k = c.q(small(r, 2, 8))
    tot = c.add(a, b)
    each = c.div(tot, k)
    m = c.q(any_(r, 1, each - 1) if each > 1 else 0)
    ans = c.sub(each, m)
    return ([f"{x.n} had {a} {pl} and found {b} more.",
             f"{x.S} split them equally into {k} bags and then took {m} out of one bag."],
            f"How many {pl} are in that bag now?", ans, True, "count")


STORIES = {
    1: [s_gain, s_loss, s_eat, s_change, s_share, s_teams, s_groups, s_price, s_rate, s_more,
        s_fewer, s_times, s_compare, s_together, s_distance, s_time, s_recipe, s_pages, s_half,
        s_you, s_I, s_age, s_temp, s_save, s_bill],
    2: [t_get_give, t_buy_change, t_more_total, t_times_total, t_groups_extra, t_share_take,
        t_left_share, t_distance_days, t_pages_plan, t_recipe_have, t_spend_both, t_I_together,
        t_you_packs, t_practice, t_half_then, t_savings, t_other_person],
    3: [th_chain, th_buy_two, th_groups_share, th_three_people, th_goal, th_I_money, th_recipe,
        th_bags],
}
BARES = {1: bare1, 2: bare2, 3: bare3}

MONTHS = ["March", "May", "July", "October", "November"]


PRONOUN = re.compile(r"\b(he|she|him|her|his|they|them|their|it|its)\b", re.I)


def distractor(r, sentences, question, kind, taken):
    """A sentence with a number that plays no part in the answer, of a kind the question never asks."""
    z = P(*r.choice([n for n in NAMES if n[0] not in taken]))
    plain = [f"It was the {r.randint(4, 20)}th of {r.choice(MONTHS)}."]
    if kind != "temp":
        plain.append(f"It was {r.randint(8, 35)} degrees outside.")
    person = [f"{z.n} is {r.randint(6, 70)} years old."]
    if kind != "time":
        person.append(f"{z.n}'s bus was {r.randint(3, 25)} minutes late that morning.")
    if kind != "money":
        person.append(f"{z.n} had {r.randint(2, 60)} dollars in a piggy bank.")
    # a new person must not come before a pronoun, nor anything between a pronoun and what it names
    ok = [i for i in range(1, len(sentences) + 1)
          if not any(PRONOUN.search(t) for t in sentences[i:] + [question])]
    out = list(sentences)
    if ok and r.random() < 0.7:
        out.insert(r.choice(ok), r.choice(plain + person))
    else:
        out.insert(0, r.choice(plain))
    return out


def informal(r, q):
    q = q.lower()
    q = q.replace(" you ", " u ").replace("you ", "u ").replace(" your ", " ur ")
    q = q.replace("how many", r.choice(["how many", "how many", "hw many", "how mny"]))
    q = q.replace("'", "") if r.random() < 0.6 else q
    q = q.replace(",", "")
    end = r.choice(["", "?", "??", " pls", " ?", " thx"])
    if q.endswith("?"):
        q = q[:-1]
    return q + end


def make_story(r, fn):
    c = Calc()
    sentences, question, ans, allow, kind = fn(r, c)
    text = sentences
    names = {n for n, _ in NAMES if any(n in s for s in sentences + [question])}
    if allow and r.random() < 0.18:
        text = distractor(r, sentences, question, kind, names)
    q = " ".join(text) + " " + question
    pron = re.search(r"\b(she|he|her|his|him|they)\b", question)
    if not pron and r.random() < 0.08:
        q = question + " " + " ".join(sentences)  # question first, as some people type it
    if r.random() < 0.12:
        q = informal(r, q)
    return q, ans, c


def main():
    r = random.Random(SEED)
    rows = []
    seen = set()
    for steps in (1, 2, 3):
        want_bare = BARE[steps]
        want_story = TARGET[steps] - want_bare
        for kind, want in (("bare", want_bare), ("story", want_story)):
            got = 0
            order = []
            tries = 0
            while got < want:
                tries += 1
                assert tries < 200000, (steps, kind, got)
                try:
                    if kind == "bare":
                        c = Calc()
                        q, ans = BARES[steps](r, c)
                    else:
                        if not order:
                            order = list(STORIES[steps])
                            r.shuffle(order)
                        fn = order[-1]
                        q, ans, c = make_story(r, fn)
                        order.pop()
                except Reject:
                    continue
                if c.steps != steps:
                    raise AssertionError((q, c.steps, steps))
                key = " ".join(q.lower().split())
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"question": q, "answer": ans, "steps": steps, "source": "grammar",
                             "messages": [{"role": "user", "content": q}],
                             "_values": c.values, "_products": c.products})
                got += 1
    # the checks, once more over the whole set
    assert len(rows) == sum(TARGET.values())
    for s in TARGET:
        assert sum(1 for x in rows if x["steps"] == s) == TARGET[s]
    assert len({x["question"] for x in rows}) == len(rows)
    for x in rows:
        assert _ok(x["answer"]), x
        assert x["answer"] == x["_values"][-1], x
        assert all(_ok(v) for v in x["_values"]), x
        assert all(min(a, b) <= 25 and _ok(a * b) for a, b in x["_products"]), x
        del x["_values"], x["_products"]
    r.shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for x in rows:
            f.write(json.dumps(x, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} questions to {OUT}")


if __name__ == "__main__":
    main()
