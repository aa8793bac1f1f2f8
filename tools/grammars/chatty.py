#!/usr/bin/env python3
"""chatty: grade-school arithmetic questions as people really type them into a chat box.

Covers informal, messy typing: lowercase starts, missing or doubled final punctuation, lead-ins
("hey", "quick question:", "ok so", "so"), "pls"/"thx"/"can u"/"whats", run-on sentences joined with
commas and "and then", the question asked first ("how many stickers does mo have if he had 40 and gave
15 away?"), context given afterwards in a parenthesis, and (rarely) "lol".  About 35% of items are bare
arithmetic phrased many ways (symbols, words, "take 9 from 30", "the difference between 50 and 17",
"add 23 and 19 then double it", "(12+8)/4"); the rest are short informal stories in first person,
second person ("you have 20 apples and eat 3"), or about friends and family ("my mom bought 3 packs
of 6 yogurts"): running totals, giving/losing/buying, packs and groups, rates, doubling and halving,
equal sharing, comparisons (more/fewer/times as many/half as many, asked either way), totals over
two people, "how many more do i need", prices, crowds at a place, and ages.

Independence: written from scratch by its own author for this brief, from its own vocabulary lists
(names, objects, verbs, lead-ins, joiners) and its own sentence frames; it does not use or imitate
the C++ generator's templates.  Only the reasoning CONVENTIONS are shared (numbered restatements,
"That is a * b = p ...", "Each ... gets ...", "Together, ...", "This does not change the answer.",
bare arithmetic as equations only), so the model's output format stays the same.

Usage: python3 tools/grammars/chatty.py --n 20000 --seed 1 -o /tmp/chatty.jsonl
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402

# ----------------------------------------------------------------------------------------------
# vocabulary

FEMALE = """Ana Maria Sofia Emma Olivia Mia Aisha Fatima Amara Zainab Priya Ananya Mei Yuki Hana Sakura
Leila Noor Layla Chloe Zoe Lucia Elena Ingrid Astrid Freya Sigrid Katya Olga Irina Nadia Amina Chiamaka
Ngozi Abena Esi Thandiwe Zanele Lerato Keiko Aiko Lin Xiu Mai Linh Thao Ayesha Sana Meera Kavya Isabela
Camila Valentina Paula Carmen Rosa Giulia Chiara Sophie Lena Hannah Clara Marta Zofia Eszter Aroha Leilani
Nia Imani Yara Dalia Selin Elif Defne Ines Beatriz Ayla Sara Tamar Noa Maya Jess Becca Kat Gabi""".split()
MALE = """Mo Omar Ali Yusuf Hassan Karim Tariq Ravi Arjun Vikram Rohan Dev Kenji Hiro Takeshi Sora Jun Wei
Chen Bao Minh Tuan Kwame Kofi Yaw Chidi Emeka Tunde Sipho Thabo Musa Juan Diego Mateo Carlos Luis Pablo
Marco Luca Matteo Pierre Louis Hugo Felix Lukas Jonas Erik Lars Bjorn Sven Ivan Dmitri Pavel Tomas Jakub
Piotr Emre Mehmet Kemal Tane Nikau Kai Malik Jamal Andre Noah Liam Ethan Jack Sam Ben Leo Max Oscar Aarav
Farid Reza Darius Amir Eitan Yosef Raj Nico Alex Danny Tom Josh""".split()
NAMES = [(n, "f") for n in FEMALE] + [(n, "m") for n in MALE]

RELS = [("mom", "f"), ("dad", "m"), ("sister", "f"), ("brother", "m"), ("grandma", "f"), ("grandpa", "m"),
        ("aunt", "f"), ("uncle", "m"), ("little sister", "f"), ("little brother", "m"), ("big sister", "f"),
        ("big brother", "m"), ("cousin", "f"), ("cousin", "m"), ("best friend", "f"), ("best friend", "m"),
        ("roommate", "m"), ("roommate", "f"), ("neighbor", "f"), ("neighbor", "m")]

# (singular, plural, categories)  categories pick the verbs that fit
OBJ = [
    ("sticker", "stickers", "collect"), ("card", "cards", "collect"), ("pokemon card", "pokemon cards", "collect"),
    ("baseball card", "baseball cards", "collect"), ("stamp", "stamps", "collect"), ("coin", "coins", "collect"),
    ("seashell", "seashells", "collect nature"), ("rock", "rocks", "collect nature"), ("pinecone", "pinecones", "nature"),
    ("acorn", "acorns", "nature"), ("feather", "feathers", "nature"), ("leaf", "leaves", "nature"),
    ("marble", "marbles", "toy"), ("toy car", "toy cars", "toy"), ("lego brick", "lego bricks", "toy"),
    ("puzzle piece", "puzzle pieces", "toy"), ("bouncy ball", "bouncy balls", "toy"), ("action figure", "action figures", "toy"),
    ("balloon", "balloons", "toy party"), ("yoyo", "yoyos", "toy"), ("dice", "dice", "toy"),
    ("cookie", "cookies", "food baked"), ("cupcake", "cupcakes", "food baked"), ("muffin", "muffins", "food baked"),
    ("donut", "donuts", "food baked"), ("brownie", "brownies", "food baked"), ("pancake", "pancakes", "food baked"),
    ("apple", "apples", "food fruit"), ("orange", "oranges", "food fruit"), ("banana", "bananas", "food fruit"),
    ("strawberry", "strawberries", "food fruit"), ("cherry", "cherries", "food fruit"), ("plum", "plums", "food fruit"),
    ("lemon", "lemons", "food fruit"), ("peach", "peaches", "food fruit"), ("mango", "mangoes", "food fruit"),
    ("tomato", "tomatoes", "food fruit"), ("carrot", "carrots", "food fruit"), ("potato", "potatoes", "food"),
    ("candy", "candies", "food sweet"), ("lollipop", "lollipops", "food sweet"), ("gummy bear", "gummy bears", "food sweet"),
    ("chocolate", "chocolates", "food sweet"), ("jelly bean", "jelly beans", "food sweet"), ("egg", "eggs", "food"),
    ("chicken nugget", "chicken nuggets", "food"), ("dumpling", "dumplings", "food"), ("taco", "tacos", "food"),
    ("yogurt", "yogurts", "food"), ("juice box", "juice boxes", "food"), ("granola bar", "granola bars", "food"),
    ("pencil", "pencils", "school"), ("pen", "pens", "school"), ("crayon", "crayons", "school"),
    ("eraser", "erasers", "school"), ("marker", "markers", "school"), ("notebook", "notebooks", "school"),
    ("paper clip", "paper clips", "school"), ("highlighter", "highlighters", "school"), ("folder", "folders", "school"),
    ("book", "books", "gen"), ("comic", "comics", "collect"), ("magazine", "magazines", "gen"),
    ("bead", "beads", "craft"), ("button", "buttons", "craft"), ("ribbon", "ribbons", "craft"),
    ("bracelet", "bracelets", "craft"), ("keychain", "keychains", "collect"), ("badge", "badges", "collect"),
    ("paper crane", "paper cranes", "craft"), ("friendship bracelet", "friendship bracelets", "craft"),
    ("flower", "flowers", "nature"), ("rose", "roses", "nature"), ("tulip", "tulips", "nature"),
    ("plant", "plants", "gen"), ("sock", "socks", "gen"), ("shirt", "shirts", "gen"), ("hair tie", "hair ties", "gen"),
    ("photo", "photos", "gen"), ("postcard", "postcards", "collect"), ("bottle", "bottles", "gen"),
    ("can", "cans", "gen"), ("cup", "cups", "gen"), ("plate", "plates", "gen"), ("candle", "candles", "gen"),
    ("towel", "towels", "gen"), ("battery", "batteries", "gen"), ("light bulb", "light bulbs", "gen"),
    ("nail", "nails", "gen"), ("screw", "screws", "gen"), ("brick", "bricks", "gen"), ("gem", "gems", "game"),
    ("point", "points", "game"), ("ticket", "tickets", "game"), ("gold coin", "gold coins", "game"),
    ("diamond", "diamonds", "game"), ("level", "levels", "level"), ("page", "pages", "page"),
]
OBJ = [dict(s=s, p=p, cat=set(c.split())) for s, p, c in OBJ]

CURRENCY = [("dollars", 0.8), ("euros", 0.1), ("pounds", 0.1)]
BUY_ITEMS = ["lunch", "a movie ticket", "a pizza", "snacks", "a new game", "a hoodie", "a book", "bus fare",
             "a phone case", "a birthday gift", "some headphones", "a haircut", "coffee", "a skateboard",
             "groceries", "a poster", "art supplies", "a water bottle", "shoes", "a concert ticket"]
PRICE_ITEMS = [("pen", "pens"), ("notebook", "notebooks"), ("ticket", "tickets"), ("burger", "burgers"),
               ("taco", "tacos"), ("bubble tea", "bubble teas"), ("coffee", "coffees"), ("comic", "comics"),
               ("t-shirt", "t-shirts"), ("pizza", "pizzas"), ("ice cream", "ice creams"), ("plant", "plants"),
               ("mug", "mugs"), ("candle", "candles"), ("phone charger", "phone chargers"), ("sandwich", "sandwiches"),
               ("poster", "posters"), ("soda", "sodas"), ("keychain", "keychains"), ("book", "books")]
OCCASIONS = ["{P} birthday", "christmas", "eid", "diwali", "lunar new year", "passing a test", "helping out",
             "the weekend", "winning the game"]
GROUP_WORD = {"collect": ["packs", "packets"], "food": ["boxes", "bags", "packs"], "fruit": ["bags", "boxes"],
              "school": ["packs", "boxes"], "toy": ["bags", "boxes"], "craft": ["bags", "packs"],
              "nature": ["bags", "buckets"], "gen": ["boxes", "packs"], "baked": ["boxes", "trays"],
              "sweet": ["bags", "packs"]}
SHARE_TO = [("friend", "friends"), ("kid", "kids"), ("person", "people"), ("cousin", "cousins"),
            ("classmate", "classmates"), ("teammate", "teammates"), ("neighbor", "neighbors")]
SPLIT_INTO = [("pile", "piles"), ("bag", "bags"), ("box", "boxes"), ("group", "groups"), ("jar", "jars"),
              ("stack", "stacks"), ("bowl", "bowls"), ("basket", "baskets")]

# verbs: base -> (third person present, past)
VERBS = {
    "have": ("has", "had"), "get": ("gets", "got"), "buy": ("buys", "bought"), "find": ("finds", "found"),
    "lose": ("loses", "lost"), "sell": ("sells", "sold"), "eat": ("eats", "ate"), "use": ("uses", "used"),
    "trade": ("trades", "traded"), "drop": ("drops", "dropped"), "pick": ("picks", "picked"),
    "win": ("wins", "won"), "collect": ("collects", "collected"), "make": ("makes", "made"),
    "bake": ("bakes", "baked"), "take": ("takes", "took"), "spend": ("spends", "spent"),
    "earn": ("earns", "earned"), "save": ("saves", "saved"), "share": ("shares", "shared"),
    "split": ("splits", "split"), "keep": ("keeps", "kept"), "start": ("starts", "started"),
    "bring": ("brings", "brought"), "grab": ("grabs", "grabbed"), "give": ("gives", "gave"),
    "donate": ("donates", "donated"), "hand": ("hands", "handed"), "send": ("sends", "sent"),
    "double": ("doubles", "doubled"), "triple": ("triples", "tripled"), "read": ("reads", "read"),
    "pay": ("pays", "paid"), "end": ("ends", "ended"), "score": ("scores", "scored"), "beat": ("beats", "beat"),
    "finish": ("finishes", "finished"), "gather": ("gathers", "gathered"), "need": ("needs", "needed"),
    "want": ("wants", "wanted"), "divide": ("divides", "divided"), "put": ("puts", "put"),
    "throw": ("throws", "threw"), "lend": ("lends", "lent"), "break": ("breaks", "broke"), "do": ("does", "did"),
    "come": ("comes", "came"), "go": ("goes", "went"), "leave": ("leaves", "left"), "own": ("owns", "owned"),
    "plant": ("plants", "planted"), "grow": ("grows", "grew"), "order": ("orders", "ordered"),
    "print": ("prints", "printed"), "knit": ("knits", "knitted"), "fold": ("folds", "folded"),
    "lose_": ("loses", "lost"), "recycle": ("recycles", "recycled"), "swap": ("swaps", "swapped"),
}


def conj(text, third, tense, be=None):
    """Replace <verb> markers: present (third person or not) or past."""
    def rep(m):
        v = m.group(1)
        if v == "be":
            if tense == "past":
                return "was" if be in ("i", "3") else "were"
            return {"i": "am", "3": "is"}.get(be, "are")
        if v == "bepl":
            return "were" if tense == "past" else "are"
        third_f, past = VERBS[v]
        if tense == "past":
            return past
        return third_f if third else v.rstrip("_")
    return re.sub(r"<(\w+)>", rep, text)


class Person:
    """A holder of things: i / you / we / a name / my relative / my friend NAME."""

    def __init__(self, kind, name=None, gender=None, rel=None):
        self.kind, self.name, self.gender, self.rel = kind, name, gender, rel
        if kind == "i":
            self.full, self.pron, self.obj, self.poss, self.third, self.be = "i", "i", "me", "my", False, "i"
            self.R = "I"
        elif kind == "you":
            self.full, self.pron, self.obj, self.poss, self.third, self.be = "you", "you", "you", "your", False, "p"
            self.R = "You"
        elif kind == "we":
            self.full, self.pron, self.obj, self.poss, self.third, self.be = "we", "we", "us", "our", False, "p"
            self.R = "We"
        else:
            self.third, self.be = True, "3"
            self.pron = "she" if gender == "f" else "he"
            self.obj = "her" if gender == "f" else "him"
            self.pposs = "her" if gender == "f" else "his"
            if kind == "name":
                self.full, self.R = name, name
            elif kind == "rel":
                self.full, self.R = "my " + rel, "My " + rel
            else:  # friend
                self.full, self.R = "my friend " + name, name
            self.poss = None

    @property
    def first(self):
        return self.kind in ("i", "you", "we")

    def rname(self, start=True):
        if self.kind == "rel" and not start:
            return "my " + self.rel
        if self.kind in ("you", "we") and not start:
            return self.R.lower()
        return self.R

    def has(self):
        return "has" if self.third else "have"

    def short(self):
        """How to name them again after the first mention (not a pronoun)."""
        if self.kind == "friend":
            return self.name
        return self.full

    def possf(self, full):
        if self.first:
            return self.poss
        if full:
            return self.short() + "'s"
        return self.pposs


def person(rng, kinds=("i", "you", "we", "name", "rel", "friend"), weights=None, avoid=()):
    while True:
        k = rng.choices(kinds, weights=weights)[0] if weights else rng.choice(kinds)
        if k in ("i", "you", "we"):
            p = Person(k)
        elif k == "rel":
            r, g = rng.choice(RELS)
            p = Person("rel", rel=r, gender=g)
        else:
            n, g = rng.choice(NAMES)
            p = Person(k, name=n, gender=g)
        if all(p.R != a.R and p.full != a.full for a in avoid):
            return p


def other_agent(rng, hero, taker=False):
    """Somebody who gives to or takes from the hero (a plain phrase, third person)."""
    while True:
        r = rng.random()
        if r < 0.45:
            rel, _ = rng.choice(RELS)
            t = "my " + rel
        elif r < 0.8:
            t = rng.choice(NAMES)[0]
        else:
            t = rng.choice(["a kid at school", "my teacher", "the lady next door", "some guy at the park",
                            "my coach", "our neighbor", "a friend", "my friend"] + (["the dog"] if taker else []))
        if t != hero.full and t != hero.R and (hero.kind != "rel" or t != hero.full):
            return t


# ----------------------------------------------------------------------------------------------
# numbers

class Fail(Exception):
    pass


def step(op, a, b):
    r = items.compute(op, a, b)
    if r is None or not (1 <= a <= 100 and 1 <= b <= 100 and 1 <= r <= 100):
        raise Fail
    if op == "*" and min(a, b) > 25:
        raise Fail
    return {"op": op, "a": a, "b": b, "result": r}


def eq(s):
    return f"{s['a']} {s['op']} {s['b']} = {s['result']}"


def rint(rng, lo, hi):
    if lo > hi:
        raise Fail
    return rng.randint(lo, hi)


def divisors(n, lo=2, hi=10):
    return [d for d in range(lo, hi + 1) if n % d == 0 and n // d >= 2]


# ----------------------------------------------------------------------------------------------
# a story: facts in text order, reasoning lines in reasoning order

class Story:
    def __init__(self, rng, hero):
        self.rng, self.hero = rng, hero
        self.facts = []   # dict(text=..., hero_subj=bool, other=bool)
        self.lines = []   # (fact index or None, text)
        self.steps = []
        self.distractable = True

    def fact(self, text, hero_subj=False, other=False):
        self.facts.append(dict(text=text, hero_subj=hero_subj, other=other))
        return len(self.facts) - 1

    def line(self, idx, text):
        self.lines.append((idx, text))

    def add_step(self, op, a, b):
        s = step(op, a, b)
        self.steps.append(s)
        return s


class Noun:
    """What is counted: an object (plural form) or money."""

    def __init__(self, rng, obj=None, money=None):
        self.obj, self.money = obj, money
        if money:
            self.p = money
            self.style = rng.choice(["$", "$", "word", "bucks"]) if money == "dollars" else "word"
        else:
            self.p = obj["p"]
            self.s = obj["s"]
            self.style = "word"

    def q(self, n, with_noun=True):
        """n things as the user types it."""
        if self.money:
            if self.style == "$":
                return f"${n}"
            if self.style == "bucks":
                return f"{n} bucks" if with_noun else str(n)
            return f"{n} {self.p}" if with_noun else str(n)
        return f"{n} {self.p}" if with_noun else str(n)

    @property
    def cat(self):
        return {"money"} if self.money else self.obj["cat"]


def pick_noun(rng, money_p=0.18, cats=None, no_page=False):
    if rng.random() < money_p:
        cur = rng.choices([c for c, _ in CURRENCY], weights=[w for _, w in CURRENCY])[0]
        return Noun(rng, money=cur)
    pool = [o for o in OBJ if (not cats or o["cat"] & cats) and not (no_page and o["cat"] & {"page", "level"})]
    return Noun(rng, obj=rng.choice(pool))


# ---------- the hero's changes ----------

def start_fact(st, noun, n, tense):
    """Hero starts with n."""
    rng, h = st.rng, st.hero
    q = noun.q(n)
    c = noun.cat
    opts = ["{S} <have> " + q, "{S} <have> " + q, "{S} <start> with " + q, "{S} <have> like " + q,
            "{S} <have> " + q + " to start"]
    if tense == "past":
        opts += ["{S} had " + q + " at first", "{S} had " + q + " this morning"]
    if "money" in c:
        opts += ["{S} <have> " + q + " in {P} wallet", "{S} <save> up " + q, "there <bepl> " + q + " in {P} piggy bank",
                 "{S} <have> " + q + " saved up", "{S} <have> " + q + " on {P} gift card"]
    else:
        opts += ["there <bepl> " + q + " in {P} " + rng.choice(["bag", "box", "room", "drawer", "backpack", "jar"]),
                  "{S} <own> " + q, "{S} <have> a box of " + q, "{S} <get> " + q + " for " + rng.choice(OCCASIONS)]
        if c & {"collect", "nature"}:
            opts += ["{S} <collect> " + q, "{S} <have> " + q + " in {P} collection"]
        if c & {"baked"}:
            opts += ["{S} <bake> " + q]
        if c & {"fruit"}:
            opts += ["{S} <pick> " + q]
        if c & {"game"}:
            opts += ["{S} <have> " + q + " in the game", "{S} <earn> " + q + " in the game"]
        if c & {"page"}:
            opts = ["{S} <read> " + q + " of {P} book", "{S} <read> " + q + " of a book", "{S} <finish> " + q]
        if c & {"level"}:
            opts = ["{S} <beat> " + q + " in the game", "{S} <finish> " + q, "{S} <do> " + q + " of the game"]
    text = rng.choice(opts)
    return conj(text, h.third, tense, h.be)


def add_fact(st, noun, b, tense, first_mention_noun):
    rng, h, c = st.rng, st.hero, noun.cat
    with_noun = first_mention_noun or rng.random() < 0.35
    q = noun.q(b, with_noun=with_noun)
    more = rng.random() < 0.75
    if noun.money and noun.style == "$":
        qm = q
    elif more:
        qm = f"{b} more {noun.p}" if with_noun and noun.style != "bucks" else (f"{b} more bucks" if with_noun else f"{b} more")
    else:
        qm = q
    hero_opts, other_opts = [], []
    if "money" in c:
        hero_opts += ["{S} <earn> " + q, "{S} <earn> " + q + " " + rng.choice(["babysitting", "mowing lawns", "at work",
                      "selling lemonade", "walking dogs"]), "{S} <find> " + q + " " + rng.choice(["on the street",
                      "in {P} jacket", "under the couch"]), "{S} <get> " + q + " for " + rng.choice(OCCASIONS),
                      "{S} <save> another " + q if noun.style != "$" else "{S} <save> another " + q]
        other_opts += ["{A} gave {O} " + q, "{A} sent {O} " + q, "{A} paid {O} back " + q]
    elif c & {"page"}:
        hero_opts += ["{S} <read> " + qm, "{S} <read> another " + q, "{S} <read> " + qm + " before bed"]
    elif c & {"level"}:
        hero_opts += ["{S} <beat> " + qm, "{S} <finish> another " + q, "{S} <do> " + qm + " after school"]
    elif c & {"game"}:
        hero_opts += ["{S} <earn> " + qm, "{S} <win> " + qm, "{S} <get> " + qm + " from a chest", "{S} <collect> " + qm,
                      "{S} <score> " + qm if noun.p == "points" else "{S} <find> " + qm]
        other_opts += ["{A} gave {O} " + q]
    else:
        hero_opts += ["{S} <get> " + qm, "{S} <buy> " + qm, "{S} <get> another " + q, "{S} <find> " + qm,
                      "{S} <get> " + qm + " from {A}", "{S} <grab> " + qm, "{S} <bring> home " + qm]
        other_opts += ["{A} gave {O} " + qm, "{A} gave {O} " + q, "{A} handed {O} " + qm, "{A} brought {O} " + qm,
                       "{A} added " + qm]
        if c & {"collect", "toy", "game"}:
            hero_opts += ["{S} <win> " + qm, "{S} <trade> for " + qm, "{S} <collect> " + qm]
        if c & {"baked"}:
            hero_opts += ["{S} <bake> " + qm, "{S} <make> another " + q]
        if c & {"fruit", "nature"}:
            hero_opts += ["{S} <pick> " + qm, "{S} <gather> " + qm]
        if c & {"craft"}:
            hero_opts += ["{S} <make> " + qm]
    if tense == "present":
        other_opts = [o.replace("gave", "gives").replace("sent", "sends").replace("paid", "pays")
                      .replace("handed", "hands").replace("brought", "brings").replace("added", "adds")
                      for o in other_opts]
    if other_opts and rng.random() < 0.3:
        t = rng.choice(other_opts)
        return t.replace("{A}", other_agent(rng, h)), True
    t = rng.choice(hero_opts)
    other = "{A}" in t
    t = t.replace("{A}", other_agent(rng, h))
    return conj(t, h.third, tense, h.be), other


def sub_fact(st, noun, b, tense, first_mention_noun):
    rng, h, c = st.rng, st.hero, noun.cat
    q = noun.q(b, with_noun=first_mention_noun or rng.random() < 0.35)
    bare = noun.money is None and not q.endswith(noun.p)
    hero_opts, other_opts = [], []
    if "money" in c:
        item = rng.choice(BUY_ITEMS)
        hero_opts += ["{S} <spend> " + q + " on " + item, "{S} <pay> " + q + " for " + item,
                      "{S} <buy> " + item + " for " + q, "{S} <lose> " + q, "{S} <spend> " + q,
                      "{S} <give> " + q + " to {A}", "{S} <lend> {A} " + q, "{S} <donate> " + q]
        other_opts += ["{A} borrowed " + q, "{A} took " + q]
    elif c & {"page", "level"}:
        raise Fail
    elif c & {"game"}:
        hero_opts += ["{S} <lose> " + q, "{S} <spend> " + q + " on " + rng.choice(["a skin", "upgrades", "a new sword",
                      "a pet"]), "{S} <use> " + q, "{S} <trade> " + q + " away"]
    else:
        hero_opts += ["{S} <give> " + q + " to {A}", "{S} <give> " + q + " away", "{S} <lose> " + q,
                      "{S} <give> {A} " + q, "{S} <sell> " + q, "{S} <trade> away " + q, "{S} <drop> " + q,
                      "{S} <give> away " + q, "{S} <donate> " + q, "{S} <lend> {A} " + q]
        other_opts += ["{A} took " + q, "{A} borrowed " + q, "{A} took " + q + " from {O}"]
        if bare:
            hero_opts += ["{S} <give> " + q + " of them to {A}", "{S} <lose> " + q + " of them"]
        if c & {"food"}:
            hero_opts += ["{S} <eat> " + q, "{S} <eat> " + q, "{S} <share> " + q + " with {A}"]
            other_opts += ["{A} ate " + q, "{A} ate " + q + " of them" if bare else "{A} ate " + q]
        if c & {"school", "craft", "gen"}:
            hero_opts += ["{S} <use> " + q, "{S} <use> up " + q]
        if c & {"gen"} and noun.p in ("cups", "plates", "light bulbs", "bottles"):
            other_opts += [q + " broke"]
        if c & {"nature", "fruit"}:
            other_opts += [q + " " + rng.choice(["went bad", "got squished", "fell on the floor"])]
    if tense == "present":
        other_opts = [o.replace("took", "takes").replace("borrowed", "borrows").replace("ate", "eats")
                      .replace("broke", "break").replace("went bad", "go bad").replace("got squished", "get squished")
                      .replace("fell", "fall") for o in other_opts]
    if other_opts and rng.random() < 0.3:
        t = rng.choice(other_opts)
        if t.startswith(q):  # "3 broke" -> fine as a fact about the hero's things
            return t, False
        a = other_agent(rng, h, taker=("took" in t or "ate" in t or "takes" in t or "eats" in t))
        return t.replace("{A}", a), True
    t = rng.choice(hero_opts)
    other = "{A}" in t
    t = t.replace("{A}", other_agent(rng, h))
    return conj(t, h.third, tense, h.be), other


def mul_fact(st, noun, k, tense):
    rng, h = st.rng, st.hero
    word = {2: "twice", 3: "3 times", 4: "4 times", 5: "5 times"}.get(k, f"{k} times")
    opts = ["{S} <end> up with " + word + " as many", "{S} <end> up with " + f"{k} times as many",
            "{S} <have> " + f"{k} times as many" + " after that" if tense == "past" else
            "now {S} <have> " + f"{k} times as many"]
    if k == 2:
        opts += ["{S} <double> them", "{S} <double> {P} pile", "{S} somehow <double> them", "{S} <double> it"]
    if k == 3:
        opts += ["{S} <triple> them", "{S} <triple> {P} pile"]
    if noun.money:
        opts = ["{S} <end> up with " + word + " as much", f"{{S}} <end> up with {k} times as much money"]
        if k == 2:
            opts += ["{S} <double> {P} money", "{S} <double> it"]
    return conj(rng.choice(opts), h.third, tense, h.be)


def div_fact(st, noun, k, tense):
    """Hero keeps 1/k: returns text."""
    rng, h = st.rng, st.hero
    w, ws = rng.choice(SPLIT_INTO)
    f, fs = rng.choice(SHARE_TO)
    them = "it" if noun.money else "them"
    opts = [f"{{S}} <split> {them} into {k} equal {ws} and <keep> one",
            f"{{S}} <split> {them} equally with {k - 1 if k > 2 else 'a'} {fs if k > 2 else f} and <keep> one share",
            f"{{S}} <share> {them} equally with {k - 1 if k > 2 else 'one'} {fs if k > 2 else f} and <keep> " + ("my" if h.kind == "i" else "one") + " part"]
    if k == 2:
        opts += ["{S} <give> away half", "{S} <lose> half of " + them, "{S} <give> half to {A}",
                 "{S} <split> " + them + " evenly with {A}"]
        if noun.money:
            opts += ["{S} <spend> half of it"]
    if k == 3:
        opts += ["{S} <keep> only a third of " + them]
    if k == 4:
        opts += ["{S} <keep> only a quarter of " + them]
    t = rng.choice(opts)
    other = "{A}" in t
    t = t.replace("{A}", other_agent(rng, h))
    return conj(t, h.third, tense, h.be), other


def group_fact(st, noun, c, s, sign, tense):
    """Hero gains (sign +) or loses (sign -) c groups of s: one statement."""
    rng, h, cat = st.rng, st.hero, noun.cat
    if noun.money:
        if sign > 0:
            per = rng.choice(["a day", "a week", "an hour", "per day", "every week"])
            unit = {"a day": "days", "a week": "weeks", "an hour": "hours", "per day": "days", "every week": "weeks"}[per]
            opts = [f"{{S}} <earn> {noun.q(s)} {per} for {c} {unit}", f"{{S}} <get> {noun.q(s)} {per} for {c} {unit}",
                    f"{{S}} <make> {noun.q(s)} {per} for {c} {unit}"]
        else:
            ps, pp = rng.choice(PRICE_ITEMS)
            opts = [f"{{S}} <buy> {c} {pp} at {noun.q(s)} each", f"{{S}} <buy> {c} {pp} for {noun.q(s)} each",
                    f"{{S}} <pay> for {c} {pp} that cost {noun.q(s)} each", f"{{S}} <get> {c} {pp} ({noun.q(s)} each)"]
        return conj(rng.choice(opts), h.third, tense, h.be)
    gw = rng.choice(sum((GROUP_WORD.get(x, []) for x in sorted(cat)), []) or ["packs"])
    if sign > 0:
        opts = [f"{{S}} <buy> {c} {gw} of {s}", f"{{S}} <get> {c} more {gw} with {s} in each",
                f"{{S}} <buy> {c} {gw} with {s} {noun.p} each", f"{{S}} <get> {s} from each of {c} friends",
                f"{{S}} <get> {s} a day for {c} days"]
        if cat & {"collect", "nature"}:
            opts += [f"{{S}} <collect> {s} a day for {c} days"]
        if cat & {"baked"}:
            opts += [f"{{S}} <bake> {c} trays of {s}"]
        if cat & {"page"}:
            opts = [f"{{S}} <read> {s} pages a day for {c} days", f"{{S}} <read> {s} a night for {c} nights"]
        if cat & {"level"}:
            opts = [f"{{S}} <beat> {s} levels a day for {c} days"]
        if cat & {"game"}:
            opts = [f"{{S}} <earn> {s} a day for {c} days", f"{{S}} <get> {c} chests with {s} each"]
    else:
        if cat & {"page", "level"}:
            raise Fail
        f, fs = rng.choice(SHARE_TO)
        opts = [f"{{S}} <give> {c} {fs} {s} each", f"{{S}} <give> {s} to each of {c} {fs}",
                f"{{S}} <sell> {c} {gw} of {s}", f"{{S}} <send> {c} {gw} of {s} to {fs}"]
        if cat & {"food"}:
            opts += [f"{{S}} <eat> {s} a day for {c} days"]
        if cat & {"school", "craft", "gen"}:
            opts += [f"{{S}} <use> {s} a day for {c} days"]
        if cat & {"game"}:
            opts = [f"{{S}} <spend> {s} a day for {c} days", f"{{S}} <lose> {s} a round for {c} rounds"]
    return conj(rng.choice(opts), h.third, tense, h.be)


def run_chain(st, noun, nsteps, tense, start=None, allow_share_end=False, hero_line=True):
    """Hero start + changes using exactly nsteps steps (group start counts 1, group change 2).
    Returns final value. Adds facts and lines."""
    rng, h = st.rng, st.hero
    cur = None
    left = nsteps
    has = h.has()
    R = h.rname()
    P = noun.p
    # the start
    if start is not None:
        cur = start
    elif left >= 1 and rng.random() < 0.18 and not noun.money:
        c, s = rint(rng, 2, 6), rint(rng, 2, 12)
        if c * s > 90:
            raise Fail
        gw = rng.choice(sum((GROUP_WORD.get(x, []) for x in sorted(noun.cat)), []) or ["packs"])
        cat = noun.cat
        opts = [f"{{S}} <buy> {c} {gw} of {s} {P}", f"{{S}} <have> {c} {gw} of {s} {P}",
                f"{{S}} <get> {c} {gw} with {s} {P} in each"]
        if cat & {"collect", "nature", "fruit"}:
            opts += [f"{{S}} <collect> {s} {P} a day for {c} days"]
        if cat & {"page"}:
            opts = [f"{{S}} <read> {s} pages a day for {c} days"]
        if cat & {"level"}:
            opts = [f"{{S}} <beat> {s} levels a day for {c} days"]
        if cat & {"game"}:
            opts = [f"{{S}} <earn> {s} {P} a day for {c} days"]
        i = st.fact(conj(rng.choice(opts), h.third, tense, h.be), hero_subj=True)
        s1 = st.add_step("*", c, s)
        st.line(i, f"{R} {has} {eq(s1)} {P}.")
        cur, left = s1["result"], left - 1
    elif left >= 1 and rng.random() < 0.1 and noun.money:
        per = rng.choice(["a day", "a week", "an hour"])
        unit = {"a day": "days", "a week": "weeks", "an hour": "hours"}[per]
        c, s = rint(rng, 2, 6), rint(rng, 2, 15)
        if c * s > 90:
            raise Fail
        i = st.fact(conj(rng.choice([f"{{S}} <earn> {noun.q(s)} {per} for {c} {unit}",
                                      f"{{S}} <make> {noun.q(s)} {per} for {c} {unit}"]), h.third, tense, h.be),
                    hero_subj=True)
        s1 = st.add_step("*", c, s)
        st.line(i, f"{R} {has} {eq(s1)} {P}.")
        cur, left = s1["result"], left - 1
    else:
        cur = rint(rng, 6, 80)
        i = st.fact(start_fact(st, noun, cur, tense), hero_subj=True)
        st.line(i, f"{R} {has} {cur} {P}.")
    first_noun = False
    share_end = None
    last_op = "start"
    while left > 0:
        ops = []
        if cur <= 95:
            ops += ["+"] * 4
        if cur >= 5 and not noun.cat & {"page", "level"}:
            ops += ["-"] * 4
        if cur * 2 <= 100 and not noun.cat & {"page", "level"}:
            ops += ["*"]
        if divisors(cur) and not noun.cat & {"page", "level"}:
            ops += ["/"]
        if left >= 2:
            ops += ["g+", "g-"] if not noun.cat & {"page", "level"} else ["g+"]
        if not ops:
            raise Fail
        op = rng.choice(ops)
        if op == "+":
            b = rint(rng, 2, min(60, 100 - cur))
            text, other = add_fact(st, noun, b, tense, first_noun)
            s1 = st.add_step("+", cur, b)
            i = st.fact(text, hero_subj=text.startswith("{S}"), other=other)
            st.line(i, f"{R} {has} {eq(s1)} {P}.")
        elif op == "-":
            b = rint(rng, 2, cur - 2)
            text, other = sub_fact(st, noun, b, tense, first_noun)
            s1 = st.add_step("-", cur, b)
            i = st.fact(text, hero_subj=text.startswith("{S}"), other=other)
            st.line(i, f"{R} {has} {eq(s1)} {P}.")
        elif op == "*":
            k = rng.choice([k for k in (2, 2, 2, 3, 3, 4, 5) if cur * k <= 100])
            s1 = st.add_step("*", cur, k)
            i = st.fact(mul_fact(st, noun, k, tense), hero_subj=True)
            st.line(i, f"{R} {has} {eq(s1)} {P}.")
        elif op == "/":
            if allow_share_end and left == 1 and rng.random() < 0.6:
                share_end = cur
                break
            k = rng.choice(divisors(cur, 2, 5) or divisors(cur))
            s1 = st.add_step("/", cur, k)
            text, other = div_fact(st, noun, k, tense)
            i = st.fact(text, hero_subj=True, other=other)
            st.line(i, f"{R} {has} {eq(s1)} {P}.")
        else:
            sign = 1 if op == "g+" else -1
            c = rint(rng, 2, 6)
            if sign > 0:
                s = rint(rng, 2, min(15, (100 - cur) // c))
                if c * s > 100 - cur:
                    raise Fail
            else:
                s = rint(rng, 2, min(15, (cur - 2) // c))
            s1 = st.add_step("*", c, s)
            s2 = st.add_step("+" if sign > 0 else "-", cur, s1["result"])
            i = st.fact(group_fact(st, noun, c, s, sign, tense), hero_subj=True)
            st.line(i, f"That is {eq(s1)} {P} and {h.rname(False)} {has} {eq(s2)} {P}.")
            left -= 1
        cur = st.steps[-1]["result"]
        last_op = op
        left -= 1
    st.last_op = last_op
    return cur, share_end


# ----------------------------------------------------------------------------------------------
# distractors

def distractor(rng, hero, noun, others=""):
    for _ in range(20):
        t = distractor1(rng, noun)
        m = re.match(r"(\{P2\}|my) (\w+)", t)
        if m and m.group(2) in others:
            continue
        if hero.full not in t and (hero.kind != "rel" or hero.rel not in t) and (hero.kind == "i" or "{P2} cat" not in t):
            return t
    raise Fail


def distractor1(rng, noun):
    n = rint(rng, 3, 12)
    opts = ["its raining", "its my birthday tomorrow", "{P2} cat is named " + rng.choice(["mochi", "tiger", "luna", "rex"]),
            f"my sister is {n}", f"the store closes at {rint(rng, 5, 9)}", f"we live like {rint(rng, 2, 9)} miles away",
            "it was a tuesday", f"my bus is number {rint(rng, 10, 60)}",
            f"i have {rint(rng, 2, 9)} cousins btw", "this is for my homework", "my teacher is so strict",
            f"the party starts at {rint(rng, 2, 8)}", f"{rng.choice(NAMES)[0]} has a dog named rex",
            f"it took like {rint(rng, 10, 40)} minutes", "my mom says hi"]
    if not noun.money:
        other = rng.choice([o for o in OBJ if o["p"] != noun.p and not o["cat"] & {"page", "level", "game"}])
        opts += [f"{rng.choice(NAMES)[0]} has {rint(rng, 2, 30)} {other['p']} too",
                 f"{{P2}} {rng.choice(RELS)[0]} has {rint(rng, 2, 30)} {other['p']} but that doesnt matter"]
    t = rng.choice(opts)
    return t.replace("{P2}", "my")


# ----------------------------------------------------------------------------------------------
# rendering: mentions, joins, chat styling

JOIN_RUN = [", ", " and ", " and then ", ", then ", " then ", ", and ", ", and then ", ", after that ", " and after that "]
JOIN_SENT = [". ", ". then ", ". after that ", ". later ", ". and then ", ". ", ". ", ". so then "]
LEADS = ["", "", "", "", "", "hey ", "hey ", "hi ", "quick question: ", "quick question ", "ok so ", "so ",
         "so like ", "hey so ", "help pls ", "um ", "question: ", "math q: ", "can u help: ", "random q but ",
         "hey can u help, ", "hiii ", "yo ", "need help, ", "homework question: ", "ok ", "hello, "]
ENDS_Q = ["?", "?", "?", "", "", "", "??", " ?", "? pls", " pls", "? thx", " thx", "? thanks", "?? help",
          "?!", "? just the number pls", " (pls help)", "? ty", " plz", "?? im stuck", "? asking for homework"]
ENDS_LOL = ["? lol", " lol", " lol?"]


def end_q(rng):
    return rng.choice(ENDS_LOL) if rng.random() < 0.015 else rng.choice(ENDS_Q)


def resolve(text, hero, state, allow_drop):
    """Fill {S} {O} {P} in one clause. state: dict(mentioned=bool, last_other=bool)."""
    use_pron = state["mentioned"] and not state["last_other"]
    dropped = False
    if text.startswith("{S} ") and allow_drop and use_pron and state["last_hero_subj"]:
        text = text[4:]
        dropped = True
    s_word = hero.pron if use_pron or hero.first else (hero.full if not state["mentioned"] else hero.short())
    o_word = hero.obj if use_pron or hero.first else (hero.full if not state["mentioned"] else hero.short())
    if hero.first:
        p_word = hero.poss
    elif use_pron or ("{S}" in text and text.index("{S}") < text.find("{P}")):
        p_word = hero.pposs
    else:
        p_word = (hero.full if not state["mentioned"] else hero.short()) + "'s"
    out = text.replace("{S}", s_word).replace("{O}", o_word).replace("{P}", p_word)
    if "{S}" in text or "{O}" in text or "{P}" in text or dropped:
        state["mentioned"] = True
        state["last_other"] = False
    return out


def render_facts(rng, facts, hero, state, mode):
    """Join facts into one stretch of text. mode: 'run' (one sentence), 'sent' (sentences), 'mix'."""
    out = ""
    state["last_hero_subj"] = False
    for k, f in enumerate(facts):
        if k == 0:
            j = ""
        elif f.get("distract") or facts[k - 1].get("distract"):
            j = rng.choice([", ", ". ", " and ", ", oh and ", ". btw ", ". also "] if mode != "run" else [", ", " and ", ", oh and "])
        elif f.get("join"):
            j = rng.choice(f["join"])
        elif mode == "run":
            j = rng.choice(JOIN_RUN)
        elif mode == "sent":
            j = rng.choice(JOIN_SENT)
        else:
            j = rng.choice(JOIN_RUN + JOIN_SENT)
        allow_drop = k > 0 and ("and" in j or "then" in j) and "." not in j and rng.random() < 0.7
        text = f["text"]
        if text.startswith("then ") and k > 0 and re.search(r"then|after|later", j):
            text = text[5:]
        if k == 0 and text.startswith("then "):
            text = text[5:]
        t = resolve(text, hero, state, allow_drop)
        out += j + t
        state["last_hero_subj"] = f["text"].startswith("{S}")
        if f.get("other"):
            state["last_other"] = True
    return out


def style(rng, text, kind):
    """kind: 'chat' (lowercase start, names kept), 'lower' (all lowercase), 'proper' (sentence case)."""
    if kind == "lower":
        return text.lower()
    if kind == "proper":
        text = re.sub(r"\bi\b", "I", text)
        text = re.sub(r"(^|[.?!]\s+|\(\s*)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
        return text
    return text


def finish(rng, body, is_question=True):
    lead = rng.choice(LEADS)
    while lead.strip() and body.split()[0] in lead.split():
        lead = rng.choice(LEADS)
    body = body.strip()
    out = lead + body
    out = re.sub(r"\s+", " ", out).strip()
    return out


def compose(rng, st, question, q_if=None, q_front_ok=True, distract=True, q_other=False):
    """question: text with {S}/{O}/{P} (about the hero) or plain. Builds user_text with numbering of facts."""
    hero = st.hero
    facts = st.facts
    # maybe a distractor fact
    if distract and st.distractable and rng.random() < 0.14:
        pos = rng.randint(0, len(facts))
        if pos < len(facts) and facts[pos].get("glued"):
            pos = len(facts)
        facts.insert(pos, dict(text=distractor(rng, hero, st.noun, " ".join(f["text"] for f in facts)), hero_subj=False, other=False, distract=True))
        st.lines = [((i if i is None or i < pos else i + 1), t) for i, t in st.lines]
        # the distractor's line goes where its position falls among the marked lines
        new = []
        placed = False
        for i, t in st.lines:
            if not placed and i is not None and i > pos:
                new.append((pos, "This does not change the answer."))
                placed = True
            new.append((i, t))
        if not placed:
            # after the last marked line but before unmarked trailing lines
            k = len(new)
            while k > 0 and new[k - 1][0] is None:
                k -= 1
            new.insert(k, (pos, "This does not change the answer."))
        st.lines = new
    has_distract = any(f.get("distract") for f in facts)
    state = dict(mentioned=False, last_other=False, last_hero_subj=False)
    r = rng.random()
    forms = []
    if q_front_ok and not has_distract:
        forms += ["if"] * 3 + ["paren"] * 2
    if q_front_ok:
        forms += ["qfirst"] * 2
    forms += ["run"] * 5 + ["sent"] * 3 + ["so"] * 2 + ["dash"]
    form = rng.choice(forms)
    endq = end_q(rng)
    if "homework" in endq:
        endq = "?"
    if form == "if":
        qt = resolve(q_if or question, hero, state, False)
        state["last_other"] = state["last_other"] or q_other
        body = qt + " if " + render_facts(rng, facts, hero, state, "run") + endq.replace("??", "?")
    elif form == "paren":
        qt = resolve(question, hero, state, False)
        state["last_other"] = state["last_other"] or q_other
        body = qt + rng.choice(["? ", " ", "?? "]) + "(" + render_facts(rng, facts, hero, state, "run") + ")"
    elif form == "qfirst":
        qt = resolve(question, hero, state, False)
        state["last_other"] = state["last_other"] or q_other
        body = qt + rng.choice(["? ", "?? ", " - ", ". ", ": "]) + render_facts(rng, facts, hero, state,
                                                                            rng.choice(["run", "sent", "mix"]))
    else:
        ft = render_facts(rng, facts, hero, state, {"run": "run", "sent": "sent", "so": "mix", "dash": "run"}[form])
        qt = resolve(question, hero, state, False)
        if form == "run":
            body = ft + rng.choice([", ", ", ", ". ", " ", "... "]) + qt + endq
        elif form == "sent":
            body = ft + ". " + qt + endq
        elif form == "so":
            qt = qt[3:] if qt.startswith("so ") else qt
            body = ft + rng.choice([" so ", ", so ", ". so "]) + qt + endq
        else:
            body = ft + rng.choice([" - ", " -- ", "... "]) + qt + endq
    return body


def finalize(rng, st, body):
    kind = rng.choices(["chat", "lower", "proper"], weights=[6, 2, 2])[0]
    text = finish(rng, body)
    text = style(rng, text, kind)
    marks = {}
    reasoning = []
    for i, t in st.lines:
        reasoning.append(t if i is None else f"({i + 1}) {t}")
    return dict(user_text=text, reasoning=reasoning, worked=list(st.steps), answer=st.steps[-1]["result"])


# ----------------------------------------------------------------------------------------------
# question phrasings about the hero's final amount

def q_hero(rng, h, noun, tense, last_op):
    d = "does" if h.third else "do"
    did = "did"
    P = noun.p
    if noun.money:
        opts = [f"how much money {d} {{S}} have now", f"how much {d} {{S}} have now",
                f"how much money {d} {{S}} have", f"how many {P} {d} {{S}} have now",
                f"how much {d} {{S}} have at the end", f"how much {d} {{S}} end up with"]
        if last_op in ("-", "/", "g-"):
            opts += [f"how much {d} {{S}} have left", "how much is left", "whats left", "how much money is left"]
        if last_op in ("+", "g+", "*", "start"):
            opts += ["how much is that", f"how much {d} {{S}} have in total", "how much money is that"]
    else:
        opts = [f"how many {P} {d} {{S}} have now", f"how many {d} {{S}} have now", f"how many {P} {d} {{S}} have",
                f"how many {d} {{S}} end up with", f"how many {P} {d} {{S}} have at the end",
                f"so how many {d} {{S}} have", f"how many {P} now"]
        if last_op in ("+", "g+", "*", "start"):
            opts += [f"how many {P} is that", "how many is that", "whats the total now", f"how many {P} total",
                     f"how many {P} {d} {{S}} have in total", f"whats {{P}} total"]
        if tense == "past":
            opts += [f"how many {P} {did} {{S}} have after that", f"how many {did} {{S}} end up with"]
        if last_op in ("-", "/", "g-"):
            opts += [f"how many {d} {{S}} have left", f"how many {P} {d} {{S}} have left", f"how many {P} are left",
                     "how many are left", "how many left", f"how many {P} does that leave {{O}} with",
                     f"how many {P} {d} {{S}} still have", "hw many left"]
        if noun.cat & {"page"}:
            opts = [f"how many pages {d} {{S}} read", f"how many pages is that", f"how many pages {did} {{S}} read in total",
                    "how many pages total"]
        if noun.cat & {"level"}:
            opts = [f"how many levels {d} {{S}} beat", "how many levels is that", f"how many levels {did} {{S}} do in total"]
    q = rng.choice(opts)
    return q


# ----------------------------------------------------------------------------------------------
# story archetypes

def tense_for(rng, h):
    if h.kind == "you":
        return "present" if rng.random() < 0.75 else "past"
    return "past" if rng.random() < 0.6 else "present"


def hero_pick(rng):
    return person(rng, ("i", "you", "we", "name", "rel", "friend"), weights=[30, 12, 6, 30, 16, 6])


def arch_chain(rng, nsteps):
    """The hero's running amount; optionally shared out at the end."""
    h = hero_pick(rng)
    share = rng.random() < 0.22
    noun = pick_noun(rng, no_page=share)
    st = Story(rng, h)
    st.noun = noun
    tense = tense_for(rng, h)
    cur, _ = run_chain(st, noun, nsteps - share, tense)
    if share:
        dv = divisors(cur)
        if not dv:
            raise Fail
        k = rng.choice(dv)
        if noun.money:
            f, fs = rng.choice([("friend", "friends"), ("kid", "kids"), ("person", "people"), ("grandkid", "grandkids")])
        else:
            f, fs = rng.choice(SHARE_TO + SPLIT_INTO)
        is_box = (f, fs) in SPLIT_INTO
        them = "it" if noun.money else "them"
        if is_box:
            txt = rng.choice([f"{{S}} <put> {them} into {k} {fs} with the same number in each",
                              f"{{S}} <split> {them} evenly into {k} {fs}", f"{{S}} <divide> {them} equally between {k} {fs}"])
            q = rng.choice([f"how many {noun.p} go in each {f}", f"how many in each {f}",
                            f"how many {noun.p} are in each {f}", f"how many does each {f} get"])
        else:
            txt = rng.choice([f"{{S}} <share> {them} equally between {k} {fs}", f"{{S}} <split> {them} evenly between {k} {fs}",
                              f"{{S}} <give> all of {them} out equally to {k} {fs}", f"{{S}} <divide> {them} between {k} {fs}"])
            q = rng.choice([f"how many does each {f} get", f"how many {noun.p} does each {f} get",
                            f"how much does each {f} get" if noun.money else f"how many each",
                            f"how many {noun.p} per {f}"])
        i = st.fact(conj(txt, h.third, tense, h.be), hero_subj=True)
        s1 = st.add_step("/", cur, k)
        st.line(i, f"Each {f} gets {eq(s1)} {noun.p}.")
        return compose(rng, st, q), st
    last = st.last_op
    q = q_hero(rng, h, noun, tense, last)
    return compose(rng, st, q), st


