#!/usr/bin/env python3
"""Grammar "formal": textbook, worksheet and exam wording, and questions from terse or non-native writers.

Covers
  * bare arithmetic in school wording (about 30%): "What is the sum of 23 and 48?", "Find the
    quotient when 84 is divided by 4.", "Increase 35 by 17.", "A number is 12 more than 30. What
    is the number?", "The sum of two numbers is 50. One of them is 18. What is the other?",
    fill-in-the-blank, missing factor, averages, "Subtract the sum of 9 and 12 from 50.", exercise
    labels ("Problem 3.", "Exercise 4b:"), terse and non-native forms ("sum 23 and 48 is how much?");
  * short stories of 1-4 steps in exam style: stock of a shop or store ("A shop had 45 kg of rice.
    It sold 17 kg. Find the remaining amount."), containers told in the passive voice ("12 books
    were added to the shelf"), people, "I" and "we", comparisons (more / fewer / times as many /
    half as many, asked either way, facts given out of order, "which was 9 more than"), totals,
    differences, the rest of a whole, sharing, packing into groups, rates, prices, change, ages;
    "Given: ... Find: ..." layouts, "... given that ..." question-first sentences, distractor facts;
    telegraphic notes ("Tom 34 apples. buys 12. gives 5 away. how many?") and non-native grammar
    ("How many apple Tom have now?").

Reasoning follows the model's conventions: one "(k)" line per statement of the question, restating
with has/have or "There are ... on the shelf", "That is a * b = c ... and ...", "Each ... gets",
"Together, A and B have", "This does not change the answer." for distractors; bare arithmetic shows
equations only.

Independence: written from scratch for this brief, without reading the other grammars in this
folder, the tinygsm generator's natural.cpp or any evaluation set; its names, objects, units, places,
verbs and sentence frames are its own lists.

    python3 tools/grammars/formal.py --n 20000 --seed 1 -o /tmp/formal.jsonl
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402

# ----------------------------------------------------------------------------------------------
# word lists

FEMALE = """Amara Ayesha Beatriz Chiara Dalia Eun-ji Fatou Greta Hoa Ingrid Jana Kalinda Leilani Mei
Nadia Olga Priya Quilla Rosa Saanvi Tamar Ulla Valentina Wanjiru Ximena Yara Zofia Aiyana Catalina
Dagny Esi Farida Gulnara Hana Ilse Jasmin Keziah Lucia Mirela Nkechi Oona Paloma Rania Sigrid
Thandiwe Vesna Yuki Zainab Adaeze Birgit Carmela Dilnoza Elif Fiorella Gabriela Hadiza Isla Kaveri
Marisol Noemi Pania Roza Svetlana Tuyet Zehra Anouk Malia Sunita Lerato""".split()
MALE = """Tom Abebe Bogdan Chidi Dmitri Emeka Farhan Goran Hamid Ivan Jomo Kenji Lars Mateus Nikhil
Olusegun Pavel Quang Rafael Sandeep Tariq Umar Vikram Wiremu Xavier Yusuf Zoltan Anders Bashir Cosmin
Darius Eero Felipe Gustavo Hiroshi Ilir Jakub Kwabena Luca Mehmet Nuno Oskar Piotr Ravi Stefan Tomas
Ugo Viktor Wen Yannick Zubair Arjun Bruno Ciaran Duc Emil Fyodor Gideon Henrik Ismail Joaquin Kofi
Lorenzo Magnus Nasser Obi Pedro Rustam Sione Teodor Vusi Ahanu Bilal""".split()

# count nouns: singular, plural, tags (f = food, e = can be eaten, g = can be given/sold freely)
COUNT = [
    ("apple", "apples", "fe"), ("pencil", "pencils", ""), ("marble", "marbles", ""),
    ("sticker", "stickers", ""), ("stamp", "stamps", ""), ("book", "books", ""),
    ("eraser", "erasers", ""), ("notebook", "notebooks", ""), ("orange", "oranges", "fe"),
    ("egg", "eggs", "f"), ("shell", "shells", ""), ("postcard", "postcards", ""), ("coin", "coins", ""),
    ("button", "buttons", ""), ("bead", "beads", ""), ("ribbon", "ribbons", ""),
    ("balloon", "balloons", ""), ("candle", "candles", ""), ("cup", "cups", ""), ("plate", "plates", ""),
    ("spoon", "spoons", ""), ("glass", "glasses", ""), ("brush", "brushes", ""),
    ("peach", "peaches", "fe"), ("cherry", "cherries", "fe"), ("toy car", "toy cars", ""),
    ("kite", "kites", ""), ("ball", "balls", ""), ("doll", "dolls", ""), ("puzzle", "puzzles", ""),
    ("crayon", "crayons", ""), ("ruler", "rulers", ""), ("folder", "folders", ""),
    ("envelope", "envelopes", ""), ("badge", "badges", ""), ("magnet", "magnets", ""),
    ("pebble", "pebbles", ""), ("leaf", "leaves", ""), ("flower", "flowers", ""), ("rose", "roses", ""),
    ("tulip", "tulips", ""), ("lemon", "lemons", "f"), ("mango", "mangoes", "fe"),
    ("banana", "bananas", "fe"), ("potato", "potatoes", "f"), ("tomato", "tomatoes", "f"),
    ("carrot", "carrots", "fe"), ("onion", "onions", "f"), ("biscuit", "biscuits", "fe"),
    ("cookie", "cookies", "fe"), ("muffin", "muffins", "fe"), ("sandwich", "sandwiches", "fe"),
    ("bun", "buns", "fe"), ("brick", "bricks", ""), ("tile", "tiles", ""), ("nail", "nails", ""),
    ("screw", "screws", ""), ("battery", "batteries", ""), ("light bulb", "light bulbs", ""),
    ("sock", "socks", ""), ("shirt", "shirts", ""), ("hat", "hats", ""), ("glove", "gloves", ""),
    ("scarf", "scarves", ""), ("umbrella", "umbrellas", ""), ("bottle", "bottles", ""),
    ("jar", "jars", ""), ("bucket", "buckets", ""), ("photo", "photos", ""), ("ticket", "tickets", ""),
    ("sweet", "sweets", "fe"), ("lollipop", "lollipops", "fe"), ("walnut", "walnuts", "fe"),
    ("almond", "almonds", "fe"), ("grape", "grapes", "fe"), ("plum", "plums", "fe"),
    ("pear", "pears", "fe"), ("melon", "melons", "fe"), ("pumpkin", "pumpkins", "f"),
    ("paper cup", "paper cups", ""), ("chalk stick", "chalk sticks", ""), ("comic", "comics", ""),
    ("key ring", "key rings", ""), ("seashell", "seashells", ""), ("acorn", "acorns", ""),
    ("pine cone", "pine cones", ""), ("feather", "feathers", ""), ("dumpling", "dumplings", "fe"),
    ("rice cake", "rice cakes", "fe"), ("samosa", "samosas", "fe"), ("tortilla", "tortillas", "fe"),
    ("date", "dates", "fe"), ("fig", "figs", "fe"), ("coconut", "coconuts", "f"),
    # invented things
    ("glimmet", "glimmets", ""), ("zarvel", "zarvels", ""), ("quibbet", "quibbets", ""),
    ("tavrin", "tavrins", ""), ("flonk", "flonks", ""), ("drumlet", "drumlets", ""),
    ("vorbit", "vorbits", ""), ("kessin", "kessins", ""),
]

# measured goods: unit singular, unit plural, substance
MASS = [
    ("kg", "kg", "rice"), ("kg", "kg", "flour"), ("kg", "kg", "sugar"), ("kg", "kg", "potatoes"),
    ("kg", "kg", "beans"), ("kg", "kg", "lentils"), ("kg", "kg", "salt"), ("kg", "kg", "coffee"),
    ("litre", "litres", "milk"), ("litre", "litres", "oil"), ("litre", "litres", "juice"),
    ("litre", "litres", "paint"), ("litre", "litres", "water"), ("litre", "litres", "soup"),
    ("metre", "metres", "cloth"), ("metre", "metres", "rope"), ("metre", "metres", "wire"),
    ("metre", "metres", "ribbon"), ("bag", "bags", "cement"), ("sack", "sacks", "grain"),
    ("loaf", "loaves", "bread"), ("box", "boxes", "tea"), ("carton", "cartons", "milk"),
    ("packet", "packets", "seeds"), ("roll", "rolls", "tape"), ("tin", "tins", "paint"),
    ("crate", "crates", "oranges"), ("bundle", "bundles", "hay"), ("tub", "tubs", "yoghurt"),
    ("jug", "jugs", "lemonade"), ("pail", "pails", "water"), ("bale", "bales", "straw"),
    ("plink", "plinks", "barley"), ("dormel", "dormels", "wool"), ("skein", "skeins", "yarn"),
]

MONEY = ["dollars", "euros", "pounds", "rupees", "pesos", "francs", "crowns", "dinars", "zlotys",
         "florins", "marks", "zelts"]

# organisations that keep stock: indefinite, definite, goods (indices into MASS or "c:" count nouns)
ORGS = [
    ("a shop", "the shop"), ("a grocer", "the grocer"), ("a bakery", "the bakery"),
    ("a market stall", "the stall"), ("a farm", "the farm"), ("a warehouse", "the warehouse"),
    ("a school canteen", "the canteen"), ("a hardware store", "the store"), ("a factory", "the factory"),
    ("a cafe", "the cafe"), ("a mill", "the mill"), ("a corner shop", "the corner shop"),
    ("a village shop", "the village shop"), ("a supermarket", "the supermarket"),
    ("a tailor", "the tailor"), ("a builder", "the builder"), ("a hotel kitchen", "the kitchen"),
    ("the Brannock mill", "the mill"), ("the Corvel Street market", "the market"),
    ("a shop in Tellmouth", "the shop"), ("the depot at Ashvale", "the depot"),
    ("the Kestrel Road bakery", "the bakery"), ("a kiosk in Marrowby", "the kiosk"),
    ("the Orin Bay fish market", "the market"), ("a co-op in Dunleigh", "the co-op"),
]

# containers, restated "There are N things <prep> the <name>": indefinite, definite, prep, contents
CONTAINERS = [
    ("a shelf", "the shelf", "on", "c:book|c:jar|c:folder|c:bottle|c:glimmet|c:comic"),
    ("a tank", "the tank", "in", "m:litre:water|m:litre:oil"),
    ("a bus", "the bus", "on", "a:passenger:passengers"),
    ("a hall", "the hall", "in", "c:chair:chairs|a:person:people"),
    ("a basket", "the basket", "in", "c:egg|c:apple|c:orange|c:plum|c:mango|c:pear"),
    ("a box", "the box", "in", "c:pencil|c:crayon|c:chalk stick|c:nail|c:screw|c:marble|c:toy car"),
    ("a jar", "the jar", "in", "c:coin|c:sweet|c:button|c:bead|c:almond"),
    ("a classroom", "the classroom", "in", "a:pupil:pupils|c:desk:desks"),
    ("a garden", "the garden", "in", "c:rose|c:tulip|c:tree:trees|c:rose bush:rose bushes"),
    ("a pond", "the pond", "on", "a:duck:ducks|a:swan:swans"),
    ("a car park", "the car park", "in", "a:car:cars"),
    ("a library", "the library", "in", "c:book|c:comic"),
    ("a train carriage", "the carriage", "in", "a:passenger:passengers"),
    ("a ferry", "the ferry", "on", "a:passenger:passengers|a:car:cars"),
    ("a drawer", "the drawer", "in", "c:sock|c:spoon|c:glove|c:battery"),
    ("a cupboard", "the cupboard", "in", "c:plate|c:cup|c:glass|c:paper cup"),
    ("a barn", "the barn", "in", "m:bale:straw|m:bundle:hay|a:goat:goats"),
    ("a crate", "the crate", "in", "c:bottle|c:melon|c:coconut|c:potato"),
    ("a field", "the field", "in", "a:sheep:sheep|a:cow:cows|a:horse:horses"),
    ("the Velmora library", "the library", "in", "c:book|c:comic"),
    ("a boat on Lake Ostra", "the boat", "on", "a:tourist:tourists"),
    ("a harbour in Pellwick", "the harbour", "in", "a:boat:boats|a:yacht:yachts"),
]

RELATIVES = ["brother", "sister", "cousin", "friend", "neighbour", "classmate", "aunt", "uncle"]

LABELS = ["Problem {n}.", "Problem {n}:", "Exercise {n}.", "Exercise {n}{l}:", "Q{n}.", "Q{n})",
          "Question {n}.", "Question {n})", "Task {n}:", "{n}.", "{n})", "Example {n}.",
          "Word problem:", "Homework:", "Worksheet {n}, question {m}:", "Test item {n}.",
          "Practice:", "Exam question:", "Section B, question {n}.", "Revision:", "Quiz {n}:",
          "Unit {n} test:", "Solve:", "Solve the following.", "Read and answer:", "Exercise:",
          "Mental maths:", "Warm-up {n}:", "Exercise {n} (a)", "Lesson {n}, task {m}."]
SUFFIXES = ["Show your working.", "Show all working.", "Give your answer as a whole number.",
            "Write only the number.", "Answer in a complete sentence.", "Explain your answer.",
            "(2 marks)", "(1 mark)", "[3 marks]", "Use the space below.", "Check your answer."]


# ----------------------------------------------------------------------------------------------
# grammar helpers

IRREG = {"buy": "bought", "get": "got", "give": "gave", "find": "found", "sell": "sold",
         "lose": "lost", "eat": "ate", "make": "made", "take": "took", "have": "had",
         "spend": "spent", "lend": "lent", "win": "won", "pay": "paid", "bring": "brought",
         "put": "put", "keep": "kept", "throw": "threw", "send": "sent", "grow": "grew",
         "split": "split", "hold": "held", "begin": "began", "break": "broke", "do": "did",
         "go": "went", "come": "came", "leave": "left", "fly": "flew", "ride": "rode",
         "sit": "sat", "read": "read", "set": "set", "cut": "cut", "let": "let", "win": "won",
         "own": "owned", "share": "shared", "save": "saved", "use": "used", "store": "stored",
         "bake": "baked", "pick": "picked", "add": "added", "earn": "earned", "receive": "received",
         "collect": "collected", "donate": "donated", "pack": "packed", "order": "ordered",
         "double": "doubled", "triple": "tripled", "divide": "divided", "place": "placed",
         "deliver": "delivered", "remove": "removed", "gather": "gathered", "stock": "stocked",
         "want": "wanted", "need": "needed", "plant": "planted", "produce": "produced",
         "carry": "carried", "harvest": "harvested", "borrow": "borrowed", "return": "returned",
         "start": "started", "contain": "contained", "arrange": "arranged", "hand": "handed",
         "owe": "owed", "lay": "laid", "fill": "filled", "end": "ended", "drop": "dropped"}
VERBS = set(IRREG)


def third(v):
    if v == "have":
        return "has"
    if v in ("do", "go"):
        return v + "es"
    if re.search(r"(s|sh|ch|x|z)$", v):
        return v + "es"
    if re.search(r"[^aeiou]y$", v):
        return v[:-1] + "ies"
    return v + "s"


def cap(s):
    return s[0].upper() + s[1:] if s else s


class Owner:
    """Whoever holds the quantity. kind: person, I, we, org, box (restated 'There are ... in the box')."""

    def __init__(self, kind, name="", female=False, indef="", prep=""):
        self.kind, self.name, self.female, self.indef, self.prep = kind, name, female, indef, prep
        self.mentioned = False

    @property
    def sg3(self):
        return self.kind not in ("I", "we")

    def full(self):          # first mention / restatement subject
        if self.kind == "person":
            return self.name
        if self.kind == "I":
            return "I"
        if self.kind == "we":
            return "we"
        return self.name     # definite: "the shop"

    def pron(self):
        return {"person": "she" if self.female else "he", "I": "I", "we": "we"}.get(self.kind, "it")

    def obj(self):
        return {"person": "her" if self.female else "him", "I": "me", "we": "us"}.get(self.kind, "it")

    def pos(self):
        return {"person": "her" if self.female else "his", "I": "my", "we": "our"}.get(self.kind, "its")

    def poss_name(self):     # "Tom's", "my", "the shop's"
        if self.kind == "person":
            return self.name + "'s"
        if self.kind in ("I", "we"):
            return self.pos()
        return self.name + "'s"

    def restate(self, qty, n):
        """Reasoning restatement without marker or period."""
        if self.kind == "person":
            return f"{self.name} has {qty}"
        if self.kind == "I":
            return f"I have {qty}"
        if self.kind == "we":
            return f"We have {qty}"
        if self.kind == "org":
            return f"{cap(self.name)} has {qty}"
        return f"There {'is' if n == 1 else 'are'} {qty} {self.prep} {self.name}"


class Thing:
    """What is counted: count noun, measured substance, money, or animate (for containers)."""

    def __init__(self, kind, s, p, stuff="", tags=""):
        self.kind, self.s, self.p, self.stuff, self.tags = kind, s, p, stuff, tags

    def np(self, n):
        if self.kind == "mass":
            return f"{n} {self.s if n == 1 else self.p} of {self.stuff}"
        if self.kind == "money":
            return f"{n} {self.s if n == 1 else self.p}"
        return f"{n} {self.s if n == 1 else self.p}"

    def short(self, n):      # "17" or "17 kg"
        if self.kind == "mass":
            return f"{n} {self.s if n == 1 else self.p}"
        if self.kind == "money":
            return f"{n} {self.s if n == 1 else self.p}"
        return f"{n}"

    def plural(self):        # after "how many"
        if self.kind == "mass":
            return f"{self.p} of {self.stuff}"
        return self.p

    def the(self):           # "the apples", "the rice", "the money"
        if self.kind == "mass":
            return f"the {self.stuff}"
        if self.kind == "money":
            return "the money"
        return f"the {self.p}"

    def them(self):
        return "it" if self.kind in ("mass", "money") else "them"

    def uncount(self):       # "rice", "money": how much; "packets of seeds": how many
        return self.kind == "money" or (self.kind == "mass" and not self.stuff.endswith("s"))

    def much(self):          # "how much rice" / "how many apples"
        if self.kind == "mass" and self.stuff.endswith("s"):
            return f"How many {self.p} of {self.stuff}"
        if self.kind == "mass":
            return f"How much {self.stuff}"
        if self.kind == "money":
            return "How much money"
        return f"How many {self.p}"

    def food(self):
        return "e" in self.tags


def more_np(th, k):
    """'12 more apples' / 'another 12 kg of rice' / '12 more dollars'."""
    if th.kind == "mass":
        return f"another {th.np(k)}"
    return f"{k} more {th.s if k == 1 else th.p}"


def money_thing(R):
    cur = R.choice(MONEY)
    sing = {"dollars": "dollar", "euros": "euro", "pounds": "pound", "rupees": "rupee", "pesos": "peso",
            "francs": "franc", "crowns": "crown", "dinars": "dinar", "zlotys": "zloty",
            "florins": "florin", "marks": "mark", "zelts": "zelt"}[cur]
    return Thing("money", sing, cur)


def count_thing(R, food=False):
    pool = [c for c in COUNT if "e" in c[2]] if food else COUNT
    s, p, t = R.choice(pool)
    return Thing("count", s, p, tags=t)


def mass_thing(R):
    s, p, stuff = R.choice(MASS)
    return Thing("mass", s, p, stuff)


def container_owner(R):
    indef, defi, prep, contents = R.choice(CONTAINERS)
    spec = R.choice(contents.split("|"))
    parts = spec.split(":")
    if parts[0] == "m":
        unit = parts[1]
        plural = {"litre": "litres", "bale": "bales", "bundle": "bundles"}[unit]
        th = Thing("mass", unit, plural, parts[2])
    elif len(parts) == 3:
        th = Thing("animate" if parts[0] == "a" else "count", parts[1], parts[2])
    else:
        match = [c for c in COUNT if c[0] == parts[1]]
        th = Thing("count", match[0][0], match[0][1], tags=match[0][2])
    o = Owner("box", defi, indef=indef, prep=prep)
    return o, th


# ----------------------------------------------------------------------------------------------
# the item under construction

class Story:
    def __init__(self, R, style, tense):
        self.R, self.style, self.tense = R, style, tense
        self.facts = []       # (text, reasoning line or None) in the order of the question
        self.lines = []       # reasoning lines in the order written
        self.worked = []
        self.swap = False
        self.solo = True
        self.no_qfirst = False

    def step(self, op, a, b):
        r = items.compute(op, a, b)
        assert r is not None and 1 <= r <= 100 and 1 <= a <= 100 and 1 <= b <= 100, (op, a, b)
        if op == "*":
            assert min(a, b) <= 25
        self.worked.append({"op": op, "a": a, "b": b, "result": r})
        return f"{a} {op} {b} = {r}", r

    # verbs -----------------------------------------------------------------------------------
    def v(self, base, who):
        """Conjugate base (first word) for owner who in this story's tense and style."""
        first, _, rest = base.partition(" ")
        nn = self.style == "nn"
        if self.tense == "past" and not (nn and self.R.random() < 0.35):
            w = IRREG.get(first, first + "ed")
        elif who.sg3 and not (nn and self.R.random() < 0.6):
            w = third(first)
        else:
            w = first
        return w + (" " + rest if rest else "")

    def be(self, who=None, n=None):
        """is/are/was/were for owner or for a count n (plural unless n == 1)."""
        if who is not None:
            pl = not who.sg3
            if who.kind == "I":
                return "was" if self.tense == "past" else "am"
        else:
            pl = n != 1
        if self.style == "nn" and self.R.random() < 0.4:
            pl = not pl
        if self.tense == "past":
            return "were" if pl else "was"
        return "are" if pl else "is"

    def has(self, who):
        return self.v("have", who)

    def subj(self, who, first=False):
        """Subject reference: name on first mention, then name or pronoun."""
        R = self.R
        if who.kind in ("I", "we"):
            return who.full()
        if who.kind == "person":
            if first or not self.solo or R.random() < 0.5:
                return who.name
            return who.pron()
        if first:
            return who.indef
        return who.name if R.random() < 0.6 else "it"

    def np(self, th, n):
        """Quantity as typed in the question (non-native writers drop plurals)."""
        if self.style == "nn" and th.kind == "count" and self.R.random() < 0.45:
            return f"{n} {th.s}"
        return th.np(n)


