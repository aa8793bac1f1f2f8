#!/usr/bin/env python3
"""Grammar "shop": money and everyday buying, selling, earning and saving.

Covers prices and costs of several items ("3 notebooks at $4 each"), change from a note or coin,
pocket money and allowances, wages per hour/day, weekly saving, saving towards a goal, splitting a
bill, whole-amount discounts, tips, tickets, market stalls and bake sales, costs per kilogram /
liter / meter, lending and refunds, comparing two people's money, and how many items a sum buys
(exact division).  Currencies: dollars ("$12", "12 dollars", "12 bucks"), euros ("15 euros",
"EUR 15"), pounds ("8 pounds", "GBP 8", "8 quid"), rupees ("40 rupees", "Rs 40"), yen, pesos,
francs and cents -- all plain ASCII.  Subjects mix third-person names, "I", "you", "we",
"my sister"-style relatives and groups ("our class").

Independence: written from scratch against tools/grammars/items.py and the reasoning conventions
only (numbered restatements "(k) Ana has 12 dollars.", "That is n * p = x dollars and ...",
"Together, ...", unmarked final computations such as "Ana gets 50 - 32 = 18 dollars in change.").
It has its own template mini-language (a verb table conjugated per person and tense), its own
name/item/place lists and its own sentence frames: a composable story engine (starts, purchases,
earnings, relations, distractors, final questions; rendered as sentences, numbered statements,
run-on clauses or question-first) plus some thirty fixed shop frames (change, tickets, bake
sales, bills with tips, unit prices, rate differences ...).

    python3 tools/grammars/shop.py --n 20000 --seed 1 -o /tmp/shop.jsonl
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402

# ----------------------------------------------------------------------------------------------
# word lists

FEMALE = """Ana Sofia Chloe Priya Aisha Mei Yuki Fatima Ingrid Olga Amara Nadia Leila Zara Lucia Elif
Hana Sakura Maya Grace Emma Isabel Camila Valentina Ximena Rosa Marta Agnieszka Katarzyna Eszter
Freya Astrid Sigrid Aroha Ngozi Adaeze Chiamaka Amina Zainab Noor Layla Yasmin Esi Abena Thandiwe
Lerato Nomvula Keiko Seo-yeon Ji-woo Linh Thu Mai Anjali Deepa Kavya Meera Lakshmi Tamar Noa Shira
Irina Daria Svetlana Paula Ines Beatriz Carmen Elena Giulia Chiara Aoife Niamh Mariam Rania
Dilnoza Aigerim Kalani Leilani Ayana Nia Imani Clara Lotte Femke Annika Hanna Julia Olivia Ruby
Jade Emily Wanjiru Akosua Malia Pania Bich Farida Zuzana""".split()
MALE = """Ben Omar Diego Kenji Hiro Ravi Arjun Tomasz Jakub Pavel Ivan Mateo Santiago Joaquin Luis
Pedro Tiago Marco Luca Hugo Louis Pierre Jonas Lars Nils Sven Erik Kwame Kofi Chidi Emeka Tunde
Musa Jabari Tendai Sipho Thabo Ahmed Karim Yusuf Tariq Samir Bilal Emre Mehmet Wei Jun Hao Min-jun
Ji-ho Duc Minh Bao Raj Vikram Rohan Aditya Kiran Dev Arash Reza Dariush Noah Liam Jack Oscar Leo
Felix Max Finn Sean Declan Rhys Owen Tane Manaia Koa Keanu Bence Mikkel Timur Nurlan Aziz Ali
Malik Andre Victor Rafael Bruno Ezra Eitan Dmitri Sergei Hamza Kojo Obi Sione Matiu Anders""".split()

RELATIVES = [("my sister", "f"), ("my brother", "m"), ("my mum", "f"), ("my dad", "m"),
             ("my aunt", "f"), ("my uncle", "m"), ("my cousin", "f"), ("my cousin", "m"),
             ("my grandma", "f"), ("my grandpa", "m"), ("my best friend", "f"),
             ("my little brother", "m"), ("my big sister", "f"), ("my neighbor", "m")]

# (singular, plural, lowest price, highest price)
ITEMS = [
    ("notebook", "notebooks", 2, 9), ("pen", "pens", 1, 6), ("pencil case", "pencil cases", 3, 12),
    ("comic book", "comic books", 3, 12), ("sandwich", "sandwiches", 3, 10),
    ("toy car", "toy cars", 2, 15), ("kite", "kites", 5, 25), ("football", "footballs", 8, 30),
    ("scarf", "scarves", 6, 25), ("cap", "caps", 5, 20), ("backpack", "backpacks", 15, 60),
    ("board game", "board games", 12, 45), ("jigsaw puzzle", "jigsaw puzzles", 6, 25),
    ("jar of honey", "jars of honey", 4, 12), ("loaf of bread", "loaves of bread", 2, 6),
    ("bunch of flowers", "bunches of flowers", 5, 20), ("box of crayons", "boxes of crayons", 2, 9),
    ("ruler", "rulers", 1, 4), ("eraser", "erasers", 1, 3), ("water bottle", "water bottles", 4, 18),
    ("mug", "mugs", 3, 12), ("T-shirt", "T-shirts", 6, 25), ("pair of socks", "pairs of socks", 2, 8),
    ("bracelet", "bracelets", 3, 20), ("keychain", "keychains", 1, 6), ("phone case", "phone cases", 6, 25),
    ("pair of headphones", "pairs of headphones", 15, 70), ("novel", "novels", 6, 20),
    ("magazine", "magazines", 3, 9), ("birthday card", "birthday cards", 2, 6),
    ("cupcake", "cupcakes", 1, 5), ("muffin", "muffins", 1, 5), ("smoothie", "smoothies", 3, 8),
    ("ice cream", "ice creams", 2, 6), ("pizza", "pizzas", 6, 20), ("bag of chips", "bags of chips", 1, 4),
    ("melon", "melons", 2, 6), ("pineapple", "pineapples", 2, 6), ("potted plant", "potted plants", 4, 25),
    ("candle", "candles", 2, 12), ("poster", "posters", 3, 15), ("skateboard", "skateboards", 25, 90),
    ("umbrella", "umbrellas", 5, 20), ("lunch box", "lunch boxes", 4, 15), ("yo-yo", "yo-yos", 1, 6),
    ("set of paints", "sets of paints", 5, 20), ("sketchbook", "sketchbooks", 3, 12),
    ("bike helmet", "bike helmets", 15, 50), ("pair of sneakers", "pairs of sneakers", 20, 80),
    ("video game", "video games", 15, 70), ("wristwatch", "wristwatches", 12, 60),
    ("teddy bear", "teddy bears", 5, 25), ("bag of rice", "bags of rice", 3, 15),
    ("carton of eggs", "cartons of eggs", 2, 6), ("bottle of juice", "bottles of juice", 1, 5),
    ("hot dog", "hot dogs", 2, 6), ("taco", "tacos", 1, 5), ("dumpling box", "dumpling boxes", 3, 10),
    ("samosa", "samosas", 1, 4), ("croissant", "croissants", 1, 4), ("bowl of noodles", "bowls of noodles", 4, 12),
    ("badminton racket", "badminton rackets", 8, 35), ("tennis ball", "tennis balls", 1, 5),
    ("fishing rod", "fishing rods", 10, 45), ("lamp", "lamps", 8, 40), ("cushion", "cushions", 4, 18),
    ("photo frame", "photo frames", 3, 15), ("plant pot", "plant pots", 2, 10),
    ("pack of stickers", "packs of stickers", 1, 5), ("deck of cards", "decks of cards", 2, 8),
    ("marker", "markers", 1, 4), ("glue stick", "glue sticks", 1, 3), ("calculator", "calculators", 6, 25),
    ("dictionary", "dictionaries", 8, 30), ("pair of gloves", "pairs of gloves", 4, 18),
    ("beanie", "beanies", 4, 15), ("sun hat", "sun hats", 5, 20), ("basketball", "basketballs", 10, 35),
    ("jump rope", "jump ropes", 2, 9), ("paint brush", "paint brushes", 1, 6), ("harmonica", "harmonicas", 5, 25),
    ("model plane", "model planes", 8, 35), ("doll", "dolls", 5, 30), ("rubber duck", "rubber ducks", 1, 5),
    ("lollipop", "lollipops", 1, 3), ("chocolate bar", "chocolate bars", 1, 4), ("cookie", "cookies", 1, 3),
    ("sticker", "stickers", 1, 3), ("balloon", "balloons", 1, 3), ("postcard", "postcards", 1, 3),
    ("bus ticket", "bus tickets", 1, 5), ("movie ticket", "movie tickets", 5, 15),
    ("concert ticket", "concert tickets", 12, 45), ("raffle ticket", "raffle tickets", 1, 5),
    ("bike", "bikes", 40, 100), ("guitar", "guitars", 40, 100), ("tent", "tents", 30, 90),
    ("scooter", "scooters", 30, 90), ("camera", "cameras", 50, 100), ("suitcase", "suitcases", 30, 80),
    ("telescope", "telescopes", 40, 100), ("drone", "drones", 50, 100), ("keyboard", "keyboards", 30, 90),
    ("pair of roller skates", "pairs of roller skates", 25, 70), ("microscope", "microscopes", 30, 90),
    ("sleeping bag", "sleeping bags", 20, 60), ("chess set", "chess sets", 10, 40),
]
CHEAP = [it for it in ITEMS if it[3] <= 6]  # for cents, yen and rupees: small things only
# things sold at a stall / bake sale: (singular, plural, lo, hi)
STALL = [("cupcake", "cupcakes", 1, 5), ("cookie", "cookies", 1, 3), ("brownie", "brownies", 1, 4),
         ("cup of lemonade", "cups of lemonade", 1, 4), ("slice of cake", "slices of cake", 2, 5),
         ("jar of jam", "jars of jam", 3, 9), ("bunch of radishes", "bunches of radishes", 1, 4),
         ("handmade card", "handmade cards", 1, 5), ("friendship bracelet", "friendship bracelets", 1, 6),
         ("muffin", "muffins", 1, 4), ("banana bread loaf", "banana bread loaves", 3, 9),
         ("potted herb", "potted herbs", 2, 6), ("used book", "used books", 1, 5),
         ("cup of hot chocolate", "cups of hot chocolate", 1, 4), ("painted rock", "painted rocks", 1, 5),
         ("bag of popcorn", "bags of popcorn", 1, 4), ("pie", "pies", 4, 12), ("dozen eggs", "dozen eggs", 2, 6)]
# (unit singular, unit plural, goods)
MEASURES = [
    ("kilogram", "kilograms", ["rice", "apples", "cheese", "grapes", "tomatoes", "potatoes", "flour",
                               "coffee beans", "cherries", "carrots", "oranges", "bananas", "fish",
                               "walnuts", "sugar", "strawberries", "lentils", "plums", "onions"]),
    ("kilo", "kilos", ["apples", "rice", "mangoes", "peaches", "pears", "dates", "olives", "beans"]),
    ("liter", "liters", ["milk", "orange juice", "olive oil", "paint", "apple juice", "soup"]),
    ("meter", "meters", ["ribbon", "fabric", "rope", "fence wire", "lace", "garden hose"]),
]
PLACES = ["market", "mall", "bookshop", "corner shop", "toy store", "bakery", "farmers market",
          "school fair", "flea market", "supermarket", "night market", "craft fair", "museum shop",
          "sports shop", "garden center", "bazaar"]
CONTAINERS = ["wallet", "purse", "piggy bank", "pocket", "savings jar", "money box", "coin pouch",
              "school bag"]
GIVERS = ["grandma", "grandpa", "aunt", "uncle", "mom", "dad", "godmother", "older brother",
          "neighbor", "big sister"]
TASKS_FOR = ["for washing the car", "for walking the dog", "for helping at the bakery",
             "for mowing the lawn", "for tidying the garage", "for raking leaves", "for babysitting",
             "for fixing a bike", "for watering the plants", "for painting the fence",
             "for doing the dishes", "for carrying groceries", "for feeding the neighbor's cat",
             "for sweeping the yard", "for sorting the recycling"]
TASKS_ING = ["washing cars", "walking dogs", "selling lemonade", "mowing lawns", "raking leaves",
             "babysitting", "helping at a cafe", "delivering newspapers", "tutoring", "selling old comics",
             "pet sitting", "washing windows", "shoveling snow", "selling drawings"]
FIND_WHERE = ["in a coat pocket", "under the sofa", "on the sidewalk", "in an old backpack",
              "behind the couch", "in the washing machine", "in a birthday card"]
LOSE_WHERE = ["on the way home", "at the park", "on the bus", "at the beach", "somewhere at school",
              "through a hole in a pocket"]
WINS = ["a raffle", "a quiz", "a drawing contest", "a spelling bee", "a chess tournament",
        "a school competition", "a talent show", "a baking contest"]
TREATS = ["lunch", "an ice cream", "a movie", "pizza", "a milkshake", "bubble tea", "breakfast",
          "a smoothie"]
SERVICES = ["bus fare", "a haircut", "a swimming lesson", "entry to the zoo", "a taxi ride",
            "parking", "a bike repair", "a museum ticket", "a train ticket", "a guitar lesson"]
CHARITIES = ["the animal shelter", "the food bank", "a school fundraiser", "the library fund",
             "a charity run", "the park clean-up fund"]
FRIENDLY = ["friend", "cousin", "classmate", "teammate", "neighbor"]
GROUPS = [("friends", "friend"), ("cousins", "cousin"), ("children", "child"), ("kids", "kid"),
          ("classmates", "classmate"), ("teammates", "teammate"), ("grandchildren", "grandchild"),
          ("helpers", "helper")]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DISTRACT_OBJ = ["marbles", "stickers", "pencils", "shells", "stamps", "books", "plants", "buttons"]
BILL_PLACES = ["restaurant", "pizza place", "cafe", "noodle bar", "diner", "food truck", "taco stand"]
CLASS_GROUPS = ["our class", "our club", "our team", "the chess club", "the school band",
                "the choir", "the art club", "the drama group", "the scout troop", "the robotics team"]

# ----------------------------------------------------------------------------------------------
# verbs

IRREG_PAST = {"have": "had", "buy": "bought", "spend": "spent", "pay": "paid", "get": "got",
              "sell": "sold", "give": "gave", "find": "found", "lose": "lost", "win": "won",
              "make": "made", "put": "put", "lend": "lent", "take": "took", "go": "went",
              "bring": "brought", "keep": "kept", "split": "split", "babysit": "babysat",
              "cost": "cost", "leave": "left", "drop": "dropped", "grab": "grabbed", "shop": "shopped",
              "set": "set", "do": "did", "come": "came", "hand": "handed", "spend_": "spent",
              "tip": "tipped", "chip": "chipped", "run": "ran", "sit": "sat", "begin": "began",
              "hold": "held", "end": "ended", "shovel": "shoveled"}


def third(base):
    if base == "have":
        return "has"
    if base == "do":
        return "does"
    if base == "go":
        return "goes"
    if re.search(r"(s|sh|ch|x|z)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


def past(base):
    if base in IRREG_PAST:
        return IRREG_PAST[base]
    if base.endswith("e"):
        return base + "d"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ied"
    return base + "ed"


def article(word):
    w = word.lower()
    if w.startswith(("$", "eur", "gbp", "rs")):
        return "a"
    if re.match(r"(8|11|18)", w):
        return "an"
    if w.startswith(("uni", "use", "euro")):
        return "a"
    if w[0] in "aeiou" or w.startswith("hour"):
        return "an"
    return "a"


def a_(word):
    return f"{article(word)} {word}"


def cap(s):
    return s[:1].upper() + s[1:] if s else s


# ----------------------------------------------------------------------------------------------
# people

class Person:
    def __init__(self, kind, name="", g="f"):
        self.kind, self.name, self.g = kind, name, g
        self.pron = False  # say the pronoun instead of the name in the next clause

    @property
    def sg3(self):
        return self.kind in ("name", "rel")

    def subj(self):
        if self.kind == "i":
            return "I"
        if self.kind in ("you", "we"):
            return self.kind
        if self.pron:
            return "she" if self.g == "f" else "he"
        return self.name

    def obj(self):  # name-object (Ana / me / my sister)
        return {"i": "me", "you": "you", "we": "us"}.get(self.kind, self.name)

    def objp(self):  # pronoun object
        return {"i": "me", "you": "you", "we": "us"}.get(self.kind, "her" if self.g == "f" else "him")

    def det(self):  # pronoun possessive determiner
        return {"i": "my", "you": "your", "we": "our"}.get(self.kind, "her" if self.g == "f" else "his")

    def poss(self):  # name possessive (Ana's / my)
        if self.kind in ("i", "you", "we"):
            return self.det()
        return self.name + "'s"

    def rname(self):  # subject in reasoning lines
        return {"i": "I", "you": "You", "we": "We"}.get(self.kind, cap(self.name))

    def rhas(self):
        return self.rname() + (" has" if self.sg3 else " have")

    def rverb(self, base):  # present-tense verb for reasoning
        return self.rname() + " " + (third(base) if self.sg3 else base)


def conj(p, base, tense):
    """verb agreeing with person p (None: a third-person singular thing) in the tense."""
    if base == "be":
        if tense == "past":
            return "was" if (p is None or p.sg3 or p.kind == "i") else "were"
        if p is None or p.sg3:
            return "is"
        return "am" if p.kind == "i" else "are"
    if tense == "past":
        return past(base)
    if p is None or p.sg3:
        return third(base)
    return base


# ----------------------------------------------------------------------------------------------
# currencies

CURRENCIES = {
    # word sg, word pl, styles, notes
    "dollars": ("dollar", "dollars", [("sym", 60), ("word", 35), ("bucks", 5)], [5, 10, 20, 50, 100]),
    "euros": ("euro", "euros", [("word", 88), ("code:EUR", 12)], [5, 10, 20, 50, 100]),
    "pounds": ("pound", "pounds", [("word", 75), ("code:GBP", 17), ("quid", 8)], [5, 10, 20, 50]),
    "rupees": ("rupee", "rupees", [("word", 75), ("code:Rs", 25)], [10, 20, 50, 100]),
    "yen": ("yen", "yen", [("word", 100)], [10, 50, 100]),
    "pesos": ("peso", "pesos", [("word", 100)], [20, 50, 100]),
    "francs": ("franc", "francs", [("word", 100)], [10, 20, 50, 100]),
    "cents": ("cent", "cents", [("word", 100)], [10, 25, 50]),
}
CUR_WEIGHTS = [("dollars", 44), ("euros", 12), ("pounds", 12), ("rupees", 8), ("yen", 5),
               ("pesos", 8), ("francs", 4), ("cents", 7)]


def wpick(rng, pairs):
    tot = sum(w for _, w in pairs)
    x = rng.uniform(0, tot)
    for v, w in pairs:
        x -= w
        if x <= 0:
            return v
    return pairs[-1][0]


class Ctx:
    def __init__(self, rng):
        self.rng = rng
        self.tense = "past" if rng.random() < 0.35 else "present"
        self.cur = wpick(rng, CUR_WEIGHTS)
        self.sg, self.pl, styles, self.notes = CURRENCIES[self.cur]
        self.style = wpick(rng, styles)
        self.cheap = self.cur in ("cents", "yen", "rupees")
        self.spent = False
        self.used_names = set()
        self.worked = []

    # numbers and money
    def unit(self, n):
        return self.sg if n == 1 else self.pl

    def M(self, n):
        st = self.style
        if st == "sym":
            return f"${n}"
        if st == "bucks" and n > 1:
            return f"{n} bucks"
        if st == "quid":
            return f"{n} quid"
        if st.startswith("code:"):
            return f"{st[5:]} {n}"
        return f"{n} {self.unit(n)}"

    def adj(self, n):
        """'$12' / '12-euro' as in 'a $12 kite', 'a 12-euro kite'."""
        if self.style == "sym":
            return f"${n}"
        return f"{n}-{self.sg}"

    def note(self, n):
        """'$50 bill', '20-euro note', '50-cent coin' (no article)."""
        sg = self.sg
        if self.cur == "dollars":
            if self.style == "sym":
                return f"${n} " + self.rng.choice(["bill", "note"])
            return f"{n}-dollar " + self.rng.choice(["bill", "note"])
        if self.cur in ("cents", "yen"):
            return f"{n}-{sg} coin"
        if self.cur == "pesos":
            return f"{n}-peso bill"
        return f"{n}-{sg} note"

    def eq(self, a, op, b):
        r = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b and a % b == 0 else -1}[op]
        if not (1 <= a <= 100 and 1 <= b <= 100 and 1 <= r <= 100):
            raise Retry()
        if op == "*" and min(a, b) > 25:
            raise Retry()
        if op == "/" and a % b:
            raise Retry()
        self.worked.append({"op": op, "a": a, "b": b, "result": r})
        return f"{a} {op} {b} = {r}", r

    # people
    def name(self, g=None):
        while True:
            g2 = g or self.rng.choice("fm")
            n = self.rng.choice(FEMALE if g2 == "f" else MALE)
            if n not in self.used_names:
                self.used_names.add(n)
                return Person("name", n, g2)

    def person(self, allow=("name", "i", "you", "we", "rel"), weights=None):
        weights = weights or {"name": 64, "i": 14, "you": 6, "we": 6, "rel": 10}
        kind = wpick(self.rng, [(k, weights.get(k, 0)) for k in allow])
        if kind == "name":
            return self.name()
        if kind == "rel":
            while True:
                r, g = self.rng.choice(RELATIVES)
                if r not in self.used_names:
                    self.used_names.add(r)
                    return Person("rel", r, g)
        self.used_names.add(kind)
        return Person(kind)

    def other_name(self):
        return self.name().name


class Retry(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# template filling

TOK = re.compile(r"\{([^{}]+)\}")


def fill(tpl, ctx, P=None, Q=None, **kw):
    def rep(m):
        t = m.group(1)
        if t in ("S", "S2"):
            return (P if t == "S" else Q).subj()
        if t in ("O", "O2"):
            return (P if t == "O" else Q).obj()
        if t in ("OP", "OP2"):
            return (P if t == "OP" else Q).objp()
        if t in ("PS", "PS2"):
            return (P if t == "PS" else Q).det()
        if t in ("NS", "NS2"):
            return (P if t == "NS" else Q).poss()
        if t.startswith("v:"):
            return conj(P, t[2:], ctx.tense)
        if t.startswith("v2:"):
            return conj(Q, t[3:], ctx.tense)
        if t.startswith("c:"):  # third-person singular thing
            return conj(None, t[2:], ctx.tense)
        if t.startswith("pl:"):  # plural thing
            return conj(Person("we"), t[3:], ctx.tense)
        if t == "do":
            return conj(P, "do", ctx.tense)
        if t == "do2":
            return conj(Q, "do", ctx.tense)
        if t == "be":
            return conj(P, "be", ctx.tense)
        if t == "can":
            return "could" if ctx.tense == "past" else "can"
        if t == "will":
            return "would" if ctx.tense == "past" else "will"
        if t.startswith("M:"):
            return ctx.M(kw[t[2:]])
        if t.startswith("A:"):
            return a_(str(kw[t[2:]]))
        if t.startswith("J:"):
            return ctx.adj(kw[t[2:]])
        if t.startswith("aJ:"):
            return a_(ctx.adj(kw[t[3:]]))
        if t.startswith("N:"):
            return ctx.note(kw[t[2:]])
        if t == "U":
            return ctx.pl
        return str(kw[t])
    return TOK.sub(rep, tpl)


# ----------------------------------------------------------------------------------------------
# the composable story engine
#
# A statement: {"text": clause, "lines": [reasoning bodies] (None: distractor), "subj": Person
# or None, "elide": predicate without subject or None, "after": index it depends on (for a
# statement that must be reasoned after a later one)}.

def stmt(ctx, P, tpl, lines, **kw):
    text = fill(tpl, ctx, P, **kw)
    elide = None
    if tpl.startswith("{S} "):
        elide = fill(tpl[4:], ctx, P, **kw)
    return {"text": text, "lines": lines, "subj": P, "elide": elide, "sfirst": elide is not None}


def pick_item(ctx, maxp, minp=1):
    """an item and a price for it in minp..maxp"""
    if ctx.cheap:
        if minp > maxp:
            raise Retry()
        return ctx.rng.choice(CHEAP), ctx.rng.randint(minp, min(maxp, 100))
    cands = [it for it in ITEMS if it[2] <= maxp and it[3] >= minp]
    if not cands:
        raise Retry()
    it = ctx.rng.choice(cands)
    lo, hi = max(it[2], minp), min(it[3], maxp)
    if lo > hi:
        raise Retry()
    return it, ctx.rng.randint(lo, hi)


def item_for(ctx, price):
    """an item that plausibly costs price"""
    if ctx.cheap:
        return ctx.rng.choice(CHEAP)
    cands = [it for it in ITEMS if it[2] <= price <= it[3]]
    if not cands:
        raise Retry()
    return ctx.rng.choice(cands)


def st_start(ctx, P, cost):
    """First fact about P's money. cost 0: a plain amount, 1: a product."""
    rng = ctx.rng
    if cost == 0:
        a = rng.randint(6, 95)
        tpl = rng.choice([
            "{S} {v:have} {M:a}",
            "{S} {v:have} {M:a} in {PS} {box}",
            "there {be3} {M:a} in {NS} {box}",
            "{NS} {box} {c:hold} {M:a}",
            "{S} {v:go} to the {place} with {M:a}",
            "{S} {v:start} the day with {M:a}",
            "{S} {v:have} saved {M:a}",
            "{S} {v:bring} {M:a} to the {place}",
            "{S} {v:have} {M:a} of pocket money",
            "{NS} {giver} {c:give} {OP} {M:a} to spend at the {place}",
            "{S} {v:get} {M:a} for {PS} birthday",
            "{S} {v:have} {M:a} left over from last week",
            "{S} {v:take} {M:a} out of {PS} {box}",
        ])
        be3 = conj(None if ctx.style in ("sym", "code:EUR", "code:GBP", "code:Rs") else Person("we"), "be", ctx.tense)
        s = stmt(ctx, P, tpl, None, a=a, box=rng.choice(CONTAINERS), place=rng.choice(PLACES),
                 giver=rng.choice(GIVERS), be3=be3)
        s["lines"] = [f"{P.rhas()} {a} {ctx.unit(a)}."]
        s["fact"] = True
        return s, a
    kind = rng.choice(["wage", "save", "sell", "chore", "day", "allow"])
    if kind == "sell":
        it = rng.choice(STALL)
        n = rng.randint(2, 12)
        p = rng.randint(it[2], it[3])
        if n * p > 100:
            raise Retry()
        tpl = rng.choice([
            "{S} {v:sell} {n} {its} at {M:p} each at the {place}",
            "at the {place}, {S} {v:sell} {n} {its} for {M:p} each",
            "{S} {v:sell} {n} {its} and {v:charge} {M:p} for each one",
        ])
        first, second = n, p
    else:
        if kind == "wage":
            r, n = rng.randint(3, 25), rng.randint(2, 8)
            opts = [("{S} {v:earn} {M:r} an hour for {n} hours", "rn"),
                    ("{S} {v:work} {n} hours at {M:r} an hour", "nr"),
                    ("{S} {v:babysit} for {n} hours at {M:r} per hour", "nr"),
                    ("{S} {v:get} paid {M:r} per hour and {v:work} {n} hours", "rn")]
        elif kind == "save":
            r, n = rng.randint(2, 25), rng.randint(2, 10)
            opts = [("{S} {v:save} {M:r} a week for {n} weeks", "rn"),
                    ("for {n} weeks, {S} {v:put} {M:r} into {PS} {box} every week", "nr"),
                    ("{S} {v:set} aside {M:r} every week for {n} weeks", "rn")]
        elif kind == "chore":
            r, n = rng.randint(2, 20), rng.randint(2, 9)
            opts = [("{S} {v:wash} {n} cars at {M:r} a car", "nr"),
                    ("{S} {v:walk} {n} dogs and {v:charge} {M:r} per dog", "nr"),
                    ("{S} {v:mow} {n} lawns for {M:r} each", "nr"),
                    ("{S} {v:tutor} {n} kids and {v:get} {M:r} from each", "nr")]
        elif kind == "day":
            r, n = rng.randint(2, 20), rng.randint(2, 7)
            opts = [("{S} {v:help} at the {place} for {n} days and {v:earn} {M:r} a day", "nr"),
                    ("{S} {v:get} {M:r} a day for {n} days of helping at the {place}", "rn")]
        else:
            r, n = rng.randint(2, 15), rng.randint(2, 8)
            opts = [("{S} {v:get} {M:r} pocket money every week and {v:save} it all for {n} weeks", "rn"),
                    ("{S} {v:receive} an allowance of {M:r} a week for {n} weeks", "rn")]
        tpl, order = rng.choice(opts)
        first, second = (r, n) if order == "rn" else (n, r)
        it = None
        p = r
    if first * second > 100 or min(first, second) > 25:
        raise Retry()
    s = stmt(ctx, P, tpl, None, n=n, r=p if kind != "sell" else 0, p=p,
             its=it[1] if it else "", place=rng.choice(PLACES), box=rng.choice(CONTAINERS))
    e, a = ctx.eq(first, "*", second)
    s["lines"] = [f"{P.rhas()} {e} {ctx.unit(a)}."]
    return s, a