def compare_phrase(rng, noun, o, hero, ref_mode, x, tense):
    """o (a plain name) has something relative to the hero's x.  ref_mode 'ph': the hero appears as
    {O}/{S} placeholders, 'name': written out (the hero is not mentioned before).  Returns (text, op, b)."""
    ops = []
    if x <= 95:
        ops += ["+"] * 3
    if x >= 5:
        ops += ["-"] * 3
    if x * 2 <= 100:
        ops += ["*"] * 2
    if x % 2 == 0 and x >= 4:
        ops += ["/"]
    if not ops:
        raise Fail
    op = rng.choice(ops)
    hv = "has" if tense == "present" else "had"
    if ref_mode == "ph":
        ref, sref = "{O}", "{S}"
    else:
        ref, sref = (hero.obj, hero.pron) if hero.first else (hero.full, hero.full)
    hero_hv = conj("<have>", hero.third, tense, hero.be)
    need_ref = ref_mode == "name"
    if noun.money:
        u = noun.q
        much = "as much"
    else:
        u = str
        much = "as many"
    if op == "+":
        b = rint(rng, 2, min(40, 100 - x))
        forms = [f"{o} {hv} {u(b)} more than {ref}", f"{o} {hv} {b} more {noun.p} than {ref}",
                 f"{o} {hv} {b} extra compared to {ref}"]
        if not need_ref:
            forms += [f"{o} {hv} {u(b)} more"]
    elif op == "-":
        b = rint(rng, 2, x - 2)
        less = "less" if noun.money else rng.choice(["fewer", "less"])
        forms = [f"{o} {hv} {u(b)} {less} than {ref}", f"{o} {hv} {b} {less} {noun.p} than {ref}"]
        if not need_ref:
            forms += [f"{o} {hv} {u(b)} {less}"]
    elif op == "*":
        b = rng.choice([k for k in (2, 2, 3, 4, 5) if x * k <= 100])
        w = "twice" if b == 2 and rng.random() < 0.6 else f"{b} times"
        forms = [f"{o} {hv} {w} {much} as {ref}"]
        if not noun.money:
            forms += [f"{o} {hv} {w} as many {noun.p} as {ref}"]
        if b == 2:
            forms += [f"{o} {hv} double what {sref} {hero_hv}"]
            if not need_ref:
                forms += [f"{o} {hv} double that"]
    else:
        b = 2
        forms = [f"{o} {hv} half {much} as {ref}"]
        if not need_ref:
            forms += [f"{o} {hv} half that", f"{o} {hv} only half that"]
    return rng.choice(forms), op, b


