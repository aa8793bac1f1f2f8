#!/usr/bin/env python3
"""Grammar "measure": quantities with units and everyday measuring.

Covers distances (km, miles, metres, laps, lengths), time (minutes, hours, days, weeks), cooking
(cups, grams, spoonfuls, eggs, batches), liquids (litres, bottles, glasses, tanks filling and
draining), sports (points, goals, runs), reading (pages, chapters), weights (kg), heights and
lengths (cm, metres), journeys in stages, recipes scaled, rates ("walks 4 km a day for 6 days"),
cutting a length into equal pieces, goals and capacities ("how many more pages to finish the
90-page book", "how many more litres to fill the 80-litre tank"), comparisons between people.

Two story engines (an activity that accumulates a measured amount, and a stock that is used up,
topped up or shared) plus some thirty fixed scenario frames, each with several wordings, in third
person, "I", "you" and "we", past or present tense, question last, question first, "If ..."
forms, run-on sentences and numbered statements.

Written independently of src/tinygsm/natural.cpp (not read) and of the evaluation sets under
data/ (not read): own name list, own units and verbs, own sentence frames and question forms.
Only the reasoning conventions (numbered restatements, "a op b = r" equations) follow the
existing generator. Python 3 standard library only; deterministic given --seed.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402


class Bad(Exception):
    """Numbers drawn do not fit the model's range: draw again."""


# ----------------------------------------------------------------------------- names and people

FEMALE = """Amara Ingrid Yuki Priya Fatima Olga Lucia Chiara Nia Zanele Mei Hana Sofia Elif Leilani
Aisha Camila Dagny Freya Ayumi Ngozi Marisol Tamar Noa Signe Kalani Rosa Anouk Bianca Deepa Esra
Farida Greta Ilse Jana Keala Laila Mirela Nadia Oona Paulina Quynh Rana Saoirse Tove Uma Valentina
Wanjiru Ximena Yara Zofia Adaeze Beatriz Catalina Dilnoza Emine Fiona Gulnara Hye-jin Ifeoma
Johanna Kirra Lerato Maren Nour Oksana Pilar Rukmini Sunniva Thandi Ayla Mariko Liesel Anja
Ines Malia Svetlana Akosua Marta""".split()
MALE = """Rafael Tomasz Kwame Hiroshi Arjun Mateo Lars Dmitri Omar Joao Sipho Ravi Kai Emil Felipe
Gustav Hamza Ibrahim Jonas Kenji Luca Mehmet Nikolai Obi Pedro Quentin Rohan Stefan Tariq Umar
Viktor Wiremu Xavier Yusuf Zoltan Anders Bao Chidi Dario Eero Farid Gianni Hugo Ivan Jakub Kofi
Lorenzo Matteo Nasir Olek Pavel Reza Santiago Tomas Uriel Vikram Wei Yann Zeki Aleksi Bruno Cyrus
Diego Elias Finn Goran Henrik Idris Jin Kamal Lwazi Mikael Tevita Andile""".split()
ALL_NAMES = set(FEMALE) | set(MALE)
PETS = ["Pepper", "Biscuit", "Mango", "Luna", "Rocky", "Tofu", "Ziggy", "Coco"]


class Who:
    """A subject of a story: a named person, I, you or we."""

    def __init__(self, kind, name=None, g=None):
        self.kind, self.name, self.g = kind, name, g

    @property
    def third(self):
        return self.kind == "third"

    def S(self):  # subject at the start of a sentence
        return {"third": self.name, "I": "I", "you": "You", "we": "We"}[self.kind]

    def s(self):  # subject inside a sentence
        return {"third": self.name, "I": "I", "you": "you", "we": "we"}[self.kind]

    def pro(self):
        if self.third:
            return "she" if self.g == "f" else "he"
        return self.s()

    def Pro(self):
        return cap(self.pro())

    def obj(self):
        if self.third:
            return "her" if self.g == "f" else "him"
        return {"I": "me", "you": "you", "we": "us"}[self.kind]

    def poss(self):
        if self.third:
            return "her" if self.g == "f" else "his"
        return {"I": "my", "you": "your", "we": "our"}[self.kind]

    def possn(self):
        return self.name + "'s" if self.third else self.poss()

    def Possn(self):
        return cap(self.possn())

    def v(self, verb, tense):
        """Verb form for a (base, s3, past, pp) tuple."""
        if tense == "past":
            return verb[2]
        return verb[1] if self.third else verb[0]

    def rv(self, verb):  # the reasoning is always in the present
        return verb[1] if self.third else verb[0]

    def do(self, tense):
        return "did" if tense == "past" else ("does" if self.third else "do")

    def be(self, tense):
        if tense == "past":
            return "were" if self.kind in ("you", "we") else "was"
        return {"third": "is", "I": "am", "you": "are", "we": "are"}[self.kind]

    def have(self, tense):
        return "had" if tense == "past" else ("has" if self.third else "have")

    def rhave(self):
        return "has" if self.third else "have"

    def ref(self, tense):
        """How a comparison names this subject: 'Rafael', 'I did', 'we do'."""
        if self.third:
            return self.name
        return f"{self.s()} {self.do(tense)}"

    def qref(self, rng):
        """How a question at the end names the subject."""
        if self.third and rng.random() < 0.3:
            return self.pro()
        return self.s()


def ri(rng, a, b):
    """A random integer in a..b; an empty range means the draw failed."""
    if b < a:
        raise Bad()
    return rng.randint(a, b)


def cap(s):
    return s[:1].upper() + s[1:]


def decap(s):
    w = s.split(" ", 1)[0].rstrip(",'s")
    if w in ALL_NAMES or w == "I" or s.split(" ", 1)[0].rstrip(",") in ALL_NAMES:
        return s
    return s[:1].lower() + s[1:]


def new_names(rng, k):
    out = []
    while len(out) < k:
        g = rng.choice("fm")
        n = rng.choice(FEMALE if g == "f" else MALE)
        if n not in [o[0] for o in out]:
            out.append((n, g))
    return out


def people(rng, k, first_kinds=True):
    """k subjects: the first may be I/you/we; the others are named."""
    names = new_names(rng, k)
    out = []
    for i, (n, g) in enumerate(names):
        if i == 0 and first_kinds:
            kind = rng.choices(["third", "I", "we", "you"], [60, 16, 13, 11])[0]
        else:
            kind = "third"
        out.append(Who(kind, n, g))
    return out


def together(a, b):
    """'Rafael and Ana', 'Ana and I', 'you and Ana', 'we and Ana' is avoided by callers."""
    if a.kind == "I":
        return f"{b.name} and I"
    if b.kind == "I":
        return f"{a.name} and I"
    if a.kind == "you":
        return f"you and {b.name}"
    if b.kind == "you":
        return f"you and {a.name}"
    return f"{a.s()} and {b.s()}"


# ----------------------------------------------------------------------------- units

class Unit:
    def __init__(self, sing, plural, fam, of=None, long=None):
        self.sing, self.plural, self.fam, self.of = sing, plural, fam, of
        self.long = long or plural  # the word a question uses ("kilometres" for "km")

    def w(self, k, of=True):
        word = self.sing if k == 1 else self.plural
        return word + (" of " + self.of if of and self.of else "")

    def q(self, k, of=True):
        return f"{k} {self.w(k, of)}"

    def pl(self, of=True):
        return self.w(2, of)

    def adj(self, k):  # "90-page", "60-litre"
        word = self.sing
        if word in ("L", "g", "m", "km", "kg", "cm"):
            word = self.long[:-1] if self.long.endswith("s") else self.long
        return f"{k}-{word}"

    def qw(self):  # "How many ... "
        return self.long + (" of " + self.of if self.of else "")


UNITS = {
    "km": [("km", "km", "kilometres"), ("kilometre", "kilometres"), ("kilometer", "kilometers")],
    "mile": [("mile", "miles")],
    "m": [("metre", "metres"), ("meter", "meters"), ("m", "m", "metres")],
    "lap": [("lap", "laps")],
    "length": [("length", "lengths")],
    "page": [("page", "pages")],
    "chapter": [("chapter", "chapters")],
    "point": [("point", "points")],
    "goal": [("goal", "goals")],
    "run": [("run", "runs")],
    "minute": [("minute", "minutes")],
    "hour": [("hour", "hours")],
    "litre": [("litre", "litres"), ("liter", "liters"), ("L", "L", "litres")],
    "cup": [("cup", "cups")],
    "glass": [("glass", "glasses")],
    "bottle": [("bottle", "bottles")],
    "spoon": [("spoonful", "spoonfuls"), ("tablespoon", "tablespoons"), ("teaspoon", "teaspoons")],
    "g": [("gram", "grams"), ("g", "g", "grams")],
    "kg": [("kilogram", "kilograms"), ("kg", "kg", "kilograms"), ("kilo", "kilos")],
    "cm": [("centimetre", "centimetres"), ("centimeter", "centimeters"), ("cm", "cm", "centimetres")],
}
DIST = {"km", "mile", "m"}


def unit(rng, fam, of=None):
    t = rng.choice(UNITS[fam])
    return Unit(t[0], t[1], fam, of, t[2] if len(t) > 2 else None)


# ----------------------------------------------------------------------------- story and rendering

class Story:
    def __init__(self):
        self.st = []      # statements: dict(text, conts, ifok)
        self.lines = []   # reasoning sentences
        self.worked = []

    def add(self, text, conts=(), ifok=True, subj=None):
        self.st.append(dict(text=text, conts=list(conts), ifok=ifok and ", " not in text, subj=subj))
        return len(self.st)

    def eq(self, a, op, b):
        r = items.compute(op, a, b)
        for x in (a, b, r):
            if x is None or not 1 <= x <= 100:
                raise Bad()
        if op == "*" and min(a, b) > 25:
            raise Bad()
        self.worked.append({"op": op, "a": a, "b": b, "result": r})
        return f"{a} {op} {b} = {r}", r

    def say(self, k, line):
        self.lines.append(f"({k}) {line}" if k else line)

    def nochange(self, k):
        self.say(k, "This does not change the answer.")


JOINS = [" and ", " and then ", ", then ", ", and later "]


def cont_forms(vp):
    """Ways to hang a verb phrase onto the previous sentence (same subject)."""
    return [(j, vp) for j in JOINS]


def end_sentence(s):
    return s if s.endswith((".", "?", "!")) else s + "."


def render(rng, story, question, if_question=None, pro=None):
    """The user text: statements and the question in one of several layouts.

    question: the question sentence ending in '?'. if_question: the same question in a form that
    reads after 'If ..., ' (defaults to question)."""
    st = story.st
    modes = ["plain"] * 62 + ["qfirst"] * 7 + ["numbered"] * 5
    if all(s["ifok"] for s in st) and len(st) <= 3 and " if " not in question.lower() \
            and not question.startswith("If "):
        modes += ["iffirst"] * 12 + ["iflast"] * 10
    mode = rng.choice(modes)
    if pro and mode in ("plain", "numbered") and rng.random() < 0.35:
        question = re.sub(r"\b%s\b(?!')" % re.escape(pro[0]), pro[1], question, count=1)
    if mode in ("iffirst", "iflast"):
        clauses = [decap(s["text"]) for s in st]
        if len(clauses) == 1:
            body = clauses[0]
        else:
            body = ", ".join(clauses[:-1]) + rng.choice([" and ", ", and ", " and then "]) + clauses[-1]
        q = if_question or question
        if mode == "iffirst":
            text = f"If {body}, {decap(q)}"
        else:
            lead = rng.choice([" if ", " if ", ", given that ", " when "])
            text = q[:-1] + lead + body + "?"
    elif mode == "numbered":
        text = " ".join(f"({i + 1}) {end_sentence(s['text'])}" for i, s in enumerate(st)) + " " + question
    else:
        sents, i = [], 0
        while i < len(st):
            cur = st[i]["text"]
            j = i + 1
            while (j < len(st) and st[j]["conts"] and st[j]["subj"] is not None
                   and st[j]["subj"] is st[j - 1]["subj"] and rng.random() < 0.4 and j - i < 3):
                conn, vp = rng.choice(st[j]["conts"])
                cur = cur + conn + vp
                j += 1
            sents.append(end_sentence(cur))
            i = j
        body = " ".join(sents)
        text = (question + " " + body) if mode == "qfirst" else (body + " " + question)
    return text


LEADS = ["Quick one: ", "Word problem: ", "Can you help? ", "Try this: ", "Homework question: ",
         "Here's one: ", "Measuring puzzle: ", "Math question: ", "I need help with this. ",
         "Solve this: ", "hey, ", "Riddle for you: "]


def finish(rng, story, text):
    if rng.random() < 0.18:
        text = rng.choice(LEADS) + text
    r = rng.random()
    if r < 0.04:
        text = text.lower()
    elif r < 0.07:
        text = text.rstrip("?")
    elif r < 0.09:
        text = text + rng.choice([" Thanks!", " thx", " Please show the steps."])
    text = an(" ".join(text.split()))
    story.lines = [an(x) for x in story.lines]
    return {"user_text": text, "reasoning": list(story.lines), "worked": list(story.worked),
            "answer": story.worked[-1]["result"]}


def an(text):
    """'a 84 cm rope' -> 'an 84 cm rope'."""
    return re.sub(r"\b([Aa]) (8|8\d|11|18)(?=[ -])", r"\1n \2", text)


def bare_item(rng, text, steps):
    """An item with equations only (no story)."""
    st = Story()
    for a, op, b in steps:
        e, _ = st.eq(a, op, b)
        st.say(None, e + ".")
    return finish(rng, st, text)


# ----------------------------------------------------------------------------- distractors

def distractor(rng, who, tense, fam, others):
    o = rng.choice(others) if others else None
    pres = tense == "pres"
    opts = [
        lambda: f"{who.Possn()} dog is called {rng.choice(PETS)}",
        lambda: f"The weather {'is' if pres else 'was'} {rng.choice(['sunny', 'windy', 'cold', 'warm', 'cloudy'])}",
        lambda: f"{who.S() if who.kind != 'we' else 'Our guide'} {who.be(tense) if who.kind != 'we' else ('is' if pres else 'was')} {ri(rng, 8, 60)} years old",
        lambda: f"{who.S()} {who.v(('wear', 'wears', 'wore', 'worn'), tense)} a "
                f"{rng.choice(['red', 'blue', 'green', 'yellow'])} cap",
        lambda: f"{who.Possn()} bike {'has' if pres else 'had'} {ri(rng, 3, 21)} gears",
        lambda: f"The thermometer {'shows' if pres else 'showed'} {ri(rng, 5, 35)} degrees",
        lambda: f"The park {'has' if pres else 'had'} {ri(rng, 4, 30)} benches",
    ]
    if fam not in ("kg",):
        opts.append(lambda: f"{who.Possn()} backpack {'weighs' if pres else 'weighed'} {ri(rng, 2, 9)} kg")
    if fam not in ("minute",):
        opts.append(lambda: f"It {'takes' if pres else 'took'} {ri(rng, 5, 40)} minutes to get to the park")
    if fam not in DIST and o:
        opts.append(lambda: f"{o.name} {'lives' if pres else 'lived'} {ri(rng, 2, 40)} km away")
    return rng.choice(opts)()


def maybe_distract(rng, story, who, tense, fam, others, p=0.22):
    """Insert a distractor statement at a random place after the first."""
    if rng.random() >= p or len(story.st) == 0:
        return None
    return distractor(rng, who, tense, fam, others)