# ----------------------------------------------------------------------------------------------
# numbers

def pick_start(R, lo=2, hi=95):
    return R.randint(lo, hi)


def small_factor(R, v, lo=2, hi=5):
    fs = [f for f in range(lo, hi + 1) if v * f <= 100]
    return R.choice(fs) if fs else None


def group_split(R, total_max, lo_total=4):
    """count, size with count*size <= total_max, both at least 2."""
    opts = [(c, s) for c in range(2, 10) for s in range(2, 13) if lo_total <= c * s <= total_max]
    return R.choice(opts) if opts else None


def divisors(v, lo=2, hi=12):
    return [d for d in range(lo, hi + 1) if v % d == 0 and v // d >= 1 and v // d != v]


# ----------------------------------------------------------------------------------------------
# story facts: each returns (text, reasoning) and updates worked steps

DISTRACT = [
    "{O} is {n} years old.", "{O} lives {n} km away.", "The lesson lasts {n} minutes.",
    "The shop opens at {h} o'clock.", "{O} has a dog called Pip.", "It is a sunny day.",
    "{O} owns {n} {x}.", "The bus leaves at {h} o'clock.", "{O} is in grade {g}.",
    "The weather is cold.", "{O} has {n} {x} at home.", "The school has {n} teachers.",
    "Room {n} is on the first floor.", "The trip takes {n} minutes.", "{O}'s bag is blue.",
    "{O} likes {x}.", "There are {g} days left in the term.", "The test starts at {h} o'clock.",
]


def distractor(st, names_used, th):
    R = st.R
    O = R.choice([n for n in FEMALE + MALE if n not in names_used])
    other = count_thing(R)
    while other.p == th.p:
        other = count_thing(R)
    t = R.choice(DISTRACT)
    y = th.s if th.kind in ("count", "animate") else "box"
    s = t.format(O=O, n=R.randint(2, 60), h=R.randint(7, 11), x=other.p, g=R.randint(2, 9), y=y)
    if st.style == "terse":
        s = s.replace("The ", "").replace("It is a ", "")
    return s


def start_fact(st, who, th, v):
    """First fact: who has v of th. Returns (text, reasoning)."""
    R, s = st.R, st.style
    S = st.subj(who, first=True)
    q = st.np(th, v)
    line = f"(1) {who.restate(th.np(v), v)}."
    if who.kind == "box":
        be = st.be(n=v)
        opts = [f"There {be} {q} {who.prep} {who.indef}.",
                f"{cap(who.indef)} {st.v('hold', who)} {q}.",
                f"{cap(who.indef)} {st.v('contain', who)} {q}.",
                f"{q} {be} {who.prep} {who.indef}.",
                f"{cap(who.prep)} {who.indef} there {be} {q}."]
        if th.kind == "animate":
            opts += [f"There {be} {q} {who.prep} {who.indef}.", f"{q} {be} {who.prep} {who.indef}."]
        if s == "terse":
            opts = [f"{who.indef[2:] if who.indef.startswith('a ') else who.indef}: {q}.",
                    f"{q} {who.prep} {who.indef}.", f"{who.prep} {who.indef} {q}."]
        who.mentioned = True
        return R.choice(opts), line
    if s == "terse":
        opts = [f"{S} {q}.", f"{S}: {q}.", f"{S} has {q}.", f"{S} - {q}.", f"{S} starts with {q}."]
        if who.kind == "org":
            opts = [f"{who.indef}: {q}.", f"{who.indef} has {q}.", f"{who.indef} {q} in stock."]
        if who.kind in ("I", "we"):
            opts = [f"{S} have {q}.", f"{S} have {q}", f"{S} had {q}."]
        return R.choice(opts), line
    has = st.has(who)
    opts = [f"{S} {has} {q}."] + ([f"{S} {st.v('own', who)} {q}."] if who.kind != "org" else [])
    if who.kind == "org":
        if th.kind == "money":
            opts += [f"{cap(S)} {has} {q} in its till.", f"There {st.be(n=v)} {q} in the till of {S}."]
        else:
            opts += [f"{cap(S)} {has} {q} in stock.", f"{cap(S)} {has} a stock of {q}.",
                     f"There {st.be(n=v)} {q} in {S}.", f"{cap(S)} {st.v('store', who)} {q}.",
                     f"In {S} there {st.be(n=v)} {q}."]
    elif th.kind == "money":
        opts += [f"{S} {has} {q} in {who.pos()} wallet.", f"{S} {st.v('save', who)} {q}.",
                 f"There {st.be(n=v)} {q} in {who.poss_name()} purse.",
                 f"{S} {st.v('start', who)} the week with {q}."]
    else:
        opts += [f"{S} {has} a collection of {q}.", f"There {st.be(n=v)} {q} in {who.poss_name()} bag.",
                 f"{cap(who.poss_name())} box {st.v('contain', Owner('org'))} {q}.",
                 f"{S} {st.v('start', who)} with {q}.", f"{S} {st.v('keep', who)} {q} in a drawer."]
        if s == "nn":
            opts += [f"{S} {st.be(who)} having {q}.", f"{S} {has} {q} with {who.obj()}."]
        if "f" in th.tags:
            opts += [f"{S} {st.v('buy', who)} {q} at the market."]
    if s == "nn":
        opts = [o.replace("a collection of ", "collection of ") for o in opts]
    return R.choice(opts), line


CONT1 = {"boxes": "box", "bags": "bag", "packs": "pack", "crates": "crate", "trays": "tray", "bundles": "bundle",
         "baskets": "basket", "packets": "packet", "rows": "row", "groups": "group", "cans": "can",
         "buckets": "bucket", "jugs": "jug", "bottles": "bottle", "sacks": "sack", "piles": "pile"}


def group_cont(R, th):
    """A plural container word that suits th."""
    if th.kind == "animate":
        return R.choice(["rows", "groups"])
    if th.kind == "mass":
        if th.s == "litre":
            return R.choice(["cans", "buckets", "jugs", "bottles"])
        if th.s == "kg":
            return R.choice(["bags", "sacks", "packs", "boxes"])
        if th.s == "metre":
            return R.choice(["bundles", "piles", "boxes"])
        return R.choice(["crates", "piles", "rows", "boxes"])
    return R.choice(["boxes", "bags", "packs", "crates", "trays", "bundles", "baskets", "packets"])


def start_groups(st, who, th, c, sz):
    """First fact given as groups: c groups of sz."""
    R = st.R
    S = st.subj(who, first=True)
    eq, g = st.step("*", c, sz)
    line = f"(1) {who.restate(eq + ' ' + th.np(g).split(' ', 1)[1], g)}."
    cont = group_cont(R, th)
    cont1 = CONT1[cont]
    P = th.p if th.kind != "mass" else th.plural()
    if who.kind == "box" and th.kind == "animate":
        past = st.tense == "past"
        opts = [f"{c} {cont} of {sz} {P} {'were' if past else 'are'} {who.prep} {who.indef}.",
                f"{cap(who.prep)} {who.indef} there {'were' if past else 'are'} {c} {cont} of {sz} {P}."]
        return R.choice(opts), line
    if who.kind == "box":
        opts = [f"{c} {cont} of {sz} {P} {st.be(n=c)} put {who.prep} {who.indef}.",
                f"{cap(who.indef)} {st.v('hold', who)} {c} {cont} with {sz} {P} in each."]
        return R.choice(opts), line
    if th.kind == "money" and who.kind == "org":
        opts = [f"{cap(S)} {st.v('take', who)} in {sz} {th.p} a day for {c} days.",
                f"For {c} days, {S} {st.v('earn', who)} {sz} {th.p} per day.",
                f"{cap(S)} {st.v('sell', who)} {c} cakes at {sz} {th.p} each."]
        return R.choice(opts), line
    if th.kind == "money":
        opts = [f"{S} {st.v('earn', who)} {sz} {th.p} a day for {c} days.",
                f"{S} {st.v('save', who)} {sz} {th.p} every week for {c} weeks.",
                f"{S} {st.be(who)} paid {sz} {th.p} an hour for {c} hours.",
                f"For {c} days, {S} {st.v('earn', who)} {sz} {th.p} per day."]
        return R.choice(opts), line
    if st.style == "terse":
        return R.choice([f"{S} {c} {cont} x {sz} {P}.", f"{S}: {c} {cont}, {sz} {P} each.",
                         f"{S} has {c} {cont} of {sz} {P}."]), line
    opts = [f"{S} {st.has(who)} {c} {cont} of {sz} {P}.",
            f"{S} {st.has(who)} {c} {cont} with {sz} {P} in each {cont1}.",
            f"{S} {st.v('buy', who)} {c} {cont}, each containing {sz} {P}.",
            f"{c} {cont} of {sz} {P} {st.be(n=c)} given to {who.obj() if who.kind != 'person' else who.name}."]
    if th.kind == "count" and who.kind in ("person", "I", "we"):
        opts += [f"{S} {st.v('collect', who)} {sz} {P} a day for {c} days.",
                 f"Every day for {c} days, {S} {st.v('make', who)} {sz} {P}."]
    if who.kind == "org":
        opts += [f"{cap(S)} {st.v('receive', who)} {c} {cont} of {sz} {P}.",
                 f"{cap(S)} {st.v('produce', who)} {sz} {P} a day for {c} days."]
    return R.choice(opts), line


def pick(st, who, opts):
    """One option; with two people in the story, only options that name the owner."""
    if not st.solo and who.kind == "person":
        named = [o for o in opts if who.name in o]
        if named:
            opts = named
    return st.R.choice(opts)


def lowfirst(s):
    """Restatement inside a sentence: 'The shop has' -> 'the shop has'."""
    return s[0].lower() + s[1:] if s.startswith(("The ", "There ", "We ")) else s


def change_fact(st, who, th, v, kind, k_idx, names_used):
    """A change to who's amount v. Returns (text, reasoning, new v) or None if numbers do not fit."""
    R, s = st.R, st.style
    S = st.subj(who)
    mk = f"({k_idx}) "
    if kind == "add":
        if v >= 99:
            return None
        k = R.randint(1, min(60, 100 - v))
        eq, r = st.step("+", v, k)
        line = mk + who.restate(f"{eq} {th.np(r).split(' ', 1)[1]}", r) + "."
        q = st.np(th, k)
        if s == "terse":
            t = R.choice([f"{'buys' if st.tense == 'present' else 'bought'} {k}.", f"gets {k} more.",
                          f"+{k}.", f"{k} more added.", f"then {k} more.", f"receives {th.short(k)}.",
                          f"{th.short(k)} more came."])
            return t, line, r
        if who.kind == "box":
            if th.kind == "animate":
                verb = {"passenger": ["got on", "got in", "boarded"], "tourist": ["got on", "came aboard"],
                        "person": ["came in", "arrived", "joined them"], "pupil": ["came in", "arrived"],
                        "car": ["drove in", "arrived", "were parked there"]}.get(th.s, ["came", "arrived", "joined them"])
                vb = R.choice(verb)
                if st.tense == "present":
                    vb = {"got on": "get on", "got in": "get in", "boarded": "board", "came aboard": "come aboard",
                          "came in": "come in", "arrived": "arrive", "joined them": "join them", "drove in": "drive in",
                          "were parked there": "are parked there", "came": "come"}[vb]
                    if k == 1:
                        vb = {"get on": "gets on", "get in": "gets in", "board": "boards", "come aboard": "comes aboard",
                              "come in": "comes in", "arrive": "arrives", "join them": "joins them",
                              "drive in": "drives in", "are parked there": "is parked there", "come": "comes"}[vb]
                elif k == 1 and vb == "were parked there":
                    vb = "was parked there"
                opts = [f"{q} {vb}.", f"Then {q} {vb}.", f"{k} more {th.s if k == 1 else th.p} {vb}.",
                        f"Later, {k} more {vb}."]
            else:
                be = st.be(n=k)
                pp = R.choice(["added", "put", "placed", "stored"])
                where = {"added": f"to {who.name}", "put": f"{who.prep} {who.name}",
                         "placed": f"{who.prep} {who.name}", "stored": f"{who.prep} {who.name}"}[pp]
                opts = [f"{q} {be} {pp} {where}.", f"Then {th.short(k)} more {be} {pp} {where}.",
                        f"A further {q} {be} {pp} {where}.", f"Later, {q} {be} added."]
                if k > 1:
                    opts.append(f"Another {q} {be} {pp} {where}.")
            return pick(st, who, opts), line, r
        if th.kind == "money":
            verbs = ["earn", "receive", "get", "win", "find", "save"]
            vb = st.v(R.choice(verbs), who)
            opts = [f"{S} {vb} {q}.", f"{S} {vb} another {q}.", f"Then {S} {vb} {q} more.",
                    f"{R.choice(names_used[1:] or ['A friend'])} {st.v('give', Owner('person'))} {who.obj()} {q}.",
                    f"{S} {st.be(who)} paid {q} for helping.", f"{q} {st.be(n=k)} added to {who.poss_name()} savings."]
            if who.kind == "org":
                opts = [f"{cap(S)} {st.v('take', who)} in {q}.", f"{cap(S)} {st.v('earn', who)} {q} more.",
                        f"Customers {'paid' if st.tense == 'past' else 'pay'} {S} {q}."]
            return pick(st, who, opts), line, r
        if who.kind == "org":
            vb = R.choice(["receive", "buy", "order", "produce", "get"])
            opts = [f"{cap(S)} {st.v(vb, who)} {q}.", f"{cap(S)} {st.v(vb, who)} another {q}.",
                    f"A delivery of {q} {'arrived' if st.tense == 'past' else 'arrives'}.",
                    f"Then {more_np(th, k)} {st.be(n=k)} delivered to {who.name}.",
                    f"{q} {st.be(n=k)} added to the stock."]
            return pick(st, who, opts), line, r
        verbs = ["buy", "receive", "collect", "find", "get", "win", "make"]
        if "f" in th.tags:
            verbs += ["pick", "buy", "harvest"]
        vb = st.v(R.choice(verbs), who)
        giver = R.choice([n for n in FEMALE + MALE if n not in names_used])
        names_used.append(giver)
        P = th.p if th.kind != "mass" else th.plural()
        opts = [f"{S} {vb} {q}.", f"{S} {vb} {th.short(k)} more.", f"Then {S} {vb} another {q}.",
                f"{S} {st.be(who)} given {q}.", f"{q} {st.be(n=k)} given to {who.obj() if who.kind != 'person' else who.name}.",
                f"{giver} {st.v('give', Owner('person'))} {who.obj()} {q}.",
                f"Later, {S} {vb} {more_np(th, k)}.",
                f"{S} {st.v('receive', who)} {q} from {giver}.",
                f"{q} {st.be(n=k)} added to {who.poss_name()} collection."]
        if s == "nn":
            opts += [f"{S} {vb} {q} more.", f"After, {S} {vb} {q}.", f"{giver} give {who.obj()} {q}."]
        return pick(st, who, opts), line, r

    if kind == "sub":
        if v < 3:
            return None
        k = R.randint(1, v - 1)
        eq, r = st.step("-", v, k)
        line = mk + who.restate(f"{eq} {th.np(r).split(' ', 1)[1]}", r) + "."
        q = st.np(th, k)
        if s == "terse":
            opts = [f"{'sells' if st.tense == 'present' else 'sold'} {th.short(k)}.", f"gives {k} away.",
                    f"-{k}.", f"{th.short(k)} used.", f"loses {k}.", f"{k} gone.", f"{th.short(k)} taken."]
            if th.food():
                opts.append(f"eats {k}.")
            if th.kind == "money":
                opts = [f"spends {k}.", f"pays {k} for lunch.", f"{th.short(k)} spent.", f"-{k}."]
            return pick(st, who, opts), line, r
        if who.kind == "box":
            if th.kind == "animate":
                verb = {"passenger": ["got off", "left"], "tourist": ["got off", "went ashore"],
                        "car": ["drove away", "left"], "duck": ["flew away", "swam off"], "swan": ["flew away"],
                        "boat": ["sailed away", "left"], "yacht": ["sailed away", "left"]}.get(th.s, ["left", "went away"])
                vb = R.choice(verb)
                if st.tense == "present":
                    pres = {"got off": "get off", "left": "leave", "went ashore": "go ashore", "drove away": "drive away",
                            "flew away": "fly away", "swam off": "swim off", "sailed away": "sail away",
                            "went away": "go away"}[vb]
                    vb = pres if k != 1 else third(pres.split()[0]) + (" " + pres.split(" ", 1)[1] if " " in pres else "")
                opts = [f"{q} {vb}.", f"Then {q} {vb}.", f"Later, {k} of them {vb}.", f"After a while {q} {vb}."]
            else:
                be = st.be(n=k)
                pp = R.choice(["removed from", "taken out of", "taken from", "used", "sold", "given away",
                               "moved to another room", "broken", "lost"])
                if th.kind == "mass":
                    pp = R.choice(["removed from", "taken from", "used", "sold", "drained from" if th.s == "litre" else "used"])
                short = pp.split(" ")[0] if pp.endswith(("from", "of")) else pp
                opts = [f"{q} {be} {pp}{(' ' + who.name) if pp.endswith(('from', 'of')) else ''}.",
                        f"Later, {q} {be} {short}."]
                if th.kind == "mass":
                    opts.append(f"Then {th.short(k)} {be} {short}.")
                else:
                    opts.append(f"Then {k} of them {st.be(n=2)} {short}.")
            return pick(st, who, opts), line, r
        taker = R.choice([n for n in FEMALE + MALE if n not in names_used])
        names_used.append(taker)
        if th.kind == "money":
            thing = R.choice(["a book", "lunch", "a bus ticket", "a present", "a pair of socks", "a lamp",
                              "school shoes", "a map", "a plant", "a new pen", "bread", "a football"])
            opts = [f"{S} {st.v('spend', who)} {q} on {thing}.", f"{S} {st.v('pay', who)} {q} for {thing}.",
                    f"{S} {st.v('lend', who)} {taker} {q}.", f"{S} {st.v('give', who)} {q} to charity.",
                    f"{q} {st.be(n=k)} spent on {thing}.", f"{thing.capitalize()} {'cost' if st.tense == 'past' else 'costs'} {who.obj()} {q}."]
            if who.kind == "org":
                opts = [f"{cap(S)} {st.v('pay', who)} {q} for repairs.", f"{cap(S)} {st.v('spend', who)} {q} on rent.",
                        f"{q} {st.be(n=k)} paid out in wages."]
            return pick(st, who, opts), line, r
        if who.kind == "org":
            vb = R.choice(["sell", "use", "sell", "send out", "deliver", "give away"])
            opts = [f"{cap(S)} {st.v(vb, who)} {q}.", f"{cap(S)} {st.v(vb, who)} {th.short(k)}.",
                    f"{q} {st.be(n=k)} sold.", f"{th.short(k)} {st.be(n=k)} sold to customers.",
                    f"Then {S} {st.v('sell', who)} {th.short(k)} of {th.them()}."]
            if st.style == "nn":
                opts += [f"{cap(S)} sell {th.short(k)}.", f"{q} is sold."]
            return pick(st, who, opts), line, r
        verbs = ["sell", "give away", "lose", "use", "donate", "give away", "send off"]
        if th.food():
            verbs += ["eat", "eat"]
        vb = st.v(R.choice(verbs), who)
        opts = [f"{S} {vb} {q}.", f"{S} {st.v('give', who)} {q} to {taker}.",
                f"{S} {st.v('give', who)} {taker} {th.short(k)} of {th.them()}.", f"Then {S} {vb} {th.short(k)} of {th.them()}.",
                f"{q} {st.be(n=k)} {'eaten' if th.food() else R.choice(['lost', 'sold', 'given away', 'broken'])}.",
                f"{taker} {st.v('take', Owner('person'))} {th.short(k)} of {who.poss_name()} {th.p if th.kind == 'count' else th.stuff}."]
        if s == "nn":
            opts += [f"{S} {vb} {q} to {taker}.", f"{S} give {q} away.", f"After {S} {vb} {k}."]
        return pick(st, who, opts), line, r

    if kind in ("gadd", "gsub"):
        room = (100 - v) if kind == "gadd" else (v - 1)
        gs = group_split(R, room)
        if not gs:
            return None
        c, sz = gs
        eq1, g = st.step("*", c, sz)
        eq2, r = st.step("+" if kind == "gadd" else "-", v, g)
        unit = th.np(g).split(" ", 1)[1]
        line = mk + f"That is {eq1} {unit} and " + lowfirst(who.restate(f"{eq2} {th.np(r).split(' ', 1)[1]}", r)) + "."
        P = th.p if th.kind != "mass" else th.plural()
        cont = group_cont(R, th)
        if th.kind == "money":
            if kind == "gadd":
                opts = [f"{S} {st.v('earn', who)} {sz} {th.p} a day for {c} days.",
                        f"{S} {st.v('sell', who)} {c} old books for {sz} {th.p} each.",
                        f"{S} {st.be(who)} paid {sz} {th.p} an hour for {c} hours."]
            else:
                opts = [f"{S} {st.v('buy', who)} {c} tickets at {sz} {th.p} each.",
                        f"{S} {st.v('pay', who)} for {c} notebooks costing {sz} {th.p} each.",
                        f"{c} pens {'were' if st.tense == 'past' else 'are'} bought for {sz} {th.p} each."]
            if s == "terse":
                opts = [f"{'+' if kind == 'gadd' else '-'}{c} x {sz}.",
                        f"{'earns' if kind == 'gadd' else 'spends'} {sz} a day for {c} days."]
            return pick(st, who, opts), line, r
        if s == "terse":
            opts = ([f"gets {c} {cont} of {sz}.", f"+{c} {cont} x {sz}.", f"buys {c} {cont}, {sz} each."]
                    if kind == "gadd" else
                    [f"sells {c} {cont} of {sz}.", f"gives {sz} each to {c} friends.", f"-{c} x {sz}."])
            return pick(st, who, opts), line, r
        if who.kind == "box" and th.kind == "animate":
            past = st.tense == "past"
            if kind == "gadd":
                opts = [f"{c} {cont} of {sz} {P} {'arrived' if past else 'arrive'}.",
                        f"Then {c} more {cont} of {sz} {P} {'joined' if past else 'join'} them."]
            else:
                opts = [f"{c} {cont} of {sz} {P} {'left' if past else 'leave'}.",
                        f"Then {c} {cont} of {sz} {P} {'went away' if past else 'go away'}."]
            return pick(st, who, opts), line, r
        if who.kind == "box":
            if kind == "gadd":
                opts = [f"{c} {cont} of {sz} {P} {st.be(n=c)} added.",
                        f"Then {c} more {cont} with {sz} {P} in each {st.be(n=c)} brought in."]
            else:
                opts = [f"{c} {cont} of {sz} {P} {st.be(n=c)} taken away.",
                        f"{sz} {P} {st.be(n=sz)} removed {c} times."]
            return pick(st, who, opts), line, r
        if kind == "gadd":
            opts = [f"{S} {st.v('buy', who)} {c} {cont} of {sz} {P}.",
                    f"{S} {st.v('receive', who)} {c} {cont} with {sz} {P} in each.",
                    f"{S} {st.v('get', who)} {sz} {P} from each of {c} friends.",
                    f"{c} {cont} of {sz} {P} {st.be(n=c)} given to {who.obj() if who.kind != 'person' else who.name}."]
            if who.kind == "org":
                opts = [f"{cap(S)} {st.v('receive', who)} {c} {cont} of {sz} {P}.",
                        f"A delivery of {c} {cont} with {sz} {P} each {'arrived' if st.tense == 'past' else 'arrives'}.",
                        f"{cap(S)} {st.v('order', who)} {c} more {cont} of {sz} {P}."]
        else:
            opts = [f"{S} {st.v('sell', who)} {c} {cont} of {sz} {P}.",
                    f"{S} {st.v('give', who)} {sz} {P} to each of {c} friends.",
                    f"{S} {st.v('pack', who)} {c} {cont} of {sz} {P} and {st.v('send', who)} them away.",
                    f"{c} {cont} of {sz} {P} {st.be(n=c)} sold."]
            if who.kind == "org":
                opts = [f"{cap(S)} {st.v('sell', who)} {c} {cont} of {sz} {P}.",
                        f"{c} customers {'bought' if st.tense == 'past' else 'buy'} {sz} {P} each.",
                        f"{c} {cont} of {sz} {P} {st.be(n=c)} sent to another branch."]
        return pick(st, who, opts), line, r

    if th.kind == "animate" and kind in ("mul", "third", "quarter"):
        return None
    if kind == "mul":
        f = small_factor(R, v, 2, 4)
        if not f:
            return None
        eq, r = st.step("*", v, f)
        line = mk + who.restate(f"{eq} {th.np(r).split(' ', 1)[1]}", r) + "."
        word = {2: "doubles", 3: "triples"}.get(f)
        if s == "terse":
            opts = [f"x{f}.", f"then {f} times as many.", f"{word or 'multiplies by ' + str(f)}."]
            return pick(st, who, opts), line, r
        ptimes = {2: "doubled", 3: "tripled"}.get(f, f"multiplied by {f}")
        if th.kind == "count":
            amount, many, mine = f"The number of {th.p}", f"as many {th.p}", f"{who.pos()} {th.p}"
        else:
            stuff = th.stuff or "money"
            amount, many, mine = f"The amount of {stuff}", f"as much {stuff}" if th.uncount() else f"as many {th.plural()}", f"the amount of {stuff}"
        opts = [f"{amount} {st.be(n=1)} {ptimes}.",
                f"{S} {st.v('end', who)} up with {f} times {many}.",
                f"{cap(who.poss_name())} {'stock' if who.kind == 'org' else 'collection' if th.kind == 'count' else 'savings' if th.kind == 'money' else 'supply'} {st.be(n=1 if th.kind != 'money' else 2)} {ptimes}."]
        if who.kind == "box":
            opts = [f"{amount} {who.prep} {who.name} {st.be(n=1)} then {ptimes}."]
        if word and who.kind != "box":
            opts.append(f"{S} {st.v(word[:-1], who)} {mine}.")
        return pick(st, who, opts), line, r

    if kind in ("half", "third", "quarter"):
        d = {"half": 2, "third": 3, "quarter": 4}[kind]
        if v % d or v < 2 * d:
            return None
        eq, r = st.step("/", v, d)
        line = mk + who.restate(f"{eq} {th.np(r).split(' ', 1)[1]}", r) + "."
        frac = {"half": "half", "third": "one third", "quarter": "one quarter"}[kind]
        if s == "terse":
            opts = [f"keeps {frac}.", f"only {frac} left."] + ([f"half gone.", "gives away half."] if d == 2 else [])
            return pick(st, who, opts), line, r
        if d == 2 and who.kind == "box" and th.kind == "animate":
            opts = [f"Half of {th.the()} {R.choice(['left', 'went away'])}.", f"Then half of {th.the()} left."]
        elif d == 2 and who.kind == "box":
            opts = [f"Half of {th.the()} {st.be(n=2 if th.kind != 'mass' else 1)} {R.choice(['removed', 'taken away', 'used'])}.",
                    f"Then half of {th.the()} {st.be(n=2 if th.kind != 'mass' else 1)} taken out."]
        elif d == 2:
            vb = "sell" if who.kind == "org" else R.choice(["give away", "sell", "lose", "use"])
            opts = [f"{cap(S)} {st.v(vb, who)} half of {th.the() if th.kind != 'money' else who.pos() + ' money'}.",
                    f"Half of {th.the()} {st.be(n=1 if th.kind != 'count' else 2)} {R.choice(['sold', 'given away', 'lost'])}.",
                    f"{cap(S)} {st.v('keep', who)} only half of {th.the()}."]
            if th.kind == "money":
                opts = [f"{cap(S)} {st.v('spend', who)} half of {who.pos()} money.", f"Half of the money {st.be(n=1)} spent."]
        else:
            opts = [f"{cap(S)} {st.v('keep', who)} {frac} of {th.the()} and {st.v('give', who)} the rest away.",
                    f"Only {frac} of {th.the()} {st.be(n=2 if th.kind == 'count' else 1)} left{' after a sale' if th.kind != 'money' else ''}."]
            if who.kind == "box":
                opts = [f"All but {frac} of {th.the()} {st.be(n=2)} then taken away.",
                        f"Only {frac} of {th.the()} {st.be(n=2)} left {who.prep} {who.name} later."]
        return pick(st, who, opts), line, r
    raise ValueError(kind)


# ----------------------------------------------------------------------------------------------
# questions

def q_now(st, who, th):
    """(question, find-phrase) about who's amount now."""
    R, s = st.R, st.style
    P = th.plural()
    if who.kind == "box":
        be = "are"
        opts = [(f"How many {P} {be} {who.prep} {who.name} now?", f"the number of {P} {who.prep} {who.name}"),
                (f"Find the number of {P} {who.prep} {who.name} now.", f"the number of {P} {who.prep} {who.name} now"),
                (f"How many {P} {be} there {who.prep} {who.name} in the end?", f"the final number of {P}"),
                (f"Determine the number of {P} now {who.prep} {who.name}.", f"the number of {P} {who.prep} {who.name}"),
                (f"Calculate how many {P} {be} {who.prep} {who.name} at the end.", f"how many {P} remain"),
                (f"How many {P} {be} left {who.prep} {who.name}?", f"the remaining {P}")]
        if th.kind == "mass":
            opts += [(f"How much {th.stuff} is {who.prep} {who.name} now?", f"the amount of {th.stuff} left"),
                     ("Find the remaining amount.", "the remaining amount")]
        if s == "terse":
            opts = [("how many now?", "total"), ("how many?", "how many"), (f"{P} now?", "count"),
                    ("left?", "left")]
        if s == "nn":
            opts += [(f"How many {th.s if th.kind != 'mass' else P} is {who.prep} {who.name} now?", "how many"),
                     (f"How much {P} {who.prep} {who.name} now?", "how many")]
        return R.choice(opts)
    S = who.full()
    doe = "do" if not who.sg3 else "does"
    hs = "has" if who.sg3 else "have"
    opts = [(f"How many {P} {doe} {S} have now?", f"the number of {P} {S} {hs} now"),
            (f"Find the number of {P} {S} {hs} now.", f"the number of {P} {S} {hs}"),
            (f"Determine how many {P} {S} {hs}{' left' if st.solo else ' now'}.", f"how many {P} {S} {hs}"),
            (f"Calculate the number of {P} {S} {hs} in the end.", f"the final number of {P} {S} {hs}"),
            (f"What is the number of {P} {S} {hs} at the end?", f"the number of {P} {S} {hs} at the end"),
            (f"How many {P} {doe} {S} have in the end?", f"the number of {P} {S} {hs}"),
            (f"Work out how many {P} {S} now {hs}.", f"how many {P} {S} {hs} now"),
            ] + ([(f"How many {P} are left with {who.obj() if who.kind != 'person' else S}?", f"the number of {P} {S} {hs} left")] if st.solo else [])
    if st.tense == "past":
        opts += [(f"How many {P} did {S} have in the end?", f"the number of {P} {S} had in the end"),
                 (f"How many {P} did {S} have left?", f"how many {P} {S} had left")]
    if th.kind in ("mass", "money"):
        m = th.much()
        opts += [(f"{m} {doe} {S} have now?", f"the amount {S} {hs} now")]
        if st.solo:
            opts += [("Find the remaining amount.", "the remaining amount"), (f"{m} {'is' if th.uncount() else 'are'} left?", "the amount left")]
        opts += [
                 (f"Find the amount of {th.stuff or 'money'} {S} {hs} now.", f"the amount of {th.stuff or 'money'}")]
    if who.kind == "org" and th.kind != "money":
        opts += [(f"How many {P} {doe} {S} have in stock now?", f"the stock of {th.stuff or th.p} now"),
                 (f"Find the stock of {th.stuff or th.p} left.", f"the stock left")]
    if s == "terse":
        opts = [(f"{S} has how many?" if who.sg3 else f"{S} have how many?", "how many"),
                (f"how many {P} {S} now?", "how many")]
        if st.solo:
            opts += [("how many?", "how many"), ("how many now?", "how many now"), ("how many left?", "left"),
                     (f"how many {P}?", f"{P}"), ("left?", "left"), ("answer?", "answer"), ("how many in the end?", "end")]
    if s == "nn":
        Ps = th.s if th.kind == "count" else P
        opts += [(f"How many {Ps} {S} {'have' if who.sg3 else 'have'} now?", f"how many {Ps} {S} have"),
                 (f"How many {P} {S} {hs} now?", f"how many {P} {S} {hs}"),
                 (f"How much {P} {S} {'is having' if who.sg3 else 'am having' if who.kind == 'I' else 'are having'} now?", f"how much {P} {S} have"),
                 (f"{S} have how many {Ps} now?", f"number of {Ps} of {S}"),
                 (f"What is number of {Ps} of {who.obj() if who.kind != 'person' else S} now?", f"number of {Ps} of {S}"),
                 ] + ([(f"How many {Ps} is left?", "how many is left")] if st.solo else [])
    return R.choice(opts)


# ----------------------------------------------------------------------------------------------
# story types

def make_owner(R, names_used, allow_box=True, allow_money=True):
    """An owner and the thing it holds."""
    r = R.random()
    if r < 0.45:
        fem = R.random() < 0.5
        nm = R.choice([n for n in (FEMALE if fem else MALE) if n not in names_used])
        names_used.append(nm)
        o = Owner("person", nm, fem)
    elif r < 0.55:
        o = Owner("I")
    elif r < 0.6:
        o = Owner("we")
    elif r < 0.8 or not allow_box:
        indef, defi = R.choice(ORGS)
        o = Owner("org", defi, indef=indef)
        if allow_money and R.random() < 0.15:
            return o, money_thing(R)
        return o, (mass_thing(R) if R.random() < 0.6 else count_thing(R))
    else:
        return container_owner(R)
    x = R.random()
    if allow_money and x < 0.2:
        return o, money_thing(R)
    if x < 0.3:
        return o, mass_thing(R)
    return o, count_thing(R)


CHANGES = ["add", "sub", "add", "sub", "sub", "gadd", "gsub", "mul", "half", "third", "quarter"]


def chain_story(st, steps):
    """One owner, a start and changes; the question asks what is left / each share / how many more needed."""
    R = st.R
    names = []
    who, th = make_owner(R, names)
    st.no_qfirst = who.kind in ("org", "box")
    facts = []
    left = steps
    # ending: now / share / need / pack
    end = R.choices(["now", "share", "need", "pack"], [6, 2, 1, 1])[0]
    if end != "now":
        left -= 1
    if left < 0:
        return None
    v = None
    if left >= 1 and R.random() < 0.25:
        gs = group_split(R, 100, 6)
        c, sz = gs
        facts.append(start_groups(st, who, th, c, sz))
        v = c * sz
        left -= 1
    else:
        v = pick_start(R, 3, 95)
        facts.append(start_fact(st, who, th, v))
    while left > 0:
        kinds = [k for k in CHANGES if (k not in ("gadd", "gsub") or left >= 2)]
        kind = R.choice(kinds)
        if kind in ("mul",) and th.kind == "money" and who.kind == "box":
            continue
        res = change_fact(st, who, th, v, kind, len(facts) + 1, names)
        if res is None:
            return None
        t, line, v = res
        facts.append((t, line))
        left -= 2 if kind in ("gadd", "gsub") else 1
    if end == "now":
        q, find = q_now(st, who, th)
        return finish(st, facts, q, find, names, th)
    if end == "share":
        if th.kind == "animate":
            return None
        ds = divisors(v, 2, 9)
        if not ds:
            return None
        d = R.choice(ds)
        eq, r = st.step("/", v, d)
        people = [("friend", "friends"), ("child", "children"), ("pupil", "pupils"), ("team", "teams"),
                  ("class", "classes"), ("family", "families"), ("neighbour", "neighbours"), ("group", "groups"),
                  ("cousin", "cousins"), ("worker", "workers")]
        places = [("box", "boxes"), ("shelf", "shelves"), ("table", "tables"), ("basket", "baskets"),
                  ("bag", "bags"), ("jar", "jars")]
        if who.kind == "org":
            people.append(("branch", "branches"))
        into = th.kind in ("count", "mass") and R.random() < 0.35 and th.p not in [p[1] for p in places]
        rec, recs = R.choice(places if into else people)
        S = st.subj(who)
        k = len(facts) + 1
        unit = th.np(r).split(" ", 1)[1]
        line = f"({k}) Each {rec} gets {eq} {unit}."
        if st.style == "terse":
            t = R.choice([f"shared by {d} {recs}.", f"split between {d} {recs} equally.", f"/ {d} {recs}."])
            q = R.choice(["each gets?", f"each {rec}?", "how many each?", f"per {rec}?"])
        else:
            verb = R.choice(["share", "divide", "split"])
            prep = "into" if into else "among" if d > 2 else "between"
            if who.kind == "box":
                pl = 2 if th.kind in ("count", "animate") else 1
                t = R.choice([f"{cap(th.the())} {st.be(n=pl)} {'divided' if into else 'shared'} equally {prep} {d} {recs}.",
                              f"{cap(th.the())} {st.be(n=pl)} divided equally {'into' if into else 'among'} {d} {recs}."])
            else:
                if into and verb == "share":
                    verb = "divide"
                t = R.choice([f"{cap(S)} {st.v(verb, who)} {th.the()} equally {prep} {d} {recs}.",
                              f"{cap(S)} {st.v(verb, who)} {th.them()} equally {prep} {d} {recs}.",
                              f"{cap(th.the())} {st.be(n=2 if th.kind in ('count', 'animate') else 1)} {'divided' if into else 'shared'} equally {prep} {d} {recs}.",
                              f"{cap(S)} {st.v('give', who)} all of {th.them()} to {d} {recs} in equal shares." if not into
                              else f"{cap(S)} {st.v('put', who)} {th.them()} into {d} {recs}, the same amount in each."])
            m = th.much().replace("How much money", "How much money").replace("How much ", "How much ")
            q = R.choice([f"{m} does each {rec} get?", f"Find the share of each {rec}.",
                          f"How many {th.plural()} does each {rec} receive?", f"What is each {rec}'s share?",
                          f"Determine how many {th.plural()} each {rec} gets.",
                          f"Calculate the number of {th.plural()} in each share."])
            if st.style == "nn":
                q = R.choice([q, f"How many {th.plural()} each {rec} get?", f"Each {rec} get how much?"])
        facts.append((t, line))
        return finish(st, facts, q, f"the share of each {rec}", names, th)
    if end == "pack":
        if th.kind != "count" or who.kind == "box":
            return None
        ds = [d for d in divisors(v, 2, 12) if v // d >= 2]
        if not ds:
            return None
        d = R.choice(ds)
        eq, r = st.step("/", v, d)
        cont, conts = R.choice([("bag", "bags"), ("box", "boxes"), ("packet", "packets"), ("row", "rows"),
                                ("tray", "trays"), ("pile", "piles"), ("basket", "baskets")])
        k = len(facts) + 1
        line = f"({k}) That makes {eq} {conts if r != 1 else cont}."
        S = st.subj(who)
        if st.style == "terse":
            t, q = f"packs {d} per {cont}.", R.choice([f"how many {conts}?", f"{conts}?"])
        else:
            t = R.choice([f"{cap(S)} {st.v('pack', who)} {th.them()} into {conts} of {d}.",
                          f"{cap(th.the())} {st.be(n=2)} put into {conts} with {d} in each {cont}.",
                          f"{cap(S)} {st.v('put', who)} {d} {th.p} in each {cont}."])
            q = R.choice([f"How many {conts} {'are' if st.tense == 'present' else 'were'} filled?",
                          f"Find the number of {conts}.", f"How many {conts} {'does' if who.sg3 else 'do'} {who.full()} need?",
                          f"Determine the number of full {conts}."])
        facts.append((t, line))
        return finish(st, facts, q, f"the number of {conts}", names, th)
    # need
    if who.kind == "box" or v >= 97:
        return None
    target = R.randint(v + 1, min(100, v + 60))
    eq, r = st.step("-", target, v)
    S = who.full()
    unit = th.np(r).split(" ", 1)[1]
    needs = "needs" if who.sg3 else "need"
    line = f"{cap(S)} {needs} {eq} more {unit}."
    if st.style == "terse":
        q = R.choice([f"needs {target}. how many more?", f"goal {target}. missing?", f"wants {target} total. how many more?"])
    else:
        P = th.plural()
        doe = "does" if who.sg3 else "do"
        q = R.choice([f"How many more {P} {doe} {S} need to have {th.np(target)}?",
                      f"{cap(S)} {'wants' if who.sg3 else 'want'} {th.np(target)}. How many more {doe} {S} need?",
                      f"The target is {th.np(target)}. Find how many more {P} {S} {needs}.",
                      f"How many more {P} must be added to make {target}?"])
    return finish(st, facts, q, f"how many more {th.plural()} {S} {needs} to have {th.np(target)}", names, th, tail=[line])


def compare_story(st, steps):
    """A then B related to A; question about B, the total, or the difference."""
    R = st.R
    names = []
    fa = R.random() < 0.5
    A = Owner("person", R.choice(FEMALE if fa else MALE), fa)
    names.append(A.name)
    fb = R.random() < 0.5
    B = Owner("person", R.choice([n for n in (FEMALE if fb else MALE) if n not in names]), fb)
    names.append(B.name)
    if R.random() < 0.12:
        rel = R.choice(RELATIVES)
        fem = {"brother": False, "uncle": False, "sister": True, "aunt": True}.get(rel, R.random() < 0.5)
        B = Owner("person", f"{A.name}'s {rel}", fem)
    st.solo = False
    x = R.random()
    th = money_thing(R) if x < 0.15 else mass_thing(R) if x < 0.25 else count_thing(R)
    count = th.kind == "count"
    if th.kind == "mass" and not th.uncount():
        count = True
    stuff = th.plural() if count else (th.stuff or "money")
    end = R.choices(["B", "total", "diff"], [5, 3, 2])[0]
    left = steps - (0 if end == "B" else 1)
    if left < 1:
        return None
    rel = R.choice(["more", "fewer", "times", "half", "more", "fewer", "which", "which"])
    order = "normal"
    if rel == "which":
        order = "which"
    elif left == 1 and R.random() < 0.35:
        order = "reversed"
    facts = []
    P = th.plural()
    a = pick_start(R, 4, 95)
    a_changes = R.randint(0, max(0, left - 1)) if order == "normal" else 0
    b_changes = left - 1 - a_changes
    if order == "normal":
        facts.append(start_fact(st, A, th, a))
        for _ in range(a_changes):
            kind = R.choice(["add", "sub", "sub", "add", "mul", "half"])
            res = change_fact(st, A, th, a, kind, len(facts) + 1, names)
            if res is None:
                return None
            t, line, a = res
            facts.append((t, line))
    Bn = B.name
    An = A.name if R.random() < 0.7 or order != "normal" else A.obj()
    much = "many" if count else "much"
    fw = "fewer" if count else "less"
    if order == "which":
        kind = R.choice(["more", "fewer", "times"])
        if kind == "more":
            if a < 2:
                return None
            k = R.randint(1, a - 1)
            eq, b = st.step("-", a, k)
            rel_txt = R.choice([f"{k} more than {Bn} {'had' if st.tense == 'past' else 'has'}",
                                f"{k} more than {Bn}'s"])
        elif kind == "fewer":
            if a > 95:
                return None
            k = R.randint(1, 100 - a)
            eq, b = st.step("+", a, k)
            rel_txt = f"{k} {'less' if not count else R.choice(['fewer', 'less'])} than {Bn}{chr(39) + 's' if R.random() < 0.4 else ''}"
        else:
            ds = [d for d in (2, 3, 4, 5) if a % d == 0 and a // d >= 1]
            if not ds:
                return None
            d = R.choice(ds)
            eq, b = st.step("/", a, d)
            rel_txt = f"{'twice' if d == 2 else str(d) + ' times'} as {much} as {Bn} {'had' if st.tense == 'past' else 'has'}"
        tA = st.np(th, a)
        be = "was" if st.tense == "past" else "is"
        t = R.choice([f"{A.name} {st.has(A)} {tA}, which {be} {rel_txt}.",
                      f"{A.name} {st.has(A)} {tA}. This {be} {rel_txt}.",
                      f"{A.name} {st.v('own', A)} {tA}; that {be} {rel_txt}."])
        facts.append((t, f"(1) {A.restate(th.np(a), a)}."))
        facts.append(("", f"(2) {B.restate(eq + ' ' + th.np(b).split(' ', 1)[1], b)}."))
    else:
        kind = rel
        if kind == "more":
            if a >= 99:
                return None
            k = R.randint(1, min(50, 100 - a))
            eq, b = st.step("+", a, k)
            words = [f"{th.np(k)} more than {An}"] + ([f"{k} more {P} than {An}"] if count else [])
        elif kind == "fewer":
            if a < 3:
                return None
            k = R.randint(1, a - 1)
            eq, b = st.step("-", a, k)
            words = [f"{th.np(k)} {fw} than {An}"] + ([f"{k} {fw} {P} than {An}"] if count else [])
        elif kind == "times":
            f = small_factor(R, a, 2, 5)
            if not f:
                return None
            eq, b = st.step("*", a, f)
            fwd = "twice" if f == 2 else R.choice(["three times", "3 times"]) if f == 3 else f"{f} times"
            words = [f"{f} times as {much} {stuff} as {An}", f"{fwd} as {much} {stuff} as {An}",
                     f"{fwd} as {much} as {An}"]
        else:
            d = R.choice([2, 2, 3, 4])
            if a % d or a < d * 2:
                return None
            eq, b = st.step("/", a, d)
            frac = {2: "half", 3: R.choice(["a third", "one third"]), 4: R.choice(["a quarter", "one quarter"])}[d]
            words = [f"{frac} as {much} {stuff} as {An}", f"{frac} as {much} as {An}"]
        w = R.choice(words)
        if st.style == "terse":
            t = R.choice([f"{Bn}: {w}.", f"{Bn} {w}.", f"{Bn} has {w}."])
        elif st.style == "nn":
            t = R.choice([f"{Bn} have {w}.", f"{Bn} {st.has(B)} {w}.", f"{Bn} is having {w}."])
        else:
            opts = [f"{Bn} {st.has(B)} {w}.", f"{Bn} {st.v('own', B)} {w}."]
            if count:
                opts += [f"{Bn} {st.v('collect', B)} {w}.", f"{Bn} {st.has(B)} got {w}." if st.tense == "present" else f"{Bn} {st.v('keep', B)} {w}."]
            if kind in ("more", "fewer"):
                opts.append(f"{Bn} {st.has(B)} {th.np(k)} {'more' if kind == 'more' else fw} than {A.name} {'did' if st.tense == 'past' else 'does'}.")
            t = R.choice(opts)
        bline = f"(9) {B.restate(eq + ' ' + th.np(b).split(' ', 1)[1], b)}."
        if order == "reversed":
            tA, aline = start_fact(st, A, th, a)
            facts.append((t, bline))
            facts.append((tA, aline))
            st.swap = True
        else:
            facts.append((t, bline))
    for _ in range(b_changes):
        kind = R.choice(["add", "sub", "sub", "add", "mul", "half"])
        res = change_fact(st, B, th, b, kind, len(facts) + 1, names)
        if res is None:
            return None
        t, line, b = res
        facts.append((t, line))
    if end == "B":
        qq, find = q_now(st, B, th)
        return finish(st, facts, qq, find, names, th)
    if end == "total":
        if a + b > 100:
            return None
        eq, tot = st.step("+", a, b)
        unit = th.np(tot).split(" ", 1)[1]
        line = f"Together, {A.name} and {B.name} have {eq} {unit}."
        if st.style == "terse":
            qq = R.choice(["total?", "together?", "how many both?", "sum?", "both together?"])
        elif st.style == "nn":
            qq = R.choice([f"How many {P} they have together?", f"How many {P} {A.name} and {B.name} have in total?",
                           f"How much {P} is together?", f"Together they have how many {P}?"])
        else:
            qq = R.choice([f"How many {P} do {A.name} and {B.name} have altogether?",
                           f"Find the total number of {P} owned by {A.name} and {B.name}.",
                           f"Calculate the combined number of {P}.", f"What is the total number of {P} they have?",
                           f"Determine how many {P} the two of them have in total.",
                           f"How many {P} do they have together?", f"Find the sum of their {P}."])
            if not count:
                qq = R.choice([qq, f"{th.much()} do they have in total?", "Find the total amount.",
                               f"What is the combined amount of {stuff}?"])
        return finish(st, facts, qq, f"the total number of {P}", names, th, tail=[line])
    if a == b:
        return None
    big, small = (A, B) if a > b else (B, A)
    hi, lo = max(a, b), min(a, b)
    eq, d = st.step("-", hi, lo)
    unit = th.np(d).split(" ", 1)[1]
    if R.random() < 0.55:
        line = f"{big.name} has {eq} more {unit} than {small.name}."
        if count:
            opts = [f"How many more {P} does {big.name} have than {small.name}?",
                    f"Find how many more {P} {big.name} has than {small.name}.",
                    f"How many more {P} has {big.name} got than {small.name}?",
                    f"By how many {P} does {big.name}'s number exceed {small.name}'s?",
                    f"How many {P} more than {small.name} does {big.name} have?"]
        else:
            opts = [f"How much more {stuff} does {big.name} have than {small.name}?",
                    f"Find how much more {stuff} {big.name} has than {small.name}.",
                    f"How many more {P} does {big.name} have than {small.name}?"]
        qq = R.choice(opts)
        if st.style == "nn":
            qq = R.choice([qq, f"How many more {P} {big.name} have than {small.name}?",
                           f"{big.name} have how many more than {small.name}?"])
        if st.style == "terse":
            qq = R.choice([f"{big.name} how many more?", "difference?", f"how many more {big.name}?"])
    else:
        line = f"{small.name} has {eq} {fw} {unit} than {big.name}."
        if count:
            opts = [f"How many fewer {P} does {small.name} have than {big.name}?",
                    f"How many {P} fewer than {big.name} does {small.name} have?",
                    f"Find how many fewer {P} {small.name} has than {big.name}."]
        else:
            opts = [f"How much less {stuff} does {small.name} have than {big.name}?",
                    f"Find how much less {stuff} {small.name} has than {big.name}."]
        qq = R.choice(opts)
        if st.style == "terse":
            qq = R.choice([f"{small.name} how many less?", f"how many less {small.name}?"])
    return finish(st, facts, qq, f"how many more {P} {big.name} has than {small.name}", names, th, tail=[line])


def sumtwo_story(st, steps):
    """A and B have t together; A has a; (B changes); question about B."""
    R = st.R
    names = []
    fa, fb = R.random() < 0.5, R.random() < 0.5
    A = Owner("person", R.choice(FEMALE if fa else MALE), fa)
    names.append(A.name)
    B = Owner("person", R.choice([n for n in (FEMALE if fb else MALE) if n not in names]), fb)
    names.append(B.name)
    st.solo = False
    th = money_thing(R) if R.random() < 0.15 else count_thing(R)
    P = th.plural()
    t = R.randint(10, 100)
    a = R.randint(1, t - 1)
    eq, b = st.step("-", t, a)
    unit = th.np(b).split(" ", 1)[1]
    facts = []
    if st.style == "terse":
        f1 = R.choice([f"{A.name} and {B.name}: {th.np(t)} together.", f"{A.name} + {B.name} = {th.np(t)}."])
        f2 = R.choice([f"{A.name} {th.short(a)}.", f"{A.name} has {th.short(a)}."])
    else:
        f1 = R.choice([f"{A.name} and {B.name} {'had' if st.tense == 'past' else 'have'} {th.np(t)} altogether.",
                       f"Together {A.name} and {B.name} {'owned' if st.tense == 'past' else 'own'} {th.np(t)}.",
                       f"{A.name} and {B.name} {'had' if st.tense == 'past' else 'have'} a total of {th.np(t)}.",
                       f"{th.np(t)} {'were' if st.tense == 'past' else 'are'} shared between {A.name} and {B.name}, not equally."])
        f2 = R.choice([f"{A.name} {st.has(A)} {th.np(a)}.", f"{A.name} {st.has(A)} {a} of them.",
                       f"Of these, {th.np(a)} {'belonged' if st.tense == 'past' else 'belong'} to {A.name}.",
                       f"{A.name}'s share {'was' if st.tense == 'past' else 'is'} {th.np(a)}."])
    facts.append((f1, f"(1) {A.name} and {B.name} have {th.np(t)}."))
    facts.append((f2, f"(2) {A.restate(th.np(a), a)} and {B.restate(eq + ' ' + unit, b)}."))
    for _ in range(steps - 1):
        kind = R.choice(["add", "sub", "mul", "half"])
        res = change_fact(st, B, th, b, kind, len(facts) + 1, names)
        if res is None:
            return None
        tx, line, b = res
        facts.append((tx, line))
    if st.style == "terse":
        qq = R.choice([f"{B.name}?", f"{B.name} has how many?", "other one?"])
    else:
        qq = R.choice([f"How many {P} does {B.name} have{' now' if steps > 1 else ''}?",
                       f"Find the number of {P} {B.name} has.", f"What is {B.name}'s share?" if steps == 1 else f"How many {P} does {B.name} end up with?",
                       f"Determine how many {P} belong to {B.name}." if steps == 1 else f"How many {P} does {B.name} have in the end?"])
        if st.style == "nn":
            qq = R.choice([qq, f"How many {P} {B.name} have?", f"{B.name} have how many?"])
    return finish(st, facts, qq, f"the number of {P} {B.name} has", names, th)


def onestep_story(st, steps):
    """Rates, prices, unit prices, change, part-whole, two kinds, packing, age; 1 or 2 steps."""
    R = st.R
    names = []
    fem = R.random() < 0.5
    nm = R.choice(FEMALE if fem else MALE)
    names.append(nm)
    P_ = Owner("person", nm, fem)
    kind = R.choice(["rate", "price", "unit", "change", "part", "twokinds", "groups", "age", "machine",
                     "rows", "per_person"])
    cur = money_thing(R)
    pres = st.tense == "present"
    if kind == "rate":
        th = count_thing(R)
        per, days = R.randint(2, 25), R.randint(2, 12)
        if per * days > 100:
            return None
        unit = R.choice([("day", "days"), ("hour", "hours"), ("week", "weeks"), ("minute", "minutes"), ("morning", "mornings")])
        eq, r = st.step("*", per, days)
        verb = R.choice([("makes", "make"), ("packs", "pack"), ("collects", "collect"), ("sorts", "sort"),
                         ("paints", "paint"), ("folds", "fold"), ("labels", "label")])
        line = f"In {days} {unit[1]}, {nm} {verb[0]} {eq} {th.p}."
        if st.style == "terse":
            q = f"{nm} {per} {th.p} per {unit[0]}. {days} {unit[1]}?"
        elif st.style == "nn":
            q = R.choice([f"{nm} {verb[1]} {per} {th.p} in one {unit[0]}. How many {th.p} {nm} {verb[1]} in {days} {unit[1]}?",
                          f"Every {unit[0]} {nm} {verb[1]} {per} {th.s}. In {days} {unit[1]} how many?"])
        else:
            q = R.choice([f"{nm} {verb[0]} {per} {th.p} per {unit[0]}. How many {th.p} does {nm} {verb[1]} in {days} {unit[1]}?",
                          f"{nm} {verb[0]} {per} {th.p} each {unit[0]}. Find the number of {th.p} {'she' if fem else 'he'} {verb[0]} in {days} {unit[1]}.",
                          f"If {nm} {verb[0]} {per} {th.p} every {unit[0]}, how many {th.p} does {nm} {verb[1]} in {days} {unit[1]}?",
                          f"Calculate the number of {th.p} {nm} {verb[0]} in {days} {unit[1]} at a rate of {per} per {unit[0]}."])
        return done(st, q, [line])
    if kind == "machine":
        th = count_thing(R)
        per, t = R.randint(2, 25), R.randint(2, 12)
        if per * t > 100:
            return None
        mach = R.choice(["A machine", "A printer", "A robot", "A press", "A loom", "A pump"])
        eq, r = st.step("*", per, t)
        line = f"In {t} minutes, the {mach.split()[1]} makes {eq} {th.p}."
        q = R.choice([f"{mach} makes {per} {th.p} per minute. How many {th.p} does it make in {t} minutes?",
                      f"{mach} produces {per} {th.p} every minute. Find the number produced in {t} minutes.",
                      f"{per} {th.p} are made by {mach.lower()} each minute. How many {th.p} are made in {t} minutes?"])
        if "pump" in mach:
            line = f"In {t} minutes, the pump moves {eq} litres."
            q = f"A pump moves {per} litres of water per minute. How many litres does it move in {t} minutes?"
        return done(st, q, [line])
    if kind == "price":
        th = count_thing(R)
        price, n = R.randint(2, 25), R.randint(2, 12)
        if price * n > 100:
            return None
        eq, r = st.step("*", price, n)
        line = f"{n} {th.p} cost {eq} {cur.p}."
        q = R.choice([f"One {th.s} costs {th_np(cur, price)}. Find the cost of {n} {th.p}.",
                      f"A {th.s} costs {th_np(cur, price)}. What is the price of {n} {th.p}?",
                      f"The price of one {th.s} is {th_np(cur, price)}. Calculate the cost of {n} {th.p}.",
                      f"{nm} buys {n} {th.p} at {th_np(cur, price)} each. How much does {nm} pay?",
                      f"If a {th.s} costs {th_np(cur, price)}, how much do {n} {th.p} cost?"])
        if st.style == "nn":
            q = R.choice([q, f"One {th.s} is {price} {cur.p}. How much for {n} {th.s}?",
                          f"{nm} want buy {n} {th.s}, each {price} {cur.p}. How much {nm} must pay?"])
        if st.style == "terse":
            q = f"{th.s} {price} {cur.p}. {n} {th.p}?"
        if "pay" in q and nm in q:
            line = f"{nm} pays {eq} {cur.p}."
        return done(st, q, [line])
    if kind == "unit":
        th = count_thing(R)
        price, n = R.randint(2, 25), R.randint(2, 12)
        if price * n > 100:
            return None
        tot = price * n
        eq, r = st.step("/", tot, n)
        line = f"One {th.s} costs {eq} {cur.p if r != 1 else cur.s}."
        q = R.choice([f"{n} {th.p} cost {th_np(cur, tot)}. Find the cost of one {th.s}.",
                      f"{nm} paid {th_np(cur, tot)} for {n} {th.p}. What is the price of each {th.s}?",
                      f"The total cost of {n} identical {th.p} is {th_np(cur, tot)}. Calculate the price of one {th.s}.",
                      f"If {n} {th.p} cost {th_np(cur, tot)}, how much does one {th.s} cost?"])
        if st.style == "terse":
            q = f"{n} {th.p} = {tot} {cur.p}. one?"
        return done(st, q, [line])
    if kind == "change":
        price = R.randint(2, 95)
        note = R.choice([n for n in (5, 10, 20, 50, 100) if n > price] or [100])
        if note <= price:
            return None
        item = R.choice(["a book", "a lamp", "a jacket", "a radio", "a football", "a pair of shoes", "a clock",
                         "a school bag", "a kettle", "a board game", "a teapot", "a tent"])
        eq, r = st.step("-", note, price)
        line = f"{nm} gets {eq} {cur.p if r != 1 else cur.s} in change."
        q = R.choice([f"{cap(item)} costs {th_np(cur, price)}. {nm} pays with a {note}-{cur.s} note. Find the change.",
                      f"{nm} buys {item} for {th_np(cur, price)} and hands over {th_np(cur, note)}. How much change does {nm} receive?",
                      f"The price of {item} is {th_np(cur, price)}. {nm} gives the seller {th_np(cur, note)}. Calculate the change.",
                      f"{nm} paid {th_np(cur, note)} for {item} costing {th_np(cur, price)}. What change was given?"])
        if "paid" in q:
            line = f"{nm} got {eq} {cur.p if r != 1 else cur.s} in change."
        return done(st, q, [line])
    if kind == "part":
        whole_o, th = container_owner(R)
        if th.kind != "animate" or th.s not in ("pupil", "passenger", "person", "tourist"):
            whole_o, th = Owner("box", "the class", prep="in"), Thing("animate", "pupil", "pupils")
        if th.s == "pupil":
            parts = R.choice([("girls", "boys"), ("boys", "girls")])
        else:
            parts = R.choice([("adults", "children"), ("children", "adults"), ("men", "women"), ("women", "men")])
        tot = R.randint(6, 100)
        p1 = R.randint(2, tot - 2)
        eq, r = st.step("-", tot, p1)
        place = whole_o.name
        line1 = f"(1) There are {th.np(tot)} {whole_o.prep} {place}."
        line2 = f"(2) {p1} are {parts[0]}, so there are {eq} {parts[1]}."
        if p1 == 1:
            return None
        s1 = R.choice([f"There are {th.np(tot)} {whole_o.prep} {place}.", f"{cap(place)} has {th.np(tot)}.",
                       f"{th.np(tot)} are {whole_o.prep} {place}."])
        s2 = R.choice([f"{p1} of them are {parts[0]}.", f"{p1} are {parts[0]}.", f"Of these, {p1} are {parts[0]}."])
        qq = R.choice([f"How many {parts[1]} are there?", f"Find the number of {parts[1]}.",
                       f"How many are {parts[1]}?", f"Determine the number of {parts[1]} {whole_o.prep} {place}."])
        if st.style == "terse":
            s1, s2, qq = f"{th.np(tot)} {whole_o.prep} {place}.", f"{p1} {parts[0]}.", f"{parts[1]}?"
        return finish(st, [(s1, line1), (s2, line2)], qq, f"the number of {parts[1]}", names, th)
    if kind == "twokinds":
        o, th = make_owner(R, names, allow_box=False, allow_money=False)
        kinds = R.choice([("cows", "sheep", "animals"), ("red pens", "blue pens", "pens"),
                          ("apples", "pears", "pieces of fruit"), ("cars", "vans", "vehicles"),
                          ("novels", "atlases", "books"), ("roses", "lilies", "flowers"),
                          ("chairs", "stools", "seats"), ("goats", "hens", "animals"),
                          ("buttons", "beads", "items"), ("laptops", "tablets", "devices")])
        x, y = R.randint(2, 90), R.randint(2, 90)
        if x + y > 100:
            return None
        eq, r = st.step("+", x, y)
        who = o if o.kind != "box" else Owner("person", nm, fem)
        if who.kind == "org" and kinds[2] == "animals":
            who = Owner("org", "the farm", indef="a farm")
        S = who.full() if who.kind != "org" else who.indef
        line1 = f"(1) {who.restate(f'{x} {kinds[0]} and {y} {kinds[1]}', 2)}."
        line2 = f"In all, {who.full()} {'has' if who.sg3 else 'have'} {eq} {kinds[2]}."
        line2 = line2.replace("In all, we", "In all, we")
        s1 = R.choice([f"{cap(S)} {st.has(who)} {x} {kinds[0]} and {y} {kinds[1]}.",
                       f"There {'were' if st.tense == 'past' else 'are'} {x} {kinds[0]} and {y} {kinds[1]} at {S if who.kind == 'org' else who.poss_name() + ' place'}."])
        qq = R.choice([f"Find the total number of {kinds[2]}.", f"How many {kinds[2]} are there altogether?",
                       f"What is the total number of {kinds[2]}?", f"Calculate the number of {kinds[2]} in all."])
        if st.style == "terse":
            s1, qq = f"{x} {kinds[0]}, {y} {kinds[1]}.", f"{kinds[2]} total?"
        return finish(st, [(s1, line1)], qq, f"the total number of {kinds[2]}", names, th, tail=[line2])
    if kind in ("groups", "rows", "per_person"):
        th = count_thing(R)
        if kind == "per_person":
            th = R.choice([Thing("count", "pupil", "pupils"), Thing("count", "player", "players"),
                           Thing("count", "guest", "guests"), Thing("count", "runner", "runners"),
                           Thing("count", "scout", "scouts"), Thing("count", "dancer", "dancers")])
        sz, c = R.randint(2, 12), R.randint(2, 12)
        if sz * c > 100:
            return None
        tot = sz * c
        grp = R.choice([("team", "teams"), ("group", "groups"), ("row", "rows"), ("table", "tables"), ("bus", "buses")]) \
            if kind == "per_person" else R.choice([("box", "boxes"), ("bag", "bags"), ("row", "rows"), ("tray", "trays"),
                                                   ("packet", "packets"), ("shelf", "shelves"), ("basket", "baskets")])
        if R.random() < 0.5:
            eq, r = st.step("/", tot, c)
            line = f"Each {grp[0]} gets {eq} {th.p if r != 1 else th.s}."
            q = R.choice([f"{tot} {th.p} are divided equally into {c} {grp[1]}. How many {th.p} are in each {grp[0]}?",
                          f"{tot} {th.p} are shared equally among {c} {grp[1]}. Find the number in each {grp[0]}.",
                          f"Divide {tot} {th.p} equally between {c} {grp[1]}. How many {th.p} does each {grp[0]} get?",
                          f"There are {tot} {th.p}. They are put into {c} equal {grp[1]}. How many are in each?"])
            if st.style == "nn":
                q = R.choice([q, f"{tot} {th.s} divide in {c} {grp[1]} same. How many in one {grp[0]}?"])
        else:
            eq, r = st.step("/", tot, sz)
            line = f"The number of {grp[1]} is {eq}."
            q = R.choice([f"{tot} {th.p} are placed in {grp[1]} of {sz}. How many {grp[1]} are needed?",
                          f"{tot} {th.p} are packed with {sz} in each {grp[0]}. Find the number of {grp[1]}.",
                          f"How many {grp[1]} of {sz} can be made from {tot} {th.p}?",
                          f"Each {grp[0]} holds {sz} {th.p}. How many {grp[1]} are needed for {tot} {th.p}?"])
        if st.style == "terse":
            q = q.replace("are ", "").replace("How many", "how many")
        return done(st, q, [line])
    if kind == "age":
        age = R.randint(3, 40)
        rel = R.choice(["mother", "father", "aunt", "uncle", "grandmother", "grandfather", "teacher", "coach"])
        mode = R.choice(["older", "times"])
        if mode == "older":
            k = R.randint(5, 40)
            if age + k > 100:
                return None
            eq, r = st.step("+", age, k)
            s2 = f"{nm}'s {rel} is {k} years older."
            l2 = f"(2) {nm}'s {rel} is {eq} years old."
        else:
            f = small_factor(R, age, 2, 5)
            if not f or age > 25:
                return None
            eq, r = st.step("*", age, f)
            s2 = f"{nm}'s {rel} is {f} times as old as {nm}."
            l2 = f"(2) {nm}'s {rel} is {eq} years old."
        facts = [(f"{nm} is {age} years old.", f"(1) {nm} is {age} years old."), (s2, l2)]
        tail = []
        if steps >= 2 and r < 95:
            y = R.randint(2, min(20, 100 - r))
            eq2, r2 = st.step("+", r, y)
            qq = f"How old will {nm}'s {rel} be in {y} years?"
            tail = [f"In {y} years, {nm}'s {rel} will be {eq2} years old."]
        else:
            qq = R.choice([f"How old is {nm}'s {rel}?", f"Find the age of {nm}'s {rel}.", f"What is the age of the {rel}?"])
        return finish(st, facts, qq, f"the age of the {rel}", names, None, tail=tail)
    return None


def th_np(cur, n):
    if cur.p == "dollars" and cur.kind == "money" and n % 3 == 0:
        return f"${n}"
    return cur.np(n)


def done(st, q, lines):
    """A story whose question is one sentence and whose reasoning has no markers."""
    st.lines = lines
    st.text = q
    return st


def finish(st, facts, q, find, names, th, tail=()):
    """Assemble facts and question into user text; insert a distractor; number the reasoning.

    facts: (text, reasoning line) in question order; a line's own marker is replaced by the fact's
    position; text "" marks a second statement told in the previous fact's sentence. st.swap: the
    first two facts are reasoned in the other order (a fact that depends on the next one)."""
    R = st.R
    facts = list(facts)
    if th is not None and R.random() < 0.22 and len(facts) <= 4:
        lo = 2 if getattr(st, "swap", False) else 0
        pos = R.randint(lo, len(facts))
        if pos < len(facts) and facts[pos][0] == "":
            pos += 1
        facts.insert(pos, (distractor(st, names, th), None))
    texts, out = [], []
    for idx, (t, line) in enumerate(facts, 1):
        if line is None:
            out.append(f"({idx}) This does not change the answer.")
        else:
            m = re.match(r"^\((\d)\) (.*)$", line)
            out.append(f"({idx}) {m.group(2)}")
        if t:
            texts.append(t)
    if getattr(st, "swap", False):
        out[0], out[1] = out[1], out[0]
    st.lines = out + list(tail)
    st.text = layout(st, texts, q, find)
    return st


def decap(s):
    w = s.split(" ", 1)[0]
    if w in ("A", "An", "The", "He", "She", "It", "They", "Then", "Later,", "There", "Of", "Half", "Only",
             "Another", "After", "Every", "For", "Together", "This", "That", "In", "Customers", "All", "We"):
        return s[0].lower() + s[1:]
    return s


def layout(st, texts, q, find):
    R, s = st.R, st.style
    texts = [cap(t) if s != "terse" else t for t in texts]
    if s == "terse":
        body = " ".join(texts + [q])
        if R.random() < 0.5:
            body = body.lower()
        return body
    form = R.random()
    if form < 0.10:
        if R.random() < 0.5:
            facts = "; ".join([texts[0].rstrip(".")] + [decap(t.rstrip(".")) for t in texts[1:]]) + "."
        else:
            facts = " ".join(texts)
        tmpl = R.choice(["Given: {f} Find: {x}.", "Given: {f}\nFind: {x}.", "Data: {f} Required: {x}.",
                         "Known: {f} Unknown: {x}.", "Information: {f} Question: {q}", "Given: {f} Find {x}."])
        return tmpl.format(f=facts, x=find, q=q)
    if form < 0.18 and len(texts) <= 3 and q.startswith(("Find", "How many", "Determine", "Calculate", "What")) \
            and not any(". " in t.rstrip(".") or t.startswith(("Of these", "This", "That")) for t in texts) \
            and not st.no_qfirst:
        qq = q.rstrip(".?")
        clauses = [decap(t.rstrip(".")) for t in texts]
        joined = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
        end = "?" if q.endswith("?") else "."
        return f"{qq}, given that {joined}{end}" if R.random() < 0.5 else f"{qq} if {joined}{end}"
    if len(texts) >= 2 and R.random() < 0.2:
        k = R.randrange(len(texts) - 1)
        if ". " not in texts[k].rstrip(".") and not texts[k + 1].startswith(("Then", "Later")):
            glue = R.choice([", and ", " and ", "; "])
            texts[k:k + 2] = [texts[k].rstrip(".") + glue + decap(texts[k + 1])]
    if R.random() < 0.05:
        body = " ".join(texts) + "\n" + q
    else:
        body = " ".join(texts + [q])
    if form < 0.45:
        lab = R.choice(LABELS).format(n=R.randint(1, 30), m=R.randint(1, 12), l=R.choice("abcd"))
        body = lab + " " + body
    if R.random() < 0.12:
        body = body + " " + R.choice(SUFFIXES)
    return body


# ----------------------------------------------------------------------------------------------
# bare arithmetic

def bare(R, steps, style):
    """(text, equations list of (op, a, b))."""
    for _ in range(200):
        r = _bare(R, steps, style)
        if r:
            return r
    return None


def ok(*vals):
    return all(isinstance(v, int) and 1 <= v <= 100 for v in vals)


def _bare(R, steps, style):
    if steps == 1:
        op = R.choice("+-*/")
        if op == "+":
            a, b = R.randint(1, 95), R.randint(1, 95)
            if a + b > 100:
                return None
            T = ["What is the sum of {a} and {b}?", "Find the sum of {a} and {b}.", "Calculate {a} plus {b}.",
                 "Add {b} to {a}.", "Increase {a} by {b}.", "What is {b} more than {a}?",
                 "A number is {b} more than {a}. What is the number?", "Find the total of {a} and {b}.",
                 "{a} + {b} = ?", "Work out {a} + {b}.", "Evaluate {a} + {b}.", "Fill in the blank: {a} + {b} = __",
                 "What number is {b} greater than {a}?", "Compute the sum {a} + {b}.",
                 "The difference of two numbers is {b}. The smaller number is {a}. Find the larger number.",
                 "Find the number which is {b} more than {a}.",
                 "When {b} is subtracted from a number, the result is {a}. Find the number.",
                 "Fill in the missing number: __ - {b} = {a}", "What do you get when you add {a} and {b}?",
                 "Find the value of {a} + {b}.", "Determine the sum of {a} and {b}.",
                 "{a} increased by {b} is equal to what number?", "Add together {a} and {b}.",
                 "Calculate the total when {a} and {b} are added.", "Find the number that is {b} greater than {a}."]
            if style == "nn":
                T = ["sum of {a} and {b} is how much?", "How much is {a} and {b} together?", "{a} add {b} is what?",
                     "Please calculate sum of {a} with {b}.", "What is {a} plus {b} equal?", "{a} with {b} together make how much?"]
            if style == "terse":
                T = ["sum {a} {b}?", "{a} + {b}?", "{a} plus {b}", "{a} and {b} total?", "add {a}, {b}"]
            return R.choice(T).format(a=a, b=b), [("+", a, b)]
        if op == "-":
            a = R.randint(3, 100)
            b = R.randint(1, a - 1)
            T = ["What is the difference between {a} and {b}?", "Subtract {b} from {a}.", "Decrease {a} by {b}.",
                 "Take {b} away from {a}.", "What is {b} less than {a}?",
                 "A number is {b} less than {a}. What is the number?", "Find {a} minus {b}.",
                 "How much greater is {a} than {b}?", "By how much does {a} exceed {b}?",
                 "How much must be added to {b} to make {a}?", "Fill in the blank: {b} + __ = {a}",
                 "The sum of two numbers is {a}. One of them is {b}. What is the other?",
                 "The sum of two numbers is {a}. One number is {b}. Find the other number.",
                 "What number must be subtracted from {a} to leave {b}?", "Reduce {a} by {b}.",
                 "{a} - {b} = ?", "Evaluate {a} - {b}.", "Find the difference of {a} and {b}.",
                 "By how much is {b} smaller than {a}?", "What must be added to {b} to give {a}?",
                 "Find the number which is {b} less than {a}.", "Calculate {a} minus {b}.",
                 "What is left when {b} is taken from {a}?", "Work out {a} - {b}.", "Fill in the missing number: {a} - __ = {b}"]
            if style == "nn":
                T = ["minus {b} from {a} is how much?", "{a} take away {b} how much is?", "What is {a} minus {b} equal?",
                     "difference of {a} and {b} please.", "How much is {a} less {b}?", "{a} subtract {b} is what?"]
            if style == "terse":
                T = ["{a} - {b}?", "{a} minus {b}", "diff {a} {b}?", "{a} take {b}"]
            return R.choice(T).format(a=a, b=b), [("-", a, b)]
        if op == "*":
            a = R.randint(2, 25)
            bs = [b for b in range(2, 13) if a * b <= 100]
            if not bs:
                return None
            b = R.choice(bs)
            if R.random() < 0.5:
                a, b = b, a
            T = ["What is the product of {a} and {b}?", "Multiply {a} by {b}.", "Find {a} times {b}.",
                 "What is {a} multiplied by {b}?", "Calculate {a} x {b}.", "Find the value of {a} x {b}.",
                 "A number divided by {b} gives {a}. Find the number.", "Fill in the blank: __ / {b} = {a}",
                 "{a} x {b} = ?", "Evaluate {a} * {b}.", "Find the product of {a} and {b}.",
                 "Work out {a} multiplied by {b}.", "What is {a} lots of {b}?",
                 "When a number is divided by {b}, the answer is {a}. What is the number?",
                 "Determine the product of {a} and {b}.", "Compute {a} times {b}."]
            if b == 2:
                T += ["Double {a}.", "What is twice {a}?", "What is double {a}?"]
            if b == 3:
                T += ["Triple {a}.", "What is three times {a}?"]
            if style == "nn":
                T = ["How much is {a} multiply {b}?", "{a} times {b} is what?", "product of {a} and {b} is how much?",
                     "Multiply {a} with {b} please.", "{a} multiply by {b} equal?"]
            if style == "terse":
                T = ["{a} x {b}?", "{a}*{b}", "product {a} {b}?", "{a} times {b}"]
            return R.choice(T).format(a=a, b=b), [("*", a, b)]
        # division
        b = R.randint(2, 12)
        qs = [q for q in range(2, 26) if b * q <= 100]
        q = R.choice(qs)
        a = b * q
        T = ["What is the quotient when {a} is divided by {b}?", "Divide {a} by {b}.", "Find {a} divided by {b}.",
             "How many {b}s are there in {a}?", "The product of two numbers is {a}. One number is {b}. Find the other.",
             "Fill in the blank: {b} x __ = {a}", "Share {a} equally into {b} parts. How much is each part?",
             "{a} / {b} = ?", "What number multiplied by {b} gives {a}?", "Evaluate {a} / {b}.",
             "Find the quotient of {a} and {b}.", "By what number must {b} be multiplied to get {a}?",
             "Calculate {a} divided by {b}.", "If {a} is split into {b} equal parts, what is each part?"]
        if b == 2:
            T += ["What is half of {a}?", "Halve {a}.", "Find one half of {a}."]
        if b == 3:
            T += ["Find one third of {a}.", "What is a third of {a}?"]
        if b == 4:
            T += ["Find a quarter of {a}.", "What is one quarter of {a}?"]
        if style == "nn":
            T = ["{a} divide by {b} is what?", "How much is {a} divide {b}?", "{a} share in {b} same part, each is how much?",
                 "quotient of {a} and {b} is how much?"]
        if style == "terse":
            T = ["{a} / {b}?", "{a} divided by {b}", "{a} over {b}?", "quotient {a} {b}?"]
        return R.choice(T).format(a=a, b=b), [("/", a, b)]
    if steps == 2:
        k = R.randint(0, 14)
        if k == 0:
            a, b, c = R.randint(1, 60), R.randint(1, 60), R.randint(1, 60)
            if a + b + c > 100:
                return None
            T = R.choice(["Find the sum of {a}, {b} and {c}.", "Add {a}, {b} and {c}.", "What is {a} + {b} + {c}?",
                          "Three numbers are {a}, {b} and {c}. Find their sum.", "Calculate the total of {a}, {b} and {c}."])
            return T.format(**locals()), [("+", a, b), ("+", a + b, c)]
        if k == 1:
            a, b = R.randint(1, 80), R.randint(1, 80)
            c = R.randint(1, 99)
            if a + b > 100 or c >= a + b:
                return None
            T = R.choice(["Calculate {a} + {b} - {c}.", "Evaluate {a} + {b} - {c}.",
                          "Increase {a} by {b}, then decrease the result by {c}.",
                          "Add {a} and {b}, then subtract {c}.", "Find the value of {a} + {b} - {c}."])
            return T.format(**locals()), [("+", a, b), ("-", a + b, c)]
        if k == 2:
            a, b = R.randint(2, 12), R.randint(2, 12)
            c = R.randint(1, 60)
            if a * b + c > 100:
                return None
            T = R.choice(["Evaluate {a} x {b} + {c}.", "What is {c} more than the product of {a} and {b}?",
                          "Multiply {a} by {b} and add {c} to the result.", "Add the product of {a} and {b} to {c}.",
                          "Find the value of {c} + {a} x {b}."])
            if T.startswith("Add the product") or T.startswith("Find the value of {c}"):
                return T.format(**locals()), [("*", a, b), ("+", c, a * b)]
            return T.format(**locals()), [("*", a, b), ("+", a * b, c)]
        if k == 3:
            a, b = R.randint(2, 12), R.randint(2, 12)
            p = a * b
            if p > 100 or p < 3:
                return None
            c = R.randint(1, p - 1)
            T = R.choice(["Evaluate {a} x {b} - {c}.", "Multiply {a} by {b}, then subtract {c}.",
                          "What is {c} less than the product of {a} and {b}?", "Find the value of {a} x {b} - {c}."])
            return T.format(**locals()), [("*", a, b), ("-", p, c)]
        if k == 4:
            a, b = R.randint(1, 60), R.randint(1, 60)
            s = a + b
            if s > 100:
                return None
            ds = divisors(s, 2, 10)
            if not ds:
                return None
            c = R.choice(ds)
            T = R.choice(["Evaluate ({a} + {b}) / {c}.", "Divide the sum of {a} and {b} by {c}.",
                          "Add {a} and {b}, then divide the result by {c}.", "Find ({a} + {b}) divided by {c}."])
            return T.format(**locals()), [("+", a, b), ("/", s, c)]
        if k == 5:
            b, c = R.randint(1, 50), R.randint(1, 50)
            s = b + c
            if s >= 100:
                return None
            a = R.randint(s + 1, 100)
            T = R.choice(["Subtract the sum of {b} and {c} from {a}.", "Take the sum of {b} and {c} away from {a}.",
                          "The sum of three numbers is {a}. Two of them are {b} and {c}. Find the third.",
                          "Find {a} - ({b} + {c})."])
            return T.format(**locals()), [("+", b, c), ("-", a, s)]
        if k == 6:
            a, b = R.randint(1, 90), R.randint(1, 90)
            s = a + b
            if s > 100 or s % 2:
                return None
            T = R.choice(["What is the average of {a} and {b}?", "Find the mean of {a} and {b}.",
                          "Calculate the average of the numbers {a} and {b}.", "Find the number halfway between {a} and {b}."])
            return T.format(**locals()), [("+", a, b), ("/", s, 2)]
        if k == 7:
            a, b = R.randint(1, 50), R.randint(1, 50)
            f = R.choice([2, 3])
            s = a + b
            if s * f > 100:
                return None
            T = R.choice(["Double the sum of {a} and {b}." if f == 2 else "Triple the sum of {a} and {b}.",
                          "Add {a} and {b}, then multiply by {c}.", "Evaluate ({a} + {b}) x {c}.",
                          "Multiply the sum of {a} and {b} by {c}."])
            return T.replace("{c}", str(f)).format(**locals()), [("+", a, b), ("*", s, f)]
        if k == 8:
            a, b = R.randint(1, 90), R.randint(1, 60)
            c = R.randint(1, 60)
            if a + b > 100 or a + b - c < 1:
                return None
            T = R.choice(["A number is {b} more than {a}. Another number is {c} less than that number. Find the second number.",
                          "Start with {a}. Increase it by {b}. Then decrease it by {c}. What is the result?",
                          "A number is {b} greater than {a}. What is {c} less than this number?"])
            return T.format(**locals()), [("+", a, b), ("-", a + b, c)]
        if k == 9:
            a = R.randint(10, 100)
            b = R.randint(1, a - 2)
            c = R.randint(1, a - b - 1)
            T = R.choice(["Subtract {b} from {a}, then subtract {c}.", "Evaluate {a} - {b} - {c}.",
                          "Decrease {a} by {b} and then by {c}.", "From {a} take away {b} and then {c}."])
            return T.format(**locals()), [("-", a, b), ("-", a - b, c)]
        if k == 10:
            b = R.randint(2, 12)
            q = R.randint(2, 25)
            a = b * q
            if a > 100:
                return None
            c = R.randint(1, 100 - q)
            T = R.choice(["Evaluate {a} / {b} + {c}.", "Divide {a} by {b}, then add {c}.",
                          "What is {c} more than the quotient of {a} and {b}?", "Find {a} divided by {b}, plus {c}."])
            return T.format(**locals()), [("/", a, b), ("+", q, c)]
        if k == 11:
            a, b = R.randint(2, 12), R.randint(2, 12)
            p = a * b
            if p > 100:
                return None
            ds = divisors(p, 2, 10)
            if not ds:
                return None
            c = R.choice(ds)
            T = R.choice(["Find the result when {a} is multiplied by {b} and the product is divided by {c}.",
                          "Evaluate {a} x {b} / {c}.", "Multiply {a} by {b}, then divide by {c}."])
            return T.format(**locals()), [("*", a, b), ("/", p, c)]
        if k == 12:
            a = R.randint(3, 100)
            b = R.randint(1, a - 1)
            f = small_factor(R, a - b, 2, 4)
            if not f:
                return None
            T = R.choice(["Subtract {b} from {a} and double the result." if f == 2 else "Subtract {b} from {a} and multiply the result by {c}.",
                          "Evaluate ({a} - {b}) x {c}.", "Find {c} times the difference between {a} and {b}."])
            return T.replace("{c}", str(f)).format(**locals()), [("-", a, b), ("*", a - b, f)]
        if k == 13:
            # missing number two-step: __ + a = b + c
            a, b = R.randint(1, 50), R.randint(1, 50)
            s = a + b
            if s > 100:
                return None
            c = R.randint(1, s - 1)
            T = R.choice(["Fill in the blank: {c} + __ = {a} + {b}", "What number added to {c} gives the same as {a} + {b}?"])
            return T.format(**locals()), [("+", a, b), ("-", s, c)]
        # half / third of a sum
        a, b = R.randint(1, 60), R.randint(1, 60)
        s = a + b
        if s > 100 or s % 2:
            return None
        T = R.choice(["What is half of the sum of {a} and {b}?", "Add {a} and {b} and halve the result."])
        return T.format(**locals()), [("+", a, b), ("/", s, 2)]
    if steps == 3:
        k = R.randint(0, 5)
        if k == 0:
            v = [R.randint(1, 40) for _ in range(4)]
            if sum(v) > 100:
                return None
            a, b, c, d = v
            T = R.choice(["Find the sum of {a}, {b}, {c} and {d}.", "Add {a}, {b}, {c} and {d}.",
                          "Four numbers are {a}, {b}, {c} and {d}. What is their total?"])
            return T.format(a=a, b=b, c=c, d=d), [("+", a, b), ("+", a + b, c), ("+", a + b + c, d)], True
        if k == 1:
            a, b, c = R.randint(1, 60), R.randint(1, 60), R.randint(1, 60)
            s = a + b + c
            if s > 100 or s % 3:
                return None
            T = R.choice(["What is the average of {a}, {b} and {c}?", "Find the mean of {a}, {b} and {c}.",
                          "Calculate the average of the three numbers {a}, {b} and {c}."])
            return T.format(a=a, b=b, c=c), [("+", a, b), ("+", a + b, c), ("/", s, 3)], True
        if k == 2:
            a, b, c, d = R.randint(2, 12), R.randint(2, 12), R.randint(2, 12), R.randint(2, 12)
            p, q = a * b, c * d
            if p > 100 or q >= p:
                return None
            T = R.choice(["Calculate {a} x {b} - {c} x {d}.", "Subtract the product of {c} and {d} from the product of {a} and {b}.",
                          "Evaluate {a} x {b} - {c} x {d}."])
            return T.format(a=a, b=b, c=c, d=d), [("*", a, b), ("*", c, d), ("-", p, q)], True
        if k == 3:
            a, b = R.randint(1, 50), R.randint(1, 50)
            f = R.choice([2, 3, 4])
            s = a + b
            if s * f > 100:
                return None
            d = R.randint(1, s * f - 1)
            T = R.choice(["Increase {a} by {b}, multiply the result by {f}, then subtract {d}.",
                          "Evaluate ({a} + {b}) x {f} - {d}.", "Add {a} and {b}, multiply by {f} and take away {d}."])
            return T.format(a=a, b=b, f=f, d=d), [("+", a, b), ("*", s, f), ("-", s * f, d)], True
        if k == 4:
            a, b, c, d = R.randint(1, 60), R.randint(1, 60), R.randint(1, 60), R.randint(1, 60)
            if a + b > 100 or a + b - c < 1 or a + b - c + d > 100:
                return None
            T = R.choice(["Evaluate {a} + {b} - {c} + {d}.", "Find the value of {a} + {b} - {c} + {d}.",
                          "Start with {a}, add {b}, subtract {c} and add {d}. What is the result?"])
            return T.format(a=a, b=b, c=c, d=d), [("+", a, b), ("-", a + b, c), ("+", a + b - c, d)], True
        a, b, c, d = R.randint(2, 12), R.randint(2, 12), R.randint(2, 12), R.randint(2, 12)
        if a * b + c * d > 100:
            return None
        T = R.choice(["Evaluate {a} x {b} + {c} x {d}.", "Add the product of {a} and {b} to the product of {c} and {d}.",
                      "Find the sum of {a} x {b} and {c} x {d}."])
        return T.format(a=a, b=b, c=c, d=d), [("*", a, b), ("*", c, d), ("+", a * b, c * d)], True
    # 4 steps
    k = R.randint(0, 2)
    if k == 0:
        v = [R.randint(1, 40) for _ in range(4)]
        s = sum(v)
        if s > 100 or s % 4:
            return None
        a, b, c, d = v
        T = R.choice(["Find the average of {a}, {b}, {c} and {d}.", "What is the mean of {a}, {b}, {c} and {d}?"])
        return T.format(a=a, b=b, c=c, d=d), [("+", a, b), ("+", a + b, c), ("+", a + b + c, d), ("/", s, 4)], True
    if k == 1:
        a, b = R.randint(1, 40), R.randint(1, 40)
        f = R.choice([2, 3])
        s = a + b
        if s * f > 100:
            return None
        d = R.randint(1, s * f - 1)
        ds = divisors(s * f - d, 2, 9)
        if not ds:
            return None
        e = R.choice(ds)
        T = R.choice(["Add {a} and {b}, multiply by {f}, subtract {d}, then divide by {e}.",
                      "Evaluate (({a} + {b}) x {f} - {d}) / {e}."])
        return T.format(a=a, b=b, f=f, d=d, e=e), [("+", a, b), ("*", s, f), ("-", s * f, d), ("/", s * f - d, e)], True
    v = [R.randint(1, 40) for _ in range(5)]
    if sum(v) > 100:
        return None
    a, b, c, d, e = v
    T = R.choice(["Find the sum of {a}, {b}, {c}, {d} and {e}.", "Add {a}, {b}, {c}, {d} and {e} together."])
    return T.format(a=a, b=b, c=c, d=d, e=e), [("+", a, b), ("+", a + b, c), ("+", a + b + c, d), ("+", a + b + c + d, e)], True


def bare_item(R):
    steps = R.choices([1, 2, 3, 4], [45, 35, 14, 6])[0]
    style = R.choices(["formal", "nn", "terse"], [75, 13, 12])[0]
    if steps > 1:
        style = "formal"
    res = bare(R, steps, style)
    if not res:
        return None
    text, eqs = res[0], res[1]
    worked, lines = [], []
    for op, a, b in eqs:
        r = items.compute(op, a, b)
        if r is None or not ok(a, b, r) or (op == "*" and min(a, b) > 25):
            return None
        worked.append({"op": op, "a": a, "b": b, "result": r})
        lines.append(f"{a} {op} {b} = {r}.")
    if style == "formal" and R.random() < 0.3:
        lab = R.choice(LABELS).format(n=R.randint(1, 30), m=R.randint(1, 12), l=R.choice("abcd"))
        text = lab + " " + text
    if style == "formal" and R.random() < 0.07:
        text += " " + R.choice(SUFFIXES[:6])
    return {"user_text": text, "reasoning": lines, "worked": worked, "answer": worked[-1]["result"]}


# ----------------------------------------------------------------------------------------------
# driver

def story_item(R):
    steps = R.choices([1, 2, 3, 4], [42, 37, 15, 6])[0]
    style = R.choices(["formal", "nn", "terse"], [66, 19, 15])[0]
    kind = R.choices(["chain", "compare", "sumtwo", "one"], [48, 26, 7, 19])[0]
    if kind == "one" and steps > 2:
        kind = "chain"
    fn = {"chain": chain_story, "compare": compare_story, "sumtwo": sumtwo_story, "one": onestep_story}[kind]
    for _ in range(100):
        st = Story(R, style, "past" if R.random() < 0.45 else "present")
        res = fn(st, steps)
        if res is None or not st.worked:
            continue
        if len(st.worked) != steps and kind != "one":
            continue
        text = st.text.strip()
        text = "\n".join(re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n"))
        return {"user_text": text, "reasoning": st.lines, "worked": st.worked, "answer": st.worked[-1]["result"]}
    return None


def generate(n, seed):
    R = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        make = bare_item if R.random() < 0.30 else story_item
        it = None
        while it is None or items.check(it):
            it = make(R)
        key = " ".join(it["user_text"].lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(it)
    return out


if __name__ == "__main__":
    items.main("formal", generate, __doc__)