def other_chain(st, other, noun, nsteps, tense, cur):
    """The second person's own changes after they were named: facts written out with their name."""
    n0 = len(st.facts)
    sub = Story(st.rng, other)
    sub.noun, sub.steps, sub.facts, sub.lines = noun, st.steps, st.facts, st.lines
    run_chain(sub, noun, nsteps, tense, start=cur)
    for j, f in enumerate(st.facts[n0:]):
        if not re.search(r"\{[SOP]\}", f["text"]):
            raise Fail  # "luis borrows 11": from whom? only with one holder
        nm = other.short()
        pr = j > 0 and st.rng.random() < 0.6
        sw = other.pron if pr else nm
        ow = other.obj if pr else nm
        pw = other.pposs if pr else nm + "'s"
        f["text"] = f["text"].replace("{S}", sw).replace("{O}", ow).replace("{P}", pw)
        f["hero_subj"], f["other"] = False, True


def arch_compare(rng, nsteps):
    """Hero's amount, then another person relative to it; asks about the other person."""
    h = hero_pick(rng)
    noun = pick_noun(rng, no_page=True)
    st = Story(rng, h)
    st.noun = noun
    tense = tense_for(rng, h)
    other = person(rng, ("name", "rel", "name"), avoid=[h])
    oname = other.full
    pre = rint(rng, 0, nsteps - 1)
    post = nsteps - 1 - pre
    dep_first = pre == 0 and rng.random() < 0.4
    if dep_first:
        # "ben has 6 fewer than ana. ana has 30" -> reason in dependency order
        x = rint(rng, 6, 80)
        t, op, b = compare_phrase(rng, noun, oname, h, "name", x, tense)
        i1 = st.fact(t, other=True)
        hv = conj("{S} <have> ", h.third, tense, h.be)
        i2 = st.fact(hv + noun.q(x) + rng.choice(["", "", " btw", " by the way"]), hero_subj=True)
        st.facts[i2]["join"] = [". ", ", ", " and ", ", and ", " but ", ". oh and "]
        st.line(i2, f"{h.rname()} {h.has()} {x} {noun.p}.")
        s1 = st.add_step(op, x, b)
        st.line(i1, f"{other.rname()} {other.has()} {eq(s1)} {noun.p}.")
        st.distractable = False
    else:
        x, _ = run_chain(st, noun, pre, tense)
        t, op, b = compare_phrase(rng, noun, oname, h, "ph", x, tense)
        i = st.fact(t, other=True)
        st.facts[i]["glued"] = True
        s1 = st.add_step(op, x, b)
        st.line(i, f"{other.rname()} {other.has()} {eq(s1)} {noun.p}.")
    cur = st.steps[-1]["result"]
    if post:
        other_chain(st, other, noun, post, tense, cur)
    if noun.money:
        q = rng.choice([f"how much does {oname} have", f"how much money does {oname} have now",
                        f"how much does {oname} have now", f"how much money does {oname} end up with"])
    else:
        q = rng.choice([f"how many {noun.p} does {oname} have", f"how many does {oname} have",
                        f"how many does {oname} have now", f"how many {noun.p} does {oname} end up with",
                        f"so how many does {oname} have", f"how many {noun.p} does {oname} have at the end"])
    return compose(rng, st, q, q_front_ok=not dep_first), st