def st_change(ctx, P, a, cost):
    st, r = _st_change(ctx, P, a, cost)
    if r < a:
        ctx.spent = True
    return st, r


def _st_change(ctx, P, a, cost):
    """A statement that changes P's amount a. Returns (stmt, new amount)."""
    rng = ctx.rng
    U = ctx.unit
    has = P.rhas()
    other = None
    if cost == 1:
        kind = rng.choice(["spend"] * 5 + ["earn"] * 4 + ["half", "times"])
        if kind == "spend" and a >= 3:
            it, s_ = pick_item(ctx, a - 1)
            tpl = rng.choice([
                "{S} {v:buy} {A:it} for {M:s}", "{S} {v:spend} {M:s} on {A:it}",
                "{S} {v:pay} {M:s} for {A:it}", "{S} {v:use} {M:s} to buy {A:it}",
                "{S} {v:pick} up {A:it} for {M:s}", "{S} {v:get} {A:it} that {c:cost} {M:s}",
                "{A:it} {c:cost} {M:s}, and {S} {v:buy} one",
                "{S} {v:treat} {PS} {fr} to {treat} for {M:s}", "{S} {v:pay} {M:s} for {svc}",
                "{S} {v:donate} {M:s} to {charity}", "{S} {v:lose} {M:s} {lose}",
                "{S} {v:lend} {other} {M:s}", "{S} {v:order} {A:it} online for {M:s}",
                "{S} {v:pay} back the {M:s} {sp} owed {other}",
            ])
            if "{other}" in tpl:
                other = ctx.other_name()
            st = stmt(ctx, P, tpl, None, it=it[0], s=s_, fr=rng.choice(FRIENDLY), treat=rng.choice(TREATS),
                      svc=rng.choice(SERVICES), charity=rng.choice(CHARITIES), lose=rng.choice(LOSE_WHERE),
                      other=other, sp=P.subj() if P.kind not in ("name", "rel") else ("she" if P.g == "f" else "he"))
            e, r = ctx.eq(a, "-", s_)
            st["lines"] = [f"{has} {e} {U(r)}."]
            return st, r
        if kind in ("earn", "spend"):
            g = rng.randint(1, min(40, 100 - a)) if a < 100 else 0
            if g < 1:
                raise Retry()
            tpl = rng.choice([
                "{S} {v:earn} {M:g} {ing}", "{S} {v:make} {M:g} {ing}", "{S} {v:get} paid {M:g} {task}",
                "{S} {v:get} {M:g} from {PS} {giver}", "{NS} {giver} {c:give} {OP} {M:g}",
                "{S} {v:find} {M:g} {where}", "{S} {v:win} {M:g} in {win}", "{S} {v:get} {M:g} in tips",
                "{S} {v:sell} {PS} old {it} for {M:g}", "{S} {v:get} a refund of {M:g} for {A:it}",
                "{other} {c:pay} {OP} {M:g} {task}", "{other} {c:pay} {OP} back {M:g}",
                "{S} {v:receive} {M:g} as a gift",
            ])
            if "{other}" in tpl:
                other = ctx.other_name()
            st = stmt(ctx, P, tpl, None, g=g, ing=rng.choice(TASKS_ING), task=rng.choice(TASKS_FOR),
                      giver=rng.choice(GIVERS), where=rng.choice(FIND_WHERE), win=rng.choice(WINS),
                      it=rng.choice(ITEMS)[0], other=other)
            e, r = ctx.eq(a, "+", g)
            st["lines"] = [f"{has} {e} {U(r)}."]
            return st, r
        if kind == "half":
            if a % 2:
                raise Retry()
            tpl = rng.choice([
                "{S} {v:spend} half of {PS} money on {A:it}", "{S} {v:give} half of it to {PS} {fr}",
                "{S} {v:lose} half of {PS} money {lose}", "{S} {v:spend} half of it at the {place}",
                "{S} {v:use} half of the money to buy {its}",
            ])
            it = rng.choice(ITEMS)
            st = stmt(ctx, P, tpl, None, it=it[0], its=it[1], fr=rng.choice(FRIENDLY + ["sister", "brother"]),
                      lose=rng.choice(LOSE_WHERE), place=rng.choice(PLACES))
            e, r = ctx.eq(a, "/", 2)
            st["lines"] = [f"{has} {e} {U(r)}."]
            return st, r
        k = rng.choice([2, 2, 2, 3, 4])
        if a * k > 100:
            raise Retry()
        word = {2: rng.choice(["twice", "double", "2 times"]), 3: rng.choice(["three times", "3 times"]),
                4: "4 times"}[k]
        if k == 2:
            tpl = rng.choice(["{S} {v:end} up with twice as much money",
                              "{NS} {giver} {c:double} {PS} savings",
                              "{S} {v:double} {PS} money selling {stall}",
                              "{S} {v:end} up with double the money"])
        else:
            tpl = rng.choice(["{S} {v:end} up with {word} as much money",
                              "{S} {v:end} up with {word} as much money as before"])
        st = stmt(ctx, P, tpl, None, word=word, giver=rng.choice(GIVERS), stall=rng.choice(STALL)[1])
        e, r = ctx.eq(a, "*", k)
        st["lines"] = [f"{has} {e} {U(r)}."]
        return st, r
    # cost 2
    kind = rng.choice(["group_spend"] * 4 + ["group_earn"] * 3 + ["two_spend", "two_earn", "discount",
                                                                   "give_each", "measure", "third"])
    if kind == "group_spend":
        cands = [it for it in (CHEAP if ctx.cheap else ITEMS) if it[2] * 2 < a]
        if not cands:
            raise Retry()
        it = rng.choice(cands)
        n = rng.randint(2, 9)
        p = rng.randint(1, max(1, a // n)) if ctx.cheap else rng.randint(it[2], it[3])
        if n * p >= a:
            raise Retry()
        tpl, order = rng.choice([
            ("{S} {v:buy} {n} {its} at {M:p} each", "np"), ("{S} {v:buy} {n} {its} for {M:p} each", "np"),
            ("{S} {v:get} {n} {its} that {pl:cost} {M:p} apiece", "np"),
            ("{S} {v:buy} {n} {its}, and each one {c:cost} {M:p}", "np"),
            ("{its} {pl:be} {M:p} each and {S} {v:buy} {n} of them", "pn"),
            ("{S} {v:pay} for {n} {its} at {M:p} apiece", "np"),
            ("{S} {v:pick} up {n} {its} priced at {M:p} each", "np"),
        ])
        st = stmt(ctx, P, tpl, None, n=n, its=it[1], p=p)
        e1, x = ctx.eq(*((n, "*", p) if order == "np" else (p, "*", n)))
        e2, r = ctx.eq(a, "-", x)
        st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "measure":
        unit_sg, unit_pl, goods = rng.choice(MEASURES)
        good = rng.choice(goods)
        n, p = rng.randint(2, 6), rng.randint(1, 15)
        if n * p >= a:
            raise Retry()
        tpl = rng.choice(["{S} {v:buy} {n} {upl} of {good} at {M:p} per {usg}",
                          "{S} {v:buy} {n} {upl} of {good} at {M:p} a {usg}",
                          "{S} {v:get} {n} {upl} of {good}, which {c:cost} {M:p} per {usg}"])
        st = stmt(ctx, P, tpl, None, n=n, upl=unit_pl, usg=unit_sg, good=good, p=p)
        e1, x = ctx.eq(n, "*", p)
        e2, r = ctx.eq(a, "-", x)
        st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "give_each":
        gp, gs = rng.choice(GROUPS[:7])
        n, p = rng.randint(2, 6), rng.randint(1, 15)
        if n * p >= a:
            raise Retry()
        tpl, order = rng.choice([("{S} {v:give} {M:p} to each of {n} {gp}", "np"),
                                 ("{S} {v:give} each of {PS} {n} {gp} {M:p}", "np"),
                                 ("{S} {v:hand} out {M:p} apiece to {n} {gp}", "pn")])
        st = stmt(ctx, P, tpl, None, n=n, p=p, gp=gp)
        e1, x = ctx.eq(*((n, "*", p) if order == "np" else (p, "*", n)))
        e2, r = ctx.eq(a, "-", x)
        st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "group_earn":
        sub = rng.choice(["wage", "sell", "chore", "save"])
        if sub == "sell":
            it = rng.choice(STALL)
            n, p = rng.randint(2, 10), rng.randint(it[2], it[3])
            tpl, order = rng.choice([("{S} {v:sell} {n} {its} for {M:p} each", "np"),
                                     ("{S} {v:sell} {n} {its} at {M:p} apiece", "np")])
            its = it[1]
        else:
            its = ""
            n, p = rng.randint(2, 8), rng.randint(2, 20)
            tpl, order = rng.choice({
                "wage": [("{S} {v:work} {n} more hours at {M:p} an hour", "np"),
                         ("{S} {v:earn} {M:p} an hour for {n} hours", "pn")],
                "chore": [("{S} {v:wash} {n} cars for {M:p} each", "np"),
                          ("{S} {v:walk} {n} dogs at {M:p} per dog", "np"),
                          ("{S} {v:rake} {n} yards and {v:get} {M:p} for each", "np")],
                "save": [("{S} {v:save} {M:p} a week for {n} more weeks", "pn"),
                         ("{S} {v:get} {M:p} a day for {n} days", "pn")],
            }[sub])
        st = stmt(ctx, P, tpl, None, n=n, p=p, its=its)
        e1, x = ctx.eq(*((n, "*", p) if order == "np" else (p, "*", n)))
        e2, r = ctx.eq(a, "+", x)
        st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "two_spend":
        if a < 4:
            raise Retry()
        it1, s1 = pick_item(ctx, a - 2)
        it2, s2 = pick_item(ctx, a - s1 - 1)
        if it1[0] == it2[0]:
            raise Retry()
        tpl = rng.choice(["{S} {v:spend} {M:s1} on {A:i1} and {M:s2} on {A:i2}",
                          "{S} {v:buy} {A:i1} for {M:s1} and {A:i2} for {M:s2}",
                          "{S} {v:pay} {M:s1} for {A:i1}, then {M:s2} for {A:i2}"])
        st = stmt(ctx, P, tpl, None, s1=s1, s2=s2, i1=it1[0], i2=it2[0])
        e1, x = ctx.eq(a, "-", s1)
        e2, r = ctx.eq(x, "-", s2)
        st["lines"] = [f"{has} {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "two_earn":
        g1, g2 = rng.randint(1, 30), rng.randint(1, 30)
        gv1, gv2 = rng.sample(GIVERS, 2)
        tpl = rng.choice(["{S} {v:get} {M:g1} from {PS} {gv1} and {M:g2} from {PS} {gv2}",
                          "{S} {v:earn} {M:g1} on {d1} and {M:g2} on {d2}",
                          "{S} {v:find} {M:g1} {w1} and {M:g2} {w2}"])
        d1, d2 = sorted(rng.sample(range(7), 2))
        w1, w2 = rng.sample(FIND_WHERE, 2)
        st = stmt(ctx, P, tpl, None, g1=g1, g2=g2, gv1=gv1, gv2=gv2, d1=DAYS[d1], d2=DAYS[d2], w1=w1, w2=w2)
        e1, x = ctx.eq(a, "+", g1)
        e2, r = ctx.eq(x, "+", g2)
        st["lines"] = [f"{has} {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    if kind == "discount":
        it, p = pick_item(ctx, 100, 4)
        d = rng.randint(1, p - 1)
        if p - d >= a:
            raise Retry()
        tpl = rng.choice(["{S} {v:buy} {A:it} that usually {c:cost} {M:p} but {c:be} {M:d} off",
                          "{S} {v:use} {aJ:d} coupon to buy {A:it} priced at {M:p}",
                          "{S} {v:buy} {A:it} marked {M:p} and {v:get} {M:d} off"])
        st = stmt(ctx, P, tpl, None, it=it[0], p=p, d=d)
        e1, x = ctx.eq(p, "-", d)
        e2, r = ctx.eq(a, "-", x)
        st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
        return st, r
    # third / quarter
    k = rng.choice([3, 3, 4, 5])
    if a % k:
        raise Retry()
    frac = {3: "a third", 4: "a quarter", 5: "a fifth"}[k]
    tpl = rng.choice(["{S} {v:spend} {frac} of {PS} money on {A:it}",
                      "{S} {v:give} {frac} of {PS} money to {PS} {fr}",
                      "{S} {v:donate} {frac} of it to {charity}"])
    st = stmt(ctx, P, tpl, None, frac=frac, it=rng.choice(ITEMS)[0], fr=rng.choice(FRIENDLY),
              charity=rng.choice(CHARITIES))
    e1, x = ctx.eq(a, "/", k)
    e2, r = ctx.eq(a, "-", x)
    st["lines"] = [f"That is {e1} {U(x)} and {low_has(P)} {e2} {U(r)}."]
    return st, r


def low_has(P):
    """'Ana has' / 'I have' / 'you have' / 'we have' in mid-sentence."""
    s = P.rhas()
    return s if P.kind in ("name", "i") else s[0].lower() + s[1:]


def st_relation(ctx, P, a, Q):
    """Q's money from P's: returns (stmt, amount of Q)."""
    rng = ctx.rng
    kind = rng.choice(["more", "more", "less", "less", "times", "half"])
    w = ""
    if kind == "more":
        d = rng.randint(1, min(40, 100 - a)) if a < 100 else 0
        if d < 1:
            raise Retry()
        tpl = rng.choice(["{S2} {v2:have} {M:d} more than {O}", "{S2} {v2:have} {M:d} more than {sbj} {dd}",
                          "{S2} {v2:have} saved {M:d} more than {O}", "{S2} {v2:have} {dU} more than {O}"])
        op = "+"
    elif kind == "less":
        if a < 3:
            raise Retry()
        d = rng.randint(1, min(40, a - 1))
        tpl = rng.choice(["{S2} {v2:have} {M:d} less than {O}", "{S2} {v2:have} {d} fewer {U} than {O}" if d > 1 else "{S2} {v2:have} {M:d} less than {O}",
                          "{S2} {v2:have} {M:d} less than {sbj} {dd}"])
        op = "-"
    elif kind == "times":
        d = rng.choice([2, 2, 2, 3, 4])
        if a * d > 100:
            raise Retry()
        w = {2: rng.choice(["twice", "2 times", "double"]), 3: rng.choice(["three times", "3 times"]), 4: "4 times"}[d]
        if w == "double":
            tpl = "{S2} {v2:have} double the money {sbj} {dd}"
        else:
            tpl = rng.choice(["{S2} {v2:have} {w} as much money as {O}", "{S2} {v2:have} {w} as much as {O}"])
        op = "*"
    else:
        if a % 2:
            raise Retry()
        d = 2
        tpl = rng.choice(["{S2} {v2:have} half as much money as {O}", "{S2} {v2:have} half as much as {O}"])
        op = "/"
    kw = dict(d=d, w=w, sbj=P.subj(), dd=conj(P, "do", ctx.tense), dU=f"{d} {ctx.unit(d)}")
    text = fill(tpl, ctx, P, Q, **kw)
    e, r = ctx.eq(a, op, d)
    s = {"text": text, "lines": [f"{Q.rhas()} {e} {ctx.unit(r)}."], "subj": Q, "fact": rng.random() < 0.7, "sfirst": True,
         "elide": fill(tpl[5:], ctx, P, Q, **kw)}
    return s, r


def distractor(ctx, P):
    rng = ctx.rng
    n = rng.randint(2, 60)
    tpl = rng.choice([
        "{other} {c:be} {n} years old", "the {place} {c:open} at {h} o'clock", "the {mkt} {c:have} {n} stalls",
        "{S} also {v:have} {n} {obj}", "it {c:be} a rainy {day}", "{other} {c:buy} {n} {obj}",
        "the bus ride to the {place} {c:take} {n} minutes", "{S} {v:be} saving for {A:it}",
        "{NS} {fr} {c:like} {obj}", "{S} {v:live} {k} blocks from the {place}", "it {c:be} {day}",
        "{S} {v:go} shopping with {other}", "{NS} {box} {c:be} {color}",
    ])
    other = ctx.other_name() if "{other}" in tpl else ""
    s = stmt(ctx, P, tpl, None, other=other, n=n, place=rng.choice(PLACES), h=rng.randint(7, 11),
             obj=rng.choice(DISTRACT_OBJ), day=rng.choice(DAYS), it=rng.choice(ITEMS)[0],
             fr=rng.choice(FRIENDLY), k=rng.randint(2, 12), box=rng.choice(CONTAINERS),
             color=rng.choice(["red", "blue", "green", "old", "new", "yellow"]),
             mkt=rng.choice(["market", "farmers market", "night market", "flea market", "craft fair", "bazaar"]))
    s["lines"] = None
    if "{S}" not in tpl and "{NS}" not in tpl:
        s["subj"] = None
    return s


CONNECT = ["then", "after that", "later", "next", "in the afternoon", "on Saturday", "the next day",
           "afterwards", "at the {place}", "after school", "at lunch"]


def amount_question(ctx, P, short_ok):
    rng = ctx.rng
    have = conj(P, "have", ctx.tense)
    qs = ["How much money {do} {S} have now?", "How much {do} {S} have left?",
          "How much {do} {S} have in the end?", "What {do} {S} have left?",
          "How much money {do} {S} end up with?", "How many {U} {do} {S} have now?",
          "How much {be} {S} left with?", "Can you work out how much {S} " + have + " now?",
          "Tell me how much money {S} " + have + " left.", "So how much {do} {S} have?",
          "Work out how much {S} " + have + " at the end.", "How much money {do} {S} have at the end?",
          "What is the amount {S} " + have + " now?", "How many {U} {be} {S} left with?"]
    if short_ok:
        if ctx.tense == "past":
            qs += ["How much money was left?", "How much was left?", "How much remained?"]
        else:
            qs += ["How much money is left?", "How much is left?", "How much remains?"]
    if not ctx.spent:
        qs = [q for q in qs if "left" not in q and "remain" not in q]
    q = fill(rng.choice(qs), ctx, P)
    if ctx.tense == "past":
        q = q.replace(" now", rng.choice([" then", " in the end", " after that"]))
    return q


def build_story(ctx, T):
    """A composed story with T worked steps: (statements, question, unmarked final lines)."""
    rng = ctx.rng
    qkinds = [("amount", 0, 10), ("share", 1, 3), ("need", 1, 3), ("canbuy", 1, 3), ("together", 1, 3),
              ("diff", 1, 2)]
    qk = wpick(rng, [(k, w) for k, c, w in qkinds if (T - c) >= (1 if k == "amount" else 0)])
    qcost = dict((k, c) for k, c, _ in qkinds)[qk]
    R = T - qcost
    two = qk in ("together", "diff")
    P = ctx.person(allow=("name", "i", "you", "rel") if two else ("name", "i", "you", "we", "rel"))
    second_indep = qk == "diff" or (qk == "together" and (R == 0 or rng.random() < 0.5))
    need_rel = qk == "together" and not second_indep
    Rq = 1 if (second_indep and R >= 1 and rng.random() < 0.4) else 0
    Rp = R - Rq
    stmts, people, amt = [], [], {}
    if Rp >= 1 and not second_indep and rng.random() < 0.12:
        # "Zoe has $5 less than Nadia. Nadia has $27." -> (2) before (1); Zoe is then the main subject
        Q0 = ctx.person(allow=("name", "rel"))
        a = rng.randint(6, 95)
        s_p = stmt(ctx, P, rng.choice(["{S} {v:have} {M:a}", "{S} {v:have} {M:a} in {PS} {box}",
                                       "{S} {v:start} with {M:a}", "{S} {v:bring} {M:a} to the {place}"]),
                   None, a=a, box=rng.choice(CONTAINERS), place=rng.choice(PLACES))
        s_p["lines"] = [f"{P.rhas()} {a} {ctx.unit(a)}."]
        s_p["fact"] = True
        s_q, b = st_relation(ctx, P, a, Q0)
        s_q["after"] = s_p
        stmts += [s_q, s_p]
        amt[id(P)] = a
        people.append(P)
        P, a = Q0, b
        Rp -= 1
        need_rel = False
    else:
        c0 = 1 if (Rp >= 1 and rng.random() < 0.35) else 0
        s, a = st_start(ctx, P, c0)
        stmts.append(s)
        Rp -= c0
    people.append(P)
    amt[id(P)] = a
    while Rp > 0:
        r = rng.random()
        if need_rel and (Rp == 1 or r < 0.4):
            rel = True
        else:
            rel = (not second_indep) and qk != "diff" and len(people) < 3 and r > 0.8
        if rel:
            allow = ("name", "rel") if P.kind in ("i", "we") or any(x.kind == "i" for x in people) else ("name", "rel", "i")
            Q2 = ctx.person(allow=allow)
            s, a = st_relation(ctx, P, a, Q2)
            P = Q2
            people.append(P)
            need_rel = False
            Rp -= 1
        elif Rp >= 2 and r < 0.35:
            s, a = st_change(ctx, P, a, 2)
            Rp -= 2
        else:
            s, a = st_change(ctx, P, a, 1)
            Rp -= 1
        amt[id(P)] = a
        stmts.append(s)
    if need_rel:
        raise Retry()
    final_lines = []
    question = None
    tn = ctx.tense
    if qk == "amount":
        question = amount_question(ctx, P, short_ok=len(people) == 1)
    elif qk == "share":
        divs = [d for d in range(2, 11) if a % d == 0 and a // d >= 1 and a > d]
        if not divs:
            raise Retry()
        n = rng.choice(divs)
        gp, gs = rng.choice(GROUPS)
        tpl = rng.choice(["{S} {v:split} the money equally among {n} {gp}",
                          "{S} {v:share} {PS} money equally between {n} {gp}",
                          "{S} {v:divide} it evenly among {n} {gp}",
                          "{S} {v:give} all of it to {n} {gp} in equal shares"])
        s = stmt(ctx, P, tpl, None, n=n, gp=gp)
        e, r = ctx.eq(a, "/", n)
        s["lines"] = [f"Each {gs} gets {e} {ctx.unit(r)}."]
        stmts.append(s)
        question = fill(rng.choice(["How much {c:do} each {gs} get?", "What is each {gs}'s share?",
                                    "How much money {c:do} each of them receive?", "How much {c:do} each one get?",
                                    "How many {U} {c:do} each {gs} get?"]), ctx, P, gs=gs)
    elif qk == "need":
        c = rng.randint(a + 1, min(100, a + 60)) if a < 100 else 0
        if c <= a:
            raise Retry()
        it = item_for(ctx, c)
        e, r = ctx.eq(c, "-", a)
        line = f"{P.rverb('need')} {e} more {ctx.unit(r)}."
        if rng.random() < 0.5:
            question = fill(rng.choice([
                "How much more {do} {S} need to buy {A:it} that {c:cost} {M:c}?",
                "How much more money {do} {S} need for {A:it} costing {M:c}?",
                "{A:it} {c:cost} {M:c}. How much more {do} {S} need?",
                "If {A:it} {c:cost} {M:c}, how much more {do} {S} need to save?"]), ctx, P, it=it[0], c=c)
            final_lines.append(line)
        else:
            tpl = rng.choice(["{S} {v:want} {A:it} that {c:cost} {M:c}",
                              "{S} {v:be} saving for {A:it} that {c:cost} {M:c}",
                              "{S} {v:have} {PS} eye on {A:it} priced at {M:c}"])
            s = stmt(ctx, P, tpl, None, it=it[0], c=c)
            s["lines"] = ["@" + line]  # keeps its marker, reasoned last
            if rng.random() < 0.5:
                stmts.append(s)
            else:
                s["first"] = True
                stmts.insert(0, s)
            question = fill(rng.choice(["How much more {do} {S} need?", "How much more money {do} {S} need?",
                                        "How much more {do} {S} have to save?", "How much {be} {S} short?"]), ctx, P)
    elif qk == "canbuy":
        divs = [d for d in range(2, 26) if a % d == 0 and a // d >= 2]
        if not divs:
            raise Retry()
        p = rng.choice(divs)
        told = " ".join(s["text"] for s in stmts)
        cands = [it for it in (CHEAP if ctx.cheap else ITEMS) if (ctx.cheap or it[2] <= p <= it[3] * 2)
                 and it[1] not in told and it[0] not in told]
        if not cands:
            raise Retry()
        it = rng.choice(cands)
        e, r = ctx.eq(a, "/", p)
        line = f"{P.rname()} can buy {e} {it[1]}."
        if rng.random() < 0.5:
            question = fill(rng.choice([
                "How many {its} at {M:p} each {can} {S} buy with it?",
                "How many {its} costing {M:p} each {can} {S} buy?",
                "If {its} cost {M:p} each, how many {can} {S} buy with all of it?",
                "How many {adj} {its} {can} {S} afford?"]), ctx, P, its=it[1], p=p, adj=ctx.adj(p))
            final_lines.append(line)
        else:
            s = {"text": fill(rng.choice(["{its} cost {M:p} each", "one {it} {c:cost} {M:p}",
                                          "the {place} {c:sell} {its} for {M:p} each"]), ctx, P,
                              its=it[1], it=it[0], p=p, place=rng.choice(PLACES)),
                 "lines": [line], "subj": None, "elide": None}
            stmts.append(s)
            question = fill(rng.choice(["How many {can} {S} buy?", "How many of them {can} {S} buy?",
                                        "How many {its} {can} {S} get with {PS} money?"]), ctx, P, its=it[1])
    else:
        if second_indep:
            allow = ("name", "rel") if any(x.kind == "i" for x in people) or P.kind == "you" else ("name", "rel", "i")
            B = ctx.person(allow=allow)
            s, b = st_start(ctx, B, Rq)
            if rng.random() < 0.3 and qk == "together":
                stmts.insert(0, s)
            else:
                stmts.append(s)
            A, x1 = P, a
        else:
            A, x1 = people[-2], amt[id(people[-2])]
            B, b = P, a
        if qk == "together":
            if A.kind == "i" or B.kind == "you" or (A.kind != "you" and B.kind != "i" and rng.random() < 0.5):
                A, B, x1, b = B, A, b, x1
            e, r = ctx.eq(x1, "+", b)
            na, nb = sub_lower(A), sub_lower(B)
            final_lines.append(f"Together, {na} and {nb} have {e} {ctx.unit(r)}.")
            qa, qb = (A.obj() if A.kind != "i" else "I"), (B.obj() if B.kind != "i" else "I")
            pd = "did" if tn == "past" else "do"
            ph = "had" if tn == "past" else "have"
            question = rng.choice([
                f"How much money {pd} {qa} and {qb} have together?", f"How much {pd} {qa} and {qb} have altogether?",
                f"How much money {pd} they have in total?", f"What is the total amount {qa} and {qb} {ph}?",
                f"Together, how much money {pd} {qa} and {qb} have?", f"How much {pd} the two of them have combined?",
                f"Can you work out how much {qa} and {qb} {ph} in all?"])
            if B.kind == "i" and "they" in question:
                question = question.replace("they", "we").replace("the two of them", "the two of us")
        else:
            if x1 == b:
                raise Retry()
            if x1 < b:
                A, B, x1, b = B, A, b, x1
            e, r = ctx.eq(x1, "-", b)
            if rng.random() < 0.6:
                final_lines.append(f"{A.rhas()} {e} more {ctx.unit(r)} than {B.obj()}.")
                question = fill(rng.choice(["How much more money {do} {S} have than {O2}?",
                                            "How much more {do} {S} have than {O2}?",
                                            "How many more {U} {do} {S} have than {O2}?"]), ctx, A, B)
            else:
                final_lines.append(f"{B.rhas()} {e} fewer {ctx.unit(r)} than {A.obj()}.")
                question = fill(rng.choice(["How much less money {do2} {S2} have than {O}?",
                                            "How many fewer {U} {do2} {S2} have than {O}?",
                                            "How much less {do2} {S2} have compared with {O}?"]), ctx, A, B)
        people.append(B)
    # distractors
    nd = 0
    if len(stmts) < 7:
        r = rng.random()
        nd = 2 if r < 0.06 else (1 if r < 0.32 else 0)
    for _ in range(nd):
        pos = rng.randint(0, len(stmts))
        stmts.insert(pos, distractor(ctx, rng.choice(people)))
    if len(stmts) > 9:
        raise Retry()
    return stmts, question, final_lines


def sub_lower(p):
    """a person in mid-sentence of a reasoning line: Ana / I / you / we / my sister"""
    n = p.rname()
    return n if p.kind in ("name", "i") else n[0].lower() + n[1:]


def same_subject(stmts, i):
    """statement i may drop its subject: both it and the one before start with the same subject"""
    a, b = stmts[i - 1], stmts[i]
    return (b["subj"] is not None and b["subj"] is a["subj"] and a.get("sfirst") and b.get("sfirst")
            and b.get("elide") is not None)


def render_story(ctx, stmts, question, final_lines):
    rng = ctx.rng
    # reasoning: statements in order; one that depends on a later statement comes right after it;
    # "@" lines (marked, but computed from everything) come last
    lines, late, order, waiting = [], [], [], {}
    for i, s in enumerate(stmts):
        if s.get("after") is not None:
            waiting[id(s["after"])] = i
            continue
        order.append(i)
        if id(s) in waiting:
            order.append(waiting.pop(id(s)))
    if waiting:
        raise Retry()
    for i in order:
        s = stmts[i]
        k = i + 1
        if s["lines"] is None:
            lines.append(f"({k}) This does not change the answer.")
            continue
        for ln in s["lines"]:
            if ln.startswith("@"):
                late.append(f"({k}) {ln[1:]}")
            else:
                lines.append(f"({k}) {ln}")
    lines += final_lines + late
    question = cap(question)
    # text
    mode = wpick(rng, [("sent", 55), ("numbered", 12), ("runon", 18), ("qfirst", 10), ("if", 5)])
    clauses = [s["text"] for s in stmts]
    if mode in ("qfirst", "if") and (len(stmts) > 3 or any(s["lines"] is None for s in stmts)
                                      or any(s.get("first") for s in stmts)
                                      or question.startswith(("Can", "Tell", "Work", "If", "Together"))
                                      or "." in question[:-1] or any("," in c for c in clauses)):
        mode = "sent"
    if mode == "runon" and (len(stmts) < 2 or "." in question[:-1] and False):
        mode = "sent"
    # a clause whose subject is the previous clause's subject may use the pronoun
    for i in range(1, len(stmts)):
        P = stmts[i]["subj"]
        if P is not None and P is stmts[i - 1]["subj"] and P.kind in ("name", "rel") and rng.random() < 0.5:
            if clauses[i].startswith(P.name + " "):
                clauses[i] = ("she" if P.g == "f" else "he") + clauses[i][len(P.name):]
    if mode == "sent":
        out = []
        for i, c in enumerate(clauses):
            if (i > 0 and stmts[i]["lines"] is not None and not stmts[i].get("fact") and rng.random() < 0.25
                    and not c.startswith(("there", "at "))):
                con = fill(rng.choice(CONNECT), ctx, place=rng.choice(PLACES))
                c = f"{con} {c}" if con == "then" else f"{con}, {c}"
            out.append(cap(c) + ".")
        text = " ".join(out) + " " + question
    elif mode == "numbered":
        text = " ".join(f"({i + 1}) {cap(c)}." for i, c in enumerate(clauses)) + " " + question
    elif mode == "runon":
        parts = [clauses[0]]
        for i in range(1, len(clauses)):
            c = stmts[i]["elide"] if (same_subject(stmts, i) and rng.random() < 0.7) else clauses[i]
            parts.append(c)
        seq = not any(s.get("after") is not None or s.get("first") for s in stmts)
        if len(parts) == 2:
            body = parts[0] + (rng.choice([" and ", ", then ", " and then "]) if seq else " and ") + parts[1]
        else:
            body = ", ".join(parts[:-1]) + (rng.choice([" and ", ", and then ", " and then "]) if seq else " and ") + parts[-1]
        text = cap(body) + ". " + question
    else:
        body = clauses[0]
        for i in range(1, len(clauses)):
            c = stmts[i]["elide"] if same_subject(stmts, i) else clauses[i]
            body += (" and " if i == len(clauses) - 1 else ", ") + c
        q = question.rstrip("?.")
        if mode == "qfirst" and not re.match(r"How many (can|could|of them)", q):
            text = f"{q} if {body}?"
        else:
            ql = q if q.startswith("I ") else q[0].lower() + q[1:]
            text = f"If {body}, {ql}?"
    return text, lines


# ----------------------------------------------------------------------------------------------
# fixed shop frames: each returns (text, reasoning lines); ctx.worked gets the steps

def sp_change1(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, c = pick_item(ctx, 99)
    notes = [n for n in ctx.notes if n > c]
    if not notes:
        raise Retry()
    b = rng.choice(notes)
    e, r = ctx.eq(b, "-", c)
    q = rng.choice(["What change {do} {S} get?", "How much change {do} {S} get back?",
                    "How much change should {S} receive?", "What is {NS} change?",
                    "Can you work out the change?", "How much {c:do} the cashier give back?"])
    t = rng.choice([
        "{S} {v:buy} {A:it} for {M:c} and {v:pay} with {A:nb}. " + q,
        "{A:it} {c:cost} {M:c}. {S} {v:hand} the cashier {A:nb}. " + q,
        "How much change {do} {S} get from {A:nb} after buying {A:it} for {M:c}?",
        "{S} {v:pay} for {A:cit} with {A:nb}. " + q,
        "At the {place}, {S} {v:give} the seller {A:nb} for {A:it} priced at {M:c}. " + q,
        "{S} {v:hand} over {M:b} for {A:it} that {c:cost} {M:c}. " + q,
        "{S} {v:pay} with {A:nb} for {A:cit}. " + q])
    text = fill(t, ctx, P, it=it[0], c=c, b=b, nb=ctx.note(b), cit=f"{ctx.adj(c)} {it[0]}",
                place=rng.choice(PLACES))
    return text, [f"{P.rverb('get')} {e} {ctx.unit(r)} in change."]


def n_items(ctx, maxtot=100, lo_n=2, hi_n=9):
    rng = ctx.rng
    it = rng.choice(CHEAP if ctx.cheap else ITEMS)
    n = rng.randint(lo_n, hi_n)
    p = rng.randint(1, 25) if ctx.cheap else rng.randint(it[2], it[3])
    if n * p > maxtot or min(n, p) > 25:
        raise Retry()
    return it, n, p


def sp_cost_n(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, n, p = n_items(ctx)
    form = rng.randint(0, 5)
    kw = dict(n=n, its=it[1], it=it[0], p=p, place=rng.choice(PLACES))
    if form <= 1:
        t = rng.choice(["{S} {v:buy} {n} {its} at {M:p} each. How much {do} {S} spend?",
                        "{S} {v:buy} {n} {its} for {M:p} each. How much {do} {S} pay altogether?",
                        "{S} {v:need} {n} {its}, and they {pl:cost} {M:p} each. What {will} {S} pay in total?"])
        e, r = ctx.eq(n, "*", p)
        return fill(t, ctx, P, **kw), [f"(1) The {it[1]} cost {e} {ctx.unit(r)}."]
    if form == 2:
        t = rng.choice(["How much {pl:do} {n} {its} cost if one {it} {c:cost} {M:p}?",
                        "What is the price of {n} {its} at {M:p} each?",
                        "What would {n} {its} cost at {M:p} apiece?"])
        e, r = ctx.eq(n, "*", p)
        return fill(t, ctx, P, **kw), [f"{n} {it[1]} cost {e} {ctx.unit(r)}."]
    t = rng.choice(["One {it} {c:cost} {M:p}. How much {pl:do} {n} of them cost?",
                    "{its} {pl:be} {M:p} each at the {place}. What {pl:do} {n} {its} cost?",
                    "The price of {A:it} is {M:p}. Can you work out the cost of {n} {its}?",
                    "Each {it} {c:cost} {M:p}. How much {do} {S} pay for {n} {its}?"])
    e, r = ctx.eq(p, "*", n)
    return cap(fill(t, ctx, P, **kw)), [f"{n} {it[1]} cost {e} {ctx.unit(r)}."]


def sp_unit(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, n, p = n_items(ctx)
    m = n * p
    text = fill(rng.choice([
        "{S} {v:pay} {M:m} for {n} {its}. How much {c:do} one {it} cost?",
        "{n} {its} {pl:cost} {M:m} altogether. What is the price of one {it}?",
        "{S} {v:spend} {M:m} on {n} {its} that all cost the same. How much {c:be} each {it}?",
        "If {n} {its} cost {M:m}, how much does one cost?",
        "At the {place}, a bundle of {n} {its} {c:sell} for {M:m}. What {c:do} one {it} cost?"]),
        ctx, P, m=m, n=n, its=it[1], it=it[0], place=rng.choice(PLACES))
    e, r = ctx.eq(m, "/", n)
    return text, [f"One {it[0]} costs {e} {ctx.unit(r)}."]


def sp_wage(ctx):
    rng = ctx.rng
    P = ctx.person()
    r_, h = rng.randint(2, 25), rng.randint(2, 9)
    per, many = rng.choice([("hour", "hours"), ("day", "days"), ("week", "weeks"), ("shift", "shifts")])
    job = rng.choice(["at the cafe", "at the bakery", "at a car wash", "babysitting", "at the farm",
                      "in the garden center", "delivering leaflets", "at the pool", "at the market stall"])
    t, order = rng.choice([
        ("{S} {v:earn} {M:r} {aper} {job}. How much {do} {S} earn in {h} {many}?", "rh"),
        ("{S} {v:get} paid {M:r} per {per} {job}. What {do} {S} make after {h} {many}?", "rh"),
        ("How much money {do} {S} make for {h} {many} of work if the pay {c:be} {M:r} per {per}?", "hr"),
        ("{S} {v:work} {h} {many} {job} at {M:r} per {per}. How much {do} {S} earn?", "hr")])
    text = fill(t, ctx, P, r=r_, h=h, per=per, many=many, job=job, aper=a_(per))
    e, x = ctx.eq(h, "*", r_) if order == "hr" else ctx.eq(r_, "*", h)
    return text, [f"In {h} {many}, {low_first(P.rverb('earn'), P)} {e} {ctx.unit(x)}."]


def sp_allow(ctx):
    rng = ctx.rng
    P = ctx.person(weights={"name": 60, "i": 20, "you": 10, "rel": 10})
    r_, w = rng.randint(2, 25), rng.randint(2, 10)
    t, verb = rng.choice([
        ("{S} {v:get} {M:r} pocket money every week. How much {c:be} that after {w} weeks?", "get"),
        ("{NS} allowance {c:be} {M:r} a week. How much {do} {S} get in {w} weeks?", "get"),
        ("Every week {S} {v:save} {M:r}. How much {will} {S} have saved after {w} weeks?", "save"),
        ("{S} {v:put} {M:r} into {PS} piggy bank each week for {w} weeks. How much {do} {S} put in altogether?", "save")])
    text = fill(t, ctx, P, r=r_, w=w)
    e, x = ctx.eq(r_, "*", w)
    return text, [f"In {w} weeks, {low_first(P.rverb(verb), P)} {e} {ctx.unit(x)}."]


def sp_weeks(ctx):
    rng = ctx.rng
    P = ctx.person()
    r_ = rng.randint(2, 25)
    if 100 // r_ < 2:
        raise Retry()
    w = rng.randint(2, 100 // r_)
    g = r_ * w
    it = item_for(ctx, g)
    t, unit = rng.choice([
        ("{S} {v:save} {M:r} each week. How many weeks {will} it take to save {M:g}?", "weeks"),
        ("{S} {v:want} {A:it} that {c:cost} {M:g} and {v:save} {M:r} a week. How many weeks {do} {S} need to save?", "weeks"),
        ("How many weeks of saving {M:r} a week does it take to reach {M:g}?", "weeks"),
        ("{S} {v:earn} {M:r} a day. How many days {do} {S} need to work to earn {M:g}?", "days")])
    text = fill(t, ctx, P, r=r_, g=g, it=it[0])
    e, x = ctx.eq(g, "/", r_)
    return text, [f"It takes {e} {unit}."]


def sp_split_bill(ctx):
    rng = ctx.rng
    n = rng.randint(2, 8)
    b = n * rng.randint(2, 100 // n)
    place = rng.choice(BILL_PLACES)
    P = ctx.person(allow=("name", "i"))
    who = rng.choice(["friends", "colleagues", "cousins", "teammates", "students", "neighbors"])
    fr = "friend" if n == 2 else "friends"
    t, whom = rng.choice([
        ("{n} {who} share {aJ:b} bill at the {place} equally. How much {pl:do} each person pay?", "person"),
        ("The bill at the {place} {c:come} to {M:b}. {n} {who} split it evenly. What {c:do} each one pay?", "one"),
        ("Our lunch at the {place} {c:cost} {M:b} and there {pl:be} {n} of us. If we split the bill evenly, how much {c:do} each of us pay?", "person"),
        ("{S} and {n1} {fr} split {aJ:b} bill equally. How much {c:do} each pay?", "person"),
        ("A taxi ride {c:cost} {M:b}, shared equally by {n} passengers. What is each passenger's share?", "passenger")])
    text = fill(t, ctx, P, b=b, n=n, n1=n - 1, who=who, place=place, fr=fr)
    if "{S} and" in t and P.kind == "i":
        text = text.replace("I and", "Me and" if rng.random() < 0.3 else "I and")
    e, x = ctx.eq(b, "/", n)
    return cap(text), [f"Each {whom} pays {e} {ctx.unit(x)}."]


def sp_canbuy(ctx):
    rng = ctx.rng
    P = ctx.person()
    it = rng.choice(CHEAP if ctx.cheap else ITEMS)
    p = rng.randint(2, 25) if ctx.cheap else rng.randint(max(2, it[2]), max(2, min(25, it[3])))
    if 100 // p < 2:
        raise Retry()
    n = rng.randint(2, 100 // p)
    m = n * p
    text = fill(rng.choice([
        "{S} {v:have} {M:m}. How many {its} at {M:p} each {can} {S} buy?",
        "With {M:m}, how many {its} costing {M:p} each {can} {S} buy?",
        "{its} {pl:cost} {M:p} each. {S} {v:have} {M:m} to spend. How many {can} {S} buy?",
        "How many {adj} {its} {can} {S} get for {M:m}?",
        "{S} {v:want} to spend exactly {M:m} on {its} that cost {M:p} each. How many {will} {S} get?"]),
        ctx, P, m=m, p=p, its=it[1], adj=ctx.adj(p))
    e, x = ctx.eq(m, "/", p)
    return cap(text), [f"{P.rname()} can buy {e} {it[1]}."]


def sp_sale(ctx):
    rng = ctx.rng
    it, p = pick_item(ctx, 100, 5)
    d = rng.randint(1, p - 1)
    text = fill(rng.choice([
        "{A:it} {c:cost} {M:p}. In the sale it {c:be} {M:d} off. What is the sale price?",
        "The {place} {c:take} {M:d} off {A:it} that normally {c:cost} {M:p}. How much {c:do} it cost now?",
        "{A:it} was {M:p}, but the price dropped by {M:d}. What does it cost now?",
        "With {aJ:d} discount, how much is {A:it} that usually sells for {M:p}?"]),
        ctx, None, it=it[0], p=p, d=d, place=rng.choice(PLACES))
    e, x = ctx.eq(p, "-", d)
    return cap(text), [f"The {it[0]} costs {e} {ctx.unit(x)} now."]


def sp_tip(ctx):
    rng = ctx.rng
    P = ctx.person(allow=("name", "i", "we", "rel"))
    m, t = rng.randint(8, 85), rng.randint(1, 15)
    if m + t > 100:
        raise Retry()
    text = fill(rng.choice([
        "{NS} meal at the {place} {c:cost} {M:m}, and {S} {v:leave} {aJ:t} tip. How much {do} {S} pay in total?",
        "{S} {v:order} food for {M:m} and {v:add} a tip of {M:t}. How much {do} {S} pay altogether?",
        "Dinner {c:cost} {M:m}. {S} {v:tip} the waiter {M:t}. What is the total {S} {v:pay}?",
        "The haircut {c:cost} {M:m} and {S} {v:give} the barber {aJ:t} tip. How much {do} {S} pay?",
        "The taxi fare {c:be} {M:m}. {S} {v:add} {M:t} as a tip. What {do} {S} pay the driver in all?"]),
        ctx, P, m=m, t=t, place=rng.choice(BILL_PLACES))
    e, x = ctx.eq(m, "+", t)
    return text, [f"{P.rverb('pay')} {e} {ctx.unit(x)} in total."]


def sp_price_diff(ctx):
    rng = ctx.rng
    it1, p1 = pick_item(ctx, 100, 3)
    it2, p2 = pick_item(ctx, p1 - 1)
    if it1[0] == it2[0]:
        raise Retry()
    form = rng.randint(0, 3)
    text = fill([
        "{A:i1} {c:cost} {M:p1} and {A:i2} {c:cost} {M:p2}. How much more {c:be} the {i1}?",
        "How much cheaper is {A:i2} at {M:p2} than {A:i1} at {M:p1}?",
        "At the {place}, {A:i1} {c:be} {M:p1} and {A:i2} {c:be} {M:p2}. What is the difference in price?",
        "{A:i2} {c:sell} for {M:p2}. {A:i1} {c:sell} for {M:p1}. How much more {c:do} the {i1} cost?"][form],
        ctx, None, i1=it1[0], i2=it2[0], p1=p1, p2=p2, place=rng.choice(PLACES))
    e, x = ctx.eq(p1, "-", p2)
    if form == 1:
        return cap(text), [f"The {it2[0]} costs {e} {ctx.unit(x)} less than the {it1[0]}."]
    return cap(text), [f"The {it1[0]} costs {e} {ctx.unit(x)} more than the {it2[0]}."]


def sp_two_total(ctx):
    rng = ctx.rng
    P = ctx.person()
    it1, s1 = pick_item(ctx, 60)
    it2, s2 = pick_item(ctx, 100 - s1)
    if it1[0] == it2[0]:
        raise Retry()
    t, verb = rng.choice([
        ("{S} {v:spend} {M:s1} on {A:i1} and {M:s2} on {A:i2}. How much {do} {S} spend altogether?", "spend"),
        ("{S} {v:buy} {A:i1} for {M:s1} and {A:i2} for {M:s2}. What is the total cost?", "spend"),
        ("What {do} {S} pay in all for {A:i1} at {M:s1} and {A:i2} at {M:s2}?", "spend"),
        ("{A:i1} {c:cost} {M:s1}. {A:i2} {c:cost} {M:s2}. How much {do} {S} need to buy both?", "need")])
    text = fill(t, ctx, P, s1=s1, s2=s2, i1=it1[0], i2=it2[0])
    e, x = ctx.eq(s1, "+", s2)
    if verb == "need":
        return cap(text), [f"{P.rverb('need')} {e} {ctx.unit(x)}."]
    return cap(text), [f"{P.rverb('spend')} {e} {ctx.unit(x)} in total."]


def sp_measure(ctx):
    rng = ctx.rng
    P = ctx.person()
    usg, upl, goods = rng.choice(MEASURES)
    good = rng.choice(goods)
    n, p = rng.randint(2, 9), rng.randint(1, 20)
    if n * p > 100:
        raise Retry()
    form = rng.randint(0, 3)
    text = fill([
        "{A:usg} of {good} {c:cost} {M:p}. How much {pl:do} {n} {upl} cost?",
        "{S} {v:buy} {n} {upl} of {good} at {M:p} a {usg}. How much {do} {S} pay?",
        "How much {do} {S} pay for {n} {upl} of {good} if one {usg} {c:cost} {M:p}?",
        "The price of {good} is {M:p} per {usg}. Can you work out what {n} {upl} cost?"][form],
        ctx, P, good=good, p=p, n=n, usg=usg, upl=upl)
    e, x = ctx.eq(p, "*", n) if form in (0, 3) else ctx.eq(n, "*", p)
    if form == 1:
        return cap(text), [f"(1) The {good} costs {e} {ctx.unit(x)}."]
    return cap(text), [f"{n} {upl} of {good} cost {e} {ctx.unit(x)}."]


def sp_need(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, c = pick_item(ctx, 100, 8)
    a = rng.randint(1, c - 1)
    text = fill(rng.choice([
        "{S} {v:want} {A:it} that {c:cost} {M:c}. {S} {v:have} {M:a}. How much more {do} {S} need?",
        "{S} {v:have} {M:a}, but {A:it} {c:cost} {M:c}. How much more money {do} {S} need?",
        "How much more {do} {S} need to save if {S} {v:have} {M:a} and the {it} {c:cost} {M:c}?",
        "{S} {v:be} saving for {A:it} priced at {M:c} and {v:have} {M:a} so far. How much {c:be} still missing?"]),
        ctx, P, it=it[0], c=c, a=a)
    e, x = ctx.eq(c, "-", a)
    return text, [f"{P.rverb('need')} {e} more {ctx.unit(x)}."]


def sp_people_diff(ctx):
    rng = ctx.rng
    A = ctx.person(allow=("name", "i", "rel"))
    B = ctx.person(allow=("name", "rel"))
    a, b = rng.randint(3, 100), rng.randint(1, 99)
    if a <= b:
        raise Retry()
    e, x = ctx.eq(a, "-", b)
    if rng.random() < 0.5:
        text = fill(rng.choice(["{S} {v:have} {M:a} and {S2} {v2:have} {M:b}. How much more money {do} {S} have?",
                                "{S2} {v2:have} saved {M:b}. {S} {v:have} saved {M:a}. How much more {do} {S} have than {O2}?",
                                "How much more {do} {S} have than {O2} if {S} {v:have} {M:a} and {S2} {v2:have} {M:b}?"]),
                    ctx, A, B, a=a, b=b)
        return cap(text), [f"{A.rhas()} {e} more {ctx.unit(x)} than {B.obj()}."]
    text = fill(rng.choice(["{S} {v:have} {M:a} and {S2} {v2:have} {M:b}. How much less {do2} {S2} have?",
                            "{S} {v:have} {M:a} in {PS} wallet. {S2} {v2:have} {M:b}. How many fewer {U} {do2} {S2} have?"]),
                ctx, A, B, a=a, b=b)
    return cap(text), [f"{B.rhas()} {e} fewer {ctx.unit(x)} than {A.obj()}."]


def sp_coins(ctx):
    rng = ctx.rng
    P = ctx.person()
    v = rng.choice([2, 5, 10, 20, 25, 50]) if ctx.cur == "cents" else rng.choice([1, 2, 5, 10, 20])
    if 100 // v < 2:
        raise Retry()
    n = rng.randint(3, 100 // v)
    if min(n, v) > 25 or n == v:
        raise Retry()
    kind = "coins" if v <= 2 or ctx.cur in ("cents", "yen") else rng.choice(["coins", "notes"])
    den = ctx.adj(v)
    text = fill(rng.choice(["{S} {v:have} {n} {den} {kind}. How much money {c:be} that?",
                            "{S} {v:have} {n} {kind}, each worth {M:v}. How much money {c:be} that in all?",
                            "In {NS} {box} there {pl:be} {n} {den} {kind}. How much money {do} {S} have?",
                            "How much {do} {S} have if {S} {v:have} {n} {den} {kind}?"]),
                ctx, P, n=n, den=den, kind=kind, box=rng.choice(CONTAINERS), v=v)
    e, x = ctx.eq(n, "*", v)
    return text, [f"{P.rhas()} {e} {ctx.unit(x)}."]


def sp_tickets_group(ctx):
    rng = ctx.rng
    n, p = rng.randint(3, 9), rng.randint(2, 25)
    if n * p > 100:
        raise Retry()
    what = rng.choice(["the cinema", "the zoo", "a concert", "the aquarium", "a football match", "the museum",
                       "the water park", "a play", "the science center"])
    we = Person("we")
    form = rng.randint(0, 2)
    text = fill(["{n} of us {v:go} to {what}, and tickets {pl:cost} {M:p} each. How much {do} we pay for the tickets?",
                 "Tickets for {what} {pl:be} {M:p} each. How much {pl:do} {n} tickets cost?",
                 "Our family of {n} {c:buy} tickets to {what} at {M:p} per person. What is the total?"][form],
                ctx, we, n=n, p=p, what=what)
    e, x = (ctx.eq(p, "*", n) if form == 1 else ctx.eq(n, "*", p))
    return cap(text), [f"The tickets cost {e} {ctx.unit(x)}."]


def sp_change_n(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, n, p = n_items(ctx, 99)
    notes = [b for b in ctx.notes if b > n * p]
    if not notes:
        raise Retry()
    b = rng.choice(notes)
    form = rng.randint(0, 3)
    text = fill([
        "{S} {v:buy} {n} {its} at {M:p} each and {v:pay} with {A:nb}. What change {do} {S} get?",
        "{S} {v:buy} {n} {its} for {M:p} each. {S} {v:hand} over {A:nb}. How much change {do} {S} get back?",
        "{its} {pl:cost} {M:p} each. {S} {v:take} {n} and {v:pay} with {A:nb}. How much change should {S} get?",
        "How much change {do} {S} get from {A:nb} after buying {n} {its} at {M:p} each?"][form],
        ctx, P, n=n, its=it[1], p=p, nb=ctx.note(b))
    e1, x = ctx.eq(n, "*", p)
    e2, r = ctx.eq(b, "-", x)
    k = {0: "(1) ", 1: "(1) ", 2: "(2) ", 3: ""}[form]
    return cap(text), [f"{k}The {it[1]} cost {e1} {ctx.unit(x)}.",
                       f"{P.rverb('get')} {e2} {ctx.unit(r)} in change."]


def sp_change_two(ctx):
    rng = ctx.rng
    P = ctx.person()
    it1, s1 = pick_item(ctx, 60)
    it2, s2 = pick_item(ctx, 99 - s1)
    notes = [b for b in ctx.notes if b > s1 + s2]
    if not notes or it1[0] == it2[0]:
        raise Retry()
    b = rng.choice(notes)
    text = fill(rng.choice([
        "{S} {v:buy} {A:i1} for {M:s1} and {A:i2} for {M:s2}. {S} {v:pay} with {A:nb}. What change {do} {S} get?",
        "{S} {v:pick} {A:i1} ({M:s1}) and {A:i2} ({M:s2}) and {v:hand} the cashier {A:nb}. How much change {c:come} back?",
        "At the {place}, {S} {v:pay} for {A:i1} costing {M:s1} and {A:i2} costing {M:s2} with {A:nb}. Work out the change."]),
        ctx, P, i1=it1[0], i2=it2[0], s1=s1, s2=s2, nb=ctx.note(b), place=rng.choice(PLACES))
    e1, x = ctx.eq(s1, "+", s2)
    e2, r = ctx.eq(b, "-", x)
    return text, [f"(1) {P.rverb('spend')} {e1} {ctx.unit(x)}.", f"{P.rverb('get')} {e2} {ctx.unit(r)} in change."]


def sp_bill_tip_split(ctx):
    rng = ctx.rng
    n = rng.randint(2, 6)
    tot = n * rng.randint(3, 100 // n)
    t = rng.randint(1, min(20, tot - 2))
    m = tot - t
    we = Person("we")
    t_, who = rng.choice([
        ("{n} friends {pl:eat} at a {place}. The food {c:cost} {M:m} and they {pl:add} {aJ:t} tip. They {pl:split} the total equally. How much {c:do} each friend pay?", "friend"),
        ("Our meal at the {place} {c:be} {M:m}, plus {aJ:t} tip. There {pl:be} {n} of us sharing the cost equally. What {c:do} each of us pay?", "person"),
        ("The bill {c:be} {M:m} and the tip {c:be} {M:t}. If {n} people {pl:share} it evenly, how much {c:do} each person pay?", "person")])
    text = fill(t_, ctx, we, n=n, place=rng.choice(BILL_PLACES), m=m, t=t)
    e1, x = ctx.eq(m, "+", t)
    e2, r = ctx.eq(x, "/", n)
    return text, [f"The total is {e1} {ctx.unit(x)}.", f"Each {who} pays {e2} {ctx.unit(r)}."]


def sp_class_fund(ctx):
    rng = ctx.rng
    grp = rng.choice(CLASS_GROUPS)
    n, r_ = rng.randint(3, 25), rng.randint(1, 10)
    if n * r_ > 95:
        raise Retry()
    c = rng.randint(n * r_ + 1, 100)
    goal = rng.choice(["a class trip", "a new football", "a party", "a gift for the teacher", "new paints",
                       "a bus to the museum", "a pizza lunch", "a book for the library"])
    mem = rng.choice(["students", "members", "kids", "people"])
    t, order = rng.choice([
        ("Each of the {n} {mem} in {grp} {c:give} {M:r}. {goal_c} {c:cost} {M:c}. How much more money {c:be} needed?", "nr"),
        ("{grp_c} {c:have} {n} {mem}, and each {c:pay} {M:r} towards {goal}, which {c:cost} {M:c}. How much more {c:do} {grp} need?", "nr"),
        ("{grp_c} {c:collect} {M:r} from each of {n} {mem} for {goal} costing {M:c}. How much {c:be} still missing?", "rn")])
    text = fill(t, ctx, None, n=n, mem=mem, grp=grp, grp_c=cap(grp), r=r_, c=c, goal=goal, goal_c=cap(goal))
    e1, x = ctx.eq(n, "*", r_) if order == "nr" else ctx.eq(r_, "*", n)
    e2, y = ctx.eq(c, "-", x)
    who = cap(grp)
    return text, [f"(1) {who} has {e1} {ctx.unit(x)}.", f"{who} needs {e2} more {ctx.unit(y)}."]


def sp_weeks_goal(ctx):
    rng = ctx.rng
    P = ctx.person()
    r_ = rng.randint(2, 20)
    w = rng.randint(2, 15)
    need = r_ * w
    if need >= 99:
        raise Retry()
    a = rng.randint(1, 100 - need)
    g = a + need
    it = item_for(ctx, g)
    text = fill(rng.choice([
        "{S} {v:have} {M:a} and {v:save} {M:r} a week. How many weeks until {S} {v:have} {M:g}?",
        "{S} {v:want} {A:it} for {M:g}. {S} already {v:have} {M:a} and {v:save} {M:r} every week. How many weeks {will} it take?",
        "{S} {v:have} {M:a} saved. If {S} {v:add} {M:r} each week, how many weeks before {S} {v:reach} {M:g}?"]),
        ctx, P, a=a, r=r_, g=g, it=it[0])
    e1, x = ctx.eq(g, "-", a)
    e2, y = ctx.eq(x, "/", r_)
    return text, [f"{P.rverb('need')} {e1} more {ctx.unit(x)}.", f"It takes {e2} weeks."]


def sp_rate_diff(ctx, three):
    rng = ctx.rng
    A, B = ctx.person(allow=("name", "i", "rel")), ctx.person(allow=("name", "rel"))
    r1, r2, h = rng.randint(3, 25), rng.randint(2, 24), rng.randint(2, 8)
    if r1 <= r2 or r1 * h > 100:
        raise Retry()
    per = rng.choice(["hour", "day", "shift"])
    t = rng.choice([
        "{S} {v:earn} {M:r1} {aper} and {S2} {v2:earn} {M:r2} {aper}. How much more {do} {S} earn in {h} {pers}?",
        "{S} {v:get} paid {M:r1} per {per} at the {place}, while {S2} {v2:get} {M:r2} per {per}. After {h} {pers}, how much more {do} {S} have?"])
    text = fill(t, ctx, A, B, r1=r1, r2=r2, h=h, per=per, pers=per + "s", aper=a_(per), place=rng.choice(PLACES))
    if three:
        e1, x = ctx.eq(h, "*", r1)
        e2, y = ctx.eq(h, "*", r2)
        e3, z = ctx.eq(x, "-", y)
        return cap(text), [f"In {h} {per}s, {low_first(A.rverb('earn'), A)} {e1} {ctx.unit(x)}.",
                           f"In {h} {per}s, {low_first(B.rverb('earn'), B)} {e2} {ctx.unit(y)}.",
                           f"{A.rverb('earn')} {e3} more {ctx.unit(z)}."]
    e1, x = ctx.eq(r1, "-", r2)
    e2, y = ctx.eq(x, "*", h)
    return cap(text), [f"(1) {A.rverb('earn')} {e1} more {ctx.unit(x)} per {per}.",
                       f"In {h} {per}s, that is {e2} {ctx.unit(y)}."]


def low_first(s, P):
    return s if P.kind in ("name", "i") else s[0].lower() + s[1:]


def sp_discount_n(ctx):
    rng = ctx.rng
    P = ctx.person()
    it, p = pick_item(ctx, 100, 4)
    d = rng.randint(1, p - 2) if p > 2 else 0
    n = rng.randint(2, 6)
    if d < 1 or n * (p - d) > 100:
        raise Retry()
    text = fill(rng.choice([
        "{its} normally cost {M:p} each, but today they {pl:be} {M:d} off. {S} {v:buy} {n}. How much {do} {S} pay?",
        "{S} {v:buy} {n} {its}. Each one usually costs {M:p}, but {S} {v:get} {M:d} off each. How much {do} {S} spend?",
        "The {place} {c:cut} {M:d} off the {J:p} price of {A:it}. How much {pl:do} {n} of them cost now?"]),
        ctx, P, its=it[1], it=it[0], p=p, d=d, n=n, place=rng.choice(PLACES))
    e1, x = ctx.eq(p, "-", d)
    e2, y = ctx.eq(n, "*", x)
    return cap(text), [f"(1) One {it[0]} costs {e1} {ctx.unit(x)}.", f"{n} {it[1]} cost {e2} {ctx.unit(y)}."]


def sp_measure_change(ctx):
    rng = ctx.rng
    P = ctx.person()
    usg, upl, goods = rng.choice(MEASURES)
    good = rng.choice(goods)
    n, p = rng.randint(2, 8), rng.randint(1, 15)
    notes = [b for b in ctx.notes if b > n * p]
    if n * p > 99 or not notes:
        raise Retry()
    b = rng.choice(notes)
    t, k = rng.choice([
        ("{S} {v:buy} {n} {upl} of {good} at {M:p} per {usg} and {v:pay} with {A:nb}. How much change {do} {S} get?", 1),
        ("{A:usg} of {good} {c:cost} {M:p}. {S} {v:buy} {n} {upl} and {v:hand} over {A:nb}. What is the change?", 2)])
    text = fill(t, ctx, P, n=n, upl=upl, usg=usg, good=good, p=p, nb=ctx.note(b))
    e1, x = ctx.eq(n, "*", p)
    e2, y = ctx.eq(b, "-", x)
    return cap(text), [f"({k}) The {n} {upl} of {good} cost {e1} {ctx.unit(x)}.",
                       f"{P.rverb('get')} {e2} {ctx.unit(y)} in change."]


def sp_pack_unit(ctx):
    rng = ctx.rng
    P = ctx.person()
    it = rng.choice([i for i in ITEMS if i[3] <= 6])
    n, u = rng.randint(2, 10), rng.randint(1, 9)
    k = rng.randint(2, 12)
    if n * u > 100 or k * u > 100 or k == n:
        raise Retry()
    m = n * u
    t, mark = rng.choice([
        ("A pack of {n} {its} {c:cost} {M:m}. How much {pl:do} {k} {its} cost at the same price each?", "(1) "),
        ("{S} {v:pay} {M:m} for {n} {its}. At that price, what would {k} {its} cost?", "(1) "),
        ("If {n} {its} cost {M:m}, how much do {k} {its} cost?", "")])
    text = fill(t, ctx, P, n=n, its=it[1], m=m, k=k)
    e1, x = ctx.eq(m, "/", n)
    e2, y = ctx.eq(x, "*", k)
    return cap(text), [f"{mark}One {it[0]} costs {e1} {ctx.unit(x)}.", f"{k} {it[1]} cost {e2} {ctx.unit(y)}."]


def sp_stall_split(ctx, extra_total):
    """Children sell things at a stall and share the money: 2 steps, or 4 with two goods."""
    rng = ctx.rng
    A = ctx.person(allow=("name", "i", "rel"))
    B = ctx.person(allow=("name", "rel"))
    it = rng.choice(STALL)
    n, p = rng.randint(2, 12), rng.randint(it[2], it[3])
    k = rng.choice([2, 2, 3, 4])
    tot = n * p
    it2, n2, p2 = None, 0, 0
    if extra_total:
        it2 = rng.choice([s for s in STALL if s[0] != it[0]])
        n2, p2 = rng.randint(2, 10), rng.randint(it2[2], it2[3])
        tot += n2 * p2
    if tot > 100 or tot % k or n * p > 100:
        raise Retry()
    if k == 2:
        who = f"{cap(B.subj())} and I" if A.kind == "i" else f"{cap(A.subj())} and {B.subj()}"
    else:
        who = f"{k - 1} friends and I" if A.kind == "i" else f"{cap(A.subj())} and {k - 1} friends"
    we = A.kind == "i"
    sell = "sold" if ctx.tense == "past" else "sell"
    goods = f"{n} {it[1]} at {ctx.M(p)} each"
    if extra_total:
        goods += f" and {n2} {it2[1]} at {ctx.M(p2)} each"
    first = rng.choice([f"{who} {sell} {goods} at the {rng.choice(PLACES)}",
                        f"At the {rng.choice(PLACES)}, {who[0].lower() + who[1:] if who.startswith('My') else who} {sell} {goods}"])
    share = rng.choice(["They share the money equally", "They split the money evenly",
                        "The money is divided equally among the {k} of them"])
    if we:
        share = share.replace("They", "We").replace("of them", "of us")
    q = rng.choice(["How much {c:do} each one get?", "How much money {c:do} each of them get?", "What is each share?"])
    if we:
        q = q.replace("of them", "of us")
    rest = fill(share + ". " + q, ctx, Person("we"), k=k)
    if ctx.tense == "past":
        rest = rest.replace("They share", "They shared").replace("We share", "We shared").replace(
            " is divided", " was divided").replace("What is each", "What was each")
    text = cap(first) + ". " + rest
    they = "We" if we else "They"
    lines = []
    e1, x = ctx.eq(n, "*", p)
    if extra_total:
        e2, y = ctx.eq(n2, "*", p2)
        e3, z = ctx.eq(x, "+", y)
        lines.append(f"(1) The {it[1]} bring in {e1} {ctx.unit(x)} and the {it2[1]} bring in {e2} {ctx.unit(y)}.")
        lines.append(f"Together, that is {e3} {ctx.unit(z)}.")
        tot = z
    else:
        lines.append(f"(1) {they} make {e1} {ctx.unit(x)}.")
        tot = x
    e4, w = ctx.eq(tot, "/", k)
    lines.append(f"(2) Each one gets {e4} {ctx.unit(w)}.")
    return text, lines


def sp_three_total(ctx, change):
    rng = ctx.rng
    P = ctx.person()
    its = rng.sample(CHEAP if ctx.cheap else [i for i in ITEMS if i[2] <= 40], 3)
    ps = [rng.randint(1, 40) if ctx.cheap else rng.randint(i[2], min(i[3], 40)) for i in its]
    if sum(ps) > 99:
        raise Retry()
    b = None
    if change:
        notes = [x for x in ctx.notes if x > sum(ps)]
        if not notes:
            raise Retry()
        b = rng.choice(notes)
    lst = f"{a_(its[0][0])} for {ctx.M(ps[0])}, {a_(its[1][0])} for {ctx.M(ps[1])} and {a_(its[2][0])} for {ctx.M(ps[2])}"
    if change:
        text = fill(rng.choice([
            "{S} {v:buy} {lst}. {S} {v:pay} with {A:nb}. How much change {do} {S} get?",
            "At the {place}, {S} {v:buy} {lst}, paying with {A:nb}. What change {c:come} back?"]),
            ctx, P, lst=lst, nb=ctx.note(b), place=rng.choice(PLACES))
    else:
        text = fill(rng.choice([
            "{S} {v:buy} {lst}. How much {do} {S} spend in all?",
            "What is the total if {S} {v:buy} {lst}?",
            "At the {place}, {S} {v:get} {lst}. How much {do} {S} pay altogether?"]),
            ctx, P, lst=lst, place=rng.choice(PLACES))
    e1, x = ctx.eq(ps[0], "+", ps[1])
    e2, y = ctx.eq(x, "+", ps[2])
    if change:
        e3, z = ctx.eq(b, "-", y)
        return text, [f"(1) {P.rverb('spend')} {e1} {ctx.unit(x)} and then {e2} {ctx.unit(y)}.",
                      f"{P.rverb('get')} {e3} {ctx.unit(z)} in change."]
    return text, [f"{P.rverb('spend')} {e1} {ctx.unit(x)} and then {e2} {ctx.unit(y)} in all."]


def sp_tickets(ctx, change):
    rng = ctx.rng
    P = ctx.person(allow=("name", "i", "we", "rel"))
    pa, pc = rng.randint(4, 25), rng.randint(2, 15)
    na, nc = rng.randint(2, 4), rng.randint(2, 5)
    tot = na * pa + nc * pc
    if pc >= pa or tot > 99:
        raise Retry()
    b = None
    if change:
        notes = [x for x in ctx.notes if x > tot]
        if not notes:
            raise Retry()
        b = rng.choice(notes)
    what = rng.choice(["the zoo", "the circus", "the museum", "the cinema", "a theme park", "the aquarium",
                       "a puppet show", "the fair"])
    price = f"tickets to {what} cost {ctx.M(pa)} for adults and {ctx.M(pc)} for children"
    buy = fill("{S} {v:buy} {na} adult tickets and {nc} child {ticket}", ctx, P, na=na, nc=nc,
               ticket="ticket" if nc == 1 else "tickets")
    qfirst = not change and rng.random() < 0.25
    if change:
        q = fill(rng.choice(["How much change {do} {S} get?", "What change {c:come} back?"]), ctx, P)
        text = f"{cap(price)}. {cap(buy)}. " + cap(fill("{S} {v:pay} with {A:nb}.", ctx, P, nb=ctx.note(b))) + " " + q
    else:
        q = fill(rng.choice(["How much {do} {S} pay in total?", "How much {pl:do} the tickets cost altogether?",
                             "What is the total cost?"]), ctx, P)
        if qfirst:
            text = f"{q[:-1]} if {price} and {buy}?"
        else:
            text = f"{cap(price)}. {cap(buy)}. {q}"
    e1, x = ctx.eq(na, "*", pa)
    e2, y = ctx.eq(nc, "*", pc)
    e3, z = ctx.eq(x, "+", y)
    mark = "" if qfirst else "(2) "
    lines = [f"{mark}The adult tickets cost {e1} {ctx.unit(x)} and the child {'ticket costs' if nc == 1 else 'tickets cost'} {e2} {ctx.unit(y)}.",
             f"Together, the tickets cost {e3} {ctx.unit(z)}."]
    if change:
        e4, w = ctx.eq(b, "-", z)
        lines.append(f"{P.rverb('get')} {e4} {ctx.unit(w)} in change.")
    return cap(text), lines


def sp_bake_sale(ctx):
    rng = ctx.rng
    grp = rng.choice(CLASS_GROUPS + ["we", "the students", "my sister and I"])
    it1, it2 = rng.sample(STALL, 2)
    n1, p1 = rng.randint(2, 15), rng.randint(it1[2], it1[3])
    n2, p2 = rng.randint(2, 15), rng.randint(it2[2], it2[3])
    if n1 * p1 + n2 * p2 > 100:
        raise Retry()
    plural = grp in ("we", "the students", "my sister and I")
    sell = "sold" if ctx.tense == "past" else ("sell" if plural else "sells")
    wefirst = grp in ("we", "my sister and I")
    subj = "we" if wefirst else ("they" if plural else "it")
    q = rng.choice(["How much money {c:be} raised?", "How much {pl:do} " + subj + " make in total?",
                    "How much money {c:come} in altogether?", "What is the total?"])
    if subj == "it":
        q = q.replace("{pl:do} it", "{c:do} " + grp)
    text = (f"At the bake sale, {grp} {sell} {n1} {it1[1]} at {ctx.M(p1)} each and {n2} {it2[1]} at "
            f"{ctx.M(p2)} each. " + fill(q, ctx, None))
    e1, x = ctx.eq(n1, "*", p1)
    e2, y = ctx.eq(n2, "*", p2)
    e3, z = ctx.eq(x, "+", y)
    return cap(text), [f"(1) The {it1[1]} bring in {e1} {ctx.unit(x)} and the {it2[1]} bring in {e2} {ctx.unit(y)}.",
                       f"In total, that is {e3} {ctx.unit(z)}."]


def sp_two_jobs(ctx):
    """wages at two jobs, then a purchase: 4 steps"""
    rng = ctx.rng
    P = ctx.person()
    h1, r1 = rng.randint(2, 6), rng.randint(3, 15)
    h2, r2 = rng.randint(2, 6), rng.randint(3, 15)
    if h1 * r1 + h2 * r2 > 100:
        raise Retry()
    it, s = pick_item(ctx, h1 * r1 + h2 * r2 - 1)
    j1, j2 = rng.sample(["babysitting", "washing cars", "at the cafe", "walking dogs", "tutoring",
                         "at the market", "gardening"], 2)
    kw = dict(h1=h1, r1=r1, h2=h2, r2=r2, j1=j1, j2=j2, it=it[0], s=s)
    ctx.spent = True
    if rng.random() < 0.5:
        text = fill("{S} {v:earn} {M:r1} an hour for {h1} hours {j1} and {M:r2} an hour for {h2} hours {j2}. "
                    "Then {S} {v:buy} {A:it} for {M:s}. " + amount_question(ctx, P, True), ctx, P, **kw)
        e1, a = ctx.eq(r1, "*", h1)
        e2, b = ctx.eq(r2, "*", h2)
        e3, c = ctx.eq(a, "+", b)
        e4, d = ctx.eq(c, "-", s)
        return text, [f"(1) That is {e1} {ctx.unit(a)} and {e2} {ctx.unit(b)}, so {low_has(P)} {e3} {ctx.unit(c)}.",
                      f"(2) {P.rhas()} {e4} {ctx.unit(d)}."]
    text = fill("{S} {v:work} {h1} hours {j1} at {M:r1} an hour. {S} also {v:work} {h2} hours {j2} at {M:r2} an hour. "
                "{S} {v:spend} {M:s} on {A:it}. " + amount_question(ctx, P, True), ctx, P, **kw)
    e1, a = ctx.eq(h1, "*", r1)
    e2, b = ctx.eq(h2, "*", r2)
    e3, c = ctx.eq(a, "+", b)
    e4, d = ctx.eq(c, "-", s)
    return text, [f"(1) {P.rhas()} {e1} {ctx.unit(a)}.", f"(2) That is {e2} {ctx.unit(b)} and {low_has(P)} {e3} {ctx.unit(c)}.",
                  f"(3) {P.rhas()} {e4} {ctx.unit(d)}."]


SPECIALS = {
    1: [(sp_change1, 10), (sp_cost_n, 9), (sp_unit, 6), (sp_wage, 6), (sp_allow, 4), (sp_weeks, 4),
        (sp_split_bill, 6), (sp_canbuy, 7), (sp_sale, 4), (sp_tip, 4), (sp_price_diff, 4),
        (sp_two_total, 5), (sp_measure, 5), (sp_need, 5), (sp_people_diff, 4), (sp_coins, 3),
        (sp_tickets_group, 4)],
    2: [(sp_change_n, 10), (sp_change_two, 6), (sp_bill_tip_split, 5), (sp_class_fund, 5),
        (sp_weeks_goal, 4), (lambda c: sp_rate_diff(c, False), 3), (sp_discount_n, 5),
        (sp_measure_change, 5), (sp_pack_unit, 4), (lambda c: sp_stall_split(c, False), 4),
        (lambda c: sp_three_total(c, False), 4)],
    3: [(lambda c: sp_tickets(c, False), 5), (sp_bake_sale, 5), (lambda c: sp_rate_diff(c, True), 3),
        (lambda c: sp_three_total(c, True), 4)],
    4: [(lambda c: sp_tickets(c, True), 4), (lambda c: sp_stall_split(c, True), 3), (sp_two_jobs, 4)],
}

LEADS = [("", 60), ("Q: ", 5), ("Question: ", 4), ("Please help: ", 2), ("Quick one: ", 2), ("Hey! ", 1),
         ("Money problem: ", 2), ("Can you help me with this? ", 2), ("Word problem: ", 2),
         ("Help me solve this: ", 2), ("Shopping question: ", 1), ("Try this one: ", 1), ("Solve: ", 2)]


def in_reasoning_order(worked, lines):
    """the steps sorted by where their equations stand in the reasoning (statements may be reasoned
    in another order than they were drawn)."""
    joined = " ".join(lines)
    taken, keyed = set(), []
    for i, s in enumerate(worked):
        hits = [m.start() for m in re.finditer(r"(?<!\d)" + re.escape(items.equation(s)) + r"(?!\d)", joined)]
        hits = [h for h in hits if h not in taken]
        if not hits:
            raise Retry()
        pos = hits[0]
        taken.add(pos)
        keyed.append((pos, i, s))
    return [s for _, _, s in sorted(keyed, key=lambda t: (t[0], t[1]))]


def one_item(rng):
    T = wpick(rng, [(1, 40), (2, 36), (3, 18), (4, 6)])
    ctx = Ctx(rng)
    special = rng.random() < (0.45 if T <= 2 else 0.35)
    if special:
        fn = wpick(rng, SPECIALS[T])
        text, lines = fn(ctx)
    else:
        stmts, question, finals = build_story(ctx, T)
        text, lines = render_story(ctx, stmts, question, finals)
    if len(ctx.worked) != T:
        raise Retry()
    ctx.worked = in_reasoning_order(ctx.worked, lines)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"(^|[.?!] |\(\d\) )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    text = wpick(rng, LEADS) + text
    if rng.random() < 0.07:  # informal typing
        text = text.lower()
        if rng.random() < 0.5:
            text = text.rstrip("?.")
    return {"user_text": text, "reasoning": lines, "worked": ctx.worked, "answer": ctx.worked[-1]["result"]}


class DrawRandom(random.Random):
    """random.Random whose randint gives up (Retry) on an empty range instead of failing."""

    def randint(self, a, b):
        if a > b:
            raise Retry()
        return super().randint(a, b)


def generate(n, seed):
    rng = DrawRandom(seed)
    out = []
    while len(out) < n:
        try:
            out.append(one_item(rng))
        except Retry:  # numbers that do not fit: draw again
            continue
    return out


if __name__ == "__main__":
    items.main("shop", generate, __doc__)