# ----------------------------------------------------------------------------- activity engine

def V(*forms):
    return tuple(forms)


WHENS_DAY = [["on Monday", "on Tuesday", "on Wednesday", "on Thursday"],
             ["on Saturday", "on Sunday", "on Monday", "on Tuesday"],
             ["in the morning", "in the afternoon", "in the evening", "at night"],
             ["before lunch", "after lunch", "after dinner", "before bed"],
             ["on the first day", "on the second day", "on the third day", "on the fourth day"]]
WHENS_PAST = [["last week", "this week", "over the weekend", "yesterday"],
              ["on Friday", "on Saturday", "yesterday", "this morning"]]
WHENS_SPORT = [["in the first half", "in the second half", "in extra time", "in the shootout"],
               ["in the first game", "in the second game", "in the third game", "in the final"],
               ["in the first round", "in the second round", "in the third round", "in the last round"]]

PERIODS = {  # per-phrases, period plural
    "day": (["a day", "each day", "every day", "per day"], "day", "days"),
    "morning": (["each morning", "every morning"], "morning", "mornings"),
    "evening": (["each evening", "every evening"], "evening", "evenings"),
    "night": (["a night", "each night", "every night"], "night", "nights"),
    "week": (["a week", "each week", "every week", "per week"], "week", "weeks"),
    "hour": (["an hour", "each hour", "per hour"], "hour", "hours"),
    "game": (["a game", "each game", "per game", "in every game"], "game", "games"),
    "match": (["a match", "each match", "per match"], "match", "matches"),
    "month": (["a month", "each month", "every month"], "month", "months"),
}

# largest single amount and largest amount per period, by unit family
FAM_CAP = {"km": (45, 20), "mile": (30, 12), "m": (100, 25), "lap": (60, 20), "length": (60, 20),
           "page": (70, 25), "chapter": (12, 4), "point": (60, 25), "goal": (9, 4), "run": (80, 25),
           "minute": (90, 45), "hour": (6, 4), "glass": (10, 4), "cup": (8, 4), "litre": (6, 3),
           "bottle": (6, 3), "kg": (40, 15), "cm": (40, 15)}


def act(v, units, kind, per, groups=None, fmt="{v} {q}", whens=None, of=None, qverb=None, caps=None):
    return dict(v=v, units=units, kind=kind, per=per, groups=groups or {}, fmt=fmt,
                whens=whens, of=of or {}, qverb=qverb, caps=caps or {})


# group nouns: (singular, plural, "of"/"worth", smallest size, largest size)
KM_GROUPS = [("loop", "loops", "of", 2, 15), ("lap", "laps", "of", 2, 10), ("trip", "trips", "of", 3, 30)]
ACTS = [
    act(V("walk", "walks", "walked", "walked"), ["km", "mile"], "dist", ["day", "morning", "week"],
        {"km": [("loop", "loops", "of", 2, 8), ("trip", "trips", "of", 2, 10)],
         "mile": [("trip", "trips", "of", 2, 6)]}),
    act(V("run", "runs", "ran", "run"), ["km", "mile", "lap"], "dist", ["day", "morning", "week"],
        {"km": [("loop", "loops", "of", 2, 10), ("lap", "laps", "of", 2, 5)]}),
    act(V("jog", "jogs", "jogged", "jogged"), ["km", "mile", "lap"], "dist", ["day", "morning", "evening"],
        {"km": [("loop", "loops", "of", 2, 6)]}),
    act(V("cycle", "cycles", "cycled", "cycled"), ["km", "mile"], "dist", ["day", "hour", "week"],
        {"km": KM_GROUPS, "mile": [("lap", "laps", "of", 2, 8)]}, caps={"km": (90, 30), "mile": (60, 20)}),
    act(V("hike", "hikes", "hiked", "hiked"), ["km", "mile"], "dist", ["day"],
        {"km": [("trail", "trails", "of", 3, 15)]}),
    act(V("swim", "swims", "swam", "swum"), ["lap", "length", "m"], "dist", ["day", "morning", "week"],
        {"m": [("length", "lengths", "of", 10, 50)]}),
    act(V("row", "rows", "rowed", "rowed"), ["km"], "dist", ["hour", "day"]),
    act(V("drive", "drives", "drove", "driven"), ["km", "mile"], "dist", ["hour", "day"],
        {"km": [("trip", "trips", "of", 5, 30)]}, caps={"km": (90, 50), "mile": (90, 50)}),
    act(V("skate", "skates", "skated", "skated"), ["lap", "km"], "dist", ["day", "evening"]),
    act(V("paddle", "paddles", "paddled", "paddled"), ["km"], "dist", ["hour", "day"]),
    act(V("sail", "sails", "sailed", "sailed"), ["km", "mile"], "dist", ["hour", "day"],
        caps={"km": (90, 30), "mile": (60, 20)}),
    act(V("climb", "climbs", "climbed", "climbed"), ["m"], "dist", ["hour", "day"]),
    act(V("read", "reads", "read", "read"), ["page", "page", "chapter"], "count", ["day", "evening", "night", "week"],
        {"page": [("chapter", "chapters", "of", 5, 25), ("article", "articles", "of", 2, 12),
                  ("story", "stories", "of", 4, 20)]}),
    act(V("write", "writes", "wrote", "written"), ["page"], "count", ["day", "week"],
        {"page": [("letter", "letters", "of", 2, 6), ("essay", "essays", "of", 3, 10)]}, caps={"page": (30, 8)}),
    act(V("score", "scores", "scored", "scored"), ["point", "point", "goal", "run"], "count", ["game", "match"],
        {"point": [("basket", "baskets", "worth", 2, 3), ("try", "tries", "worth", 5, 5),
                   ("shot", "shots", "worth", 2, 3)]}, whens=WHENS_SPORT),
    act(V("drink", "drinks", "drank", "drunk"), ["glass", "cup", "litre", "bottle"], "count", ["day", "morning"],
        {"litre": [("bottle", "bottles", "of", 1, 2), ("jug", "jugs", "of", 1, 3)]},
        of={"glass": ["water", "milk", "juice"], "cup": ["tea", "coffee", "cocoa"],
            "litre": ["water", "juice"], "bottle": ["water", "lemonade"]}),
    act(V("pick", "picks", "picked", "picked"), ["kg"], "count", ["day", "hour", "morning"],
        {"kg": [("basket", "baskets", "of", 2, 8), ("crate", "crates", "of", 5, 15), ("bag", "bags", "of", 2, 6)]},
        of={"kg": ["apples", "cherries", "plums", "strawberries", "pears"]}),
    act(V("practise", "practises", "practised", "practised"), ["minute"], "time", ["day", "evening", "week"],
        {"minute": [("session", "sessions", "of", 10, 45), ("lesson", "lessons", "of", 20, 50)]},
        fmt="{v} the {obj} for {q}", qverb="{v} the {obj}"),
    act(V("practice", "practices", "practiced", "practiced"), ["minute", "minute", "hour"], "time", ["day", "week"],
        {"minute": [("session", "sessions", "of", 10, 30)]}, fmt="{v} the {obj} for {q}", qverb="{v} the {obj}"),
    act(V("study", "studies", "studied", "studied"), ["minute", "minute", "hour"], "time", ["day", "evening", "week"],
        {"minute": [("session", "sessions", "of", 15, 45)]}, fmt="{v} {subj} for {q}", qverb="{v} {subj}"),
    act(V("sleep", "sleeps", "slept", "slept"), ["hour"], "time", ["night"], fmt="{v} for {q}", qverb="{v}",
        caps={"hour": (11, 10)}, whens=[["on Monday night", "on Tuesday night", "on Wednesday night", "on Thursday night"],
                                        ["on Friday night", "on Saturday night", "on Sunday night", "last night"]]),
    act(V("train", "trains", "trained", "trained"), ["minute", "hour"], "time", ["day", "week"],
        {"minute": [("session", "sessions", "of", 10, 40)]}, fmt="{v} for {q}", qverb="{v}"),
    act(V("paint", "paints", "painted", "painted"), ["m"], "count", ["day", "hour"], of={"m": ["fence"]},
        caps={"m": (40, 12)}),
    act(V("knit", "knits", "knitted", "knitted"), ["cm"], "count", ["day", "evening"],
        of={"cm": ["scarf"]}),
    act(V("collect", "collects", "collected", "collected"), ["litre"], "count", ["day", "week"],
        {"litre": [("bucket", "buckets", "of", 5, 15)]}, of={"litre": ["rainwater"]}, caps={"litre": (40, 15)}),
    act(V("dig", "digs", "dug", "dug"), ["m"], "count", ["day", "hour"], of={"m": ["ditch", "trench"]},
        caps={"m": (30, 8)}),
]
INSTR = ["piano", "violin", "guitar", "flute", "drums", "cello", "trumpet"]
SUBJECTS = ["maths", "French", "history", "biology", "Spanish", "chemistry"]
MULT = [("twice", 2), ("twice", 2), ("three times", 3), ("3 times", 3), ("four times", 4), ("double", 2)]


class Activity:
    """One drawn activity: verb, unit and wording helpers."""

    def __init__(self, rng):
        a = rng.choice(ACTS)
        self.a = a
        fam = rng.choice(a["units"])
        of = rng.choice(a["of"][fam]) if fam in a["of"] else None
        self.u = unit(rng, fam, of)
        self.fam = fam
        self.kind = a["kind"] if (a["kind"] != "dist" or fam in DIST) else "count"
        self.obj = rng.choice(INSTR)
        self.subj = rng.choice(SUBJECTS)
        self.groups = a["groups"].get(fam, [])
        self.per = rng.choice(a["per"])
        self.cap, self.rcap = a["caps"].get(fam, FAM_CAP[fam])

    def pick_whens(self, rng, tense):
        w = self.a["whens"] or (WHENS_DAY + (WHENS_PAST if tense == "past" else []))
        self.whens = list(rng.choice(w))

    def do(self, vform, q):
        return self.a["fmt"].format(v=vform, q=q, obj=self.obj, subj=self.subj)

    def vp(self, who, tense, q):
        return self.do(who.v(self.a["v"], tense), q)

    def rvp(self, who, q):
        return self.do(who.rv(self.a["v"]), q)

    def qverb(self, base):
        f = self.a["qverb"] or "{v}"
        return f.format(v=base, obj=self.obj, subj=self.subj)

    def far(self):
        return {"dist": "far", "time": "long"}.get(self.kind)

    def many(self):
        return {"dist": "far", "time": "long"}.get(self.kind) or f"many {self.u.pl()}"


def activity_chain(rng, steps):
    """An activity that accumulates a measured amount, maybe a second person, and an end."""
    for _ in range(200):
        try:
            return _activity_chain(rng, steps)
        except Bad:
            continue
    raise RuntimeError("activity_chain: no draw")


def plan_activity(rng, steps, has_groups):
    while True:
        start = rng.choices(["plain", "rate", "group"], [60, 25, 15 if has_groups else 0])[0]
        end = rng.choices(["none", "both", "diff", "goal_q", "goal_f"], [50, 12, 12, 14, 12])[0]
        cost = {"plain": 0, "rate": 1, "group": 1}[start] + (0 if end == "none" else 1)
        mids = []
        second = False
        while cost < steps and len(mids) < 5:
            opts = [("more", 1, 40), ("two", 2, 10), ("rate", 2, 12), ("twice", 2, 8), ("cmp", 1, 22)]
            if "group" not in mids and has_groups:
                opts.append(("group", 2, 10))
            if second or end == "goal_f":
                opts = [o for o in opts if o[0] != "cmp"]
            if mids or start != "plain":
                opts = [o for o in opts if o[0] != "twice"]
            name, c, _ = rng.choices(opts, [o[2] for o in opts])[0]
            if cost + c > steps:
                if all(cost + o[1] > steps for o in opts):
                    break
                continue
            mids.append(name)
            cost += c
            if name == "cmp":
                second = True
        if cost != steps:
            continue
        if end in ("both", "diff") and not second:
            mids.append("other")
        return start, mids, end