def arch_total(rng, nsteps):
    """Two people's amounts, then together."""
    h = hero_pick(rng)
    if h.kind == "we":
        raise Fail
    noun = pick_noun(rng, no_page=True)
    st = Story(rng, h)
    st.noun = noun
    tense = tense_for(rng, h)
    other = person(rng, ("name", "rel", "name"), avoid=[h])
    oname = other.full
    rest = nsteps - 1
    use_cmp = rest >= 1 and rng.random() < 0.6
    pre = rest - (1 if use_cmp else 0)
    x, _ = run_chain(st, noun, pre, tense)
    if use_cmp:
        t, op, b = compare_phrase(rng, noun, oname, h, "ph", x, tense)
        i = st.fact(t, other=True)
        st.facts[i]["glued"] = True
        s1 = st.add_step(op, x, b)
        st.line(i, f"{other.rname()} {other.has()} {eq(s1)} {noun.p}.")
        y = s1["result"]
    else:
        y = rint(rng, 3, 60)
        hv = "has" if tense == "present" else "had"
        i = st.fact(f"{oname} {hv} {noun.q(y)}" + rng.choice([" too", "", "", " already"]), other=True)
        st.line(i, f"{other.rname()} {other.has()} {y} {noun.p}.")
    if x + y > 100:
        raise Fail
    s = st.add_step("+", x, y)
    if h.kind == "i":
        st.line(None, f"Together, {other.rname(False)} and I have {eq(s)} {noun.p}.")
        qs = ["how many do we have together", f"how many {noun.p} do we have altogether", "how many do we have in total",
              f"how many {noun.p} do we have combined", f"how many do {oname} and i have together"]
        if noun.money:
            qs = ["how much do we have together", "how much money do we have altogether", "how much do we have in total"]
    elif h.kind == "you":
        st.line(None, f"Together, you and {other.rname(False)} have {eq(s)} {noun.p}.")
        qs = [f"how many do you and {oname} have together", f"how many {noun.p} do you both have",
              f"how many {noun.p} do you and {oname} have in total"]
        if noun.money:
            qs = [f"how much do you and {oname} have together", "how much money do you both have"]
    else:
        st.line(None, f"Together, {h.rname(False)} and {other.rname(False)} have {eq(s)} {noun.p}.")
        hn = h.short()
        qs = [f"how many {noun.p} do they have together", "how many do they have altogether",
              f"how many {noun.p} do {hn} and {oname} have in total", "how many in total", "whats the total",
              f"how many do they have combined"]
        if noun.money:
            qs = [f"how much money do they have together", f"how much do {hn} and {oname} have in total",
                  "how much is that together"]
    q = rng.choice(qs)
    return compose(rng, st, q), st


