#!/usr/bin/env python3
"""Grammar "parts": multiplication, division and parts of a whole, said the many ways people say them.

Covers groups and containers ("3 cartons of 12", "every box holds 8", "6 to a pack", "9 per row",
"in each of the 4 bags", "a dozen", "half a dozen", "a pair", "5 pairs of socks"), rates ("7 a day
for 4 days"), comparisons ("twice / three times / half / a third as many as"), growth ("doubles",
"ends up with three times as many"), fractions taken away or kept ("gives away half of them",
"eats a third", "keeps only a quarter"), fractions of a whole ("one fifth of them are red"), equal
sharing ("shared equally / split evenly / divided among / handed out evenly / dealt out"), packing
("how many full boxes", "how many groups of 6"), unit prices and split bills, mixed with + and -
steps in 1-4 step stories told in the third person, as "I", "you" or "we", question last, question
first, "If ..., how many ...?", run-on, numbered, with unused facts; plus bare "what is a third of
27" style questions.

Written independently from scratch for kvscope's tiny reasoner: its own names, objects, containers,
verbs, sentence frames and question forms; it does not derive from src/tinygsm/natural.cpp, from
the other grammars in this folder, or from any evaluation set. The reasoning follows the model's
conventions: one "(k) " line per statement of the question (k its position), restating with
"has"/"have", equations "a op b = r" with digits (words like "a dozen" or "twice" become 12 and 2),
"This does not change the answer." for unused facts, dependency order where a fact leans on a later
one, and "Together, ..." for totals over people.

    python3 tools/grammars/parts.py --n 20000 --seed 1 -o /tmp/parts.jsonl
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items as itemsmod  # noqa: E402

# ----------------------------------------------------------------------------------------------
# people
FEMALE = """Ines Keiko Amara Sofia Priya Leilani Ngozi Yara Mei Olga Brigid Chiamaka Dagny Esperanza
Fatou Greta Hanna Imani Juliette Kalinda Lucia Malika Noemi Oona Paloma Quilla Rosa Saoirse Tamsin
Ulrike Valentina Wanjiru Ximena Yuki Zofia Adaeze Beatriz Catalina Dilnoza Elif Farida Gulnara Hoa
Ingrid Jasmin Kamala Lotte Marisol Nadia Odile Pania Rania Sunita Thandiwe Uma Vesna Wren Xiadani
Yasmin Zuri Aiyana Bronwyn Carmela Dunya Emeka Femi""".split()
FEMALE = [n for n in FEMALE if n not in ("Emeka", "Femi")]
MALE = """Tomas Kofi Ravi Hiroshi Mateo Anders Bongani Cyrus Dmitri Emeka Farid Gustavo Hamid Ilya
Jarrah Kenta Lorenzo Mehmet Nikolai Oisin Pedro Quentin Rashid Soren Tariq Umar Vikram Wiremu Xavier
Yusuf Zoltan Amadou Bjorn Cheng Dario Eamon Florin Goran Haruto Idris Joaquin Kwabena Luca Matteo
Nnamdi Olek Pavel Rafael Santino Teodor Uriel Viktor Wojtek Yaroslav Zane Arjun Bilal Ciaran Dawit
Enzo Femi Gideon Hemi Ismael Jonas Kai Lars Milan""".split()
NAMES = [(n, "f") for n in FEMALE] + [(n, "m") for n in MALE]

RELATIVES = ["sister", "brother", "cousin", "aunt", "uncle", "neighbor", "best friend", "grandma",
             "grandpa", "classmate", "coach", "teacher"]

# ----------------------------------------------------------------------------------------------
# objects: singular|plural|containers|flags|adjectives|gain verb phrase
# flags: f food, d sold by the dozen, p comes in pairs, c collectible
OBJ_SPEC = """
egg|eggs|carton,tray,box|fd|brown,white,speckled|collect
apple|apples|bag,basket,crate|f|red,green|pick
pear|pears|basket,bag|f|ripe,green|pick
plum|plums|bag,basket,bowl|f|ripe,purple|pick
peach|peaches|basket,crate|f|ripe|pick
lemon|lemons|bag,crate,bowl|f|big,small|pick
banana|bananas|bunch,box|f|ripe,green|buy
cookie|cookies|tin,box,jar,tray|fd|chocolate,oatmeal,ginger|bake
cupcake|cupcakes|box,tray|fd|vanilla,chocolate,lemon|bake
muffin|muffins|tray,box,basket|fd|blueberry,banana,corn|bake
donut|donuts|box,bag|fd|glazed,jam|buy
bagel|bagels|bag,basket|fd|sesame,plain,onion|buy
bread roll|bread rolls|basket,bag,tray|fd|brown,white|bake
pretzel|pretzels|bag,tray|f|salted,sweet|bake
strawberry|strawberries|basket,box,punnet|f|ripe,big|pick
cherry|cherries|bag,bowl,basket|f|dark,ripe|pick
tomato|tomatoes|box,basket,crate|f|red,green|pick
potato|potatoes|sack,bag|f|red,small|dig up
carrot|carrots|bunch,bag|f|orange,purple|pull up
onion|onions|bag,sack|f|red,white|buy
cracker|crackers|box,packet,sleeve|f|salted,cheese|buy
lollipop|lollipops|jar,bag|f|red,green,cherry|buy
mango|mangoes|box,crate|f|ripe,green|pick
kiwi|kiwis|box,bag|f|ripe,golden|buy
walnut|walnuts|bag,jar|f|big,small|gather
dumpling|dumplings|tray,steamer basket,box|f|pork,vegetable|make
sandwich|sandwiches|tray,box,basket|f|cheese,egg,tuna|make
pancake|pancakes|stack,plate|f|banana,plain|make
tangerine|tangerines|bag,box,crate|f|ripe,small|pick
juice box|juice boxes|pack,case|f|apple,orange|buy
granola bar|granola bars|box,pack|f|honey,nut|buy
dates|dates|box,bag|f|ripe|buy
marble|marbles|bag,jar,tin|c|blue,red,glass,striped|win
sticker|stickers|sheet,pack,roll|c|shiny,gold,star|get
pencil|pencils|box,pack,case|d|red,blue,yellow,sharp|buy
crayon|crayons|box,pack|d|red,blue,green|buy
marker|markers|pack,box|d|green,black,purple|buy
eraser|erasers|pack,box|d|pink,white|buy
button|buttons|jar,bag,tin|c|red,round,shiny|collect
bead|beads|bag,jar,tube|c|glass,wooden,blue|collect
seashell|seashells|bucket,bag,jar|c|white,pink,striped|find
pebble|pebbles|bucket,bag,jar|c|white,smooth,gray|find
stamp|stamps|sheet,album,envelope|c|old,foreign,rare|collect
postcard|postcards|pack,box|c|old,blank|collect
trading card|trading cards|pack,box,binder|c|rare,shiny|collect
sock|socks|pack,drawer|p|striped,white,wool|buy
glove|gloves|box,bin|p|rubber,wool|buy
mitten|mittens|basket,box|p|red,knitted|buy
shoe|shoes|box,rack|p|brown,black|buy
earring|earrings|box,case|p|silver,gold|buy
chopstick|chopsticks|box,pack|p|wooden,plastic|buy
balloon|balloons|bag,pack|d|red,blue,yellow|blow up
candle|candles|box,pack|d|red,white,scented|make
ribbon|ribbons|roll,bag,box|c|red,blue,silk|buy
toy car|toy cars|box,bin,crate|c|red,blue,racing|collect
block|blocks|bucket,box,bin|c|red,wooden,blue|stack up
book|books|box,shelf,stack|c|old,new,thick|borrow
comic book|comic books|stack,box|c|old,rare|buy
notebook|notebooks|pack,box|d|blue,lined|buy
folder|folders|pack,box|d|blue,red|buy
paper clip|paper clips|box,pack|d|silver,colored|buy
rubber band|rubber bands|bag,box|d|red,thick|buy
flower|flowers|bunch,vase,bucket|c|red,yellow,white|pick
rose|roses|bunch,bouquet,vase|cd|red,white,pink|pick
tulip|tulips|bunch,pot,bucket|c|red,yellow,orange|pick
daisy|daisies|bunch,pot|c|white,yellow|pick
tile|tiles|box,stack,crate|d|white,blue,cracked|lay
brick|bricks|stack,crate,pallet|d|red,old|stack up
plate|plates|stack,box|d|white,blue,paper|buy
cup|cups|stack,pack,box|d|paper,plastic,blue|buy
spoon|spoons|box,drawer,pack|d|silver,plastic|buy
napkin|napkins|pack,stack|d|paper,cloth|buy
battery|batteries|pack,box|d|small,big|buy
light bulb|light bulbs|box,pack,crate|d|round,long|buy
screw|screws|box,bag,jar|d|small,long|buy
nail|nails|box,bag,jar|d|long,short|buy
tennis ball|tennis balls|can,tube,bucket|d|yellow,green,old|find
golf ball|golf balls|bucket,box,bag|d|white,yellow|find
water bottle|water bottles|case,crate,pack|d|blue,green|buy
feather|feathers|bag,box,jar|c|white,blue,long|find
acorn|acorns|bag,bucket,jar|c|big,small|gather
pinecone|pinecones|bag,bucket,basket|c|big,small|gather
coin|coins|jar,bag,roll|c|silver,gold,old|save
photo|photos|album,box,envelope|c|old,funny|take
shirt|shirts|box,stack,drawer|d|white,blue,striped|buy
towel|towels|stack,basket,shelf|d|white,blue,beach|buy
paintbrush|paintbrushes|pack,jar,set|d|thin,wide|buy
bottle cap|bottle caps|jar,bag,tin|c|red,metal|collect
keychain|keychains|box,bag|c|metal,plastic|collect
origami crane|origami cranes|box,string,bag|c|paper,gold|fold
"""
PLURAL = {"box": "boxes", "bunch": "bunches", "sack": "sacks", "shelf": "shelves", "peach": "peaches",
          "pouch": "pouches", "punnet": "punnets", "steamer basket": "steamer baskets", "glass": "glasses",
          "child": "children", "grandchild": "grandchildren", "person": "people", "class": "classes",
          "bus": "buses", "batch": "batches", "bench": "benches", "dish": "dishes", "sandwich": "sandwiches",
          "story": "stories", "family": "families", "party": "parties", "box of": "boxes of"}


def pl(word):
    if word in PLURAL:
        return PLURAL[word]
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


class Obj:
    def __init__(self, line):
        s, p, conts, flags, adjs, gain = line.split("|")
        self.s, self.p = s, p
        self.conts = conts.split(",")
        self.food = "f" in flags
        self.dozen = "d" in flags
        self.pairs = "p" in flags
        self.collect = "c" in flags
        self.adjs = adjs.split(",") if adjs else []
        self.gain = gain

    def n(self, k):
        return self.s if k == 1 else self.p


OBJECTS = [Obj(line) for line in OBJ_SPEC.strip().splitlines() if line.strip()]
OBJECTS = [o for o in OBJECTS if o.s != "dates"]

RECIPIENTS = ["friend", "cousin", "classmate", "neighbor", "teammate", "kid", "child", "student", "player",
              "guest", "grandchild", "helper", "camper", "scout", "visitor", "nephew", "niece", "runner"]
PLACES = ["the market", "the fair", "the corner shop", "the school sale", "the flea market", "the bakery",
          "the farm stand", "the garage sale", "the mall", "the swap meet"]

WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
         10: "ten", 11: "eleven", 12: "twelve"}
FRAC = {2: ["half", "one half"], 3: ["a third", "one third", "one-third"], 4: ["a quarter", "one quarter", "a fourth"],
        5: ["a fifth", "one fifth", "one-fifth"], 6: ["a sixth", "one sixth"], 10: ["a tenth", "one tenth"]}
TIMES = {2: ["twice", "two times", "double"], 3: ["three times", "triple", "3 times"], 4: ["four times", "4 times"],
         5: ["five times", "5 times"], 6: ["six times", "6 times"]}

# ----------------------------------------------------------------------------------------------
# verbs: 3rd person singular present, past
IRREG = {"have": ("has", "had"), "be": ("is", "was"), "do": ("does", "did"), "buy": ("buys", "bought"),
         "get": ("gets", "got"), "eat": ("eats", "ate"), "give": ("gives", "gave"), "sell": ("sells", "sold"),
         "lose": ("loses", "lost"), "find": ("finds", "found"), "put": ("puts", "put"), "split": ("splits", "split"),
         "keep": ("keeps", "kept"), "make": ("makes", "made"), "take": ("takes", "took"), "win": ("wins", "won"),
         "spend": ("spends", "spent"), "bring": ("brings", "brought"), "deal": ("deals", "dealt"),
         "send": ("sends", "sent"), "drop": ("drops", "dropped"), "come": ("comes", "came"), "go": ("goes", "went"),
         "hold": ("holds", "held"), "set": ("sets", "set"), "lay": ("lays", "laid"), "dig": ("digs", "dug"),
         "blow": ("blows", "blew"), "stack": ("stacks", "stacked"), "grab": ("grabs", "grabbed"),
         "wind": ("winds", "wound"), "end": ("ends", "ended"), "leave": ("leaves", "left"),
         "pay": ("pays", "paid"), "sit": ("sits", "sat"), "bag": ("bags", "bagged"), "fit": ("fits", "fit"),
         "earn": ("earns", "earned"), "save": ("saves", "saved"), "need": ("needs", "needed"),
         "throw": ("throws", "threw"), "hand": ("hands", "handed"), "fold": ("folds", "folded"),
         "run": ("runs", "ran"), "break": ("breaks", "broke"), "pick": ("picks", "picked"),
         "plan": ("plans", "planned"), "grow": ("grows", "grew"), "ship": ("ships", "shipped"), "tip": ("tips", "tipped")}


def conj(verb, person, tense):
    """person: 3s, 1s, 2, 1p, 3p."""
    if verb == "be":
        if tense == "past":
            return "was" if person in ("3s", "1s") else "were"
        return {"3s": "is", "1s": "am"}.get(person, "are")
    if verb in IRREG:
        s3, past = IRREG[verb]
    else:
        s3 = pl(verb) if not verb.endswith("y") or verb[-2] in "aeiou" else verb[:-1] + "ies"
        if verb.endswith("e"):
            past = verb + "d"
        elif verb.endswith("y") and verb[-2] not in "aeiou":
            past = verb[:-1] + "ied"
        else:
            past = verb + "ed"
    if tense == "past":
        return past
    return s3 if person == "3s" else verb


def render(tpl, person, tense):
    """Conjugates [verb] (for person) and [verb@p] (for p) in tpl."""
    def sub(m):
        v, p = m.group(1), m.group(2) or person
        return conj(v, p, tense)
    return re.sub(r"\[([a-z]+)(?:@(\w+))?\]", sub, tpl)


class Person:
    def __init__(self, kind, name=None, g=None):
        self.kind, self.name, self.g = kind, name or "", g
        self.person = {"name": "3s", "I": "1s", "you": "2", "we": "1p"}[kind]

    @property
    def subj(self):  # sentence subject, full
        return {"name": self.name, "I": "I", "you": "you", "we": "we"}[self.kind]

    @property
    def pron(self):
        return {"name": "he" if self.g == "m" else "she", "I": "I", "you": "you", "we": "we"}[self.kind]

    @property
    def obj(self):
        return {"name": "him" if self.g == "m" else "her", "I": "me", "you": "you", "we": "us"}[self.kind]

    @property
    def pos(self):
        return {"name": "his" if self.g == "m" else "her", "I": "my", "you": "your", "we": "our"}[self.kind]

    @property
    def poss_name(self):  # Ines's / my
        return {"name": self.name + "'s", "I": "my", "you": "your", "we": "our"}[self.kind]

    @property
    def refl(self):
        return {"name": "himself" if self.g == "m" else "herself", "I": "myself", "you": "yourself",
                "we": "ourselves"}[self.kind]

    @property
    def r(self):  # subject in reasoning
        return {"name": self.name, "I": "I", "you": "You", "we": "We"}[self.kind]

    @property
    def rhas_mid(self):  # "and we have ..." inside a reasoning line
        return self.rhas if self.kind in ("name", "I") else self.rhas.lower()

    @property
    def rhas(self):
        return self.r + (" has" if self.kind == "name" else " have")

    def rverb(self, verb):
        return self.r + " " + conj(verb, self.person, "pres")


def cap(s):
    return s[0].upper() + s[1:] if s else s


def step(op, a, b):
    r = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
    return {"op": op, "a": a, "b": b, "result": r}


def eq(s):
    return f"{s['a']} {s['op']} {s['b']} = {s['result']}"


def ok(v):
    return 1 <= v <= 100


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def ch(self, seq):
        return self.rng.choice(seq)

    def num(self, n, words_ok=True):
        """a small count, sometimes spelled out (the reasoning always writes digits)."""
        if words_ok and n in WORDS and n >= 2 and self.rng.random() < 0.18:
            return WORDS[n]
        return str(n)

    def names(self, k, avoid=()):
        out = []
        while len(out) < k:
            n = self.ch(NAMES)
            if n[0] not in avoid and n[0] not in [o[0] for o in out]:
                out.append(n)
        return out

    def owner(self, avoid=()):
        r = self.rng.random()
        if r < 0.64:
            n, g = self.names(1, avoid)[0]
            return Person("name", n, g)
        if r < 0.8:
            return Person("I")
        if r < 0.9:
            return Person("you")
        return Person("we")

    # ------------------------------------------------------------------------------------------
    # distractors
    def distractor(self, owner, obj, used):
        n, g = self.names(1, used)[0]
        other = self.ch([o for o in OBJECTS if o is not obj])
        rng = self.rng
        who = owner.subj if owner.kind != "name" else owner.name
        c = self.ch(obj.conts)
        opts = [
            f"{n} is {rng.randint(6, 70)} years old.",
            f"{n} lives {rng.randint(2, 40)} blocks away.",
            f"The shop closes at {rng.randint(4, 9)} o'clock.",
            f"{n} has {rng.randint(2, 60)} {other.p}.",
            f"It takes {rng.randint(5, 50)} minutes to get home.",
            f"{cap(owner.poss_name)} {self.ch(RELATIVES)} is {rng.randint(8, 60)} years old.",
            f"The {pl(c)} are {self.ch(['blue', 'green', 'red', 'striped', 'brown'])}.",
            f"There is a {self.ch(['red', 'green', 'small', 'big', 'yellow'])} bow on every {c}.",
            f"{n} has {rng.randint(2, 9)} pets.",
            f"It is {self.ch(['raining', 'a sunny day', 'very windy', 'cold outside', 'a holiday'])}.",
            f"{n} buys {rng.randint(2, 40)} {other.p} for {self.ch(['a', 'the'])} party.",
            f"{cap(who)} {'is' if owner.kind == 'name' else ('am' if owner.kind == 'I' else 'are')} saving for a {self.ch(['bike', 'kite', 'game', 'tent', 'scooter'])}.",
            f"Each {c} costs {rng.randint(2, 9)} dollars.",
            f"The {self.ch(['bus', 'train', 'ferry'])} leaves at {rng.randint(2, 11)}.",
            f"{n} is {rng.randint(100, 190)} centimeters tall." if rng.random() < 0.3 else f"{n} walks {rng.randint(2, 9)} miles a day.",
        ]
        return self.ch(opts)


# ----------------------------------------------------------------------------------------------
# A statement of a story: text as a full sentence and as a clause for joined forms.
class St:
    def __init__(self, text, reason, steps=(), subj=None, dec=False):
        # text: template; if subj is None it is a full clause (own subject), else a verb phrase of subj
        self.text, self.reason, self.steps, self.subj, self.dec = text, reason, list(steps), subj, dec


DIST = "This does not change the answer."


class Story(Gen):
    """Owner-based stories built from a start, changes and a final question."""

    def pick_fd(self, q, ds=(2, 3, 4, 5, 10)):
        c = [d for d in ds if q % d == 0 and q // d >= 1 and q > d]
        return self.ch(c) if c else None

    def fr(self, d):
        return self.ch(FRAC[d])

    # --- starts --------------------------------------------------------------------------------
    def start_plain(self, o, own):
        rng = self.rng
        if o.dozen and rng.random() < 0.15:
            n, word = self.ch([(12, "a dozen"), (6, "half a dozen"), (12, "one dozen")])
            tpl = self.ch([f"[buy] {word} {o.p}", f"[have] {word} {o.p}", f"[start] with {word} {o.p}"])
            return [St(tpl, f"{own.rhas} {n} {o.p}.", subj=own)], n
        if o.pairs and rng.random() < 0.2:
            return [St(f"[buy] a pair of {o.p}", f"{own.rhas} 2 {o.p}.", subj=own)], 2
        n = rng.randint(6, 100)
        c = self.ch(o.conts)
        opts = [(f"[have] {n} {o.p}", True), (f"[start] with {n} {o.p}", True), (f"[gain] {n} {o.p}", True),
                (f"[buy] {n} {o.p}", True), (f"there [be@3p] {n} {o.p} in {own.poss_name} {c}", False),
                (f"{own.poss_name} {c} [hold@3s] {n} {o.p}", False),
                (f"[have] a {c} of {n} {o.p}", True), (f"[keep] {n} {o.p} in a {c}", True)]
        if o.collect:
            opts.append((f"[own] {n} {o.p}", True))
        tpl, vp = self.ch(opts)
        tpl = tpl.replace("[gain]", self.gainverb(o))
        return [St(tpl, f"{own.rhas} {n} {o.p}.", subj=own if vp else None)], n

    def gainverb(self, o):
        parts = o.gain.split(" ", 1)
        return f"[{parts[0]}]" + (" " + parts[1] if len(parts) > 1 else "")

    def groups(self, maxq=100):
        for _ in range(50):
            s = self.rng.randint(2, 25)
            g = self.rng.randint(2, 12)
            if g * s <= maxq and min(g, s) <= 25:
                return g, s
        return 2, 2

    def start_groups(self, o, own):
        rng = self.rng
        c = self.ch(o.conts)
        cs = pl(c)
        if o.dozen and rng.random() < 0.2:
            g = rng.randint(2, 8)
            tpl = self.ch([f"[buy] {self.num(g)} dozen {o.p}", f"[order] {self.num(g)} dozen {o.p}",
                           f"{self.gainverb(o)} {self.num(g)} dozen {o.p}"])
            s1 = step("*", g, 12)
            return [St(tpl, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], s1["result"]
        if o.pairs and rng.random() < 0.4:
            g = rng.randint(2, 25)
            tpl = self.ch([f"[buy] {g} pairs of {o.p}", f"[have] {g} pairs of {o.p}", f"[pack] {g} pairs of {o.p}"])
            s1 = step("*", g, 2)
            return [St(tpl, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], s1["result"]
        g, s = self.groups()
        G = self.num(g)
        s1 = step("*", g, s)
        q = s1["result"]
        if rng.random() < 0.3:  # two statements: the containers, then how full they are
            a = self.ch([f"[buy] {G} {cs} of {o.p}", f"[have] {G} {cs} of {o.p}", f"[bring] home {G} {cs} of {o.p}",
                         f"[pick] up {G} {cs} of {o.p} at {self.ch(PLACES)}", f"[fill] {G} {cs} with {o.p}"])
            b = self.ch([f"each {c} [hold@3s] {s}", f"every {c} [have@3s] {s} {o.p} in it",
                         f"there [be@3p] {s} {o.p} in each {c}", f"each one [hold@3s] {s} {o.p}",
                         f"every {c} [contain@3s] {s} {o.p}", f"each {c} [have@3s] {s} {o.p}"])
            if rng.random() < 0.5:
                return [St(a, f"{own.rhas} {g} {cs if g > 1 else c} of {o.p}.", subj=own),
                        St(b, f"{own.rhas} {eq(s1)} {o.p}.", [s1])], q
            b = self.ch([f"{o.p} [come@3p] {s} to a {c}", f"a {c} of {o.p} [hold@3s] {s}",
                         f"every {c} [hold@3s] {s} {o.p}", f"{o.p} [be@3p] sold in {cs} of {s}",
                         f"there [be@3p] {s} {o.p} in a {c}"])
            a = self.ch([f"[buy] {G} {cs}", f"[take] {G} {cs}", f"[grab] {G} {cs}", f"[get] {G} {cs}",
                         f"[order] {G} {cs}"])
            return [St(b, f"Each {c} has {s} {o.p}."), St(a, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], q
        if rng.random() < 0.2:
            per, unit = self.ch([("a day", "days"), ("each day", "days"), ("every week", "weeks"),
                                 ("a week", "weeks"), ("each morning", "mornings"), ("every hour", "hours")])
            tpl = f"{self.gainverb(o)} {s} {o.p} {per} for {G} {unit}"
            return [St(tpl, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], q
        tpl = self.ch([f"[buy] {G} {cs} of {s} {o.p}", f"[have] {G} {cs} with {s} {o.p} in each",
                       f"[have] {G} {cs} of {o.p} with {s} in each", f"[buy] {G} {cs} of {o.p}, {s} to a {c}",
                       f"[get] {G} {cs} of {o.p}, {s} {o.p} per {c}", f"[have] {s} {o.p} in each of {G} {cs}",
                       f"[fill] {G} {cs} with {s} {o.p} each", f"[carry] in {G} {cs} holding {s} {o.p} each",
                       f"[unpack] {G} {cs} of {s} {o.p}",
                       f"[receive] {G} {cs}, each with {s} {o.p}"])
        return [St(tpl, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], q

    # --- changes --------------------------------------------------------------------------------
    def ch_add(self, o, own, q, others):
        n = self.rng.randint(1, 100 - q) if q < 100 else None
        if n is None:
            return None
        n = min(n, self.rng.randint(2, 40))
        x = others()
        opts = [(f"[buy] {n} more {o.n(n)}", own), (f"[get] {n} more from {x.name}", own),
                (f"[find] another {n}" if n > 1 else "[find] one more", own),
                (f"[pick] up {n} more at {self.ch(PLACES)}", own), (f"[be] given {n} more {o.n(n)}", own),
                (f"{x.name} [give@3s] {own.obj} {n} more", None), (f"{x.name} [add@3s] {n} {o.n(n)} to {own.poss_name} pile", None),
                (f"{self.gainverb(o)} {n} more", own), (f"[win] {n} more {o.n(n)} in a game", own)]
        t, sj = self.ch(opts)
        s1 = step("+", q, n)
        return [St(t, f"{own.rhas} {eq(s1)} {o.n(q + n)}.", [s1], sj)], s1["result"]

    def ch_sub(self, o, own, q, others):
        if q < 3:
            return None
        n = self.rng.randint(1, min(q - 1, 40))
        x = others()
        opts = [(f"[give] {n} {o.n(n)} to {x.name}", own), (f"[give] {x.name} {n} of them", own),
                (f"[lose] {n} of them", own), (f"[sell] {n} {o.n(n)}", own), (f"[use] {n} of the {o.p}", own),
                (f"{x.name} [take@3s] {n} of them", None), (f"[drop] {n} on the way home", own),
                (f"[trade] away {n} {o.n(n)}", own), (f"[send] {n} to {own.pos} {self.ch(RELATIVES)}", own)]
        if o.food:
            opts += [(f"[eat] {n} of them", own), (f"[eat] {n} {o.n(n)} for {self.ch(['lunch', 'a snack', 'breakfast'])}", own)]
        else:
            opts += [(f"{x.name} [borrow@3s] {n} {o.n(n)}", None), (f"[give] away {n} {o.n(n)}", own)]
        t, sj = self.ch(opts)
        s1 = step("-", q, n)
        return [St(t, f"{own.rhas} {eq(s1)} {o.n(q - n)}.", [s1], sj, dec=True)], s1["result"]

    def ch_addgroups(self, o, own, q, others):
        room = 100 - q
        if room < 4:
            return None
        g, s = self.groups(room)
        if g * s > room:
            return None
        c = self.ch(o.conts)
        x = others()
        rec = self.ch(RECIPIENTS)
        G = self.num(g)
        opts = [(f"[buy] {G} {pl(c)} of {s} {o.p} as well", own), (f"[get] {G} {pl(c)} of {s} {o.p} from {x.name}", own),
                (f"{self.gainverb(o)} {s} more {o.p} each day for {G} days", own),
                (f"{x.name} [bring@3s] {own.obj} {G} {pl(c)} with {s} {o.p} in each", None),
                (f"[receive] {s} {o.p} from each of {G} {pl(rec)}", own),
                (f"[add] {G} {pl(c)} holding {s} {o.p} each", own)]
        t, sj = self.ch(opts)
        s1, s2 = step("*", g, s), step("+", q, g * s)
        return [St(t, f"That is {eq(s1)} {o.p} and {own.rhas_mid} {eq(s2)} {o.n(s2['result'])}.", [s1, s2], sj)], s2["result"]

    def ch_subgroups(self, o, own, q, others):
        for _ in range(20):
            g, s = self.groups(q - 1)
            if g * s < q:
                break
        else:
            return None
        c = self.ch(o.conts)
        rec = self.ch(RECIPIENTS)
        G = self.num(g)
        opts = [(f"[give] {s} {o.p} to each of {G} {pl(rec)}", own), (f"[sell] {G} {pl(c)} of {s} {o.p}", own),
                (f"[use] {s} {o.p} a day for {G} days", own), (f"[hand] {s} {o.p} each to {G} {pl(rec)}", own),
                (f"[pack] {G} {pl(c)} with {s} {o.p} each and [send] them away", own)]
        if o.food:
            opts.append((f"[eat] {s} {o.p} a day for {G} days", own))
        t, sj = self.ch(opts)
        s1, s2 = step("*", g, s), step("-", q, g * s)
        return [St(t, f"That is {eq(s1)} {o.p} and {own.rhas_mid} {eq(s2)} {o.n(s2['result'])}.", [s1, s2], sj,
                   dec=True)], s2["result"]

    def ch_fracgive(self, o, own, q, others):
        d = self.pick_fd(q)
        if d is None:
            return None
        F = self.fr(d)
        x = others()
        opts = [(f"[give] away {F} of them", "give", " away", ""),
                (f"[give] {F} of them to {x.name}", "give", "", f" to {x.name}"),
                (f"[sell] {F} of the {o.p}", "sell", "", ""), (f"[lose] {F} of them", "lose", "", ""),
                (f"[donate] {F} of {own.pos} {o.p}", "donate", "", ""), (f"[use] {F} of them", "use", "", ""),
                (f"[use] up {F} of the {o.p}", "use", " up", ""),
                (f"[pass] {F} of them on to {x.name}", "pass", "", f" on to {x.name}")]
        if o.food:
            opts += [(f"[eat] {F} of them", "eat", "", ""), (f"[eat] {F} of the {o.p}", "eat", "", "")]
        t, v, part, tail = self.ch(opts)
        s1 = step("/", q, d)
        s2 = step("-", q, s1["result"])
        has = "has" if own.kind == "name" else "have"
        r = f"{own.rverb(v)}{part} {eq(s1)} {o.n(s1['result'])}{tail} and {has} {eq(s2)} {o.n(s2['result'])}."
        return [St(t, r, [s1, s2], own, dec=True)], s2["result"]

    def ch_keep(self, o, own, q, others):
        d = self.pick_fd(q)
        if d is None:
            return None
        F = self.fr(d)
        x = others()
        t = self.ch([f"[keep] only {F} of them", f"[keep] {F} of them for {own.refl} and [give] the rest to {x.name}",
                     f"[keep] {F} and [give] the rest away", f"[end] up keeping just {F} of the {o.p}",
                     f"[give] away all but {F} of them"])
        s1 = step("/", q, d)
        return [St(t, f"{own.rhas} {eq(s1)} {o.n(s1['result'])}.", [s1], own, dec=True)], s1["result"]

    def ch_mult(self, o, own, q, others):
        ms = [m for m in (2, 3, 4, 5) if q * m <= 100 and q <= 25]
        if not ms:
            return None
        m = self.ch(ms)
        M = self.ch(TIMES[m])
        if M == "double" or M == "triple":
            t = self.ch([f"[{M}] the number of {o.p}", f"[manage] to {M} the pile", f"[{M}] {own.pos} pile of {o.p}"])
        else:
            t = self.ch([f"[end] up with {M} as many {o.p}", f"[grow] the pile to {M} its size",
                         f"[have] {M} as many {o.p} by the end of the week"])
        s1 = step("*", q, m)
        return [St(t, f"{own.rhas} {eq(s1)} {o.p}.", [s1], own)], s1["result"]

    # --- comparisons: another person ------------------------------------------------------------
    def comp(self, o, own, q, other):
        rng = self.rng
        choices = [("*", m) for m in (2, 3, 4, 5, 6) if q * m <= 100 and q <= 25]
        choices += [("/", d) for d in (2, 3, 4) if q % d == 0 and q > d]
        if not choices:
            return None
        op, m = self.ch(choices)
        oh = f"[have@{own.person}]"
        ref = own.name if own.kind == "name" else self.ch([own.obj, f"{own.subj} [do@{own.person}]"])
        if op == "*":
            M = self.ch(TIMES[m])
            if M in ("double", "triple"):
                t = self.ch([f"{other.name} [have@3s] {M} the number of {o.p} that {own.subj} {oh}",
                             f"{other.name} [have@3s] {M} what {own.subj} {oh}"])
            else:
                t = self.ch([f"{other.name} [have@3s] {M} as many {o.p} as {ref}",
                             f"{other.name} [have@3s] {M} as many as {ref}",
                             f"{other.name} [collect@3s] {M} as many {o.p} as {ref}",
                             f"{other.name} [end@3s] up with {M} as many {o.p} as {ref}",
                             f"{other.name}'s pile [be@3s] {M} as big as {own.poss_name}"
                             if own.kind == "name" else f"{other.name} [have@3s] {M} as many {o.p} as {ref}"])
        else:
            F = {2: "half", 3: "a third", 4: "a quarter"}[m]
            t = self.ch([f"{other.name} [have@3s] {F} as many {o.p} as {ref}", f"{other.name} [have@3s] {F} as many as {ref}",
                         f"{other.name} only [have@3s] {F} as many {o.p} as {ref}"])
            if m == 2 and rng.random() < 0.3:
                t = f"{other.name} [have@3s] half the number of {o.p} that {own.subj} {oh}"
        s1 = step(op, q, m)
        return [St(t, f"{other.name} has {eq(s1)} {o.n(s1['result'])}.", [s1])], s1["result"], op

    # --- finals -------------------------------------------------------------------------------
    def fin_share(self, o, own, q):
        ks = [k for k in range(2, 13) if q % k == 0 and q // k >= 2]
        if not ks:
            return None
        k = self.ch(ks)
        K = self.num(k)
        rec = self.ch(RECIPIENTS)
        recs = pl(rec)
        if own.kind == "we" and self.rng.random() < 0.4:
            t = self.ch([f"[share] them equally among the {K} of us", f"[split] them evenly between the {K} of us"])
            s1 = step("/", q, k)
            qs = [f"How many {o.p} [do@3s] each of us get?", "How many [do@3s] each of us get?",
                  f"How many {o.p} [do@3s] each person get?"]
            return St(t, f"Each of us gets {eq(s1)} {o.n(s1['result'])}.", [s1], own), qs, "Each of us"
        opts = [f"[share] them equally among {K} {recs}", f"[split] them evenly between {K} {recs}",
                f"[divide] them equally among {K} {recs}", f"[hand] them out evenly to {K} {recs}",
                f"[deal] them out equally to {K} {recs}", f"[give] the same number to each of {K} {recs}",
                f"[give] them all away, the same number to each of {K} {recs}",
                f"[share] all the {o.p} equally among {own.pos} {K} {recs}",
                f"[divide] the {o.p} among {K} {recs} so that each gets the same number",
                f"[split] them equally among {K} {recs}"]
        t = self.ch(opts)
        s1 = step("/", q, k)
        qs = [f"How many {o.p} [do@3s] each {rec} get?", f"How many [do@3s] each {rec} get?",
              f"How many {o.p} [go@3p] to each {rec}?", f"How many {o.p} [do@3s] each one get?",
              f"What is each {rec}'s share?", f"How many {o.p} [be@3s] that per {rec}?",
              f"How many {o.p} will each {rec} receive?", f"How many does each one get?"]
        return St(t, f"Each {rec} gets {eq(s1)} {o.n(s1['result'])}.", [s1], own), qs, None

    def fin_pack(self, o, own, q):
        ms = [m for m in range(2, 26) if q % m == 0 and q // m >= 2]
        if not ms:
            return None
        m = self.ch(ms)
        c = self.ch(o.conts)
        cs = pl(c)
        s1 = step("/", q, m)
        r = s1["result"]
        kind = self.rng.random()
        if kind < 0.6:
            t = self.ch([f"[put] them into {cs} of {m}", f"[pack] them {m} to a {c}",
                         f"[pack] them into {cs} that hold {m} each", f"[put] {m} in every {c}",
                         f"[fill] {cs} with {m} {o.p} each", f"[bag] them up, {m} per {c}"])
            qs = [f"How many {cs} [do] {own.subj} fill?", f"How many full {cs} [do] {own.subj} get?",
                  f"How many {cs} [do] {own.subj} need?", f"How many {cs} [be@3p] filled?",
                  f"How many {cs} can {own.subj} fill?"]
            reason = f"{own.rverb('fill')} {eq(s1)} {cs if r > 1 else c}."
        elif kind < 0.8:
            t = self.ch([f"[sort] them into groups of {m}", f"[make] groups of {m} {o.p}",
                         f"[split] them into groups of {m}"])
            qs = [f"How many groups [do] {own.subj} make?", f"How many groups of {m} [be@3p] there?",
                  "How many groups is that?"]
            reason = f"{own.rverb('make')} {eq(s1)} groups."
        else:
            t = self.ch([f"[arrange] them in rows of {m}", f"[lay] them out with {m} in each row",
                         f"[line] them up, {m} per row"])
            qs = ["How many rows [be@3p] there?", f"How many rows [do] {own.subj} make?", "How many rows is that?"]
            reason = f"There are {eq(s1)} rows."
        return St(t, reason, [s1], own), qs, None


def opening(rng):
    if rng.random() < 0.72:
        return ""
    return rng.choice(["Q: ", "Question: ", "Word problem: ", "Try this one: ",
                       "Can you solve this? ", "Homework help: ", "Quick one: ", "Here's a puzzle. ",
                       "My teacher gave us this: ", "Math question: ", "Solve: ", "Riddle for you: "])


def closing(rng):
    return rng.choice([""] * 12 + [" Thanks!", " Thank you.", " Please show the steps.", " Any idea?",
                                   " Thanks in advance."])


class Builder(Story):
    def story(self, target):
        rng = self.rng
        for _ in range(200):
            item = self.try_story(target)
            if item:
                return item
        return None

    def try_story(self, target):
        rng = self.rng
        own = self.owner()
        used = [own.name] if own.name else []
        o = self.ch(OBJECTS)
        tense = "past" if rng.random() < 0.35 else "pres"

        def others():
            n, g = self.names(1, used)[0]
            used.append(n)
            return Person("name", n, g)

        # final kind and its cost
        fk = self.ch(["have"] * 5 + ["share"] * 4 + ["pack"] * 2 + ["comp"] * 3 + ["comp2"] * 2 + ["attr"] * 2
                     + ["attrnot"] + ["switch"] * 2)
        fcost = {"have": 0, "share": 1, "pack": 1, "comp": 1, "comp2": 2, "attr": 1, "attrnot": 2, "switch": 1}[fk]
        if fk in ("attr", "attrnot") and not o.adjs:
            return None
        left = target - fcost
        if left < 0:
            return None
        sts = []
        worked = []
        # start
        if left >= 1 and rng.random() < 0.5:
            s, q = self.start_groups(o, own)
        else:
            s, q = self.start_plain(o, own)
        sts += s
        for x in s:
            worked += x.steps
        left -= sum(len(x.steps) for x in s)
        if left < 0:
            return None
        cur = own
        dec = False
        switched = False
        while left > 0:
            kinds = ["add", "sub", "keep", "mult", "sub", "add"]
            if left >= 2:
                kinds += ["addg", "subg", "frac", "frac", "frac"]
            if fk == "switch" and not switched and rng.random() < 0.5:
                kinds = ["comp"]
            kd = self.ch(kinds)
            if kd == "comp":
                other = others()
                res = self.comp(o, cur, q, other)
                if res is None:
                    return None
                s, q, _ = res
                cur = other
                switched = True
            else:
                fn = {"add": self.ch_add, "sub": self.ch_sub, "addg": self.ch_addgroups, "subg": self.ch_subgroups,
                      "frac": self.ch_fracgive, "keep": self.ch_keep, "mult": self.ch_mult}[kd]
                res = fn(o, cur, q, others)
                if res is None:
                    return None
                s, q = res
            for x in s:
                worked += x.steps
                left -= len(x.steps)
                dec = dec or x.dec
            sts += s
        if left != 0 or not ok(q):
            return None
        if fk == "switch" and not switched:
            return None
        # final
        extra = []
        qtpls = None
        qsubj = cur
        if fk in ("have", "switch"):
            nouns = o.p
            qtpls = [f"How many {nouns} [do] {{S}} have now?", f"How many {nouns} [do] {{S}} have?",
                     f"How many {nouns} [do] {{S}} end up with?", f"What is the number of {nouns} {{S}} [have] now?",
                     f"How many {nouns} [do] {{S}} have in the end?", f"How many {nouns} [do] {{S}} have at the end?",
                     f"how many {nouns} [do] {{S}} have"]
            if dec:
                qtpls += [f"How many {nouns} [do] {{S}} have left?", f"How many {nouns} [be@3p] left?",
                          f"How many [do] {{S}} have left?", f"How many {nouns} remain?" if tense == "pres" else
                          f"How many {nouns} remained?", f"How many {nouns} [do] {{S}} still have?"]
            else:
                qtpls += [f"How many {nouns} [do] {{S}} have in all?", f"How many {nouns} [do] {{S}} have altogether?"]
        elif fk == "share":
            res = self.fin_share(o, cur, q)
            if res is None:
                return None
            st, qtpls, _ = res
            extra = [st]
        elif fk == "pack":
            res = self.fin_pack(o, cur, q)
            if res is None:
                return None
            st, qtpls, _ = res
            extra = [st]
        elif fk in ("comp", "comp2"):
            other = others()
            res = self.comp(o, cur, q, other)
            if res is None:
                return None
            st, q2, op = res
            extra = st
            a, b = cur, other
            if fk == "comp":
                qsubj = other
                qtpls = [f"How many {o.p} [do] {{S}} have?", f"How many [do] {{S}} have?",
                         f"What is the number of {o.p} {{S}} [have]?"]
            else:
                mode = rng.random()
                if mode < 0.5 and cur.kind != "we":
                    pair = {"name": f"{cur.name} and {other.name}", "I": f"{other.name} and I",
                            "you": f"you and {other.name}"}[cur.kind]
                    qtpls = [f"How many {o.p} [do@3p] {pair} have together?",
                             f"How many {o.p} [do@3p] {pair} have in all?",
                             f"How many {o.p} [do@3p] they have altogether?" if cur.kind == "name" else
                             f"How many {o.p} [do@3p] {pair} have between them?"]
                    rpair = {"name": f"{cur.name} and {other.name}", "I": f"{other.name} and I",
                             "you": f"you and {other.name}"}[cur.kind]
                    s2 = step("+", q, q2)
                    if not ok(s2["result"]):
                        return None
                    tail = St(None, f"Together, {rpair} have {eq(s2)} {o.p}.", [s2])
                else:
                    ref_q = cur.name if cur.kind == "name" else cur.obj
                    ref_r = cur.name if cur.kind == "name" else cur.obj
                    if op == "*":
                        s2 = step("-", q2, q)
                        qtpls = [f"How many more {o.p} [do@3s] {other.name} have than {ref_q}?",
                                 f"How many more [do@3s] {other.name} have?"]
                        rr = f"{other.name} has {eq(s2)} more {o.p} than {ref_r}."
                    else:
                        s2 = step("-", q, q2)
                        qtpls = [f"How many fewer {o.p} [do@3s] {other.name} have than {ref_q}?",
                                 f"How many more {o.p} [do] {cur.subj} have than {other.name}?"]
                        rr = f"{other.name} has {eq(s2)} fewer {o.p} than {ref_r}."
                    tail = St(None, rr, [s2])
                extra = extra + [tail]
        elif fk in ("attr", "attrnot"):
            d = self.pick_fd(q, (2, 3, 4, 5, 6, 10))
            if d is None:
                return None
            adj = self.ch(o.adjs)
            F = self.fr(d)
            t = self.ch([f"{F} of them [be@3p] {adj}", f"{F} of the {o.p} [be@3p] {adj}", f"{F} of {cur.pos} {o.p} [be@3p] {adj}"])
            s1 = step("/", q, d)
            if fk == "attr":
                r = f"There are {eq(s1)} {adj} {o.n(s1['result'])}."
                qtpls = [f"How many {o.p} [be@3p] {adj}?", f"How many of them [be@3p] {adj}?",
                         f"How many {adj} {o.p} [do] {{S}} have?"]
                extra = [St(t, r, [s1])]
            else:
                s2 = step("-", q, s1["result"])
                r = (f"There are {eq(s1)} {adj} {o.n(s1['result'])} and {eq(s2)} {o.n(s2['result'])} "
                     f"that {'is' if s2['result'] == 1 else 'are'} not {adj}.")
                qtpls = [f"How many {o.p} [be@3p] not {adj}?", f"How many of them [be@3p] not {adj}?",
                         f"How many [be@3p] not {adj}?"]
                extra = [St(t, r, [s1, s2])]
        for x in extra:
            worked += x.steps
        if len(worked) != target or not all(ok(s["a"]) and ok(s["b"]) and ok(s["result"]) for s in worked):
            return None
        # the question sentence
        qt = self.ch(qtpls)
        return self.assemble(sts + [x for x in extra if x.text is not None], [x for x in extra if x.text is None],
                             qt, qsubj, own, o, tense, worked, used)

    # -------------------------------------------------------------------------------------------
    def assemble(self, sts, tails, qt, qsubj, own, o, tense, worked, used):
        rng = self.rng
        ndist = rng.choice([0, 0, 0, 1, 1, 2]) if len(sts) < 5 else 0
        form = rng.random()
        joined = form < 0.4
        if joined and rng.random() < 0.5:
            ndist = 0
        # distractors: anywhere in sentence forms, at the front in joined forms
        for _ in range(ndist):
            d = St(self.distractor(own, o, used), DIST, [], None)
            d.raw = True
            if joined:
                pos = 0
            else:  # never right before a statement that says "them" or "the rest"
                end_ok = o.p in qt and " them " not in qt
                cands = [i for i in range(len(sts) + 1) if (end_ok if i == len(sts) else (i == 0 or not re.search(
                    r"\bthem\b|\bthe rest\b|\bof the\b|\bmore\b|\banother\b|\beach one\b|\bhim\b|\bher\b|\bhis\b", sts[i].text or "")))]
                pos = rng.choice(cands)
            sts.insert(pos, d)
        # question
        qperson = qsubj.person
        qs = qt.replace("{S}", qsubj.subj if qsubj.kind != "name" else qsubj.name)
        qs = render(qs, qperson, tense)
        qs = cap(qs) if not qs.startswith("how") else qs

        last = [None]

        def clause(st, prev_subj, first):
            if getattr(st, "raw", False):
                last[0] = None
                return st.text.rstrip(".")
            if st.subj is None:
                last[0] = None
                return render(st.text, "3s", tense)
            p = st.subj
            if prev_subj is p and not first:
                return render(st.text, p.person, tense)
            name = p.pron if (p.kind == "name" and last[0] is p and rng.random() < 0.6) else p.subj
            last[0] = p
            return name + " " + render(st.text, p.person, tense)

        mentioned = {}
        reasons = []
        k = 0
        for st in sts:
            k += 1
            reasons.append(f"({k}) " + (st.reason if not getattr(st, "raw", False) else DIST))
        for t in tails:
            reasons.append(t.reason)
        if joined:
            story_sts = [s for s in sts if not getattr(s, "raw", False)]
            front = [s.text for s in sts if getattr(s, "raw", False)]
            qfirst = rng.random() < 0.5
            if (qfirst and story_sts and story_sts[0].subj is qsubj and qsubj.kind == "name"
                    and qsubj.name in qs and " and " not in qs):
                last[0] = qsubj  # the question names the subject first, so the clauses may use a pronoun
            cls = []
            prev = None
            for i, st in enumerate(story_sts):
                cls.append(clause(st, prev, i == 0))
                prev = st.subj
            sep = rng.choice([", ", ", then ", ", and then "])
            end = rng.choice([" and ", ", and ", ", then "])
            body = cls[0]
            for i in range(1, len(cls)):
                static = story_sts[i].subj is None and re.match(r"(each|every|there|a |an |%s)" % re.escape(o.p), cls[i])
                if static:
                    body += rng.choice([" and ", ", and "])
                else:
                    body += end if i == len(cls) - 1 else sep
                body += cls[i]
            qcore = qs.rstrip("?")
            qcore = qcore[0].lower() + qcore[1:]
            if not qfirst:
                text = f"If {body}, {qcore}?"
            else:
                text = f"{cap(qcore)} if {body}?"
            # the statements of a joined question are numbered in order too
            text = " ".join(front + [text]) if front else text
        else:
            sents = []
            prev = None
            for i, st in enumerate(sts):
                c = clause(st, None, False)
                sents.append(cap(c) + ".")
                prev = None if getattr(st, "raw", False) else st.subj
            if rng.random() < 0.12:
                sents = [f"({i + 1}) {s}" for i, s in enumerate(sents)]
            if rng.random() < 0.12 and len(sents) >= 2:
                text = (qs if qs.endswith("?") else cap(qs) + "?") + " " + " ".join(sents)
            else:
                text = " ".join(sents) + " " + qs
        text = opening(rng) + text + closing(rng)
        text = re.sub(r"\s+", " ", text).strip()
        text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)
        return {"user_text": text, "reasoning": reasons, "worked": worked, "answer": worked[-1]["result"]}


# ----------------------------------------------------------------------------------------------
# stand-alone frames: bare arithmetic, rows and seats, teams, prices, pairs, reversed comparisons
HALLS = [("hall", "chairs", "chair"), ("theater", "seats", "seat"), ("orchard", "trees", "tree"),
         ("garden", "tomato plants", "tomato plant"), ("classroom", "desks", "desk"),
         ("parking lot", "cars", "car"), ("greenhouse", "flower pots", "flower pot"), ("vineyard", "vines", "vine"),
         ("gym", "mats", "mat"), ("field", "corn plants", "corn plant"), ("cinema", "seats", "seat"),
         ("church", "pews", "pew"), ("stadium section", "seats", "seat"), ("bakery window", "cakes", "cake")]
GROUPS = [("students", "student"), ("children", "child"), ("players", "player"), ("campers", "camper"),
          ("hikers", "hiker"), ("dancers", "dancer"), ("singers", "singer"), ("workers", "worker"),
          ("scouts", "scout"), ("runners", "runner"), ("guests", "guest"), ("tourists", "tourist")]
UNITS = [("team", "teams"), ("group", "groups"), ("table", "tables"), ("van", "vans"), ("boat", "boats"),
         ("tent", "tents"), ("car", "cars"), ("row", "rows"), ("line", "lines"), ("circle", "circles")]
MONEY = ["dollars", "euros", "pounds", "francs", "pesos", "rupees"]


class Frames(Gen):
    def item(self, text, reasons, worked):
        text = re.sub(r"\s+", " ", text).strip()
        text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)
        return {"user_text": text, "reasoning": reasons, "worked": worked, "answer": worked[-1]["result"]}

    def divpair(self, maxd=12, minr=2, maxr=25):
        """n, d with n = d * r exact."""
        while True:
            d = self.rng.randint(2, maxd)
            r = self.rng.randint(minr, maxr)
            if d * r <= 100:
                return d * r, d, r

    # -- bare ----------------------------------------------------------------------------------
    def bare1(self):
        rng = self.rng
        k = rng.random()
        if k < 0.3:
            d = self.ch([2, 2, 3, 4, 5, 10, 6])
            r = rng.randint(2, 100 // d)
            n = d * r
            F = self.ch(FRAC[d])
            t = self.ch([f"What is {F} of {n}?", f"Find {F} of {n}.", f"what's {F} of {n}", f"How much is {F} of {n}?",
                         f"Work out {F} of {n}.", f"{cap(F)} of {n} is what?", f"What do you get if you take {F} of {n}?"])
            if d == 2:
                t = self.ch([t, f"Halve {n}.", f"What is {n} cut in half?", f"half of {n}?"])
            s1 = step("/", n, d)
        elif k < 0.55:
            m = self.ch([2, 2, 3, 3, 4, 5])
            n = rng.randint(2, min(25, 100 // m))
            M = self.ch(TIMES[m])
            if M == "double":
                t = self.ch([f"Double {n}.", f"What is double {n}?", f"what's {n} doubled", f"Double {n}, please."])
            elif M == "triple":
                t = self.ch([f"Triple {n}.", f"What is {n} tripled?", f"what is triple {n}"])
            else:
                t = self.ch([f"What is {M} {n}?", f"What's {M} {n}?", f"Find {M} {n}.", f"What number is {M} as big as {n}?"])
            s1 = step("*", n, m)
        elif k < 0.75:
            a = rng.randint(2, 25)
            b = rng.randint(2, 100 // a)
            t, x, y = self.ch([(f"What is {b} lots of {a}?", b, a), (f"{b} groups of {a} make how many?", b, a),
                               (f"Multiply {a} by {b}.", a, b), (f"What do you get when you multiply {a} by {b}?", a, b),
                               (f"What is the product of {a} and {b}?", a, b), (f"How much is {a} times {b}?", a, b),
                               (f"{a} multiplied by {b} gives what?", a, b), (f"what's {b} sets of {a}", b, a)])
            s1 = step("*", x, y)
        elif k < 0.93:
            n, d, r = self.divpair()
            t = self.ch([f"How many {d}s are in {n}?", f"How many groups of {d} can you make from {n}?",
                         f"Divide {n} by {d}.", f"Split {n} into {d} equal parts. How big is each part?",
                         f"{n} shared equally by {d} is what?", f"What is the quotient of {n} and {d}?",
                         f"How many times does {d} go into {n}?", f"what is {n} split {d} ways",
                         f"If you cut {n} into {d} equal pieces, how big is each piece?"])
            s1 = step("/", n, d)
        else:
            if rng.random() < 0.6:
                g = rng.randint(2, 8)
                t = self.ch([f"How many is {g} dozen?", f"What is {g} dozen?", f"How many things are in {g} dozen?"])
                s1 = step("*", g, 12)
            else:
                g = rng.randint(2, 8)
                t = self.ch([f"How many dozen is {g * 12}?", f"{g * 12} is how many dozen?"])
                s1 = step("/", g * 12, 12)
        return self.item(opening(rng) + t, [eq(s1) + "."], [s1])

    def bare_multi(self, target):
        rng = self.rng
        for _ in range(100):
            ws, parts = [], []
            d = self.ch([2, 3, 4, 5])
            r = rng.randint(2, 100 // d)
            n = d * r
            ws.append(step("/", n, d))
            parts.append(self.ch([f"take {self.ch(FRAC[d])} of {n}", f"find {self.ch(FRAC[d])} of {n}"]) if d > 2 else
                         self.ch([f"halve {n}", f"take half of {n}", f"cut {n} in half"]))
            if rng.random() < 0.5:  # maybe start with a product instead
                a, b = rng.randint(2, 12), rng.randint(2, 12)
                if a * b <= 100:
                    ws = [step("*", a, b)]
                    parts = [self.ch([f"multiply {a} by {b}", f"take {a} groups of {b}", f"start with {a} times {b}"])]
            cur = ws[-1]["result"]
            while len(ws) < target:
                kd = rng.random()
                if kd < 0.3 and cur + 1 <= 100:
                    m = rng.randint(1, min(40, 100 - cur)) if cur < 100 else 0
                    if not m:
                        break
                    ws.append(step("+", cur, m))
                    parts.append(self.ch([f"add {m}", f"add on {m}", f"put {m} more on"]))
                elif kd < 0.55 and cur > 2:
                    m = rng.randint(1, cur - 1)
                    ws.append(step("-", cur, m))
                    parts.append(self.ch([f"subtract {m}", f"take away {m}", f"take off {m}"]))
                elif kd < 0.8 and cur <= 50:
                    m = self.ch([x for x in (2, 3, 4) if cur * x <= 100])
                    ws.append(step("*", cur, m))
                    parts.append({2: self.ch(["double it", "double the result", "multiply by 2"]),
                                  3: self.ch(["triple it", "multiply by 3"]), 4: "multiply by 4"}[m])
                else:
                    ds = [x for x in (2, 3, 4, 5) if cur % x == 0 and cur > x]
                    if not ds:
                        break
                    m = self.ch(ds)
                    ws.append(step("/", cur, m))
                    parts.append({2: self.ch(["halve it", "cut it in half", "divide by 2"]),
                                  3: self.ch(["take a third of that", "divide by 3", "split it 3 ways"]),
                                  4: self.ch(["take a quarter of that", "divide by 4"]),
                                  5: self.ch(["take a fifth of that", "divide by 5"])}[m])
                cur = ws[-1]["result"]
            if len(ws) != target:
                continue
            body = ", ".join(parts[:-1]) + (", then " if rng.random() < 0.5 else " and ") + parts[-1]
            t = self.ch([f"{cap(body)}. What do you get?", f"{cap(body)}. What is the result?",
                         f"What number do you get if you {body}?", f"{cap(body)}.", f"If you {body}, what do you end with?"])
            return self.item(opening(rng) + t, [eq(s) + "." for s in ws], ws)
        return None

    # -- rows, seats, teams ----------------------------------------------------------------------
    def rows(self, target):
        rng = self.rng
        place, things, thing = self.ch(HALLS)
        art = "an" if place[0] in "aeio" else "a"
        if target == 1:
            k = rng.random()
            if k < 0.4:
                g = rng.randint(2, 12)
                s = rng.randint(2, min(12, 100 // g))
                s1 = step("*", g, s)
                t = self.ch([f"The {place} has {g} rows of {things} with {s} {things} in each row. How many {things} are there?",
                             f"In the {place} there are {g} rows and each row has {s} {things}. How many {things} in total?",
                             f"How many {things} are in the {place} if there are {g} rows of {s}?",
                             f"{cap(art)} {place} has {s} {things} per row and {g} rows. How many {things} does it have?",
                             f"There are {g} rows in the {place}, {s} {things} to a row. Count the {things}."])
                return self.item(opening(rng) + t, [f"(1) There are {eq(s1)} {things} in the {place}."], [s1])
            n, d, r = self.divpair()
            if k < 0.7:
                t = self.ch([f"The {place} has {n} {things} set out in {d} equal rows. How many {things} are in each row?",
                             f"{n} {things} fill the {place} in {d} rows of the same length. How many {things} per row?"])
                s1 = step("/", n, d)
                return self.item(opening(rng) + t, [f"(1) Each row has {eq(s1)} {things}."], [s1])
            t = self.ch([f"The {place} has {n} {things} in rows of {d}. How many rows are there?",
                         f"How many rows are there if {n} {things} are arranged {d} per row?"])
            s1 = step("/", n, d)
            return self.item(opening(rng) + t, [f"(1) There are {eq(s1)} rows."], [s1])
        # two steps: rows, then some taken / added / shared
        g, s = rng.randint(2, 12), rng.randint(2, 12)
        if g * s > 100 or g * s < 8:
            return None
        s1 = step("*", g, s)
        tot = s1["result"]
        if rng.random() < 0.5:
            m = rng.randint(1, tot - 1)
            s2 = step("-", tot, m)
            adj = {"chairs": "empty", "seats": "empty", "desks": "empty", "mats": "free", "pews": "empty"}.get(things)
            if adj:
                t = (f"The {place} has {g} rows of {s} {things}. {m} of the {things} are taken. "
                     f"How many {things} are {adj}?")
                r2 = f"(2) There are {eq(s2)} {adj} {things}."
            else:
                t = (f"There are {g} rows of {things} in the {place}, {s} in every row. {m} of them are sold. "
                     f"How many {things} are left?")
                r2 = f"(2) There are {eq(s2)} {things} left in the {place}."
            return self.item(opening(rng) + t, [f"(1) There are {eq(s1)} {things} in the {place}.", r2], [s1, s2])
        ks = [k for k in range(2, 11) if tot % k == 0 and tot // k >= 2]
        if not ks:
            return None
        k = self.ch(ks)
        grp, one = self.ch([("workers", "worker"), ("helpers", "helper"), ("volunteers", "volunteer"),
                            ("inspectors", "inspector")])
        verb = self.ch(["check", "count", "inspect"])
        s2 = step("/", tot, k)
        t = (f"{cap(art)} {place} has {g} rows with {s} {things} in each. {k} {grp} {verb} them, "
             f"the same number each. How many {things} does each {one} {verb}?")
        return self.item(opening(rng) + t, [f"(1) There are {eq(s1)} {things} in the {place}.",
                                            f"(2) Each {one} {pl(verb) if verb != 'check' else 'checks'} {eq(s2)} {things}."],
                         [s1, s2])

    def teams(self):
        rng = self.rng
        grp, one = self.ch(GROUPS)
        unit, units = self.ch(UNITS)
        n, d, r = self.divpair(maxd=12, minr=2, maxr=20)
        if rng.random() < 0.5:
            t = self.ch([f"{n} {grp} split into {units} of {d}. How many {units} are there?",
                         f"How many {units} of {d} can {n} {grp} make?",
                         f"A {unit} takes {d} {grp}. How many {units} are needed for {n} {grp}?",
                         f"There are {n} {grp} and each {unit} holds {d}. How many full {units} is that?"])
            s1 = step("/", n, d)
            r1 = f"(1) There are {eq(s1)} {units}." if "needed" not in t else f"(1) They need {eq(s1)} {units}."
            return self.item(opening(rng) + t, [r1], [s1])
        t = self.ch([f"{n} {grp} form {d} equal {units}. How many {grp} are in each {unit}?",
                     f"How many {grp} go in each {unit} if {n} {grp} are split evenly into {d} {units}?",
                     f"{n} {grp} are divided equally among {d} {units}. How many {grp} per {unit}?"])
        s1 = step("/", n, d)
        return self.item(opening(rng) + t, [f"(1) Each {unit} has {eq(s1)} {grp}."], [s1])

    # -- prices --------------------------------------------------------------------------------
    def prices(self):
        rng = self.rng
        o = self.ch(OBJECTS)
        cur = self.ch(MONEY)
        k = rng.random()
        if k < 0.3 and o.dozen:
            r = rng.randint(1, 8)
            P = 12 * r
            t = self.ch([f"A dozen {o.p} cost {P} {cur}. How much does one {o.s} cost?",
                         f"If 12 {o.p} cost {P} {cur}, what is the price of one?",
                         f"How much is one {o.s} when a dozen costs {P} {cur}?"])
            s1 = step("/", P, 12)
            return self.item(opening(rng) + t, [f"One {o.s} costs {eq(s1)} {cur}."], [s1])
        if k < 0.55:
            n, d, r = self.divpair(maxd=10, minr=1, maxr=15)
            t = self.ch([f"{d} {o.p} cost {n} {cur} in all. How much does each {o.s} cost?",
                         f"{d} {o.p} come to {n} {cur}. What does one cost?"])
            s1 = step("/", n, d)
            return self.item(opening(rng) + t, [f"One {o.s} costs {eq(s1)} {cur}."], [s1])
        if k < 0.8:
            n, d, r = self.divpair(maxd=10, minr=2, maxr=25)
            rec, recs = self.ch([("friend", "friends"), ("cousin", "cousins"), ("coworker", "coworkers"),
                                 ("roommate", "roommates"), ("teammate", "teammates")])
            t = self.ch([f"{d} {recs} split a bill of {n} {cur} evenly. How much does each {rec} pay?",
                         f"A meal for {d} {recs} costs {n} {cur}, shared equally. What is each share?",
                         f"How much does each of {d} {recs} pay if they share a {n}-{cur[:-1]} taxi ride equally?"])
            s1 = step("/", n, d)
            return self.item(opening(rng) + t, [f"Each {rec} pays {eq(s1)} {cur}."], [s1])
        p = rng.randint(2, 20)
        g = rng.randint(2, 100 // p)
        if g > 25 and p > 25:
            return None
        t = self.ch([f"One {o.s} costs {p} {cur}. How much do {g} {o.p} cost?",
                     f"How much would {g} {o.p} cost at {p} {cur} each?",
                     f"{cap(o.p)} are {p} {cur} apiece. What do {g} of them cost?"])
        s1 = step("*", p, g)
        return self.item(opening(rng) + t, [f"{g} {o.p} cost {eq(s1)} {cur}."], [s1])

    # -- objects: each-of-N, pairs, rates ------------------------------------------------------
    def things1(self):
        rng = self.rng
        o = self.ch(OBJECTS)
        c = self.ch(o.conts)
        cs = pl(c)
        n, g = self.names(1)[0]
        P = Person("name", n, g)
        k = rng.random()
        if k < 0.2:
            g_, s = rng.randint(2, 12), rng.randint(2, 25)
            if g_ * s > 100:
                return None
            s1 = step("*", g_, s)
            t = self.ch([f"In each of the {g_} {cs} there are {s} {o.p}. How many {o.p} are there in all?",
                         f"There are {s} {o.p} in each {c}. How many {o.p} are in {g_} {cs}?",
                         f"Every {c} holds {s} {o.p}. How many {o.p} fit in {g_} {cs}?",
                         f"How many {o.p} are in {g_} {cs} if each {c} has {s}?"])
            return self.item(opening(rng) + t, [f"{g_} {cs} hold {eq(s1)} {o.p}."], [s1])
        if k < 0.4:
            n_, d, r = self.divpair()
            rec = self.ch(RECIPIENTS)
            t = self.ch([f"{n_} {o.p} are shared equally among {d} {pl(rec)}. How many does each one get?",
                         f"If {d} {pl(rec)} split {n_} {o.p} evenly, how many {o.p} does each {rec} get?",
                         f"{n_} {o.p} are handed out evenly to {d} {pl(rec)}. How many {o.p} does each {rec} receive?",
                         f"{n_} {o.p}, {d} {pl(rec)}, shared fairly. How many each?"])
            s1 = step("/", n_, d)
            return self.item(opening(rng) + t, [f"(1) Each {rec} gets {eq(s1)} {o.n(r)}."], [s1])
        if k < 0.55 and o.pairs:
            if rng.random() < 0.5:
                r = rng.randint(2, 25)
                t = self.ch([f"{n} has {2 * r} {o.p}. How many pairs is that?",
                             f"How many pairs can {n} make from {2 * r} {o.p}?"])
                s1 = step("/", 2 * r, 2)
                return self.item(opening(rng) + t, [f"(1) {n} has {eq(s1)} pairs of {o.p}."], [s1])
            g_ = rng.randint(2, 25)
            t = self.ch([f"{n} owns {g_} pairs of {o.p}. How many {o.p} is that?",
                         f"How many {o.p} are in {g_} pairs?"])
            s1 = step("*", g_, 2)
            if t.startswith("How many"):
                return self.item(opening(rng) + t, [f"There are {eq(s1)} {o.p} in {g_} pairs."], [s1])
            return self.item(opening(rng) + t, [f"(1) {n} has {eq(s1)} {o.p}."], [s1])
        if k < 0.75:
            s, g_ = rng.randint(2, 25), rng.randint(2, 12)
            if s * g_ > 100:
                return None
            v = o.gain.split(" ", 1)
            vb, rest = v[0], (" " + v[1] if len(v) > 1 else "")
            per, unit = self.ch([("every day", "days"), ("each week", "weeks"), ("a day", "days"), ("every hour", "hours")])
            t = (f"{n} {conj(vb, '3s', 'pres')}{rest} {s} {o.p} {per}. How many {o.p} does {P.pron} {vb}{rest} "
                 f"in {g_} {unit}?")
            s1 = step("*", g_, s)
            return self.item(opening(rng) + t, [f"In {g_} {unit}, {n} {conj(vb, '3s', 'pres')}{rest} {eq(s1)} {o.p}."], [s1])
        n_, d, r = self.divpair()
        t = self.ch([f"{n} packs {n_} {o.p} into {cs} of {d}. How many full {cs} does {P.pron} get?",
                     f"How many {cs} does {n} need for {n_} {o.p} if each {c} holds {d}?",
                     f"{n} has {n_} {o.p} and puts {d} in every {c}. How many {cs} is that?"])
        s1 = step("/", n_, d)
        return self.item(opening(rng) + t, [f"(1) {n} fills {eq(s1)} {cs}."], [s1])

    # -- comparisons given backwards / out of order ----------------------------------------------
    def reverse_comp(self, target):
        rng = self.rng
        o = self.ch(OBJECTS)
        (a, ga), (b, gb) = self.names(2)
        if target == 1:
            m = self.ch([2, 3, 4, 5])
            r = rng.randint(2, 100 // m)
            q = r * m
            M = self.ch(TIMES[m]) if m > 2 else self.ch(["twice", "two times"])
            M = M.replace("triple", "three times")
            k = rng.random()
            if k < 0.4:
                t = self.ch([f"{b} has {M} as many {o.p} as {a}. {b} has {q} {o.p}. How many {o.p} does {a} have?",
                             f"{b} has {M} as many {o.p} as {a}. If {b} has {q}, how many does {a} have?"])
                s1 = step("/", q, m)
                return self.item(opening(rng) + t, [f"(2) {b} has {q} {o.p}.", f"(1) {a} has {eq(s1)} {o.p}."], [s1])
            if k < 0.7:
                F = {2: "half", 3: "a third", 4: "a quarter", 5: "a fifth"}[m]
                t = self.ch([f"{a} has {F} as many {o.p} as {b}. {b} has {q}. How many {o.p} does {a} have?",
                             f"How many {o.p} does {a} have if {a} has {F} as many as {b}, who has {q}?"])
                s1 = step("/", q, m)
                if "who has" in t:
                    return self.item(opening(rng) + t, [f"(1) {b} has {q} {o.p} and {a} has {eq(s1)} {o.p}."], [s1])
                return self.item(opening(rng) + t, [f"(2) {b} has {q} {o.p}.", f"(1) {a} has {eq(s1)} {o.p}."], [s1])
            F = {2: "half", 3: "a third", 4: "a quarter", 5: "a fifth"}[m]
            t = self.ch([f"{a} has {r} {o.p}, which is {F} as many as {b}. How many {o.p} does {b} have?",
                         f"{a} has {r} {o.p}. That is only {F} of what {b} has. How many {o.p} does {b} have?"])
            s1 = step("*", r, m)
            if "That is" in t:
                return self.item(opening(rng) + t, [f"(1) {a} has {r} {o.p}.", f"(2) {b} has {eq(s1)} {o.p}."], [s1])
            return self.item(opening(rng) + t, [f"(1) {a} has {r} {o.p} and {b} has {eq(s1)} {o.p}."], [s1])
        # two or three steps: B compared to A, A's amount given later as groups
        c = self.ch(o.conts)
        g, s = rng.randint(2, 8), rng.randint(2, 12)
        s1 = step("*", g, s)
        if s1["result"] > 50:
            return None
        q = s1["result"]
        ms = [m for m in (2, 3, 4) if q * m <= 100] + [-d for d in (2, 3, 4) if q % d == 0]
        m = self.ch(ms)
        if m > 0:
            rel = f"{self.ch(TIMES[m]).replace('triple', 'three times').replace('double', 'twice')} as many {o.p} as {a}"
            s2 = step("*", q, m)
        else:
            rel = f"{ {2: 'half', 3: 'a third', 4: 'a quarter'}[-m]} as many {o.p} as {a}"
            s2 = step("/", q, -m)
        tpl1 = f"{b} has {rel}."
        tpl2 = self.ch([f"{a} buys {g} {pl(c)} of {s} {o.p}.", f"{a} has {g} {pl(c)} with {s} {o.p} in each.",
                        f"{a} fills {g} {pl(c)}, {s} {o.p} per {c}."])
        rs = [f"(2) {a} has {eq(s1)} {o.p}.", f"(1) {b} has {eq(s2)} {o.n(s2['result'])}."]
        ws = [s1, s2]
        if target == 2:
            qq = self.ch([f"How many {o.p} does {b} have?", f"How many does {b} have?"])
        else:
            s3 = step("+", q, s2["result"])
            if not ok(s3["result"]):
                return None
            qq = self.ch([f"How many {o.p} do {a} and {b} have together?", f"How many {o.p} do they have in all?"])
            rs.append(f"Together, {a} and {b} have {eq(s3)} {o.p}.")
            ws.append(s3)
        return self.item(opening(rng) + f"{tpl1} {tpl2} {qq}", rs, ws)

    def we_share(self):
        """We buy groups, then share among us (2 steps) or give some away first (3 steps)."""
        rng = self.rng
        o = self.ch(OBJECTS)
        c = self.ch(o.conts)
        k = rng.randint(2, 6)
        g, s = rng.randint(2, 10), rng.randint(2, 12)
        tot = g * s
        if tot > 100 or tot % k:
            return None
        s1, s2 = step("*", g, s), step("/", tot, k)
        t = self.ch([f"There are {k} of us. We buy {g} {pl(c)} of {s} {o.p} and share them equally. "
                     f"How many {o.p} does each of us get?",
                     f"We are {WORDS[k]} friends. We get {g} {pl(c)} with {s} {o.p} in each and split them evenly. "
                     f"How many does each of us get?"])
        return self.item(opening(rng) + t, [f"(1) There are {k} of us.",
                                            f"(2) We have {eq(s1)} {o.p} and each of us gets {eq(s2)} {o.n(s2['result'])}."],
                         [s1, s2])


STEP_P = [(1, 0.45), (2, 0.35), (3, 0.15), (4, 0.05)]


def draw_steps(rng):
    x, acc = rng.random(), 0.0
    for k, p in STEP_P:
        acc += p
        if x < acc:
            return k
    return 4


def lower_some(rng, it):
    """informal typing: a few questions all lowercase."""
    if rng.random() < 0.05:
        t = it["user_text"].lower()
        if rng.random() < 0.5:
            t = t.rstrip("?.!")
        it["user_text"] = t.strip()
    return it


def generate(n, seed):
    import random
    rng = random.Random(seed)
    b = Builder(rng)
    f = Frames(rng)
    out, seen = [], set()
    guard = 0
    while len(out) < n and guard < n * 50:
        guard += 1
        target = draw_steps(rng)
        x = rng.random()
        it = None
        if target == 1:
            if x < 0.55:
                it = b.story(1)
            else:
                fr = rng.choice([f.bare1, f.bare1, f.rows, f.teams, f.prices, f.things1, f.things1, f.reverse_comp])
                it = fr(1) if fr in (f.rows, f.reverse_comp) else fr()
        else:
            if x < 0.82:
                it = b.story(target)
            elif x < 0.88:
                it = f.bare_multi(target)
            elif target == 2:
                it = rng.choice([f.rows, f.reverse_comp, lambda t: f.we_share()])(2)
            elif target == 3:
                it = f.reverse_comp(3)
            else:
                it = b.story(target)
        if not it:
            continue
        it = lower_some(rng, it)
        key = " ".join(it["user_text"].lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(it)
    return out


if __name__ == "__main__":
    itemsmod.main("parts", generate, __doc__)