def _activity_chain(rng, steps):
    ac = Activity(rng)
    start, mids, end = plan_activity(rng, steps, bool(ac.groups))
    u = ac.u
    tense = rng.choice(["past", "pres"])
    ac.pick_whens(rng, tense)
    if start != "plain" and ac.a["v"][0] != "sleep" and ac.whens[0] not in WHENS_SPORT[0] + WHENS_SPORT[1]:
        ac.whens = rng.choice([["the next day", "the day after that", "at the weekend", "on the last day"],
                               ["after that", "the following week", "at the weekend", "at the very end"]])
    ppl = people(rng, 3)
    A = ppl[0]
    others = ppl[1:]
    st = Story()
    val = {}
    cur = A
    whens = ac.whens
    wi = 0
    goal = goal_kind = None
    CAP, RCAP = ac.cap, ac.rcap

    def when(p=0.6):
        nonlocal wi
        if wi < len(whens) and rng.random() < p:
            w = whens[wi]
            wi += 1
            return w
        return None

    def amount(lo, hi):
        return ri(rng, lo, min(hi, CAP))

    # a goal stated as a fact comes first
    if end == "goal_f":
        goal = ri(rng, min(20, CAP), 100)
        if ac.fam == "page" and ac.a["v"][0] == "read":
            txt = rng.choice([f"{A.S()} {A.be(tense)} reading a {goal}-page book",
                              f"{A.Possn()} book {'has' if tense == 'pres' else 'had'} {goal} pages",
                              f"{A.S()} {A.v(V('want', 'wants', 'wanted'), tense)} to finish a {goal}-page book"])
            k = st.add(txt, subj=A)
            st.say(k, f"The book has {goal} pages.")
            goal_kind = "book"
        else:
            want = A.v(V("want", "wants", "wanted"), tense)
            todo = ac.do(ac.a["v"][0], u.q(goal))
            txt = rng.choice([f"{A.S()} {want} to {todo} this week",
                              f"{A.Possn()} goal {'is' if tense == 'pres' else 'was'} to {todo}",
                              f"{A.S()} {A.v(V('plan', 'plans', 'planned'), tense)} to {todo} in total",
                              f"{A.S()} {A.v(V('hope', 'hopes', 'hoped'), tense)} to {todo}"])
            k = st.add(txt, subj=A)
            st.say(k, f"{A.S()} {A.rv(V('want', 'wants'))} to {todo}.")
            goal_kind = "goal"

    reversed_cmp = (start == "plain" and mids and mids[0] == "cmp" and A.third and rng.random() < 0.3)
    used_when = False

    # ---- start
    if start == "plain":
        n = amount(2, 60 if steps > 1 else 90)
        val[A] = n
        if not reversed_cmp:  # else emitted together with the comparison
            w = when()
            used_when = bool(w)
            form = ri(rng, 0, 3)
            if form == 1 and w:
                txt = f"{cap(w)}, {A.s()} {ac.vp(A, tense, u.q(n))}"
            elif form == 2 and not w:
                pp = ac.do(ac.a["v"][3], u.q(n))
                txt = (f"{A.S()} {A.have(tense)} already {pp}" if rng.random() < 0.5
                       else f"So far {A.s()} {A.have(tense)} {pp}")
            else:
                txt = f"{A.S()} {ac.vp(A, tense, u.q(n))}" + (f" {w}" if w else "")
            k = st.add(txt, subj=A)
            st.say(k, f"{A.S()} {ac.rvp(A, u.q(n))}.")
    elif start == "rate":
        per_phr, p1, pp = PERIODS[ac.per]
        d = ri(rng, 2, 10)
        r = ri(rng, 1 if RCAP < 4 else 2, min(RCAP, 100 // d))
        e, n = st.eq(d, "*", r)
        val[A] = n
        ph = rng.choice(per_phr)
        form = ri(rng, 0, 2)
        if form == 0:
            txt = f"{A.S()} {ac.vp(A, tense, u.q(r))} {ph} for {d} {pp}"
        elif form == 1:
            txt = f"For {d} {pp}, {A.s()} {ac.vp(A, tense, u.q(r))} each {p1}"
        else:
            txt = f"{A.S()} {ac.vp(A, tense, u.q(r))} {ph} over {d} {pp}"
        k = st.add(txt, subj=A)
        st.say(k, f"{A.S()} {ac.rvp(A, e + ' ' + u.w(n))}.")
    else:  # group
        g = rng.choice(ac.groups)
        c = ri(rng, 2, 9)
        m = ri(rng, g[3], min(g[4], 100 // c))
        e, n = st.eq(c, "*", m)
        val[A] = n
        txt = f"{A.S()} {ac.vp(A, tense, f'{c} {g[1]} {g[2]} {u.q(m, of=False)} each')}"
        k = st.add(txt, subj=A)
        st.say(k, f"{A.S()} {ac.rvp(A, e + ' ' + u.w(n))}.")

    # ---- middle operations
    for op in mids:
        dis = maybe_distract(rng, st, cur, tense, ac.fam, others, p=0.12)
        if dis:
            st.nochange(st.add(dis))
        x = val[cur]
        P = cur.Pro() if cur.third and rng.random() < 0.6 else cur.S()
        vform = cur.v(ac.a["v"], tense)
        if op == "more":
            n = amount(2 if CAP >= 10 else 1, 100 - x)
            w = when()
            form = ri(rng, 0, 3)
            if form == 0:
                vp = ac.do(vform, f"{n} more {u.w(n)}") + (f" {w}" if w else "")
                txt = f"{P} {vp}"
            elif form == 1 and w:
                vp = ac.do(vform, f"another {u.q(n)}") + f" {w}"
                txt = f"{cap(w)}, {decap(P)} {ac.do(vform, ('another ' if not used_when else '') + u.q(n))}"
            elif form == 3 and w and used_when:
                vp = ac.do(vform, u.q(n)) + f" {w}"
                txt = f"{P} {vp}"
            else:
                vp = ac.do(vform, f"another {u.q(n)}") + (f" {w}" if w else "")
                txt = f"{P} {vp}"
            used_when = used_when or bool(w)
            k = st.add(txt, cont_forms(vp), subj=cur)
            e, y = st.eq(x, "+", n)
            st.say(k, f"{cur.S()} {ac.rvp(cur, e + ' ' + u.w(y))}.")
            val[cur] = y
        elif op == "two":
            n1 = amount(1, max(1, (100 - x) // 2))
            n2 = amount(1, max(1, 100 - x - n1))
            if wi + 1 < len(whens):
                w1, w2 = whens[wi], whens[wi + 1]
                wi += 2
                vp = ac.do(vform, f"{u.q(n1)} {w1} and {n2} {w2}")
                used_when = True
            else:
                vp = ac.do(vform, f"another {u.q(n1)} and then {n2} more")
            k = st.add(f"{P} {vp}", cont_forms(vp), subj=cur)
            e1, y1 = st.eq(x, "+", n1)
            e2, y2 = st.eq(y1, "+", n2)
            st.say(k, f"{cur.S()} {ac.rvp(cur, e1 + ' ' + u.w(y1))} and {cur.s()} "
                      f"{ac.rvp(cur, e2 + ' ' + u.w(y2))}.")
            val[cur] = y2
        elif op == "rate":
            per_phr, p1, pp = PERIODS[ac.per]
            d = ri(rng, 2, 9)
            r = ri(rng, 1, min(RCAP, (100 - x) // d))
            vp = ac.do(vform, u.q(r)) + f" {rng.choice(per_phr)} for {d} {pp}"
            txt = rng.choice([f"{P} {vp}", f"{P} then {vp}", f"After that, {decap(P)} {vp}"])
            k = st.add(txt, cont_forms(vp), subj=cur)
            e1, p = st.eq(d, "*", r)
            e2, y = st.eq(x, "+", p)
            st.say(k, f"That is {e1} {u.w(p)} and {cur.s()} {ac.rvp(cur, e2 + ' ' + u.w(y))}.")
            val[cur] = y
        elif op == "group":
            g = rng.choice(ac.groups)
            c = ri(rng, 2, 6)
            m = ri(rng, g[3], min(g[4], (100 - x) // c))
            vp = ac.do(vform, f"{c} {g[1]} {g[2]} {u.q(m, of=False)} each")
            txt = rng.choice([f"{P} {vp}", f"{P} also {vp}", f"Then {decap(P)} {vp}"])
            k = st.add(txt, cont_forms(vp), subj=cur)
            e1, p = st.eq(c, "*", m)
            e2, y = st.eq(x, "+", p)
            st.say(k, f"That is {e1} {u.w(p)} and {cur.s()} {ac.rvp(cur, e2 + ' ' + u.w(y))}.")
            val[cur] = y
        elif op == "twice":
            name, f = rng.choice(MULT + [("half", 0)] * 2)
            w = whens[wi] if wi < len(whens) else rng.choice(["the next day", "later", "after that"])
            wi += 1
            if name == "half":
                if x % 2:
                    raise Bad()
                how = {"dist": "half as far", "time": "half as long"}.get(ac.kind, f"half as many {u.pl()}")
            elif name == "double":
                how = {"dist": "double the distance", "time": "double the time"}.get(
                    ac.kind, f"double the number of {u.pl()}")
            else:
                how = f"{name} " + {"dist": "as far", "time": "as long"}.get(ac.kind, f"as many {u.pl()}")
            vp = ac.do(vform, how) + f" {w}"
            txt = f"{cap(w)}, {cur.pro()} {ac.do(vform, how)}"
            k = st.add(txt, [(j, vp) for j in (" and ", ", and ", " but ")] if name == "half" else cont_forms(vp),
                       subj=cur)
            e1, p = st.eq(x, "/", 2) if name == "half" else st.eq(x, "*", f)
            e2, y = st.eq(x, "+", p)
            st.say(k, f"That is {e1} {u.w(p)} and {cur.s()} {ac.rvp(cur, e2 + ' ' + u.w(y))}.")
            val[cur] = y
        elif op in ("cmp", "other"):
            B = others.pop(0)
            if cur.third and op == "other" and rng.random() < 0.25:
                B = Who("I", B.name, B.g)
            Bv = B.v(ac.a["v"], tense)
            if op == "other":
                n = amount(2, 90)
                w = when()
                txt = f"{B.S()} {ac.do(Bv, u.q(n))}" + (f" {w}" if w else "")
                k = st.add(txt, subj=B)
                st.say(k, f"{B.S()} {ac.rvp(B, u.q(n))}.")
                val[B] = n
            else:
                kind = rng.choices(["+", "-", "*", "/"], [35, 30, 22, 13])[0]
                if kind == "+":
                    n = amount(1, min(40, 100 - x))
                    rel = {"dist": rng.choice([f"{u.q(n, of=False)} farther than", f"{u.q(n, of=False)} more than"]),
                           "time": f"{u.q(n, of=False)} longer than"}.get(ac.kind, f"{n} more {u.w(n)} than")
                elif kind == "-":
                    n = amount(1, x - 1)
                    rel = {"dist": f"{u.q(n, of=False)} less than", "time": f"{u.q(n, of=False)} less than"}.get(
                        ac.kind, f"{n} fewer {u.w(n)} than")
                elif kind == "*":
                    name, f = rng.choice(MULT[:5])
                    if x * f > 100:
                        raise Bad()
                    rel = f"{name} " + {"dist": "as far as", "time": "as long as"}.get(ac.kind, f"as many {u.pl()} as")
                    n = f
                else:
                    if x % 2:
                        raise Bad()
                    rel = "half " + {"dist": "as far as", "time": "as long as"}.get(ac.kind, f"as many {u.pl()} as")
                    n = 2
                ref = cur.name if reversed_cmp else cur.ref(tense)
                txt = f"{B.S()} {ac.do(Bv, rel + ' ' + ref)}"
                if reversed_cmp:
                    base = val[A]
                    w = when()
                    txt2 = f"{A.S()} {ac.vp(A, tense, u.q(base))}" + (f" {w}" if w else "")
                    rel_vp = f"who {ac.vp(A, tense, u.q(base))}" + (f" {w}" if w else "")
                    k = st.add(txt, subj=B)
                    k2 = st.add(txt2, [(", ", rel_vp)], subj=B)  # joins only as a relative clause
                    st.say(k2, f"{A.S()} {ac.rvp(A, u.q(base))}.")
                else:
                    k = st.add(txt, subj=B)
                e, y = st.eq(x, kind, n)
                st.say(k, f"{B.S()} {ac.rvp(B, e + ' ' + u.w(y))}.")
                val[B] = y
            cur = B

    dis = maybe_distract(rng, st, A, tense, ac.fam, others, p=0.15 if steps < 4 else 0.05)
    if dis:
        st.nochange(st.add(dis))

    # ---- end and question
    who = cur
    base = ac.a["v"][0]
    do_ = who.do(tense)
    s = who.s()
    qv = ac.qverb(base)
    far = ac.far()
    if end == "none":
        qs = [f"How many {u.qw()} {do_} {s} {qv} in total?",
              f"How many {u.qw()} {do_} {s} {qv} altogether?",
              f"What is the total number of {u.qw()} {s} {ac.qverb(who.v(ac.a['v'], tense))}?",
              f"How many {u.qw()} {do_} {s} {qv}?"]
        if len(val) == 1:
            qs.append(f"How many {u.qw()} is that in all?")
        if far:
            qs += [f"How {far} {do_} {s} {qv} in total?", f"How {far} {do_} {s} {qv} altogether?"]
        if ac.kind == "dist":
            qs += [f"What distance {do_} {s} cover?", f"What is the total distance {s} {who.v(ac.a['v'], tense)}?"]
        q = rng.choice(qs)
    elif end in ("both", "diff"):
        B = who
        A2 = [p for p in val if p is not B][0] if len(val) > 1 else None
        if A2 is None or "we" in (A2.kind, B.kind):
            raise Bad()
        xa, xb = val[A2], val[B]
        pair = together(A2, B)
        dd = "did" if tense == "past" else "do"
        if end == "both":
            qs = [f"How many {u.qw()} {dd} {pair} {qv} together?",
                  f"How many {u.qw()} {dd} the two of them {qv} altogether?",
                  f"What is the total number of {u.qw()} for {pair.replace(' I', ' me')}?"]
            if far:
                qs.append(f"How {far} {dd} {pair} {qv} in total?")
            q = rng.choice(qs)
            e, _ = st.eq(xa, "+", xb)
            st.say(None, f"Together, {pair} {ac.do(base, e + ' ' + u.w(xa + xb))}.")
        else:
            if xa == xb:
                raise Bad()
            big, small = (A2, B) if xa > xb else (B, A2)
            d = val[big] - val[small]
            more = {"dist": "farther", "time": "longer"}.get(ac.kind)
            r = rng.random()
            if more and r < 0.5:
                q = f"How much {more} {big.do(tense)} {big.s()} {qv} than {small.ref(tense)}?"
            elif r < 0.75:
                q = f"How many more {u.qw()} {big.do(tense)} {big.s()} {qv} than {small.ref(tense)}?"
            else:
                q = f"How many fewer {u.qw()} {small.do(tense)} {small.s()} {qv} than {big.ref(tense)}?"
            e, _ = st.eq(val[big], "-", val[small])
            st.say(None, f"{big.S()} {ac.rvp(big, e + ' ' + u.w(d))} more than "
                         f"{small.s() if small.third else small.obj()}.")
    else:  # goal
        x = val[who]
        if end == "goal_q":
            if x >= 100:
                raise Bad()
            goal = ri(rng, x + 1, 100)
            if ac.fam == "page" and base == "read":
                q = rng.choice([f"How many more pages {who.do('pres')} {s} need to read to finish the {goal}-page book?",
                                f"How many pages {who.do('pres')} {s} still have to read to finish a {goal}-page book?"])
            else:
                q = rng.choice([f"How many more {u.qw()} {who.do('pres')} {s} need to reach {u.q(goal)}?",
                                f"How many more {u.qw()} must {s} {qv} to reach a total of {u.q(goal)}?",
                                f"How many {u.qw()} short of {u.q(goal)} {who.be('pres')} {s}?"])
        else:
            if who is not A or goal is None or goal <= x:
                raise Bad()
            if goal_kind == "book":
                q = rng.choice([f"How many more pages {who.do('pres')} {s} need to read to finish the book?",
                                f"How many pages {who.do('pres')} {s} still have to read?"])
            else:
                q = rng.choice([f"How many more {u.qw()} {who.do('pres')} {s} need?",
                                f"How many {u.qw()} {who.do('pres')} {s} still have to {qv}?"])
        e, _ = st.eq(goal, "-", x)
        fin = " to finish the book" if ac.fam == "page" and base == "read" else ""
        st.say(None, f"{who.S()} {'needs' if who.third else 'need'} {e} more {u.w(goal - x)}{fin}.")
    pro = (who.name, who.pro()) if who.third and len(val) == 1 else None
    text = render(rng, st, q, pro=pro)
    return finish(rng, st, text)

# ----------------------------------------------------------------------------- stock engine

USE = V("use", "uses", "used")
GIVE = V("give", "gives", "gave")
SPILL = V("spill", "spills", "spilled")
BUY = V("buy", "buys", "bought")
GET = V("get", "gets", "got")
ADD = V("add", "adds", "added")
POUR = V("pour", "pours", "poured")
DRINK = V("drink", "drinks", "drank")
CUT = V("cut", "cuts", "cut")
SELL = V("sell", "sells", "sold")
COOK = V("cook", "cooks", "cooked")
FILL = V("fill", "fills", "filled")
BAKE = V("bake", "bakes", "baked")
MAKE = V("make", "makes", "made")
SPLIT = V("split", "splits", "split")
SHARE = V("share", "shares", "shared")
PUT = V("put", "puts", "put")
SERVE = V("serve", "serves", "served")
TAKE = V("take", "takes", "took")
SPREAD = V("spread", "spreads", "spread")

# person stocks: units, thing, removals, additions, grouped removals, containers to share into
PSTOCK = [
    dict(fams={"cup": 40, "kg": 20, "g": 100}, thing="flour",
         rm=[(USE, "{q} for bread"), (USE, "{q} to make pancakes"), (SPILL, "{q}"), (GIVE, "{q} to {o}")],
         add=[(BUY, "{mq}"), (GET, "another {q} from {o}")],
         grp=[(BAKE, "{c} loaves that need {m} each"), (MAKE, "{c} batches of cookies with {m} in each")],
         share=[("jar", "jars"), ("tin", "tins"), ("bowl", "bowls")],
         box=[("bag", "bags"), ("packet", "packets")], home=["jar", "bag", "tin", "cupboard"]),
    dict(fams={"spoon": 60, "g": 100, "cup": 20}, thing="sugar",
         rm=[(USE, "{q} for a cake"), (PUT, "{q} in the lemonade"), (SPILL, "{q}")],
         add=[(BUY, "{mq}"), (GET, "{mq} from {o}")],
         grp=[(MAKE, "{c} cups of tea with {m} in each"), (BAKE, "{c} pies with {m} in each")],
         share=[("jar", "jars"), ("bowl", "bowls")],
         box=[("packet", "packets"), ("bag", "bags")], home=["jar", "bowl", "tin"]),
    dict(fams={"kg": 50, "cup": 40}, thing="rice",
         rm=[(COOK, "{q}"), (GIVE, "{q} to {o}"), (SELL, "{q}")],
         add=[(BUY, "{mq}"), (GET, "another {q} from {o}")],
         grp=[(FILL, "{c} bags with {m} each"), (COOK, "{c} meals with {m} each")],
         share=[("bag", "bags"), ("sack", "sacks"), ("pot", "pots")],
         box=[("sack", "sacks"), ("bag", "bags")], home=["sack", "bin", "cupboard"]),
    dict(fams={"litre": 30, "glass": 40, "cup": 40}, thing=["juice", "milk", "lemonade", "soup", "iced tea"],
         rm=[(DRINK, "{q}"), (POUR, "{q} for {o}"), (SPILL, "{q}"), (SERVE, "{q} at lunch")],
         add=[(MAKE, "{mq}"), (BUY, "{mq}")],
         grp={"litre": [(FILL, "{c} bottles with {m} each"), (FILL, "{c} flasks with {m} each")],
              "glass": [(SERVE, "{c} guests {m} each")], "cup": [(SERVE, "{c} friends {m} each")]},
         share={"litre": [("jug", "jugs"), ("bottle", "bottles")], "glass": [("table", "tables")],
                "cup": [("table", "tables")]},
         box=[("jug", "jugs"), ("bottle", "bottles"), ("carton", "cartons")], home=["jug", "fridge", "big pot"]),
    dict(fams={"kg": 60}, thing=["potatoes", "apples", "carrots", "onions", "sand", "soil"],
         rm=[(SELL, "{q}"), (GIVE, "{q} to {o}"), (USE, "{q}")],
         add=[(BUY, "{mq}"), (GET, "another {q} from {o}")],
         grp=[(FILL, "{c} bags with {m} each"), (FILL, "{c} boxes with {m} each")],
         share=[("bag", "bags"), ("crate", "crates"), ("basket", "baskets")],
         box=[("sack", "sacks"), ("crate", "crates"), ("bag", "bags")], home=["shed", "garage", "cellar"]),
    dict(fams={"litre": 40}, thing=["paint"],
         rm=[(USE, "{q} on the fence"), (USE, "{q} on the walls"), (SPILL, "{q}")],
         add=[(BUY, "{mq}"), (GET, "{mq} from {o}")],
         grp=[(FILL, "{c} small cans with {m} each"), (USE, "{c} coats of {m} each")],
         share=[("can", "cans"), ("bucket", "buckets")],
         box=[("can", "cans"), ("tin", "tins")], home=["shed", "garage"]),
]
GROUP_SIZE = {"g": (10, 50), "kg": (2, 25), "cup": (2, 10), "spoon": (2, 10), "litre": (1, 5), "glass": (2, 10)}
LENGTHS = ["ribbon", "rope", "string", "wire", "piece of fabric", "roll of tape", "hose", "cable", "plank"]
HOLDERS = [("tank", "water"), ("barrel", "rainwater"), ("aquarium", "water"), ("pot", "soup"),
           ("bathtub", "water"), ("fuel tank", "fuel"), ("water trough", "water"), ("cooler", "lemonade"),
           ("kettle", "water"), ("paddling pool", "water")]
HOLDER_CAP = {"kettle": 3, "pot": 12, "cooler": 20}


def stock_chain(rng, steps):
    for _ in range(300):
        try:
            return _stock_chain(rng, steps)
        except Bad:
            continue
    raise RuntimeError("stock_chain: no draw")


def _stock_chain(rng, steps):
    kind = rng.choices(["person", "length", "holder"], [45, 25, 30])[0]
    tense = rng.choice(["past", "pres"])
    ppl = people(rng, 2)
    W, O = ppl
    st = Story()
    pl = lambda verb: verb[2] if tense == "past" else verb[0]      # plural subject
    sg = lambda verb: verb[2] if tense == "past" else verb[1]      # singular subject
    isare = "were" if tense == "past" else "are"
    isw = "was" if tense == "past" else "is"
    # ---- what is stocked
    if kind == "person":
        spec = rng.choice(PSTOCK)
        fam = rng.choice(sorted(spec["fams"]))
        cap_ = spec["fams"][fam]
        thing = spec["thing"] if isinstance(spec["thing"], str) else rng.choice(spec["thing"])
        u = unit(rng, fam, thing)
        grp = spec["grp"][fam] if isinstance(spec["grp"], dict) else spec["grp"]
        share = spec["share"][fam] if isinstance(spec["share"], dict) else spec["share"]
        rms, adds = spec["rm"], spec["add"]
        restate = lambda n: f"{W.S()} {W.rhave()} {u.q(n)}."
        name = f"the {thing}"
    elif kind == "length":
        obj = rng.choice(LENGTHS)
        fam = rng.choice(["cm", "cm", "m"]) if obj != "plank" else "cm"
        u = unit(rng, fam)
        cap_ = 100
        grp = [(CUT, "off {c} pieces of {m} each"), (CUT, "{c} pieces of {m} from it")]
        share = [("piece", "pieces")]
        rms = [(CUT, "off {q}"), (USE, "{q} to tie a parcel"), (GIVE, "{q} to {o}"), (CUT, "{q} off the end")]
        adds = []
        restate = lambda n: f"The {obj} is {u.q(n)} long."
        name = f"the {obj}"
        thing = obj
    else:
        holder, thing = rng.choice(HOLDERS)
        fam = "litre"
        u = unit(rng, fam, thing)
        cap_ = HOLDER_CAP.get(holder, 100)
        grp = [(FILL, "{c} buckets with {m} each"), (FILL, "{c} bottles with {m} each"), (TAKE, "out {c} jugs of {m} each")]
        share = [("bucket", "buckets"), ("jug", "jugs"), ("bottle", "bottles")]
        rms = [(TAKE, "out {q}"), (USE, "{q} to water the plants"), (POUR, "out {q}"), (SCOOP := V("scoop", "scoops", "scooped"), "out {q}")]
        adds = [(POUR, "in {q} more"), (ADD, "another {q}"), (POUR, "in another {q}")]
        restate = lambda n: f"The {holder} has {u.q(n)}."
        name = f"the {holder}"

    # ---- plan: start, middle ops, end
    for _ in range(50):
        end = rng.choices(["none", "share", "quot", "cap"], [50, 20, 14, 16 if kind != "length" else 0])[0]
        start = rng.choices(["plain", "group"], [80, 20 if kind != "length" else 0])[0]
        cost = (start == "group") + (end != "none")
        mids = []
        while cost < steps and len(mids) < 4:
            opts = [("rm", 1, 40), ("two", 2, 10), ("rate", 2, 12), ("grp", 2, 14), ("half", 1, 10)]
            if adds:
                opts.append(("add", 1, 25))
            opts = [o for o in opts if cost + o[1] <= steps]
            name_, c, _ = rng.choices(opts, [o[2] for o in opts])[0]
            mids.append(name_)
            cost += c
        if cost == steps and (mids or end != "none" or start == "group"):
            break
    else:
        raise Bad()

    # ---- start
    capacity = None
    if end == "cap" and rng.random() < 0.5:
        capacity = ri(rng, 10, cap_)
        if kind == "person":
            txt = f"{W.S()} {W.v(V('want', 'wants', 'wanted'), tense)} to have {u.q(capacity)}"
            line = f"{W.S()} {W.rv(V('want', 'wants'))} to have {u.q(capacity)}."
        else:
            txt = rng.choice([f"The {holder} holds {u.q(capacity, of=False)} when full",
                              f"A full {holder} holds {u.q(capacity)}"])
            line = f"The {holder} holds {u.q(capacity, of=False)} when full."
        k = st.add(txt, subj=None)
        st.say(k, line)
    if start == "plain":
        x = ri(rng, 10 if cap_ >= 20 else 4, cap_ if capacity is None else capacity - 1)
        if kind == "person":
            txt = rng.choice([f"{W.S()} {W.have(tense)} {u.q(x)}",
                              f"{W.S()} {W.v(BUY, tense)} {u.q(x)}",
                              f"There {isare if x > 1 else isw} {u.q(x)} in {W.possn()} {rng.choice(spec['home'])}",
                              f"{W.Possn()} {rng.choice(spec['home'])} "
                              f"{'held' if tense == 'past' else 'holds'} {u.q(x)}"])
        elif kind == "length":
            txt = rng.choice([f"{W.S()} {W.have(tense)} a {u.q(x)} {obj}",
                              f"{W.Possn()} {obj} {isw} {u.q(x)} long",
                              f"A {obj} {isw} {u.q(x)} long",
                              f"{W.S()} {W.v(BUY, tense)} a {obj} that {isw} {u.q(x)} long"])
            txt = txt.replace(f"a {u.q(x)} {obj}", f"a {x} {u.sing} {obj}")
        else:
            txt = rng.choice([f"A {holder} {'held' if tense == 'past' else 'holds'} {u.q(x)}",
                              f"There {isare if x > 1 else isw} {u.q(x)} in the {holder}",
                              f"The {holder} {'had' if tense == 'past' else 'has'} {u.q(x)} in it",
                              f"{W.Possn()} {holder} {'had' if tense == 'past' else 'has'} {u.q(x)}"])
        if capacity and kind == "holder":
            txt = rng.choice([f"It {'had' if tense == 'past' else 'has'} {u.q(x)} in it",
                              f"Right now there {isare if x > 1 else isw} {u.q(x)} in it"]).replace(
                "Right now there were", "At that point there were").replace("Right now there was", "At that point there was")
        k = st.add(txt, subj=None)
        st.say(k, restate(x))
    else:
        c = ri(rng, 2, 8)
        lo, hi = GROUP_SIZE.get(fam, (2, 25))
        m = ri(rng, lo, min(hi, cap_ // c))
        box = rng.choice(spec["box"]) if kind == "person" else rng.choice([("bucket", "buckets"), ("can", "cans"), ("jug", "jugs")])
        if kind == "person":
            txt = rng.choice([f"{W.S()} {W.v(BUY, tense)} {c} {box[1]} of {thing} with {u.q(m, of=False)} in each",
                              f"{W.S()} {W.have(tense)} {c} {box[1]} of {u.q(m)}"])
        else:
            txt = f"{W.S()} {W.v(POUR, tense)} {c} {box[1]} of {u.q(m, of=False)} each into an empty {holder}"
        k = st.add(txt, subj=W if kind == "person" else None)
        e, x = st.eq(c, "*", m)
        st.say(k, (f"{W.S()} {W.rhave()} {e} {u.w(x)}." if kind == "person"
                   else f"The {holder} has {e} {u.w(x)}."))

    # ---- middle
    def actor():
        if kind == "person" or (kind == "length" and rng.random() < 0.7):
            return W, (W.Pro() if W.third and rng.random() < 0.5 else W.S())
        A_ = rng.choice([W, O])
        return A_, A_.S()

    used_rm = []
    peak = x
    for op in mids:
        peak = max(peak, x)
        dis = maybe_distract(rng, st, W, tense, fam, [O], p=0.1)
        if dis:
            st.nochange(st.add(dis))
        who, P = actor()
        subj = who if kind == "person" else None
        if op == "rm":
            n = ri(rng, 2, max(2, min(x - 1, x * 3 // 4)))
            pool = [r_ for r_ in rms if r_ not in used_rm and (who is W or "{o}" not in r_[1])] or rms
            verb, tail = rng.choice(pool)
            used_rm.append((verb, tail))
            t = tail.format(q=u.q(n), o=O.name)
            if kind == "holder" and rng.random() < 0.35:
                txt = f"{u.q(n, of=False)} {pl(rng.choice([V('drain', 'drain', 'drained'), V('leak', 'leak', 'leaked')]))} out"
                txt = cap(txt)
            else:
                txt = f"{P} {who.v(verb, tense)} {t}"
            k = st.add(txt, cont_forms(f"{who.v(verb, tense)} {t}") if subj else (), subj=subj)
            e, x = st.eq(x, "-", n)
            st.say(k, _restate_eq(restate, x, e))
        elif op == "add":
            n = ri(rng, 2, min(cap_, 100 if capacity is None else capacity - 1) - x)
            verb, tail = rng.choice(adds)
            t = tail.format(q=u.q(n), o=O.name, mq=f"{n} more {u.w(n)}")
            txt = f"{P} {who.v(verb, tense)} {t}"
            k = st.add(txt, cont_forms(f"{who.v(verb, tense)} {t}") if subj else (), subj=subj)
            e, x2 = st.eq(x, "+", n)
            x = x2
            st.say(k, _restate_eq(restate, x, e))
        elif op == "two":
            n1 = ri(rng, 2, x // 2)
            n2 = ri(rng, 2, x - n1 - 1)
            d1, d2 = rng.choice([("on Monday", "on Tuesday"), ("in the morning", "in the evening"),
                                 ("on Saturday", "on Sunday"), ("before lunch", "after lunch")])
            if kind == "length":
                verb, prt = CUT, "off "
            else:
                verb, prt = rng.choice([r for r in rms if r[1] == "{q}"] or [(USE, "")])[0], ""
            vp = f"{who.v(verb, tense)} {prt}{u.q(n1)} {d1} and {u.q(n2, of=False)} {d2}"
            k = st.add(f"{P} {vp}", cont_forms(vp) if subj else (), subj=subj)
            e1, x1 = st.eq(x, "-", n1)
            e2, x = st.eq(x1, "-", n2)
            st.say(k, _restate_eq(restate, x1, e1)[:-1] + " and " + decap(_restate_eq(restate, x, e2)))
        elif op == "rate":
            per, p1, pp = PERIODS[rng.choice(["day", "hour"] if kind == "holder" else ["day", "week"])]
            d = ri(rng, 2, 9)
            r = ri(rng, 1, min(20, (x - 1) // d))
            if kind == "holder" and rng.random() < 0.5:
                txt = f"It {sg(V('leak', 'leaks', 'leaked'))} {u.q(r, of=False)} {rng.choice(per)} for {d} {pp}"
                subj = None
            else:
                verb = rng.choice([r_[0] for r_ in rms if r_[1] == "{q}"] or [USE]) if kind == "person" else USE
                txt = f"{P} {who.v(verb, tense)} {u.q(r, of=False)} {rng.choice(per)} for {d} {pp}"
            k = st.add(txt, subj=subj)
            e1, p = st.eq(d, "*", r)
            e2, x = st.eq(x, "-", p)
            st.say(k, f"That is {e1} {u.w(p)} and " + decap(_restate_eq(restate, x, e2)))
        elif op == "grp":
            verb, tail = rng.choice(grp)
            c = ri(rng, 2, 6)
            m = ri(rng, 1 if kind != "length" else 2, min(25, (x - 1) // c))
            t = tail.format(c=c, m=u.q(m, of=False))
            txt = f"{P} {who.v(verb, tense)} {t}"
            k = st.add(txt, cont_forms(f"{who.v(verb, tense)} {t}") if subj else (), subj=subj)
            e1, p = st.eq(c, "*", m)
            e2, x = st.eq(x, "-", p)
            st.say(k, f"That is {e1} {u.w(p)} and " + decap(_restate_eq(restate, x, e2)))
        elif op == "half":
            if x % 2:
                raise Bad()
            if kind == "length":
                txt = f"{P} {who.v(CUT, tense)} the {obj} in half and {who.v(V('keep', 'keeps', 'kept'), tense)} one half"
            elif kind == "holder":
                txt = rng.choice([f"Half of the {thing} {'was' if tense == 'past' else 'is'} used",
                                  f"{P} {who.v(USE, tense)} half of it"])
            else:
                txt = rng.choice([f"{P} {who.v(USE, tense)} half of it",
                                  f"{P} {who.v(GIVE, tense)} half of the {thing} to {O.name}"])
            k = st.add(txt, subj=subj if txt.startswith(P) else None)
            e, x = st.eq(x, "/", 2)
            st.say(k, _restate_eq(restate, x, e))

    # ---- end and question
    peak = max(peak, x)
    removed = bool(mids) and mids[-1] not in ("add",)
    took = any(m_ != "add" for m_ in mids)
    rest = rng.choice(["the rest", "what is left", "what was left" if tense == "past" else "what remains"]) \
        if removed else rng.choice(["it", "all of it", f"the {thing}"] if kind != "length" else ["it"])
    who = W
    s = W.s()
    do_ = W.do(tense)
    if end == "none":
        if kind == "person" and not mids:
            q = rng.choice([f"How many {u.qw()} {do_} {s} have?", f"How much {thing} {do_} {s} have?"])
        elif kind == "person" and not took:
            q = rng.choice([f"How many {u.qw()} {do_} {s} have now?", f"How much {thing} {do_} {s} have in the end?"])
        elif kind == "person":
            q = rng.choice([f"How many {u.qw()} {do_} {s} have left?",
                            f"How much {thing} {do_} {s} have now?",
                            f"How many {u.qw()} {do_} {s} have at the end?",
                            f"How much {thing} {isw} left?"])
        elif kind == "length":
            q = rng.choice([f"How long is the {obj} now?", f"How many {u.qw()} of the {obj} are left?",
                            f"What is the length of the {obj} now?", f"How long {isw} the {obj} in the end?"])
        else:
            q = rng.choice([f"How many {u.qw()} are in the {holder} now?",
                            f"How much {thing} {isw} left in the {holder}?",
                            f"How much {thing} {isw} in the {holder} at the end?"])
    elif end == "share":
        c = rng.choice([d for d in range(2, 11) if x % d == 0 and x // d >= 1] or [0])
        if not c or c >= x:
            raise Bad()
        box = rng.choice(share)
        if kind == "length":
            txt = f"{W.S()} {W.v(CUT, tense)} {rest} into {c} equal pieces"
            q = rng.choice(["How long is each piece?", f"How many {u.qw()} long is each piece?"])
            line = f"Each piece is {{e}} {{w}} long."
        else:
            txt = rng.choice([f"{W.S()} {W.v(SPLIT, tense)} {rest} equally into {c} {box[1]}",
                              f"{W.S()} {W.v(SHARE, tense)} {rest} equally among {c} {box[1]}"])
            q = rng.choice([f"How many {u.qw()} go in each {box[0]}?", f"How much {thing} does each {box[0]} get?",
                            f"How many {u.qw()} {'did' if tense == 'past' else 'does'} each {box[0]} get?"])
            line = f"Each {box[0]} gets {{e}} {{w}}."
        k = st.add(txt, subj=None)
        e, r = st.eq(x, "/", c)
        st.say(k, line.format(e=e, w=u.w(r)))
    elif end == "quot":
        ds = [d for d in range(2, 26) if x % d == 0 and x // d >= 2]
        if not ds:
            raise Bad()
        m = rng.choice(ds)
        if kind == "length":
            q = rng.choice([f"How many pieces of {u.q(m, of=False)} can be cut from {rest}?",
                            f"How many {m} {u.sing} pieces can {s} cut from {rest}?"])
            e, r = st.eq(x, "/", m)
            st.say(None, f"That makes {e} pieces.")
        else:
            box = rng.choice(share)
            q = rng.choice([f"How many {box[1]} of {u.q(m, of=False)} can be filled with {rest}?",
                            f"If each {box[0]} holds {u.q(m, of=False)}, how many {box[1]} can be filled with {rest}?"])
            e, r = st.eq(x, "/", m)
            st.say(None, f"That fills {e} {box[1]}.")
    else:  # capacity
        if capacity is None:
            capacity = ri(rng, peak + 1 if peak > x else x + 1, cap_)
            if kind == "person":
                q = f"How many more {u.qw()} {W.do('pres')} {s} need to have {u.q(capacity)}?"
            else:
                q = rng.choice([f"How many more {u.qw()} are needed to fill the {u.adj(capacity)} {holder}?",
                                f"How many more {u.qw()} will fill the {holder} if it holds {u.q(capacity, of=False)}?"])
        else:
            if capacity <= x:
                raise Bad()
            q = ({"person": f"How many more {u.qw()} {W.do('pres')} {s} need?"}.get(kind) or
                 rng.choice([f"How many more {u.qw()} are needed to fill the {holder}?",
                             f"How much more {thing} will fit in the {holder}?"]))
        e, r = st.eq(capacity, "-", x)
        if kind == "person":
            st.say(None, f"{W.S()} {'needs' if W.third else 'need'} {e} more {u.w(r)}.")
        else:
            st.say(None, f"The {holder} needs {e} more {u.w(r)} to be full.")
    if tense == "past":
        q = q.replace(f"{do_} {s} have now?", f"{do_} {s} have in the end?")
    text = render(rng, st, q)
    return finish(rng, st, text)


def _restate_eq(restate, x, e):
    """'The rope is 65 cm long.' with the amount replaced by the equation that gave it."""
    line = restate(x)
    i = line.rfind(f" {x} ")
    return line[:i] + f" {e} " + line[i + len(f" {x} "):]

# ----------------------------------------------------------------------------- fixed scenario frames

TOWNS = ["Porto", "Bergen", "Kyoto", "Accra", "Cusco", "Tartu", "Ghent", "Perth", "Dakar", "Pune", "Oaxaca",
         "Tromso", "Nairobi", "Hue", "Split", "Lublin", "Galway", "Rotorua"]
# ingredient (unit family or noun, of-word), dishes (singular, plural), per-dish range
RECIPES = [
    (("egg", "eggs"), [("cake", "cakes"), ("omelette", "omelettes"), ("batch of pancakes", "batches of pancakes"),
                       ("quiche", "quiches")], (2, 6)),
    (("cup", "flour"), [("loaf", "loaves"), ("batch of cookies", "batches of cookies"), ("pizza", "pizzas")], (2, 5)),
    (("spoon", "sugar"), [("cup of tea", "cups of tea"), ("jug of lemonade", "jugs of lemonade"),
                          ("pie", "pies")], (2, 8)),
    (("g", "butter"), [("cake", "cakes"), ("tray of biscuits", "trays of biscuits")], (10, 25)),
    (("cup", "milk"), [("batch of pancakes", "batches of pancakes"), ("pudding", "puddings")], (1, 4)),
    (("g", "cheese"), [("sandwich", "sandwiches"), ("pizza", "pizzas")], (5, 20)),
    (("glass", "water"), [("pot of soup", "pots of soup")], (2, 6)),
    (("banana", "bananas"), [("smoothie", "smoothies"), ("loaf of banana bread", "loaves of banana bread")], (2, 4)),
]


def ingredient(rng, spec):
    a, b = spec
    if a in UNITS:
        return unit(rng, a, b)
    return Unit(a, b, a)


def frame(steps, weight=1):
    def deco(f):
        FRAMES.setdefault(steps, []).append((f, weight))
        return f
    return deco


FRAMES = {}


def tensed(rng):
    return rng.choice(["past", "pres"])


@frame(1, 3)
def f_recipe_times(rng):
    ing, dishes, (lo, hi) = rng.choice(RECIPES)
    u = ingredient(rng, ing)
    d1, dn = rng.choice(dishes)
    r = ri(rng, lo, hi)
    n = ri(rng, 2, min(12, 100 // r))
    W = people(rng, 1)[0]
    st = Story()
    e, p = st.eq(n, "*", r)
    form = rng.randint(0, 4)
    if form == 0:
        text = f"A recipe needs {u.q(r)} per {d1}. How many {u.qw()} are needed for {n} {dn}?"
        st.say(None, f"{n} {dn} need {e} {u.w(p)}.")
    elif form == 1:
        text = rng.choice([f"How many {u.qw()} {W.do('pres')} {W.s()} need to make {n} {dn} if each {d1} takes {u.q(r)}?",
                           f"Each {d1} takes {u.q(r)}. How many {u.qw()} {W.do('pres')} {W.s()} need for {n} {dn}?"])
        st.say(None, f"{n} {dn} need {e} {u.w(p)}.")
    elif form == 2:
        t = tensed(rng)
        st.say(1, f"{W.S()} {W.rv(MAKE)} {n} {dn}.")
        st.lines[-1] = f"(1) {W.S()} {W.rv(MAKE)} {n} {dn}."
        text = (f"{W.S()} {W.v(MAKE, t)} {n} {dn} for a party. Each {d1} {'used' if t == 'past' else 'uses'} {u.q(r)}. "
                f"How many {u.qw()} {'did' if t == 'past' else W.do('pres')} {W.s()} use altogether?")
        st.say(2, f"Each {d1} uses {u.q(r)}, so {n} {dn} use {e} {u.w(p)}.")
    elif form == 3:
        text = f"For one {d1} you need {u.q(r)}. How much is that for {n} {dn}?"
        st.say(None, f"{n} {dn} need {e} {u.w(p)}.")
    else:
        text = f"{u.q(r).capitalize() if u.sing[0].islower() else u.q(r)} go into every {d1}. We are making {n}. How many {u.qw()} do we need?"
        st.say(None, f"{n} {dn} need {e} {u.w(p)}.")
    return finish(rng, st, text)


@frame(1, 2)
def f_recipe_count(rng):
    ing, dishes, (lo, hi) = rng.choice(RECIPES)
    u = ingredient(rng, ing)
    d1, dn = rng.choice(dishes)
    r = ri(rng, lo, hi)
    n = ri(rng, 2, min(12, 100 // r))
    p = n * r
    W = people(rng, 1)[0]
    t = tensed(rng)
    st = Story()
    k1 = st.add(f"{W.S()} {W.v(USE, t)} {u.q(p)} to make {dn}")
    k2 = st.add(f"Each {d1} {'needed' if t == 'past' else 'needs'} {u.q(r)}")
    st.say(k1, f"{W.S()} {W.rv(USE)} {u.q(p)}.")
    e, _ = st.eq(p, "/", r)
    st.say(k2, f"{W.S()} {W.rv(MAKE)} {e} {dn if n > 1 else d1}.")
    q = rng.choice([f"How many {dn} {W.do(t)} {W.s()} make?", f"How many {dn} {'were' if t == 'past' else 'are'} made?"])
    return finish(rng, st, render(rng, st, q))


CUTTABLE = [("ribbon", "cm"), ("rope", "m"), ("rope", "cm"), ("board", "cm"), ("pipe", "cm"), ("cable", "m"),
            ("strip of paper", "cm"), ("length of fabric", "m"), ("fence", "m"), ("garden bed", "m"),
            ("loaf of bread", "cm"), ("roll of ribbon", "m"), ("hiking trail", "km"), ("road", "km")]


@frame(1, 3)
def f_cut_equal(rng):
    obj, fam = rng.choice(CUTTABLE)
    u = unit(rng, fam)
    k = ri(rng, 2, 10)
    m = ri(rng, 2, 100 // k)
    n = k * m
    W = people(rng, 1)[0]
    t = tensed(rng)
    piece = {"fence": ("section", "sections"), "garden bed": ("plot", "plots"), "hiking trail": ("stage", "stages"),
             "road": ("part", "parts"), "loaf of bread": ("slice", "slices")}.get(obj, ("piece", "pieces"))
    st = Story()
    form = rng.randint(0, 3)
    if form == 0:
        k1 = st.add(f"A {obj} {'was' if t == 'past' else 'is'} {u.q(n)} long")
        k2 = st.add(f"{W.S()} {W.v(CUT if piece[0] != 'stage' else SPLIT, t)} it into {k} equal {piece[1]}")
        q = rng.choice([f"How long is each {piece[0]}?", f"How many {u.qw()} long is each {piece[0]}?",
                        f"What is the length of one {piece[0]}?"])
        st.say(k1, f"The {obj} is {u.q(n)} long.")
        e, _ = st.eq(n, "/", k)
        st.say(k2, f"Each {piece[0]} is {e} {u.w(m)} long.")
        return finish(rng, st, render(rng, st, q))
    e, _ = st.eq(n, "/", k)
    st.say(None, f"Each {piece[0]} is {e} {u.w(m)} long.")
    if form == 1:
        text = f"How long is each {piece[0]} if a {n} {u.sing} {obj} is split into {k} equal {piece[1]}?"
    elif form == 2:
        text = f"{W.S()} {W.v(V('divide', 'divides', 'divided'), t)} a {u.q(n)} {obj} into {k} {piece[1]} of the same length. How long is each one?"
        text = text.replace(f"a {u.q(n)} {obj}", f"a {n} {u.sing} {obj}")
    else:
        text = f"Share a {n} {u.sing} {obj} into {k} equal {piece[1]}. How long is each {piece[0]}?"
    return finish(rng, st, text)


@frame(1, 2)
def f_cut_count(rng):
    obj, fam = rng.choice(CUTTABLE)
    u = unit(rng, fam)
    k = ri(rng, 2, 10)
    m = ri(rng, 2, 100 // k)
    n = k * m
    piece = {"fence": ("section", "sections"), "hiking trail": ("stage", "stages"), "road": ("part", "parts")}.get(
        obj, ("piece", "pieces"))
    st = Story()
    e, _ = st.eq(n, "/", m)
    st.say(None, f"That makes {e} {piece[1]}.")
    text = rng.choice([f"How many {m} {u.sing} {piece[1]} can be cut from a {n} {u.sing} {obj}?",
                       f"A {obj} is {u.q(n)} long. How many {piece[1]} of {u.q(m)} does it make?",
                       f"If a {n} {u.sing} {obj} is cut into {piece[1]} that are each {u.q(m)} long, how many {piece[1]} are there?"])
    return finish(rng, st, text)


VEHICLES = [("train", "km"), ("bus", "km"), ("cyclist", "km"), ("car", "mile"), ("boat", "km"), ("runner", "km"),
            ("horse", "km"), ("snail", "cm"), ("tortoise", "m"), ("ferry", "mile"), ("hiker", "km")]


@frame(1, 3)
def f_speed(rng):
    veh, fam = rng.choice(VEHICLES)
    u = unit(rng, fam)
    tu = unit(rng, "minute" if veh in ("snail", "tortoise") else "hour")
    t = ri(rng, 2, 10)
    v = ri(rng, 2, min(50, 100 // t))
    dist = t * v
    st = Story()
    per = rng.choice([f"per {tu.sing}", f"each {tu.sing}", f"an {tu.sing}" if tu.sing == "hour" else f"a {tu.sing}",
                      f"every {tu.sing}"])
    form = rng.randint(0, 3)
    if form <= 1:
        e, _ = st.eq(t, "*", v)
        st.say(None, f"In {tu.q(t)}, the {veh} goes {e} {u.w(dist)}.")
        text = rng.choice([f"A {veh} goes {u.q(v)} {per}. How far does it go in {tu.q(t)}?",
                           f"How many {u.qw()} does a {veh} cover in {tu.q(t)} at {u.q(v)} {per}?",
                           f"At {u.q(v)} {per}, how far can the {veh} travel in {tu.q(t)}?"])
    else:
        e, _ = st.eq(dist, "/", v)
        st.say(None, f"The trip takes {e} {tu.w(t)}.")
        text = rng.choice([f"A {veh} travels {u.q(dist)} at {u.q(v)} {per}. How many {tu.qw()} does the trip take?",
                           f"How long does it take a {veh} to go {u.q(dist)} at {u.q(v)} {per}?",
                           f"The {veh} covers {u.q(v)} {per}. How many {tu.qw()} will {u.q(dist)} take?"])
    return finish(rng, st, text)


@frame(1, 3)
def f_remaining(rng):
    kinds = ["film", "bus ride", "race", "trail", "podcast", "bike route", "concert", "flight", "cake", "hike",
             "suitcase", "tank"]
    kind = rng.choice(kinds)
    W = people(rng, 1)[0]
    st = Story()
    n = ri(rng, 20, 100)
    a = ri(rng, 2, n - 2)
    e, r = None, None
    if kind in ("film", "podcast", "concert", "flight", "bus ride"):
        u = unit(rng, "minute")
        done = {"film": "watched", "podcast": "listened to", "concert": "sat through"}.get(kind, "been on it for")
        if kind in ("flight", "bus ride"):
            text = (f"The {kind} takes {u.q(n)}. {W.S()} {W.have('pres')} been on it for {u.q(a)}. "
                    f"How many more {u.qw()} until it ends?")
        else:
            text = (f"The {kind} is {u.q(n)} long. {W.S()} {W.have('pres')} {done} {u.q(a)} so far. "
                    f"How many {u.qw()} are left?")
        st.say(1, f"The {kind} is {u.q(n)} long.")
        e, r = st.eq(n, "-", a)
        st.say(2, f"That leaves {e} {u.w(r)}.")
    elif kind == "cake":
        u = unit(rng, "minute")
        n = ri(rng, 20, 75)
        a = ri(rng, 2, n - 2)
        text = rng.choice([f"A cake must bake for {u.q(n)}. It has been in the oven for {u.q(a)}. How much longer does it need?",
                           f"The cake needs {u.q(n)} in the oven and has had {u.q(a)}. How many more {u.qw()}?"])
        st.say(1, f"The cake bakes for {u.q(n)}.")
        e, r = st.eq(n, "-", a)
        st.say(2, f"It needs {e} more {u.w(r)}.")
    elif kind == "suitcase":
        u = unit(rng, "kg")
        n = ri(rng, 15, 32)
        a = ri(rng, 3, n - 1)
        text = rng.choice([f"A suitcase can weigh at most {u.q(n)}. {W.Possn()} suitcase weighs {u.q(a)}. "
                           f"How many more {u.qw()} can {W.s()} pack?",
                           f"The airline allows {u.q(n)} per bag. {W.S()} {W.have('pres')} packed {u.q(a)}. "
                           f"How much more weight can go in?"])
        st.say(1, f"The limit is {u.q(n)}.")
        e, r = st.eq(n, "-", a)
        st.say(2, f"{W.S()} can add {e} more {u.w(r)}.")
    elif kind == "tank":
        u = unit(rng, "litre")
        text = rng.choice([f"A water tank holds {u.q(n)} when full. Right now it has {u.q(a)} in it. "
                           f"How many more {u.qw()} will fill it?",
                           f"How much water is needed to top up a {u.adj(n)} tank that already has {u.q(a)} in it?"])
        st.say(1, f"The tank holds {u.q(n)}.")
        e, r = st.eq(n, "-", a)
        st.say(2, f"It needs {e} more {u.w(r)}.")
    else:
        fam = {"race": "km", "trail": "km", "hike": "mile", "bike route": "mile"}[kind]
        u = unit(rng, fam)
        v = {"race": "run", "trail": "walked", "hike": "hiked", "bike route": "cycled"}[kind]
        v = {"run": W.have("pres") + " run", "walked": W.have("pres") + " walked", "hiked": W.have("pres") + " hiked",
             "cycled": W.have("pres") + " cycled"}[v]
        text = rng.choice([f"The {kind} is {u.q(n)} long. {W.S()} {v} {u.q(a)}. How far is left?",
                           f"{W.S()} {v} {u.q(a)} of a {n} {u.sing} {kind}. How many {u.qw()} to go?",
                           f"How much farther must {W.s()} go on the {n} {u.sing} {kind} after covering {u.q(a)}?"])
        st.say(1, f"The {kind} is {u.q(n)} long.")
        e, r = st.eq(n, "-", a)
        st.say(2, f"That leaves {e} {u.w(r)}.")
    if "{" in text:
        raise Bad()
    if text.startswith("How") and "after covering" in text:
        st.lines = [st.lines[-1].replace("(2) ", "")]
    elif text.startswith("How"):
        st.lines = [st.lines[-1].replace("(2) ", "")]
    elif f"of a {n} " in text:
        st.lines = [st.lines[-1].replace("(2) ", "")]
    return finish(rng, st, text)


BAGS = [("bag of flour", "bags of flour"), ("sack of potatoes", "sacks of potatoes"), ("box of books", "boxes of books"),
        ("crate of apples", "crates of apples"), ("bag of rice", "bags of rice"), ("bag of sand", "bags of sand"),
        ("bag of cement", "bags of cement"), ("watermelon", "watermelons"), ("pumpkin", "pumpkins"),
        ("tin of paint", "tins of paint"), ("box of tiles", "boxes of tiles")]


@frame(1, 3)
def f_weight(rng):
    u = unit(rng, "kg")
    b1, bn = rng.choice(BAGS)
    st = Story()
    form = rng.randint(0, 4)
    W, O = people(rng, 2)
    if form <= 1:
        n = ri(rng, 2, 12)
        w = ri(rng, 2, min(25, 100 // n))
        e, _ = st.eq(n, "*", w)
        st.say(None, f"{n} {bn} weigh {e} {u.w(n * w)}.")
        text = rng.choice([f"Each {b1} weighs {u.q(w)}. How much do {n} {bn} weigh?",
                           f"One {b1} weighs {u.q(w)}. What is the weight of {n} {bn}?",
                           f"How many {u.qw()} do {n} {bn} weigh if one weighs {u.q(w)}?"])
    elif form == 2:
        a, b = ri(rng, 2, 60), ri(rng, 2, 40)
        if a + b > 100:
            raise Bad()
        b2 = rng.choice([x for x in BAGS if x[0] != b1])
        e, _ = st.eq(a, "+", b)
        st.lines.append(f"(1) The {b1} weighs {u.q(a)}.")
        st.lines.append(f"(2) The {b2[0]} weighs {u.q(b)}.")
        st.lines.append(f"Together they weigh {e} {u.w(a + b)}.")
        text = rng.choice([f"A {b1} weighs {u.q(a)} and a {b2[0]} weighs {u.q(b)}. How much do they weigh together?",
                           f"{W.S()} {W.v(V('carry', 'carries', 'carried'), 'pres')} a {b1} of {u.q(a)} and a "
                           f"{b2[0]} of {u.q(b)}. What is the total weight?"])
        text = text.replace(f"a {b1} of {u.q(a)}", f"a {u.adj(a)} {b1}").replace(f"a {b2[0]} of {u.q(b)}", f"a {u.adj(b)} {b2[0]}")
    elif form == 3:
        a = ri(rng, 3, 50)
        b = ri(rng, 2, a - 1)
        e, _ = st.eq(a, "-", b)
        st.lines += [f"(1) {W.Possn()} dog weighs {u.q(a)}.", f"(2) {O.name}'s dog weighs {u.q(b)}.",
                     f"{W.Possn()} dog is {e} {u.w(a - b)} heavier."]
        text = (f"{W.Possn()} dog weighs {u.q(a)}. {O.name}'s dog weighs {u.q(b)}. "
                f"How much heavier is {W.possn()} dog?")
    else:
        a = ri(rng, 2, 25)
        f = rng.choice([2, 3, 4])
        if a * f > 100:
            raise Bad()
        e, _ = st.eq(a, "*", f)
        nm = {2: "twice", 3: "three times", 4: "four times"}[f]
        st.lines += [f"(1) The cat weighs {u.q(a)}.", f"(2) The dog weighs {e} {u.w(a * f)}."]
        text = f"The cat weighs {u.q(a)}. The dog weighs {nm} as much as the cat. How heavy is the dog?"
    return finish(rng, st, text)


@frame(1, 2)
def f_bare_units(rng):
    fam = rng.choice(["km", "cm", "kg", "litre", "minute", "m", "g", "mile"])
    u = unit(rng, fam)
    op = rng.choice("+-*/")
    if op == "+":
        a, b = ri(rng, 2, 90), 0
        b = ri(rng, 2, 100 - a)
        text = rng.choice([f"What is {u.q(a)} + {u.q(b)}?", f"{u.q(a)} plus {u.q(b)} is how many {u.qw()}?",
                           f"Add {u.q(a)} and {u.q(b)}.", f"{a} {u.plural} and {b} {u.plural} make how many {u.qw()}?"])
    elif op == "-":
        a = ri(rng, 5, 100)
        b = ri(rng, 2, a - 1)
        text = rng.choice([f"What is {u.q(a)} - {u.q(b)}?", f"Take {u.q(b)} away from {u.q(a)}.",
                           f"How much is left if you remove {u.q(b)} from {u.q(a)}?",
                           f"What is the difference between {u.q(a)} and {u.q(b)}?"])
    elif op == "*":
        a = ri(rng, 2, 12)
        b = ri(rng, 2, 100 // a)
        text = rng.choice([f"What is {a} times {u.q(b)}?", f"How many {u.qw()} is {a} lots of {u.q(b)}?",
                           f"{a} x {u.q(b)} = ?"])
    else:
        b = ri(rng, 2, 10)
        r = ri(rng, 2, 100 // b)
        a = b * r
        text = rng.choice([f"What is {u.q(a)} divided by {b}?", f"Split {u.q(a)} into {b} equal parts. How much is each part?",
                           f"{u.q(a)} shared {b} ways is how many {u.qw()} each?"])
    text = text[0].upper() + text[1:] if text[0].isalpha() else text
    return bare_item(rng, text, [(a, op, b)])


@frame(2, 1)
def f_bare_units2(rng):
    u = unit(rng, rng.choice(["km", "cm", "kg", "litre", "minute", "m"]))
    a = ri(rng, 5, 60)
    b = ri(rng, 2, 100 - a)
    c = ri(rng, 2, a + b - 1)
    text = rng.choice([f"What is {u.q(a)} + {u.q(b)} - {u.q(c)}?",
                       f"Add {u.q(a)} to {u.q(b)}, then take away {u.q(c)}. How many {u.qw()} is that?",
                       f"Start with {u.q(a)}, add {u.q(b)} and remove {u.q(c)}. What is left?"])
    return bare_item(rng, text, [(a, "+", b), (a + b, "-", c)])


@frame(1, 1)
def f_weeks(rng):
    st = Story()
    form = rng.randint(0, 3)
    if form == 0:
        w = ri(rng, 2, 14)
        e, d = st.eq(w, "*", 7)
        st.say(None, f"{w} weeks is {e} days.")
        text = rng.choice([f"How many days are there in {w} weeks?", f"{w} weeks is how many days?",
                           f"A course lasts {w} weeks. How many days is that?"])
    elif form == 1:
        w = ri(rng, 2, 14)
        d = w * 7
        e, _ = st.eq(d, "/", 7)
        st.say(None, f"{d} days is {e} weeks.")
        text = rng.choice([f"How many weeks are in {d} days?", f"A trip lasts {d} days. How many weeks is that?"])
    elif form == 2:
        m = ri(rng, 5, 40)
        e, _ = st.eq(60, "+", m)
        st.say(None, f"1 hour is 60 minutes, so that is {e} minutes.")
        text = rng.choice([f"How many minutes are in 1 hour and {m} minutes?",
                           f"The match lasted an hour and {m} minutes. How many minutes is that?"])
    else:
        h = ri(rng, 2, 4)
        e, _ = st.eq(h, "*", 24)
        st.say(None, f"{h} days is {e} hours.")
        text = f"How many hours are there in {h} days?"
    return finish(rng, st, text)


STACKS = [("box", "boxes"), ("book", "books"), ("brick", "bricks"), ("chair", "chairs"), ("plate", "plates"),
          ("crate", "crates"), ("cup", "cups"), ("block", "blocks")]


@frame(1, 2)
def f_stack(rng):
    b1, bn = rng.choice(STACKS)
    u = unit(rng, "cm")
    n = ri(rng, 2, 15)
    h = ri(rng, 2, min(25, 100 // n))
    st = Story()
    e, t = st.eq(n, "*", h)
    st.say(None, f"The stack is {e} {u.w(t)} tall.")
    text = rng.choice([f"Each {b1} is {u.q(h)} tall. How tall is a stack of {n} {bn}?",
                       f"A {b1} is {u.q(h)} thick. If you pile up {n} of them, how high is the pile?",
                       f"How tall is a tower of {n} {bn} if each {b1} is {u.q(h)} high?"])
    if "pile" in text:
        st.lines = [f"The pile is {e} {u.w(t)} high."]
    return finish(rng, st, text)


GROWERS = [("sunflower", "cm"), ("bean plant", "cm"), ("tomato plant", "cm"), ("puppy", "kg"), ("kitten", "kg"),
           ("calf", "kg"), ("tree", "cm"), ("sapling", "cm"), ("icicle", "cm"), ("snowman", "cm"),
           ("pile of leaves", "cm"), ("baby", "cm")]


@frame(1, 2)
def f_grow1(rng):
    g, fam = rng.choice(GROWERS)
    u = unit(rng, fam)
    a = ri(rng, 3, 80)
    b = ri(rng, 1, min(30, 100 - a))
    t = tensed(rng)
    st = Story()
    verb = "weighs" if fam == "kg" else "is"
    tall = "" if fam == "kg" else " tall"
    shrink = rng.random() < 0.3 and g in ("icicle", "snowman", "pile of leaves")
    k1 = st.add(f"A {g} {'weighed' if fam == 'kg' and t == 'past' else ('was' if t == 'past' else verb)} {u.q(a)}{tall}")
    if shrink:
        b = ri(rng, 1, a - 1)
        k2 = st.add(f"It {'melted' if g != 'pile of leaves' else 'blew away'} by {u.q(b)}".replace("blew away by", "lost"))
        e, r = st.eq(a, "-", b)
    else:
        k2 = st.add(f"It {'gained' if fam == 'kg' else 'grew'} {u.q(b)}" + rng.choice(["", " in a month", " over the summer"]))
        e, r = st.eq(a, "+", b)
    st.say(k1, f"The {g} {verb} {u.q(a)}{tall}.")
    st.say(k2, f"The {g} {verb} {e} {u.w(r)}{tall}.")
    q = rng.choice([f"How {'heavy' if fam == 'kg' else 'tall'} is it now?", f"How many {u.qw()} is it now?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_grow_rate(rng):
    g, fam = rng.choice(GROWERS[:8])
    u = unit(rng, fam)
    per = rng.choice(["week", "month", "day"])
    n = ri(rng, 2, 8)
    r = ri(rng, 1, min(12, 60 // n))
    a = ri(rng, 2, 100 - n * r)
    verb = "weighs" if fam == "kg" else "is"
    tall = "" if fam == "kg" else " tall"
    st = Story()
    k1 = st.add(f"A {g} {verb} {u.q(a)}{tall}")
    k2 = st.add(f"It {'gains' if fam == 'kg' else 'grows'} {u.q(r)} each {per} for {n} {per}s")
    st.say(k1, f"The {g} {verb} {u.q(a)}{tall}.")
    e1, p = st.eq(n, "*", r)
    e2, y = st.eq(a, "+", p)
    st.say(k2, f"That is {e1} {u.w(p)} and the {g} {verb} {e2} {u.w(y)}{tall}.")
    q = rng.choice([f"How {'heavy' if fam == 'kg' else 'tall'} is the {g} after {n} {per}s?",
                    f"What {'does the ' + g + ' weigh' if fam == 'kg' else 'is its height'} at the end?"])
    return finish(rng, st, render(rng, st, q))


@frame(1, 2)
def f_supply(rng):
    items_ = [("jar", "honey", "spoon"), ("bottle", "shampoo", "spoon"), ("bag", "dog food", "cup"),
              ("tank", "water", "litre"), ("sack", "bird seed", "cup"), ("box", "cereal", "cup"), ("can", "fuel", "litre"),
              ("bag", "rice", "kg"), ("jar", "coffee", "spoon")]
    box, thing, fam = rng.choice(items_)
    u = unit(rng, fam, thing)
    r = ri(rng, 2, 10)
    d = ri(rng, 2, 100 // r)
    n = r * d
    W = people(rng, 1)[0]
    per = rng.choice(["day", "week"])
    st = Story()
    k1 = st.add(f"A {box} {'holds' if rng.random() < 0.5 else 'has'} {u.q(n)}")
    k2 = st.add(f"{W.S()} {W.v(USE, 'pres')} {u.q(r, of=False)} each {per}")
    st.say(k1, f"The {box} has {u.q(n)}.")
    e, _ = st.eq(n, "/", r)
    st.say(k2, f"It lasts {e} {per}s.")
    q = rng.choice([f"How many {per}s will it last?", f"For how many {per}s will the {thing} last?"])
    return finish(rng, st, render(rng, st, q))


COMPARE = [("rope", "cm", "long", "longer"), ("scarf", "cm", "long", "longer"), ("jump", "cm", "long", "longer"),
           ("sunflower", "cm", "tall", "taller"), ("snowman", "cm", "tall", "taller"),
           ("suitcase", "kg", "heavy", "heavier"), ("pumpkin", "kg", "heavy", "heavier"),
           ("walk to school", "km", "long", "longer"), ("swim", "m", "long", "longer"),
           ("drive to work", "mile", "long", "longer"), ("bucket of water", "litre", "full", "fuller")]


@frame(1, 3)
def f_compare_diff(rng):
    obj, fam, adj, comp = rng.choice(COMPARE)
    u = unit(rng, fam)
    A, B = people(rng, 2, first_kinds=False)
    if rng.random() < 0.25:
        A = Who("I", A.name, A.g)
    a = ri(rng, 5, 100)
    b = ri(rng, 2, a - 1)
    st = Story()
    meas = "weighs" if fam == "kg" else ("holds" if fam == "litre" else "is")
    tail = "" if fam in ("kg", "litre") else f" {adj}"
    if fam == "litre":
        comp = "more"
    k1 = st.add(f"{A.Possn()} {obj} {meas} {u.q(a)}{tail}")
    k2 = st.add(f"{B.name}'s {obj} {meas} {u.q(b)}{tail}")
    st.say(k1, f"{A.Possn()} {obj} {meas} {u.q(a)}{tail}.")
    st.say(k2, f"{B.name}'s {obj} {meas} {u.q(b)}{tail}.")
    e, d = st.eq(a, "-", b)
    if rng.random() < 0.6:
        q = (f"How much {comp} is {A.possn()} {obj}?" if comp != "more" else f"How much more does {A.possn()} {obj} hold?")
        st.say(None, f"{A.Possn()} {obj} is {e} {u.w(d)} {comp}." if comp != "more"
               else f"{A.Possn()} {obj} holds {e} {u.w(d)} more.")
    else:
        q = f"What is the difference in {u.qw()}?"
        st.say(None, f"The difference is {e} {u.w(d)}.")
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_recipe_stock(rng):
    ing, dishes, (lo, hi) = rng.choice(RECIPES)
    u = ingredient(rng, ing)
    d1, dn = rng.choice(dishes)
    r = ri(rng, lo, hi)
    n = ri(rng, 2, min(10, 90 // r))
    have = ri(rng, n * r + 1, 100)
    W = people(rng, 1)[0]
    t = tensed(rng)
    st = Story()
    k1 = st.add(f"{W.S()} {W.have(t)} {u.q(have)}", subj=W)
    k2 = st.add(rng.choice([f"{W.S()} {W.v(BAKE if 'cake' in d1 or 'loa' in d1 or 'pie' in d1 else MAKE, t)} {n} {dn} "
                            f"and each one {'took' if t == 'past' else 'takes'} {u.q(r)}",
                            f"Each {d1} {'needed' if t == 'past' else 'needs'} {u.q(r)} and {W.s()} "
                            f"{W.v(MAKE, t)} {n} of them"]))
    st.say(k1, f"{W.S()} {W.rhave()} {u.q(have)}.")
    e1, p = st.eq(n, "*", r)
    e2, left = st.eq(have, "-", p)
    st.say(k2, f"That is {e1} {u.w(p)} and {W.s()} {W.rhave()} {e2} {u.w(left)}.")
    q = rng.choice([f"How many {u.qw()} {W.do(t)} {W.s()} have left?", f"How many {u.qw()} {'were' if t == 'past' else 'are'} left over?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 2)
def f_recipe_scale(rng):
    ing, dishes, (lo, hi) = rng.choice(RECIPES[:7])
    u = ingredient(rng, ing)
    pp = ri(rng, 2, 6)
    k = ri(rng, 2, 6)
    c = ri(rng, lo, hi)
    P = pp * k
    if k * c > 100:
        raise Bad()
    st = Story()
    dish = rng.choice(["soup", "stew", "curry", "pancake mix", "dough", "sauce"])
    k1 = st.add(f"A {dish} recipe for {pp} people uses {u.q(c)}")
    st.say(k1, f"The recipe for {pp} people uses {u.q(c)}.")
    e1, _ = st.eq(P, "/", pp)
    st.say(None, f"{P} people is {e1} times the recipe.")
    e2, tot = st.eq(k, "*", c)
    st.say(None, f"That needs {e2} {u.w(tot)}.")
    q = rng.choice([f"How many {u.qw()} are needed for {P} people?",
                    f"How many {u.qw()} should we use to feed {P} people?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_tank_time(rng):
    holder = rng.choice(["tank", "bathtub", "pool", "barrel", "water trough", "fish tank"])
    u = unit(rng, "litre")
    tu = unit(rng, "minute")
    r = ri(rng, 2, 10)
    tm = ri(rng, 2, 100 // r)
    need = r * tm
    x = ri(rng, 2, 100 - need) if need < 98 else None
    if x is None:
        raise Bad()
    C = x + need
    st = Story()
    k1 = st.add(rng.choice([f"A {holder} holds {u.q(C)} when full", f"The {holder} can hold {u.q(C)}"]))
    k2 = st.add(rng.choice([f"It already has {u.q(x)} of water in it", f"There are {u.q(x)} of water in it now"]))
    k3 = st.add(rng.choice([f"A tap adds {u.q(r)} every {tu.sing}", f"Water flows in at {u.q(r)} per {tu.sing}"]))
    st.say(k1, f"The {holder} holds {u.q(C)}.")
    st.say(k2, f"The {holder} has {u.q(x)} of water.")
    e1, _ = st.eq(C, "-", x)
    st.say(None, f"The {holder} needs {e1} more {u.w(need)}.")
    e2, _ = st.eq(need, "/", r)
    st.say(k3, f"That takes {e2} {tu.w(tm)}.")
    q = rng.choice([f"How many {tu.qw()} until it is full?", f"How long will it take to fill the {holder}?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_round_trip(rng):
    W = people(rng, 1)[0]
    place = rng.choice(["school", "the library", "work", "the pool", "the market", "the farm", "the station",
                        "the gym", "the beach", "grandma's house"])
    u = unit(rng, rng.choice(["km", "km", "mile"]))
    d = ri(rng, 1, 8)
    n = ri(rng, 2, min(10, 100 // (2 * d)))
    verb = rng.choice([V("walk", "walks", "walked"), V("cycle", "cycles", "cycled"), V("jog", "jogs", "jogged"),
                       V("ride", "rides", "rode")])
    t = "pres"
    st = Story()
    k1 = st.add(rng.choice([f"{place.capitalize() if place[0] != 't' else place.replace('the ', 'The ', 1)} is {u.q(d)} from {W.possn()} home",
                            f"{W.S()} {'live' if not W.third else 'lives'} {u.q(d)} from {place}"]))
    k2 = st.add(f"{W.S()} {W.v(verb, t)} there and back every day")
    st.say(k1, f"{cap(place)} is {u.q(d)} away.")
    e1, dd = st.eq(d, "*", 2)
    st.say(k2, f"{W.S()} {W.rv(verb)} {e1} {u.w(dd)} each day.")
    e2, tot = st.eq(n, "*", dd)
    st.say(None, f"In {n} days, {W.s()} {W.rv(verb)} {e2} {u.w(tot)}.")
    q = rng.choice([f"How far {W.do(t)} {W.s()} {verb[0]} in {n} days?",
                    f"How many {u.qw()} {W.do(t)} {W.s()} {verb[0]} over {n} days?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 4)
def f_journey(rng):
    A, B = rng.sample(TOWNS, 2)
    u = unit(rng, rng.choice(["km", "km", "mile"]))
    T = ri(rng, 20, 100)
    a = ri(rng, 2, T - 3)
    b = ri(rng, 1, T - a - 1)
    W = people(rng, 1)[0]
    t = tensed(rng)
    verb = rng.choice([V("drive", "drives", "drove"), V("cycle", "cycles", "cycled"), V("walk", "walks", "walked"),
                       V("ride", "rides", "rode")])
    st = Story()
    k1 = st.add(rng.choice([f"The trip from {A} to {B} is {u.q(T)}", f"It is {u.q(T)} from {A} to {B}",
                            f"{W.S()} {W.v(V('plan', 'plans', 'planned'), t)} a {T} {u.sing} trip from {A} to {B}"]))
    d1, d2 = rng.choice([("before lunch", "after lunch"), ("on the first day", "on the second day"),
                         ("in the morning", "in the afternoon"), ("first", "then")])
    if d1 == "first":
        k2 = st.add(f"{W.S()} {W.v(verb, t)} {u.q(a)} first")
        k3 = st.add(f"Then {W.s()} {W.v(verb, t)} {u.q(b)}", cont_forms(f"{W.v(verb, t)} {u.q(b)} more"), subj=W)
    else:
        k2 = st.add(f"{W.S()} {W.v(verb, t)} {u.q(a)} {d1}", subj=W)
        k3 = st.add(f"{cap(d2)}, {W.pro()} {W.v(verb, t)} {u.q(b)}", [(" and ", f"{u.q(b)} {d2}")], subj=W)
    st.say(k1, f"The trip is {u.q(T)}.")
    if rng.random() < 0.5:
        e1, l1 = st.eq(T, "-", a)
        st.say(k2, f"{W.S()} {W.rhave()} {e1} {u.w(l1)} left.")
        e2, l2 = st.eq(l1, "-", b)
        st.say(k3, f"{W.S()} {W.rhave()} {e2} {u.w(l2)} left.")
    else:
        st.say(k2, f"{W.S()} {W.rv(verb)} {u.q(a)}.")
        e1, s1 = st.eq(a, "+", b)
        st.say(k3, f"{W.S()} {W.rv(verb)} {e1} {u.w(s1)}.")
        e2, l2 = st.eq(T, "-", s1)
        st.say(None, f"{W.S()} still {W.rhave()} {e2} {u.w(l2)} to go.")
    q = rng.choice([f"How far {'is' if t == 'pres' else 'was'} it still to {B}?",
                    f"How many {u.qw()} {W.do('pres')} {W.s()} still have to go?",
                    f"How much farther is {B}?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 2)
def f_bake_time(rng):
    W = people(rng, 1)[0]
    u = unit(rng, "minute")
    thing = rng.choice([("batch of cookies", "batches of cookies"), ("tray of rolls", "trays of rolls"),
                        ("pizza", "pizzas"), ("load of laundry", "loads of laundry"), ("song", "songs"),
                        ("lap", "laps"), ("episode", "episodes"), ("lesson", "lessons")])
    n = ri(rng, 2, 6)
    m = ri(rng, 5, min(25, 90 // n))
    extra = ri(rng, 2, 100 - n * m)
    verb = {"batch of cookies": "bakes", "tray of rolls": "bakes", "pizza": "bakes", "load of laundry": "takes",
            "song": "lasts", "lap": "takes", "episode": "lasts", "lesson": "lasts"}[thing[0]]
    pre = {"bakes": ("mixing the dough", "to clean up"), "takes": ("getting ready", "to tidy up"),
           "lasts": ("a break", "to set up")}[verb]
    st = Story()
    k1 = st.add(f"Each {thing[0]} {verb} {'for ' if verb == 'bakes' else ''}{u.q(m)}")
    k2 = st.add(f"There are {n} {thing[1]}, one after another")
    k3 = st.add(f"{W.S()} also {W.v(V('need', 'needs', 'needed'), 'pres')} {u.q(extra)} {pre[1]}")
    st.say(k1, f"Each {thing[0]} takes {u.q(m)}.")
    e1, p = st.eq(n, "*", m)
    st.say(k2, f"{n} {thing[1]} take {e1} {u.w(p)}.")
    e2, tot = st.eq(p, "+", extra)
    st.say(k3, f"In all it takes {e2} {u.w(tot)}.")
    q = rng.choice([f"How many {u.qw()} does it take in all?", f"How long does it take altogether?",
                    f"What is the total time in {u.qw()}?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_book_chapters(rng):
    W = people(rng, 1)[0]
    c = ri(rng, 2, 12)
    p = ri(rng, 3, min(25, 100 // c))
    tot = c * p
    r = ri(rng, 1, tot - 1)
    t = tensed(rng)
    st = Story()
    k1 = st.add(rng.choice([f"{W.Possn()} book {'has' if t == 'pres' else 'had'} {c} chapters of {p} pages each",
                            f"A book has {c} chapters and every chapter is {p} pages long"]))
    k2 = st.add(f"{W.S()} {W.have(t)} read {r} page{'s' if r > 1 else ''}" + rng.choice(["", " so far", " already"]))
    e1, _ = st.eq(c, "*", p)
    st.say(k1, f"The book has {e1} pages.")
    e2, left = st.eq(tot, "-", r)
    st.say(k2, f"{W.S()} {W.rhave()} {e2} page{'s' if left > 1 else ''} left to read.")
    q = rng.choice([f"How many pages {W.do('pres')} {W.s()} still have to read?",
                    f"How many more pages until {W.s()} finish{'es' if W.third else ''} the book?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 2)
def f_relay(rng):
    W = people(rng, 1)[0]
    u = unit(rng, rng.choice(["km", "mile", "m"]))
    n = ri(rng, 2, 10)
    L = ri(rng, 2, 100 // n)
    T = n * L
    k = ri(rng, 2, n) if n > 2 else 2
    if k * L > 100 or k > n:
        raise Bad()
    race = rng.choice(["relay race", "charity ride", "swim relay", "long walk", "team run"])
    st = Story()
    k1 = st.add(f"A {T} {u.sing} {race} is split into {n} equal stages")
    k2 = st.add(f"{W.S()} {W.v(V('do', 'does', 'did'), 'pres')} {k} of the stages")
    st.say(k1, f"The {race} is {u.q(T)}.")
    e1, _ = st.eq(T, "/", n)
    st.say(None, f"Each stage is {e1} {u.w(L)}.")
    e2, tot = st.eq(k, "*", L)
    st.say(k2, f"{W.S()} {W.rv(V('cover', 'covers'))} {e2} {u.w(tot)}.")
    q = rng.choice([f"How far {W.do('pres')} {W.s()} go?", f"How many {u.qw()} {W.do('pres')} {W.s()} cover?"])
    return finish(rng, st, render(rng, st, q))


@frame(2, 2)
def f_weeks_days(rng):
    w = ri(rng, 1, 12)
    d = ri(rng, 1, 6)
    if w * 7 + d > 100:
        raise Bad()
    thing = rng.choice(["holiday", "school trip", "camp", "course", "project", "festival"])
    st = Story()
    e1, x = st.eq(w, "*", 7)
    st.say(None, f"{w} week{'s' if w > 1 else ''} is {e1} days.")
    e2, y = st.eq(x, "+", d)
    st.say(None, f"That is {e2} days in all.")
    text = rng.choice([f"The {thing} lasts {w} week{'s' if w > 1 else ''} and {d} day{'s' if d > 1 else ''}. How many days is that?",
                       f"How many days are {w} week{'s' if w > 1 else ''} and {d} day{'s' if d > 1 else ''}?"])
    return finish(rng, st, text)


@frame(2, 3)
def f_times_then_diff(rng):
    ac = Activity(rng)
    u = ac.u
    A, B = people(rng, 2)
    if B.kind != "third" or A.kind == "we":
        raise Bad()
    t = tensed(rng)
    a = ri(rng, 2, 33)
    name, f = rng.choice(MULT[:5])
    if a * f > 100:
        raise Bad()
    st = Story()
    k1 = st.add(f"{A.S()} {ac.vp(A, t, u.q(a))}")
    rel = f"{name} " + {"dist": "as far", "time": "as long"}.get(ac.kind, f"as many {u.pl()}")
    k2 = st.add(f"{B.S()} {ac.vp(B, t, rel)}")
    st.say(k1, f"{A.S()} {ac.rvp(A, u.q(a))}.")
    e1, b = st.eq(a, "*", f)
    st.say(k2, f"{B.S()} {ac.rvp(B, e1 + ' ' + u.w(b))}.")
    e2, d = st.eq(b, "-", a)
    st.say(None, f"{B.S()} {ac.rvp(B, e2 + ' ' + u.w(d))} more than {A.s() if A.third else A.obj()}.")
    more = {"dist": "farther", "time": "longer"}.get(ac.kind)
    q = (f"How much {more} {B.do(t)} {B.s()} {ac.qverb(ac.a['v'][0])} than {A.ref(t)}?" if more and rng.random() < 0.6
         else f"How many more {u.qw()} {B.do(t)} {B.s()} {ac.qverb(ac.a['v'][0])} than {A.ref(t)}?")
    return finish(rng, st, render(rng, st, q))


@frame(2, 3)
def f_bottles_share(rng):
    W = people(rng, 1)[0]
    drink = rng.choice(["juice", "water", "lemonade", "milk", "soup", "apple cider"])
    u = unit(rng, rng.choice(["litre", "cup", "glass"]), drink)
    c = ri(rng, 2, 12)
    if u.fam == "litre":
        m = ri(rng, 1, 3)
        box = rng.choice([("bottle", "bottles"), ("carton", "cartons"), ("can", "cans")])
        into = rng.choice([("jug", "jugs"), ("pitcher", "pitchers"), ("pot", "pots"), ("cooler", "coolers")])
    else:
        m = ri(rng, 2, 8)
        box = rng.choice([("flask", "flasks"), ("jug", "jugs"), ("pitcher", "pitchers")])
        into = rng.choice([("table", "tables"), ("group", "groups"), ("tray", "trays")])
    tot = c * m
    ds = [d for d in range(2, 11) if tot % d == 0 and d != tot]
    if not ds or tot > 100:
        raise Bad()
    k = rng.choice(ds)
    t = tensed(rng)
    st = Story()
    k1 = st.add(f"{W.S()} {W.v(BUY, t)} {c} {box[1]} of {drink} with {u.q(m, of=False)} in each")
    k2 = st.add(f"{W.S()} {W.v(POUR, t)} it all equally into {k} {into[1]}", subj=W)
    e1, _ = st.eq(c, "*", m)
    st.say(k1, f"{W.S()} {W.rhave()} {e1} {u.w(tot)}.")
    e2, r = st.eq(tot, "/", k)
    st.say(k2, f"Each {into[0]} gets {e2} {u.w(r)}.")
    q = rng.choice([f"How many {u.qw()} go to each {into[0]}?", f"How much {drink} does each {into[0]} get?"])
    return finish(rng, st, render(rng, st, q))


@frame(3, 3)
def f_basket_points(rng):
    W = people(rng, 1)[0]
    teams = [("The Hawks", "they", True), ("Our team", "we", True), ("The Comets", "they", True),
             ("The home team", "it", False), ("The Otters", "they", True), ("Our class team", "it", False)]
    if rng.random() < 0.4:
        name, pr, plural = rng.choice(teams)
    else:
        name, pr, plural = W.S(), W.pro(), not W.third
    if name == "Our team":
        plural = False
    a = ri(rng, 2, 20)
    b = ri(rng, 1, 12)
    t = tensed(rng)
    verb = "scored" if t == "past" else ("score" if plural else "scores")
    rverb = "score" if plural else "scores"
    st = Story()
    k1 = st.add(f"{name} {verb} {a} two-point baskets", subj=1)
    three = f"{b} three-point {'baskets' if b > 1 else 'basket'}"
    k2 = st.add(f"{cap(pr) if pr != 'it' else name} also {verb} {three}", [(" and ", three)], subj=1)
    e1, x = st.eq(a, "*", 2)
    st.say(k1, f"That is {e1} points.")
    e2, y = st.eq(b, "*", 3)
    st.say(k2, f"That is {e2} points.")
    e3, z = st.eq(x, "+", y)
    st.say(None, f"In all, {decap(name)} {rverb} {e3} points.")
    do_ = "did" if t == "past" else ("do" if plural else "does")
    q = rng.choice([f"How many points {do_} {decap(name)} score in total?", "What is the total score?",
                    "How many points is that altogether?"])
    return finish(rng, st, render(rng, st, q))


@frame(3, 2)
def f_round_trip_plus(rng):
    W = people(rng, 1)[0]
    u = unit(rng, rng.choice(["km", "mile"]))
    d = ri(rng, 1, 6)
    n = ri(rng, 2, 6)
    extra = ri(rng, 2, 100 - 2 * d * n) if 2 * d * n < 98 else None
    if extra is None:
        raise Bad()
    extra = min(extra, 30)
    verb = rng.choice([V("walk", "walks", "walked"), V("cycle", "cycles", "cycled"), V("run", "runs", "ran")])
    place = rng.choice(["school", "work", "the pool", "the park", "the shop"])
    st = Story()
    k1 = st.add(f"{W.S()} {W.v(verb, 'pres')} to {place} and back on {n} days a week")
    k2 = st.add(f"{cap(place)} is {u.q(d)} away")
    k3 = st.add(f"On Sunday {W.pro()} {W.v(verb, 'pres')} another {u.q(extra)}")
    st.say(k2, f"{cap(place)} is {u.q(d)} away.")
    e1, dd = st.eq(d, "*", 2)
    st.say(k1, f"{W.S()} {W.rv(verb)} {e1} {u.w(dd)} a day.")
    e2, w = st.eq(n, "*", dd)
    st.lines.append(f"On {n} days, {W.s()} {W.rv(verb)} {e2} {u.w(w)}.")
    e3, tot = st.eq(w, "+", extra)
    st.say(k3, f"{W.S()} {W.rv(verb)} {e3} {u.w(tot)}.")
    q = rng.choice([f"How far {W.do('pres')} {W.s()} {verb[0]} in the week?",
                    f"How many {u.qw()} {W.do('pres')} {W.s()} {verb[0]} that week?"])
    return finish(rng, st, render(rng, st, q))


@frame(3, 3)
def f_tank_fill3(rng):
    holder = rng.choice(["tank", "pool", "barrel", "bathtub", "cistern"])
    u = unit(rng, "litre")
    r = ri(rng, 2, 10)
    m = ri(rng, 2, 8)
    x = ri(rng, 2, 60)
    y = x + r * m
    if y >= 100:
        raise Bad()
    C = ri(rng, y + 1, 100)
    st = Story()
    k1 = st.add(f"A {holder} can hold {u.q(C)}")
    k2 = st.add(f"It has {u.q(x)} of water in it")
    k3 = st.add(f"A hose adds {u.q(r)} a minute for {m} minutes")
    st.say(k1, f"The {holder} holds {u.q(C)}.")
    st.say(k2, f"The {holder} has {u.q(x)} of water.")
    e1, p = st.eq(m, "*", r)
    e2, _ = st.eq(x, "+", p)
    st.say(k3, f"That is {e1} {u.w(p)} and the {holder} has {e2} {u.w(y)} of water.")
    e3, _ = st.eq(C, "-", y)
    st.say(None, f"The {holder} needs {e3} more {u.w(C - y)}.")
    q = rng.choice([f"How many more {u.qw()} are needed to fill it?", f"How much more water will fit in the {holder}?"])
    return finish(rng, st, render(rng, st, q))


@frame(3, 2)
def f_trip3(rng):
    W = people(rng, 1)[0]
    u = unit(rng, rng.choice(["km", "mile"]))
    d = ri(rng, 2, 5)
    r = ri(rng, 3, 20)
    b = ri(rng, 2, 20)
    done = d * r + b
    if done >= 98:
        raise Bad()
    T = ri(rng, done + 1, 100)
    verb = rng.choice([V("cycle", "cycles", "cycled"), V("hike", "hikes", "hiked"), V("paddle", "paddles", "paddled")])
    t = tensed(rng)
    st = Story()
    k1 = st.add(f"{W.S()} {W.v(V('plan', 'plans', 'planned'), t)} to {verb[0]} {u.q(T)} along the coast")
    k2 = st.add(f"{W.S()} {W.v(verb, t)} {u.q(r)} a day for {d} days", subj=W)
    k3 = st.add(f"{W.S()} {W.v(verb, t)} {u.q(b)} more on the next day",
                [(" and ", f"{W.v(verb, t)} {u.q(b)} more on the next day")], subj=W)
    st.say(k1, f"The plan is {u.q(T)}.")
    e1, p = st.eq(d, "*", r)
    st.say(k2, f"{W.S()} {W.rv(verb)} {e1} {u.w(p)}.")
    e2, s2 = st.eq(p, "+", b)
    st.say(k3, f"{W.S()} {W.rv(verb)} {e2} {u.w(s2)}.")
    e3, _ = st.eq(T, "-", s2)
    st.say(None, f"{W.S()} still {W.rhave()} {e3} {u.w(T - s2)} to go.")
    q = rng.choice([f"How many {u.qw()} {'are' if t == 'pres' else 'were'} left?",
                    f"How much farther {W.do(t)} {W.s()} have to go?"])
    return finish(rng, st, render(rng, st, q))


@frame(4, 3)
def f_eggs4(rng):
    W = people(rng, 1)[0]
    ing, dishes, (lo, hi) = rng.choice(RECIPES)
    u = ingredient(rng, ing)
    if len(dishes) < 2:
        raise Bad()
    (a1, an), (b1, bn) = rng.sample(dishes, 2)
    ra, rb = ri(rng, lo, hi), ri(rng, lo, hi)
    na, nb = ri(rng, 2, 5), ri(rng, 2, 5)
    need = na * ra + nb * rb
    if need >= 99:
        raise Bad()
    have = ri(rng, need + 1, 100)
    t = tensed(rng)
    st = Story()
    k1 = st.add(rng.choice([f"{W.S()} {W.have(t)} {u.q(have)}", f"There {'are' if t == 'pres' else 'were'} {u.q(have)} in {W.possn()} kitchen"]))
    k2 = st.add(f"{W.S()} {W.v(MAKE, t)} {na} {an} with {u.q(ra)} each", subj=W)
    k3 = st.add(f"{W.S()} {W.v(MAKE, t)} {nb} {bn} with {u.q(rb)} each",
                [(", then ", f"{nb} {bn} with {u.q(rb)} each")], subj=W)
    st.say(k1, f"{W.S()} {W.rhave()} {u.q(have)}.")
    e1, p = st.eq(na, "*", ra)
    e2, x = st.eq(have, "-", p)
    st.say(k2, f"That is {e1} {u.w(p)} and {W.s()} {W.rhave()} {e2} {u.w(x)}.")
    e3, q_ = st.eq(nb, "*", rb)
    e4, y = st.eq(x, "-", q_)
    st.say(k3, f"That is {e3} {u.w(q_)} and {W.s()} {W.rhave()} {e4} {u.w(y)}.")
    q = rng.choice([f"How many {u.qw()} {W.do(t)} {W.s()} have left?", f"How many {u.qw()} {'are' if t == 'pres' else 'were'} left?"])
    return finish(rng, st, render(rng, st, q))


@frame(4, 2)
def f_basket4(rng):
    W = people(rng, 1)[0]
    a, b, c = ri(rng, 2, 15), ri(rng, 1, 8), ri(rng, 1, 10)
    t = "past"
    st = Story()
    k1 = st.add(f"{W.S()} scored {a} two-point baskets")
    k2 = st.add(f"{W.S()} scored {b} three-pointer{'s' if b > 1 else ''}")
    k3 = st.add(f"{W.S()} made {c} free throw{'s' if c > 1 else ''} worth 1 point each")
    e1, x = st.eq(a, "*", 2)
    st.say(k1, f"That is {e1} points.")
    e2, y = st.eq(b, "*", 3)
    st.say(k2, f"That is {e2} points.")
    e3, z = st.eq(x, "+", y)
    e4, w = st.eq(z, "+", c)
    st.say(k3, f"{W.S()} {'scores' if W.third else 'score'} {e3} points, then {e4} points.")
    q = rng.choice([f"How many points did {W.s()} score in the game?", "What was the total?"])
    return finish(rng, st, render(rng, st, q))


ENGINE_SHARE = {1: 0.45, 2: 0.5, 3: 0.7, 4: 0.8}


def generate(rng, steps):
    """One item with the given number of steps: from an engine or from a fixed frame."""
    if rng.random() < ENGINE_SHARE[steps]:
        return rng.choices([activity_chain, stock_chain], [55, 45])[0](rng, steps)
    fs = FRAMES[steps]
    f = rng.choices([x[0] for x in fs], [x[1] for x in fs])[0]
    for _ in range(300):
        try:
            return f(rng)
        except Bad:
            continue
    raise RuntimeError(f"{f.__name__}: no draw")



def items_of(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        steps = rng.choices([1, 2, 3, 4], [45, 35, 15, 5])[0]
        out.append(generate(rng, steps))
    return out


if __name__ == "__main__":
    items.main("measure", items_of, __doc__)