def arch_howmore(rng, nsteps):
    """Compare two amounts: how many more / fewer."""
    h = hero_pick(rng)
    if h.kind == "we":
        raise Fail
    noun = pick_noun(rng, money_p=0.12, no_page=True)
    st = Story(rng, h)
    st.noun = noun
    tense = tense_for(rng, h)
    other = person(rng, ("name", "rel", "name"), avoid=[h])
    oname = other.full
    x, _ = run_chain(st, noun, nsteps - 1, tense)
    y = rint(rng, 2, 98)
    if y == x:
        raise Fail
    hv = "has" if tense == "present" else "had"
    i = st.fact(f"{oname} {hv} {noun.q(y)}", other=True)
    st.line(i, f"{other.rname()} {other.has()} {y} {noun.p}.")
    hn = h.R if h.kind == "i" else h.rname()
    big, small = (x, y) if x > y else (y, x)
    s = st.add_step("-", big, small)
    hero_big = x > y
    d = "does" if h.third else "do"
    ask_fewer = rng.random() < 0.3
    much = "much" if noun.money else "many"
    if hero_big != ask_fewer:
        # about the hero
        word = "more" if hero_big else ("less" if noun.money else "fewer")
        q = rng.choice([f"how {much} {word} {'' if noun.money else noun.p + ' '}{d} {{S}} have than {oname}",
                        f"how {much} {word} {d} {{S}} have than {oname}",
                        f"how {much} {word} {d} {{S}} have compared to {oname}"])
        st.line(None, f"{h.rname()} {h.has()} {eq(s)} {noun.p + ' less' if word == 'less' else word + ' ' + noun.p} than {other.rname(False)}.")
    else:
        word = "more" if not hero_big else ("less" if noun.money else "fewer")
        q = rng.choice([f"how {much} {word} {'' if noun.money else noun.p + ' '}does {oname} have than {{O}}",
                        f"how {much} {word} does {oname} have"])
        ref = "me" if h.kind == "i" else ("you" if h.kind == "you" else h.rname(False))
        st.line(None, f"{other.rname()} {other.has()} {eq(s)} {noun.p + ' less' if word == 'less' else word + ' ' + noun.p} than {ref}.")
    q = q.replace("  ", " ")
    if rng.random() < 0.15:
        q = "whats the difference"
        st.lines[-1] = (None, f"The difference is {eq(s)} {noun.p}.")
    return compose(rng, st, q, q_other=True), st


def arch_need(rng, nsteps):
    """A goal and the hero's amount: how many more are needed."""
    h = hero_pick(rng)
    if h.kind == "we" and rng.random() < .5:
        raise Fail
    noun = pick_noun(rng, money_p=0.45)
    if noun.cat & {"level", "game"}:
        raise Fail
    st = Story(rng, h)
    st.noun = noun
    tense = "present"
    goal_first = rng.random() < 0.5
    g = None
    gi = None
    if noun.money:
        thing = rng.choice([b for b in BUY_ITEMS if b.startswith("a")] + ["a bike", "a new phone", "a guitar", "a scooter"])
        gtxt = rng.choice([f"{{S}} <want> {thing} that costs {{G}}", f"{{S}} <be> saving for {thing} that costs {{G}}",
                           f"{thing} costs {{G}}", f"{{S}} <need> {{G}} for {thing}"])
    else:
        gtxt = rng.choice([f"{{S}} <need> {{G}} " + noun.p + " to fill {P} " + rng.choice(["album", "jar", "box", "shelf"]),
                           "{S} <want> {G} " + noun.p + " " + rng.choice(["for a project", "for the party", "by friday", "total"]),
                           "{S} <need> {G} " + noun.p, "the goal is {G} " + noun.p])
    if goal_first:
        gi = st.fact("", hero_subj=gtxt.startswith("{S}"))
    steps_before = nsteps - 1
    if steps_before == 0 and not goal_first and rng.random() < 0.5:
        pass
    x, _ = run_chain(st, noun, steps_before, tense)
    # the chain's first line restates the start; with 1 step, follow the short convention
    g = rint(rng, x + 2, min(100, x + 60))
    gt = conj(gtxt, h.third, tense, h.be).replace("{G}", noun.q(g) if noun.money else str(g))
    if goal_first:
        st.facts[gi]["text"] = gt
        st.facts[gi + 1]["join"] = [". ", ", ", " and ", " but ", ", but ", ". rn "]
    else:
        gi = st.fact(gt, hero_subj=gtxt.startswith("{S}"))
        st.facts[gi]["join"] = [". ", ", ", " but ", ", but ", ". and ", " and "]
    s = st.add_step("-", g, x)
    P = noun.p
    if nsteps == 1:
        st.lines = [(None, f"{h.rname()} {'needs' if h.third else 'need'} {eq(s)} more {P}.")]
        st.distractable = False
    else:
        st.line(gi, f"{h.rname()} {'needs' if h.third else 'need'} {eq(s)} more {P}.")
    d = "does" if h.third else "do"
    if noun.money:
        q = rng.choice([f"how much more {d} {{S}} need", f"how much more money {d} {{S}} need",
                        f"how much more {d} {{S}} need to save", "how much more is needed"])
    else:
        q = rng.choice([f"how many more {d} {{S}} need", f"how many more {P} {d} {{S}} need",
                        "how many more to go", f"how many more {P} is that"])
    return compose(rng, st, q), st


def arch_price(rng, nsteps):
    """Unit prices: cost of several, or price of one."""
    h = person(rng, ("i", "you", "name", "rel", "friend"), weights=[35, 10, 30, 20, 5])
    cur = rng.choices([c for c, _ in CURRENCY], weights=[w for _, w in CURRENCY])[0]
    noun = Noun(rng, money=cur)
    st = Story(rng, h)
    st.noun = noun
    ps, pp = rng.choice(PRICE_ITEMS)
    if nsteps == 1:
        if rng.random() < 0.6:
            price, k = rint(rng, 2, 25), rint(rng, 2, 9)
            if price * k > 100:
                raise Fail
            s = st.add_step("*", price, k)
            st.lines = [(None, f"{k} {pp} cost {eq(s)} {cur}.")]
            p = noun.q(price)
            hn = "{S}"
            d = "does" if h.third else "do"
            a = rng.choice(["a", "one", "1"]) if not ps[0] in "aeiou" else rng.choice(["an", "one", "1"])
            forms = [f"{a} {ps} costs {p}, how much for {k}", f"{ps}s are {p} each" if False else f"{pp} are {p} each, how much is {k}",
                     f"if {a} {ps} is {p} how much do {k} cost", f"how much do {k} {pp} cost if {a} is {p}",
                     f"{pp} cost {p} each and {{S}} want {k}, how much is that" if not h.third else f"{pp} cost {p} each and {{S}} wants {k}, how much is that",
                     f"how much {d} {{S}} pay for {k} {pp} at {p} each", f"{k} {pp} at {p} each = how much",
                     f"whats the cost of {k} {pp} if each is {p}"]
            t = rng.choice(forms)
        else:
            one, k = rint(rng, 2, 20), rint(rng, 2, 9)
            tot = one * k
            if tot > 100:
                raise Fail
            s = st.add_step("/", tot, k)
            st.lines = [(None, f"One {ps} costs {eq(s)} {cur}.")]
            paid = conj("{S} <pay> ", h.third, rng.choice(["past", "present"]), h.be)
            t = rng.choice([f"{paid}{noun.q(tot)} for {k} {pp}, how much is one", f"{k} {pp} cost {noun.q(tot)} total, how much is 1",
                            f"how much is each {ps} if {k} cost {noun.q(tot)}", f"{paid}{noun.q(tot)} for {k} {pp}. whats the price of each"])
        state = dict(mentioned=False, last_other=False, last_hero_subj=False)
        body = resolve(t, h, state, False) + end_q(rng)
        return body, st
    raise Fail


def arch_rate(rng, nsteps):
    """So many per day/week: how many in k days (1 step)."""
    h = person(rng, ("i", "you", "name", "rel"), weights=[30, 10, 40, 20])
    st = Story(rng, h)
    per, k = rint(rng, 2, 25), rint(rng, 2, 9)
    if per * k > 100:
        raise Fail
    unit = rng.choice([("day", "days", "a day"), ("week", "weeks", "a week"), ("hour", "hours", "an hour"),
                       ("morning", "mornings", "every morning"), ("night", "nights", "every night")])
    acts = [("read", "reads", "pages", "read"), ("walk", "walks", "miles", "walk"), ("run", "runs", "km", "run"),
            ("earn", "earns", "dollars", "earn"), ("save", "saves", "dollars", "save"), ("do", "does", "pushups", "do"),
            ("bake", "bakes", "cookies", "bake"), ("fold", "folds", "paper cranes", "fold"),
            ("practice", "practices", "songs", "practice"), ("drink", "drinks", "glasses of water", "drink"),
            ("swim", "swims", "laps", "swim"), ("write", "writes", "pages", "write"), ("make", "makes", "bracelets", "make")]
    base, third, thing, _ = rng.choice(acts)
    v = third if h.third else base
    s = st.add_step("*", per, k)
    rname = h.rname()
    st.lines = [(None, f"In {k} {unit[1]}, {h.rname(False)} {v} {eq(s)} {thing}.")]
    d = "does" if h.third else "do"
    amount = f"${per}" if thing == "dollars" and rng.random() < 0.5 else f"{per} {thing}"
    forms = [f"{{S}} {v} {amount} {unit[2]}, how many {thing} in {k} {unit[1]}",
             f"how many {thing} {d} {{S}} {base} in {k} {unit[1]} if {{S}} {v} {amount} {unit[2]}",
             f"if {{S}} {v} {amount} {unit[2]} how many is that after {k} {unit[1]}",
             f"{{S}} {v} {amount} {unit[2]} for {k} {unit[1]}. how many {thing} total",
             f"{{S}} {v} {amount} {unit[2]}... how many {thing} after {k} {unit[1]}"]
    if thing == "dollars":
        forms += [f"{{S}} {v} {amount} {unit[2]}. how much after {k} {unit[1]}"]
    t = rng.choice(forms)
    t = t.replace("{S}", h.full, 1).replace("{S}", h.pron)
    body = t + end_q(rng)
    return body, st


PLACES = [
    ("people", "at the party", ["showed up", "came", "arrived", "got there"], ["left", "went home", "had to go"]),
    ("kids", "on the bus", ["got on", "got on", "hopped on"], ["got off", "got off at the first stop"]),
    ("birds", "in the tree", ["landed", "flew in", "joined them"], ["flew away", "flew off"]),
    ("cars", "in the parking lot", ["pulled in", "parked"], ["drove off", "left"]),
    ("ducks", "on the pond", ["swam over", "showed up"], ["flew off", "waddled away"]),
    ("people", "in line", ["joined", "got in line"], ["left", "gave up and left"]),
    ("kids", "at the park", ["showed up", "came"], ["went home", "left"]),
    ("players", "on the field", ["ran on", "joined"], ["went to the bench", "left"]),
    ("people", "in the pool", ["jumped in", "got in"], ["got out", "left"]),
    ("fish", "in the tank", ["were added", "got added"], ["were moved out", "got moved to another tank"]),
    ("people", "on the train", ["got on", "got on at the next stop"], ["got off", "got off at the next stop"]),
    ("students", "in the class", ["joined", "came in late"], ["went to the nurse", "left early"]),
    ("dogs", "at the dog park", ["showed up", "came"], ["went home", "left"]),
    ("people", "in the store", ["walked in", "came in"], ["walked out", "left"]),
]


def arch_scene(rng, nsteps):
    """There are N things somewhere; some come and go; maybe they split into groups."""
    noun_p, place, adds, subs = rng.choice(PLACES)
    st = Story(rng, Person("i"))
    st.noun = Noun(rng, obj=dict(s=noun_p, p=noun_p, cat={"gen"}))
    tense = "past" if rng.random() < 0.65 else "present"
    be = "were" if tense == "past" else "are"
    cur = rint(rng, 10, 80)
    i = st.fact(rng.choice([f"there {be} {cur} {noun_p} {place}", f"{cur} {noun_p} {be} {place}",
                            f"there {be} like {cur} {noun_p} {place}"]))
    st.line(i, f"There are {cur} {noun_p} {place}.")
    left = nsteps
    grouped = left >= 1 and rng.random() < 0.25
    if grouped:
        left -= 1
    for _ in range(left):
        ops = (["+"] if cur <= 95 else []) + (["-"] if cur >= 5 else [])
        op = rng.choice(ops)
        if op == "+":
            b = rint(rng, 2, min(40, 100 - cur))
            v = rng.choice(adds)
            if tense == "present":
                v = v.replace("showed up", "show up").replace("came", "come").replace("got", "get").replace("arrived", "arrive") \
                    .replace("flew", "fly").replace("joined", "join").replace("pulled", "pull").replace("parked", "park") \
                    .replace("swam", "swim").replace("ran", "run").replace("jumped", "jump").replace("were", "are") \
                    .replace("walked", "walk").replace("hopped", "hop")
            t = rng.choice([f"{b} more {v}", f"{b} {v}", f"then {b} more {v}", f"{b} more {noun_p} {v}"])
        else:
            b = rint(rng, 2, cur - 2)
            v = rng.choice(subs)
            if tense == "present":
                v = v.replace("went", "go").replace("left", "leave").replace("got", "get").replace("flew", "fly") \
                    .replace("drove", "drive").replace("waddled", "waddle").replace("were", "are").replace("gave", "give") \
                    .replace("had to", "have to").replace("walked", "walk")
            t = rng.choice([f"{b} {v}", f"{b} of them {v}", f"then {b} {v}", f"{b} {noun_p} {v}"])
        s = st.add_step(op, cur, b)
        i = st.fact(t)
        st.line(i, f"There are {eq(s)} {noun_p} {place}.")
        cur = s["result"]
    d = divisors(cur)
    if grouped:
        if not d:
            raise Fail
        k = rng.choice(d)
        gw = rng.choice(["groups", "teams", "equal groups"])
        t = rng.choice([f"they split into {k} {gw}" if tense == "past" else f"they split into {k} {gw}",
                        f"they made {k} equal teams" if tense == "past" else f"they make {k} equal teams"])
        g1 = "team" if "team" in t else "group"
        s = st.add_step("/", cur, k)
        i = st.fact(t)
        st.line(i, f"Each {g1} has {eq(s)} {noun_p}.")
        q = rng.choice([f"how many {noun_p} in each {g1}", f"how many per {g1}", f"how many {noun_p} are in each {g1}"])
    else:
        q = rng.choice([f"how many {noun_p} are {place} now", "how many are there now", f"how many are {place} now",
                        f"how many {noun_p} are left {place}" if nsteps and st.steps[-1]["op"] == "-" else "how many now",
                        f"how many {noun_p} {place} at the end"])
    st.distractable = True
    return compose(rng, st, q, q_front_ok=True), st


MIN_AGE = {"grandma": 45, "grandpa": 45, "mom": 20, "dad": 20, "aunt": 20, "uncle": 20, "teacher": 21}
AGE_RELS = ["mom", "dad", "sister", "brother", "grandma", "grandpa", "aunt", "uncle", "cousin", "teacher", "big sister", "big brother"]


def arch_age(rng, nsteps):
    h = person(rng, ("i", "name", "friend"), weights=[40, 50, 10])
    st = Story(rng, h)
    st.noun = Noun(rng, obj=dict(s="year", p="years", cat={"gen"}))
    st.distractable = False
    a = rint(rng, 3, 40)
    isv = "am" if h.kind == "i" else "is"
    rel = rng.choice([r for r in AGE_RELS if h.kind != "rel" or r != h.rel])
    i = st.fact(rng.choice([f"{{S}} {isv} {a}", f"{{S}} {isv} {a} years old", f"{{S}} just turned {a}"]), hero_subj=True)
    st.line(i, f"{h.rname()} {'am' if h.kind == 'i' else 'is'} {a} years old.")
    poss = "my" if h.kind == "i" else None
    cur = a
    whose_R = None
    chain = []
    nrel = max(1, nsteps - (1 if nsteps >= 2 and rng.random() < 0.6 else 0))
    used = []
    for j in range(nrel):
        ops = (["+"] * 2 if cur <= 90 else []) + (["*"] if cur * 2 <= 100 else []) + (["-"] if cur >= 8 else [])
        op = rng.choice(ops)
        pool = ["sister", "brother", "cousin", "little sister", "little brother", "best friend"] if op == "-" else AGE_RELS
        pool = [x for x in pool if x not in used]
        r = rng.choice(pool)
        used.append(r)
        pref = "{P} " + r
        ref = "{O}" if j == 0 else "{P} " + used[-2]
        if op == "+":
            b = rint(rng, 2, min(40, 100 - cur))
            t = rng.choice([f"{pref} is {b} years older than {ref}", f"{pref} is {b} years older than {ref}",
                            f"{pref} is {b} yrs older than {ref}"] + ([f"{pref} is {b} years older"] if j == 0 else []))
        elif op == "-":
            b = rint(rng, 2, cur - 2)
            t = rng.choice([f"{pref} is {b} years younger than {ref}", f"{pref} is {b} years younger than {ref}"]
                           + ([f"{pref} is {b} years younger"] if j == 0 else []))
        else:
            b = rng.choice([k for k in (2, 3, 4) if cur * k <= 100])
            w = "twice" if b == 2 else f"{b} times"
            t = rng.choice([f"{pref} is {w} as old as {ref}", f"{pref} is {w} " + ("{P} age" if j == 0 else f"{ref}s age")])
        s = st.add_step(op, cur, b)
        if s["result"] < MIN_AGE.get(r, 2) or (r.startswith("little") and s["result"] >= cur):
            raise Fail
        i = st.fact(t)
        st.facts[i]["join"] = [", ", ". ", " and ", ", and ", ". and "]
        rp = ("My " + r) if h.kind == "i" else f"{h.R}'s {r}" if h.kind != "rel" else f"My {h.rel}'s {r}"
        st.line(i, f"{rp} is {eq(s)} years old.")
        cur = s["result"]
        whose_R = rp
    who = "{P} " + used[-1]
    if len(st.steps) < nsteps:
        y = rint(rng, 2, 15)
        if rng.random() < 0.6 or cur - y < 2:
            if cur + y > 100:
                raise Fail
            s = st.add_step("+", cur, y)
            st.line(None, f"In {y} years, {whose_R[0].lower() + whose_R[1:] if whose_R.startswith('My') else whose_R} will be {eq(s)} years old.")
            q = rng.choice([f"how old will {who} be in {y} years", f"how old is {who} gonna be in {y} years",
                            f"what age will {who} be in {y} yrs"])
        else:
            s = st.add_step("-", cur, y)
            st.line(None, f"{y} years ago, {whose_R[0].lower() + whose_R[1:] if whose_R.startswith('My') else whose_R} was {eq(s)} years old.")
            q = rng.choice([f"how old was {who} {y} years ago", f"what was {who}s age {y} years ago" if False else
                            f"how old was {who} {y} yrs ago"])
    else:
        q = rng.choice([f"how old is {who}", f"whats {who}s age" if False else f"how old is {who} then",
                        f"so how old is {who}"])
    if len(st.steps) != nsteps:
        raise Fail
    return compose(rng, st, q, distract=False), st


# ----------------------------------------------------------------------------------------------
# bare arithmetic

def bare_one(rng):
    op = rng.choice("+-*/")
    if op == "+":
        a = rint(rng, 2, 95)
        b = rint(rng, 2, 100 - a)
        forms = ["{a}+{b}", "{a} + {b}", "{a}+{b}?", "whats {a} plus {b}", "what's {a}+{b}", "{a} plus {b} pls",
                 "add {a} and {b}", "can u add {a} and {b}", "the sum of {a} and {b}", "sum of {a} and {b}?",
                 "{a} and {b} added together", "what do i get if i add {b} to {a}", "how much is {a} plus {b}",
                 "{a} add {b}", "whats {a} and {b} together", "if i have {a} and add {b} what do i get",
                 "total of {a} and {b}", "can you do {a}+{b}", "{a} + {b} = ?", "{a}+{b}=?", "whats {b} more than {a}",
                 "{a} plus {b} is what", "add {b} to {a}", "can u do {a} + {b} for me", "{a} + {b} equals",
                 "what does {a} plus {b} make", "put {a} and {b} together", "what is {a} + {b}", "{a} plus {b}"]
        f = rng.choice(forms)
        if f in ("whats {b} more than {a}", "add {b} to {a}", "what do i get if i add {b} to {a}"):
            pass
    elif op == "-":
        a = rint(rng, 4, 100)
        b = rint(rng, 1, a - 1)
        forms = ["{a}-{b}", "{a} - {b}", "{a}-{b}?", "whats {a} minus {b}", "{a} take away {b}", "take {b} from {a}",
                 "subtract {b} from {a}", "what do i get if i take {b} from {a}", "the difference between {a} and {b}",
                 "{a} subtract {b}", "how much is {a} minus {b}", "whats {b} less than {a}", "{a} minus {b} pls",
                 "what is left if u take {b} away from {a}", "how much is {a} take away {b}",
                 "if i have {a} and take away {b} whats left", "{a} less {b}", "whats {a} take away {b}",
                 "difference between {a} and {b}?", "{a} - {b} = ?", "can u do {a} minus {b}", "{b} from {a}?",
                 "what's {a} minus {b}", "minus {b} from {a}", "{a} minus {b} is what", "how many is {a} minus {b}"]
        f = rng.choice(forms)
    elif op == "*":
        a = rint(rng, 2, 12)
        b = rint(rng, 2, 100 // a)
        if rng.random() < 0.5:
            a, b = b, a
        if min(a, b) > 25 or a * b > 100:
            raise Fail
        forms = ["{a}x{b}", "{a} x {b}", "{a}*{b}", "{a} * {b}?", "can you do {a}x{b}", "{a} times {b} pls",
                 "whats {a} times {b}", "product of {a} and {b}", "the product of {a} and {b}", "multiply {a} by {b}",
                 "{a} multiplied by {b}", "how much is {a} times {b}", "{a} lots of {b}", "{a} groups of {b}",
                 "{a} times {b}?", "what's {a}x{b}", "{a} x {b} = ?", "can u multiply {a} and {b}", "{a} times {b}",
                 "what do u get when u multiply {a} by {b}", "times {a} by {b}", "{a}*{b}=?"]
        if b == 2:
            forms += ["double {a}", "twice {a}", "{a} doubled", "whats double {a}", "what is {a} doubled"]
        if b == 3:
            forms += ["triple {a}", "{a} tripled"]
        f = rng.choice(forms)
    else:
        b = rint(rng, 2, 12)
        r = rint(rng, 2, 100 // b)
        a = b * r
        forms = ["{a}/{b}", "{a} / {b}", "{a}/{b}?", "how much is {a} divided by {b}", "whats {a} divided by {b}",
                 "divide {a} by {b}", "{a} divided by {b} pls", "how many {b}s go into {a}", "how many times does {b} go into {a}",
                 "split {a} into {b} equal parts", "{a} split {b} ways", "what is {a} over {b}", "{a} / {b} = ?",
                 "can u do {a} divided by {b}", "{a} shared between {b}", "{a}/{b}=?", "whats {a} / {b}",
                 "{a} divided by {b}", "what do u get if u divide {a} by {b}", "{a} into {b} equal groups, how many in each"]
        if b == 2:
            forms += ["half of {a}?", "half of {a}", "whats half of {a}", "{a} halved", "what is half {a}"]
        if b == 3:
            forms += ["a third of {a}", "whats a third of {a}", "one third of {a}?"]
        if b == 4:
            forms += ["a quarter of {a}", "whats a quarter of {a}", "one fourth of {a}"]
        f = rng.choice(forms)
    s = step(op, a, b)
    return f.format(a=a, b=b), [s]


def op_phrase(rng, op, b):
    if op == "+":
        return rng.choice([f"add {b}", f"plus {b}", f"+{b}", f"+ {b}", f"add {b} more", f"put {b} more on",
                           f"then add {b}" if False else f"add another {b}"])
    if op == "-":
        return rng.choice([f"take away {b}", f"minus {b}", f"-{b}", f"subtract {b}", f"take off {b}", f"- {b}",
                           f"knock off {b}", f"take {b} away"])
    if op == "*":
        opts = [f"times {b}", f"x{b}", f"x {b}", f"multiply by {b}", f"times it by {b}", f"*{b}"]
        if b == 2:
            opts += ["double it", "double that", "times 2"]
        if b == 3:
            opts += ["triple it"]
        return rng.choice(opts)
    opts = [f"divide by {b}", f"/{b}", f"/ {b}", f"split it into {b}", f"divide it by {b}", f"split that {b} ways"]
    if b == 2:
        opts += ["halve it", "half it", "cut it in half", "take half"]
    return rng.choice(opts)


def chain_ops(rng, nsteps, start=None):
    """Random op chain staying valid: returns (start, [(op, b, step)])."""
    cur = start if start is not None else rint(rng, 2, 60)
    a0 = cur
    out = []
    for _ in range(nsteps):
        ops = []
        if cur <= 95:
            ops += ["+"] * 3
        if cur >= 4:
            ops += ["-"] * 3
        if cur * 2 <= 100:
            ops += ["*"] * 2
        if divisors(cur, 2, 10):
            ops += ["/"] * 2
        op = rng.choice(ops)
        if op == "+":
            b = rint(rng, 2, min(50, 100 - cur))
        elif op == "-":
            b = rint(rng, 2, cur - 1) if cur > 2 else None
            if b is None:
                raise Fail
        elif op == "*":
            b = rng.choice([k for k in range(2, 11) if cur * k <= 100])
        else:
            b = rng.choice(divisors(cur, 2, 10))
        s = step(op, cur, b)
        out.append((op, b, s))
        cur = s["result"]
    return a0, out


def bare_multi(rng, nsteps):
    r = rng.random()
    if nsteps == 2 and r < 0.55:
        # two-step special forms
        form = rng.choice(["addthen", "paren", "flat", "prec", "halfplus", "subthen", "prodminus", "sumtimes",
                           "diffdiv", "doubleadd"])
        if form == "addthen":
            a = rint(rng, 2, 48)
            b = rint(rng, 2, 50 - a) if a < 48 else None
            if b is None:
                raise Fail
            s1 = step("+", a, b)
            k = rng.choice([2, 2, 3])
            s2 = step("*", s1["result"], k)
            t = rng.choice([f"add {a} and {b} then double it" if k == 2 else f"add {a} and {b} then triple it",
                            f"{a} plus {b} and then times {k}", f"add {a} and {b}, then multiply by {k}",
                            f"whats {a}+{b} times {k}... i mean ({a}+{b})x{k}", f"sum of {a} and {b}, then x{k}"])
            return t, [s1, s2]
        if form == "paren":
            _, ch = chain_ops(rng, 2)
            s1, s2 = ch[0][2], ch[1][2]
            sym = {"+": "+", "-": "-", "*": rng.choice(["x", "*"]), "/": "/"}
            sp = rng.choice(["", " "])
            t = f"({s1['a']}{sp}{sym[s1['op']]}{sp}{s1['b']}){sp}{sym[s2['op']]}{sp}{s2['b']}"
            return rng.choice(["whats ", "", "", "can u do ", "how much is "]) + t, [s1, s2]
        if form == "flat":
            # left-to-right same precedence: + and - only
            a = rint(rng, 10, 80)
            ops = [rng.choice("+-"), rng.choice("+-")]
            cur, st_ = a, []
            txt = str(a)
            sp = rng.choice(["", " "])
            for o in ops:
                b = rint(rng, 2, min(40, 100 - cur)) if o == "+" else rint(rng, 2, max(2, cur - 2))
                s = step(o, cur, b)
                st_.append(s)
                cur = s["result"]
                txt += f"{sp}{o}{sp}{b}"
            return rng.choice(["", "whats ", "what is ", "quick: ", ""]) + txt + rng.choice(["", "?", " =?"]), st_
        if form == "prec":
            a = rint(rng, 2, 10)
            b = rint(rng, 2, 100 // a)
            s1 = step("*", a, b)
            c = rint(rng, 2, min(40, 100 - s1["result"])) if s1["result"] <= 98 else None
            if c is None:
                raise Fail
            x = rng.choice(["x", "*"])
            if rng.random() < 0.5:
                s2 = step("+", s1["result"], c)
                t = f"{a}{x}{b}+{c}" if rng.random() < .5 else f"{a} {x} {b} + {c}"
            else:
                s2 = step("+", c, s1["result"])
                t = f"{c}+{a}{x}{b}" if rng.random() < .5 else f"{c} + {a} {x} {b}"
            return rng.choice(["", "whats ", "can u do ", "what does "]) + t + rng.choice(["", "?", " equal"]) if False else \
                rng.choice(["", "whats ", "can u do ", "how much is "]) + t + rng.choice(["", "?", " pls"]), [s1, s2]
        if form == "halfplus":
            a = 2 * rint(rng, 2, 50)
            s1 = step("/", a, 2)
            c = rint(rng, 2, 100 - s1["result"])
            s2 = step("+", s1["result"], c)
            t = rng.choice([f"whats half of {a} plus {c}", f"half of {a} then add {c}", f"take half of {a} and add {c}",
                            f"{a} halved plus {c}"])
            return t, [s1, s2]
        if form == "subthen":
            a = rint(rng, 10, 100)
            b = rint(rng, 2, a - 2)
            s1 = step("-", a, b)
            d = divisors(s1["result"], 2, 10)
            if d and rng.random() < 0.5:
                k = rng.choice(d)
                s2 = step("/", s1["result"], k)
                t = rng.choice([f"subtract {b} from {a} then divide by {k}", f"take {b} from {a} and split it {k} ways",
                                f"{a} minus {b}, then /{k}"])
            else:
                if s1["result"] * 2 > 100:
                    raise Fail
                s2 = step("*", s1["result"], 2)
                t = rng.choice([f"what do i get if i take {b} from {a} and then double it",
                                f"{a} take away {b} then double", f"subtract {b} from {a} and double the answer"])
            return t, [s1, s2]
        if form == "prodminus":
            a = rint(rng, 2, 10)
            b = rint(rng, 2, 100 // a)
            s1 = step("*", a, b)
            if s1["result"] < 4:
                raise Fail
            c = rint(rng, 2, s1["result"] - 2)
            s2 = step("-", s1["result"], c)
            t = rng.choice([f"multiply {a} by {b} and take away {c}", f"{a} times {b} minus {c}",
                            f"{a}x{b} then minus {c}", f"product of {a} and {b}, minus {c}"])
            return t, [s1, s2]
        if form == "sumtimes":
            a = rint(rng, 2, 30)
            b = rint(rng, 2, 30)
            s1 = step("+", a, b)
            k = rng.choice([x for x in range(2, 6) if s1["result"] * x <= 100] or [0])
            if not k:
                raise Fail
            s2 = step("*", s1["result"], k)
            t = rng.choice([f"the sum of {a} and {b}, times {k}", f"({a} + {b}) x {k}", f"add {a} to {b} and multiply by {k}"])
            if "add {a} to {b}" in t or t.startswith(f"add {a} to {b}"):
                s1 = step("+", b, a)
                s2 = step("*", s1["result"], k)
            return t, [s1, s2]
        if form == "diffdiv":
            a = rint(rng, 10, 100)
            b = rint(rng, 2, a - 4)
            s1 = step("-", a, b)
            d = divisors(s1["result"], 2, 10)
            if not d:
                raise Fail
            k = rng.choice(d)
            s2 = step("/", s1["result"], k)
            t = rng.choice([f"the difference between {a} and {b} divided by {k}", f"({a}-{b})/{k}",
                            f"{a} minus {b} then divided by {k}"])
            return t, [s1, s2]
        # doubleadd
        a = rint(rng, 2, 45)
        s1 = step("*", a, 2)
        c = rint(rng, 2, 100 - s1["result"]) if s1["result"] <= 98 else None
        if c is None:
            raise Fail
        s2 = step("+", s1["result"], c)
        t = rng.choice([f"double {a} and then add {c}", f"twice {a} plus {c}", f"{a} doubled plus {c}",
                        f"double {a} then +{c}"])
        return t, [s1, s2]
    # generic chain
    a0, ch = chain_ops(rng, nsteps)
    starts = [f"start with {a0}", f"take {a0}", f"{a0}", f"begin with {a0}", f"think of {a0}", f"if i start at {a0}",
              f"start at {a0}", f"ok {a0}"]
    joins = [", ", " then ", ", then ", " and then ", " -> ", ", "]
    t = rng.choice(starts)
    for op, b, s in ch:
        t += rng.choice(joins) + op_phrase(rng, op, b)
    t += rng.choice(["", "", ", what do i get", ". whats the answer", ", what number is that", " = ?",
                     ", what do i end up with", ". what is it now", " whats that"])
    return t, [s for _, _, s in ch]


def make_bare(rng, nsteps):
    if nsteps == 1:
        t, steps = bare_one(rng)
    else:
        t, steps = bare_multi(rng, nsteps)
    lead = rng.choice(["", "", "", "", "", "hey ", "quick question: ", "pls ", "ok so ", "um ", "hi ", "math q: ",
                       "quick one: ", "help: ", "hey whats ", "so "])
    if lead == "hey whats " and (t.startswith("wh") or t.startswith("how") or t.startswith("can") or
                                 t.split()[0] in ("add", "subtract", "take", "multiply", "divide", "split", "start",
                                                  "begin", "think", "if", "ok", "double", "triple", "times", "minus",
                                                  "put", "sum", "half")):
        lead = "hey "
    end = rng.choice(["", "", "", "?", "?", "??", " pls", " thx", " thanks", "? thx", " lol", "? pls"])
    if "pls" in end and ("pls" in lead or "pls" in t):
        end = "?"
    if lead.strip() and set(lead.lower().replace(":", " ").replace(",", " ").split()) & set(t.lower().split()[:2]):
        lead = ""
    if t.endswith("?") and end.startswith("?"):
        end = end[1:]
    if end.strip() == "lol" and rng.random() < 0.85:
        end = ""
    text = lead + t + end
    text = re.sub(r"\s+", " ", text).strip()
    kind = rng.choices(["chat", "proper"], weights=[8, 2])[0]
    text = style(rng, text, kind)
    reasoning = [f"{eq(s)}." for s in steps]
    return dict(user_text=text, reasoning=reasoning, worked=steps, answer=steps[-1]["result"])


# ----------------------------------------------------------------------------------------------

ARCHS = [  # (function, weights by step count 1..4)
    (arch_chain, (30, 40, 50, 60)),
    (arch_compare, (10, 18, 18, 16)),
    (arch_total, (6, 10, 10, 8)),
    (arch_howmore, (5, 7, 7, 6)),
    (arch_need, (6, 6, 6, 4)),
    (arch_price, (8, 0, 0, 0)),
    (arch_rate, (8, 0, 0, 0)),
    (arch_scene, (6, 8, 8, 6)),
    (arch_age, (4, 5, 4, 0)),
]


def make_story(rng, nsteps):
    fns = [f for f, w in ARCHS]
    ws = [w[nsteps - 1] for f, w in ARCHS]
    fn = rng.choices(fns, weights=ws)[0]
    body, st = fn(rng, nsteps)
    if len(st.steps) != nsteps:
        raise Fail
    it = finalize(rng, st, body)
    return it


def make_item(rng):
    nsteps = rng.choices([1, 2, 3, 4], weights=[45, 35, 15, 5])[0]
    while True:
        try:
            if rng.random() < 0.35:
                it = make_bare(rng, nsteps)
            else:
                it = make_story(rng, nsteps)
            if "{" in it["user_text"] or "<" in it["user_text"] or items.check(it):
                continue
            return it
        except Fail:
            continue


def generate(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append(make_item(rng))
    return out


if __name__ == "__main__":
    items.main("chatty", generate, __doc__)
