#!/usr/bin/env python3
"""Timeline: questions about ages and time.

Ages (how old people are now, N years ago, in N years, "N years older/younger than", "twice as
old", "half as old", sums and differences of ages, when someone will turn N, how old one person
was when another was born, birthdays and candles, twins and triplets) and durations (minutes of
practice per day over days or weeks, hours worked, films and journeys that last N minutes of which
M have passed, waiting in queues and for buses, ticket numbers, page-per-day reading plans,
collections that grow each month, weeks turned into days, morning schedules with time to spare,
time shared equally).

Written independently of tinygsm's generator (src/tinygsm/natural.cpp, not read) and of the other
grammars in this folder (not read): its own names, families, activities, sentence frames and
question forms. Subjects mix third person, "I", "you", "we" and relatives ("my grandmother",
"Rosa's twin sisters"). Reasoning follows the model's conventions: one "(k) " line per statement of
the question in dependency order, restating each fact with its equation, and unmarked lines for what
only the question asks ("In 4 years, Rosa's brother will be 5 + 4 = 9 years old.").

    python3 tools/grammars/timeline.py --n 20000 --seed 1 -o /tmp/timeline.jsonl
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402


class Retry(Exception):
    """The numbers drawn do not fit; draw again."""


FEMALE = """Rosa Amara Sakura Ingrid Priya Leila Fatima Chiara Marisol Yuki Nadia Olga Aisha Freya Zainab
Mei Ximena Dagny Svetlana Ayumi Nkechi Tamar Esperanza Kalani Brigid Anouk Malia Solveig Ifeoma
Paloma Noor Elif Zuzana Lucia Adaeze Kirra Thandiwe Ilse Aroha Rukhsana Camille Wanjiru Jana Maren
Liesel Catalina Keziah Hana Oona Farida Milena Siobhan Tove Yasmin Beatriz Naledi Annika Rania
Greta Imani Valentina Sunita Mirela Ngozi Astrid Pilar Dilnoza Ebru Kamala Lowri Mbali""".split()
MALE = """Tomas Kofi Hiroshi Lars Rahul Mateo Dmitri Oluwaseun Finn Jamal Kenji Bruno Ahmed Emil
Santiago Wiremu Arjun Pavel Tariq Joaquin Niko Ravi Benedikt Chidi Sven Youssef Lorenzo Minh
Aleksander Idris Caetano Rory Haruto Bilal Matthias Tane Enzo Kwame Anders Diego Farouk Jonas Seun
Takumi Ivo Malik Teodor Omar Stellan Ezra Gustavo Hamid Kai Luca Nikolai Pedro Quentin Rashid Soren
Umar Vikram Xavier Yusuf Zoltan Bjorn Thiago Emeka Ilya Keanu Dario Mehmet Anselm Oisin""".split()
NAMES = set(FEMALE) | set(MALE)

GRANDP = [("grandmother", "f"), ("grandfather", "m"), ("grandma", "f"), ("grandpa", "m"),
          ("great-aunt", "f"), ("great-uncle", "m"), ("nana", "f")]
PARENT = [("mother", "f"), ("father", "m"), ("mom", "f"), ("dad", "m"), ("aunt", "f"), ("uncle", "m"),
          ("stepmother", "f"), ("stepfather", "m"), ("godmother", "f"), ("godfather", "m")]
OLDER = [("older sister", "f"), ("older brother", "m"), ("big sister", "f"), ("big brother", "m"),
         ("cousin", "f"), ("cousin", "m")]
YOUNGER = [("little sister", "f"), ("younger brother", "m"), ("little brother", "m"),
           ("younger sister", "f"), ("cousin", "m"), ("cousin", "f")]
CHILD = [("daughter", "f"), ("son", "m"), ("niece", "f"), ("nephew", "m")]
GRANDCHILD = [("granddaughter", "f"), ("grandson", "m")]
TWIN = [("twin sister", "f"), ("twin brother", "m")]
LEADS = ["Question: ", "Quick one: ", "Can you help? ", "Age puzzle: ", "Try this: ", "Here is one: ",
         "Homework question: ", "Riddle me this: ", "Please work this out: ", "Help! ", "Hi! ",
         "A time problem: ", "Think about this: ", "My teacher asked: "]


def cap(s):
    return s[:1].upper() + s[1:]


def ordinal(n):
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"


def an(n):
    """The article before a number said aloud: "an 8-minute", "a 12-minute"."""
    return "an" if str(n).startswith("8") or n in (11, 18) else "a"


def pl(n, word):
    if n == 1:
        return f"1 {word}"
    return f"{n} {'people' if word == 'person' else word + 's'}"


def conj3(phrase):
    w, sp, rest = phrase.partition(" ")
    irregular = {"do": "does", "go": "goes", "have": "has", "be": "is"}
    if w in irregular:
        w2 = irregular[w]
    elif w.endswith(("s", "sh", "ch", "x", "z")):
        w2 = w + "es"
    elif w.endswith("y") and w[-2] not in "aeiou":
        w2 = w[:-1] + "ies"
    else:
        w2 = w + "s"
    return w2 + sp + rest


class Person:
    """Someone in a story: how the question names them (q) and how the reasoning does (r)."""

    def __init__(self, q, r=None, kind="s", gender=None, alt=None):
        self.q, self.r, self.kind, self.gender, self.alt = q, r or q, kind, gender, alt

    R = property(lambda self: cap(self.r))

    def pron(self):
        return {"i": "I", "you": "you", "we": "we", "pl": "they"}.get(self.kind) or \
            ("she" if self.gender == "f" else "he")

    def obj(self):
        return {"i": "me", "you": "you", "we": "us", "pl": "them"}.get(self.kind) or \
            ("her" if self.gender == "f" else "him")

    def pp(self):
        return {"i": "my", "you": "your", "we": "our", "pl": "their"}.get(self.kind) or \
            ("her" if self.gender == "f" else "his")

    def possq(self, q=None):
        q = q or self.q
        if self.kind in ("i", "you", "we"):
            return self.pp()
        return q + ("'" if q.endswith("s") and self.kind == "pl" else "'s")

    def possr(self):
        return self.possq(self.r)

    def robj(self):
        return self.obj() if self.kind in ("i", "you", "we") else self.r

    def be(self):
        return {"i": "am", "you": "are", "we": "are", "pl": "are"}.get(self.kind, "is")

    def was(self):
        return "was" if self.kind in ("i", "s") else "were"

    def has(self):
        return "has" if self.kind == "s" else "have"

    def does(self):
        return "does" if self.kind == "s" else "do"

    def v(self, verb):
        return conj3(verb) if self.kind == "s" else verb


def named(rng, gender=None):
    gender = gender or rng.choice("fm")
    return Person(rng.choice(FEMALE if gender == "f" else MALE), kind="s", gender=gender)


def relative(owner, word, gender, kind="s"):
    return Person(f"{owner.possq()} {word}", f"{owner.possr()} {word}", kind, gender,
                  alt=(f"{owner.pp()} {word}" if owner.kind == "s" else None))


def subject(rng, we=True, plural=True, you=True):
    """A doer for the time stories: a name, I, you, we, or a relative."""
    r = rng.random()
    if r < 0.52:
        return named(rng)
    if r < 0.68:
        return Person("I", kind="i")
    if r < 0.76 and you:
        return Person("you", kind="you")
    if r < 0.85 and we:
        return Person("we", kind="we")
    owner = rng.choice([Person("I", kind="i"), named(rng), Person("we", kind="we")])
    if plural and rng.random() < 0.3:
        word = rng.choice(["twin sisters", "twin brothers", "cousins", "grandparents", "parents"])
        return relative(owner, word, None, "pl")
    word, g = rng.choice(GRANDP + PARENT + OLDER[:4] + YOUNGER[:4])
    return relative(owner, word, g)


def sq(p):
    """A person as the subject of a sentence in the question."""
    return cap(p.q)


class Story:
    def __init__(self, rng):
        self.rng, self.stmts, self.plan, self.worked = rng, [], [], []

    def eq(self, op, a, b):
        for v in (a, b):
            if not isinstance(v, int) or not 1 <= v <= 100:
                raise Retry
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            if min(a, b) > 25:
                raise Retry
            r = a * b
        else:
            if a % b:
                raise Retry
            r = a // b
        if not 1 <= r <= 100:
            raise Retry
        self.worked.append({"op": op, "a": a, "b": b, "result": r})
        self.last = r
        return f"{a} {op} {b} = {r}"

    def st(self, text, clause_ok=True):
        s = {"text": text, "clause_ok": clause_ok}
        self.stmts.append(s)
        return s

    def ln(self, s, text):
        self.plan.append((s, text))

    def fin(self, text):
        self.plan.append((None, text))


def distractor(rng, p):
    """A sentence with nothing the question needs."""
    n = rng.randint(2, 40)
    if p is None or p.kind == "pl":
        p = named(rng)
    S, poss = sq(p), cap(p.possq())
    return rng.choice([
        f"{S} {p.v('live')} {n} miles from the coast.",
        f"{poss} favourite number is {n}.",
        f"{poss} street has {n} houses.",
        f"It was a rainy Tuesday.",
        f"{S} {p.has()} a cat called Pepper.",
        f"{poss} bike has {rng.randint(3, 21)} gears.",
        f"There are {n} apples in the fruit bowl.",
        f"{poss} school has {n} classrooms.",
        f"The bakery opens at {rng.randint(6, 9)} o'clock.",
        f"{S} {p.v('own')} {n} pairs of socks.",
        f"{S} {p.v('love')} mango ice cream.",
        f"{poss} phone has {n} apps on it.",
        f"The park has {n} benches.",
        f"{S} {p.has()} {n} pencils in a tin.",
    ])


PRONOUN = re.compile(r"\b(she|he|her|his|him|they|their|them|it|that|this)\b", re.I)


def clause(text):
    w = text.split(" ")[0].split("'")[0].rstrip(",.")
    t = text.rstrip(".")
    if w in NAMES or w == "I":
        return t
    return t[:1].lower() + t[1:]


def join_and(parts):
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def assemble(rng, story, question, person=None):
    stmts = list(story.stmts)
    nd = 0
    if rng.random() < 0.2:
        nd = 2 if rng.random() < 0.2 else 1
    for _ in range(nd):
        stmts.insert(rng.randint(0, len(stmts)), {"text": distractor(rng, person), "clause_ok": True,
                                                   "noise": True})
    if len(stmts) > 9:
        raise Retry
    pos = {id(s): i + 1 for i, s in enumerate(stmts)}
    noise = [s for s in stmts if s.get("noise")]
    reasoning, done = [], set()
    for s, text in story.plan:
        if s is None:
            if all(id(x) in done for x in story.stmts):
                for z in noise:
                    if id(z) not in done:
                        reasoning.append(f"({pos[id(z)]}) This does not change the answer.")
                        done.add(id(z))
            reasoning.append(text)
            continue
        for z in noise:
            if id(z) not in done and pos[id(z)] < pos[id(s)]:
                reasoning.append(f"({pos[id(z)]}) This does not change the answer.")
                done.add(id(z))
        reasoning.append(f"({pos[id(s)]}) {text}")
        done.add(id(s))
    for z in noise:
        if id(z) not in done:
            reasoning.append(f"({pos[id(z)]}) This does not change the answer.")
    texts = [s["text"] for s in stmts]
    r = rng.random()
    qfirst_ok = question.startswith(("How", "What", "In how", "By how")) and question.endswith("?") \
        and all(s["clause_ok"] for s in stmts) and not PRONOUN.search(question)
    if r < 0.10:
        body = " ".join(f"({i + 1}) {t}" for i, t in enumerate(texts)) + " " + question
    elif r < 0.24 and qfirst_ok:
        body = f"{question[:-1]} if {join_and([clause(t) for t in texts])}?"
    elif r < 0.32 and all(s["clause_ok"] for s in stmts):
        cl = [clause(t) for t in texts]
        body = cap(", ".join(cl)) + rng.choice([", so ", " - ", ". "]) + \
            (question if question[0] == "I" else question[:1].lower() + question[1:])
    else:
        body = " ".join(texts) + " " + question
    if rng.random() < 0.22:
        body = rng.choice(LEADS) + body
    if rng.random() < 0.07:
        body = body.lower()
        if rng.random() < 0.5:
            body = body.rstrip("?")
    return {"user_text": body.strip(), "reasoning": reasoning, "worked": story.worked,
            "answer": story.worked[-1]["result"]}


# ----------------------------------------------------------------------------------------------
# Ages
# ----------------------------------------------------------------------------------------------

def years(n):
    return pl(n, "year")


class AgeText:
    """Tracks who was mentioned so later sentences may say "her brother" or "than him"."""

    def __init__(self, rng):
        self.rng, self.seen, self.last = rng, set(), None

    def m(self, p, case="subj", pron=True):
        rng = self.rng
        if case == "obj" and p.kind in ("i", "you", "we"):
            return p.obj()
        if pron and p is self.last and p.kind == "s" and rng.random() < 0.35:
            return p.obj() if case == "obj" else p.pron()
        if p.alt and p.owner_id in self.seen and rng.random() < 0.6:
            return p.alt
        return p.q

    def poss(self, p):
        if p.kind in ("i", "you", "we"):
            return p.pp()
        if p is self.last and p.kind == "s" and self.rng.random() < 0.35:
            return p.pp()
        q = p.alt if (p.alt and p.owner_id in self.seen and self.rng.random() < 0.6) else p.q
        return q + "'s"

    def said(self, *ps):
        for p in ps:
            self.seen.add(id(p))
        self.last = ps[0]


def base_fact(rng, T, story, p, a):
    """A sentence giving p's age a; the reasoning line may need a step."""
    S = cap(T.m(p))
    be, was = p.be(), p.was()
    line = f"{p.R} {be} {a} years old."
    r = rng.random()
    if r < 0.22 and a + 1 <= 100:
        when = rng.choice(["next month", "next week", "on Friday", "tomorrow", "in the spring", "this weekend"])
        text = rng.choice([f"{S} will turn {a + 1} {when}.", f"{S} will be {a + 1} {when}.",
                           f"{cap(when)}, {T.m(p)} will turn {a + 1}."])
        line = f"{p.R} {be} {a + 1} - 1 = {a} years old."
        story.eq("-", a + 1, 1)
    elif r < 0.34 and a > 3:
        n = rng.randint(2, min(a - 1, 30))
        text = rng.choice([f"{cap(years(n))} ago, {T.m(p)} {was} {a - n} years old.",
                           f"{S} {was} {a - n} just {years(n)} ago."])
        line = f"{p.R} {be} {a - n} + {n} = {a} years old."
        story.eq("+", a - n, n)
    elif r < 0.44 and a <= 95:
        n = rng.randint(2, min(100 - a, 25))
        text = rng.choice([f"In {years(n)}, {T.m(p)} will be {a + n}.",
                           f"{S} will be {a + n} years old in {years(n)}."])
        line = f"{p.R} {be} {a + n} - {n} = {a} years old."
        story.eq("-", a + n, n)
    else:
        text = rng.choice([
            f"{S} {be} {a}.", f"{S} {be} {a} years old.", f"{S} {be} {a} years old now.",
            f"{cap(T.poss(p))} age is {a}.", f"{S} turned {a} this year.", f"{S} just turned {a}.",
            f"{S} celebrated {p.pp()} {ordinal(a)} birthday last week.",
            f"{S} {p.has()} just had {p.pp()} {ordinal(a)} birthday.",
            f"{S} {was} born {years(a)} ago.", f"{S} {be} {a} this year.",
            f"Right now {T.m(p)} {be} {a}.", f"{S} {be} {a} years of age."])
    T.said(p)
    return text, line


def derived_fact(rng, T, story, b, x, rel, k):
    """A sentence relating new person b to known person x; the reasoning line with its equation."""
    bs, xo, xs = cap(T.m(b)), T.m(x, "obj"), None
    bb, bw = b.be(), b.was()
    xpos = T.poss(x)
    if rel == "older":
        line = f"{b.R} {bb} {story.eq('+', x.age, k)} years old."
        opts = [f"{bs} {bb} {years(k)} older than {xo}.", f"{bs} {bw} born {years(k)} before {xo}.",
                f"{bs} {bb} older than {xo} by {years(k)}.",
                f"{cap(T.m(x))} {x.be()} {years(k)} younger than {T.m(b, 'obj')}.",
                f"{cap(T.m(x))} {x.was()} born {years(k)} after {T.m(b, 'obj')}."]
        if b.kind == "s":
            opts.append(f"The age gap between {T.m(b)} and {xo} is {years(k)}, and {b.pron()} is the older one.")
    elif rel == "younger":
        line = f"{b.R} {bb} {story.eq('-', x.age, k)} years old."
        opts = [f"{bs} {bb} {years(k)} younger than {xo}.", f"{bs} {bw} born {years(k)} after {xo}.",
                f"{bs} {bb} younger than {xo} by {years(k)}.",
                f"{cap(T.m(x))} {x.be()} {years(k)} older than {T.m(b, 'obj')}.",
                f"{cap(T.m(x))} {x.was()} {k} when {T.m(b)} {bw} born."]
    elif rel == "times":
        line = f"{b.R} {bb} {story.eq('*', x.age, k)} years old."
        kt = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}[k]
        fr = {2: "half", 3: "a third of", 4: "a quarter of", 5: "a fifth of"}[k]
        opts = [f"{bs} {bb} {kt} as old as {xo}.", f"{bs} {bb} {k} times {xpos} age." if k > 2 else
                f"{bs} {bb} double {xpos} age.", f"{cap(T.m(x))} {x.be()} {fr} {T.poss(b)} age.",
                f"{cap(T.poss(b))} age is {k} times {xpos} age."]
        if k == 2:
            opts.append(f"{cap(T.m(x))} {x.be()} half as old as {T.m(b, 'obj')}.")
    else:  # part
        line = f"{b.R} {bb} {story.eq('/', x.age, k)} years old."
        kt = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}[k]
        fr = {2: "half", 3: "a third of", 4: "a quarter of", 5: "a fifth of"}[k]
        opts = [f"{bs} {bb} {fr} {xpos} age.", f"{cap(T.m(x))} {x.be()} {kt} as old as {T.m(b, 'obj')}.",
                f"{cap(T.poss(b))} age is {fr} {xpos} age."]
        if k == 2:
            opts.append(f"{bs} {bb} half as old as {xo}.")
        else:
            opts.append(f"{cap(T.m(x))} {x.be()} {k} times {T.poss(b)} age.")
    text = rng.choice(opts)
    if text.startswith(bs + " "):
        T.said(b, x)
    else:
        T.said(x, b)
        if text.startswith("The age gap"):
            T.last = None
    return text, line


def role_for(rng, age, ao):
    d = age - ao
    if d >= 40 and age >= 58:
        return rng.choice(GRANDP)
    if d >= 17:
        return rng.choice(PARENT)
    if d > 0:
        return rng.choice(OLDER)
    if d == 0:
        return rng.choice(TWIN)
    if d <= -40 and ao >= 58:
        return rng.choice(GRANDCHILD)
    if d <= -17:
        return rng.choice(CHILD)
    return rng.choice(YOUNGER)


def cast(rng, ages, oi):
    """People for the given ages; person oi is the owner (a name, I or you), the rest relatives or names."""
    r = rng.random()
    owner = named(rng) if r < 0.6 else (Person("I", kind="i") if r < 0.85 else Person("you", kind="you"))
    owner.owner_id = None
    people, used = [], {owner.q}
    for i, a in enumerate(ages):
        if i == oi:
            p = owner
        elif rng.random() < 0.2:
            p = named(rng)
            while p.q in used:
                p = named(rng)
            p.owner_id = None
        else:
            for _ in range(20):
                word, g = role_for(rng, a, ages[oi])
                if word not in used:
                    break
            else:
                raise Retry
            p = relative(owner, word, g)
            p.owner_id = id(owner)
        used.add(p.q if p.kind != "s" or p.q in NAMES else p.q.split()[-1])
        used.add(p.q.split(" ", 1)[-1])
        p.age = a
        people.append(p)
    return people


def q_age(rng, T, story, people, z, qt):
    """The question about person z (and maybe another), and its unmarked reasoning lines."""
    Z = T.m(z)
    be, was = z.be(), z.was()
    if qt == "now":
        return rng.choice([f"How old {be} {Z}?", f"What is {T.poss(z)} age?", f"How many years old {be} {Z}?",
                           f"Find {T.poss(z)} age.", f"What age {be} {Z}?",
                           f"Can you work out how old {Z} {be}?", f"So how old {be} {Z}?",
                           f"{cap(Z)} {be} how old?"])
    if qt == "future":
        n = rng.randint(1, 30)
        story.fin(f"In {years(n)}, {z.r} will be {story.eq('+', z.age, n)} years old.")
        goin = {"am": "am", "are": "are", "is": "is"}[be]
        return rng.choice([f"How old will {Z} be in {years(n)}?", f"In {years(n)}, how old will {Z} be?",
                           f"What will {T.poss(z)} age be {years(n)} from now?",
                           f"How old will {Z} be {years(n)} from now?",
                           f"How old {goin} {Z} going to be in {years(n)}?",
                           f"{cap(years(n))} from now, what age will {Z} be?",
                           f"What age will {Z} reach after {years(n)} more?".replace("years more", "more years")
                           if n > 1 else f"How old will {Z} be next year?"])
    if qt == "past":
        n = rng.randint(1, z.age - 1)
        story.fin(f"{cap(years(n))} ago, {z.r} {was} {story.eq('-', z.age, n)} years old.")
        return rng.choice([f"How old {was} {Z} {years(n)} ago?", f"What was {T.poss(z)} age {years(n)} ago?",
                           f"{cap(years(n))} ago, how old {was} {Z}?",
                           f"What age {was} {Z} {years(n)} back?"])
    if qt == "when":
        t = rng.randint(z.age + 2, min(100, z.age + 60))
        story.fin(f"{z.R} will be {t} in {story.eq('-', t, z.age)} years.")
        return rng.choice([f"In how many years will {Z} be {t}?", f"How many years until {Z} {z.v('turn')} {t}?",
                           f"How long until {Z} {be} {t} years old?",
                           f"How many more years before {Z} {be} {t}?",
                           f"In how many years will {Z} celebrate {z.pp()} {ordinal(t)} birthday?"])
    if qt == "ago":
        t = rng.randint(1, z.age - 2)
        story.fin(f"{z.R} {was} {t} years old {story.eq('-', z.age, t)} years ago.")
        return rng.choice([f"How many years ago {was} {Z} {t}?", f"How long ago {was} {Z} {t} years old?",
                           f"How many years have passed since {Z} {was} {t}?",
                           f"How many years ago did {Z} turn {t}?"])
    others = [p for p in people if p is not z]
    y = rng.choice(others)
    two = len(people) == 2 and all(p.kind == "s" for p in people)
    a, b = (y, z) if rng.random() < 0.5 else (z, y)
    if a.kind in ("i", "you"):
        a, b = b, a
    pair_s = f"{T.m(a, pron=False)} and {T.m(b, pron=False)}"
    pair_o = f"{T.m(a, pron=False)} and {T.m(b, 'obj', pron=False)}" if b.kind in ("i", "you") else pair_s
    names = f"{a.r} and {b.r}"
    if qt == "sum":
        story.fin(f"Together, {names} are {story.eq('+', a.age, b.age)} years old.")
        opts = [f"How old are {pair_s} together?", f"What is the combined age of {pair_o}?",
                f"What do the ages of {pair_o} add up to?", f"What is the sum of {T.poss(a)} and {T.poss(b)} ages?"
                if b.kind == "s" and a.kind == "s" else f"What is the total age of {pair_o}?"]
        if two:
            opts += ["What is their combined age?", "What is the total of their ages?",
                     "If you add their ages, what do you get?"]
        return rng.choice(opts)
    if qt == "futsum":
        n = rng.randint(1, 20)
        story.fin(f"In {years(n)}, {a.r} will be {story.eq('+', a.age, n)} years old.")
        a2 = story.last
        story.fin(f"In {years(n)}, {b.r} will be {story.eq('+', b.age, n)} years old.")
        story.fin(f"Together, {names} will be {story.eq('+', a2, story.last)} years old.")
        opts = [f"What will the combined age of {pair_o} be in {years(n)}?",
                f"How old will {pair_s} be altogether in {years(n)}?",
                f"In {years(n)}, what will the ages of {pair_o} add up to?"]
        if two:
            opts.append(f"What will the sum of their ages be {years(n)} from now?")
        return rng.choice(opts)
    if abs(y.age - z.age) < 2:
        raise Retry
    old, yng = (y, z) if y.age > z.age else (z, y)
    if frozenset((id(y), id(z))) in getattr(story, "linked", ()):
        raise Retry  # the question would ask for a gap the story states outright
    if qt == "diff":
        if rng.random() < 0.6:
            story.fin(f"{old.R} {old.be()} {story.eq('-', old.age, yng.age)} years older than {yng.robj()}.")
            return rng.choice([f"How many years older {old.be()} {T.m(old)} than {T.m(yng, 'obj')}?",
                               f"How much older {old.be()} {T.m(old)} than {T.m(yng, 'obj')}?",
                               f"By how many years {old.be()} {T.m(old)} older than {T.m(yng, 'obj')}?"])
        story.fin(f"{yng.R} {yng.be()} {story.eq('-', old.age, yng.age)} years younger than {old.robj()}.")
        return rng.choice([f"How many years younger {yng.be()} {T.m(yng)} than {T.m(old, 'obj')}?",
                           f"What is the age difference between {pair_o}?",
                           f"How big is the age gap between {pair_o}?"])
    if qt == "whenother":
        t = rng.randint(z.age + 2, min(100, z.age + 40))
        story.fin(f"{z.R} will be {t} in {story.eq('-', t, z.age)} years.")
        n = story.last
        story.fin(f"In {years(n)}, {y.r} will be {story.eq('+', y.age, n)} years old.")
        return rng.choice([f"How old will {T.m(y)} be when {T.m(z)} {z.v('turn')} {t}?",
                           f"When {T.m(z)} {z.be()} {t}, how old will {T.m(y)} be?",
                           f"What age will {T.m(y)} be once {T.m(z)} {z.v('reach')} {t}?"])
    if qt == "born":
        story.fin(f"When {yng.r} {yng.was()} born, {old.r} {old.was()} {story.eq('-', old.age, yng.age)} years old.")
        return rng.choice([f"How old {old.was()} {T.m(old)} when {T.m(yng)} {yng.was()} born?",
                           f"What age {old.was()} {T.m(old)} when {T.m(yng)} {yng.was()} born?"])
    raise ValueError(qt)


def gen_age_chain(rng):
    story, T = Story(rng), AgeText(rng)
    nd = rng.choices([0, 1, 2, 3], [30, 45, 20, 5])[0]
    ages, links = [rng.randint(2, 95)], []
    for i in range(1, nd + 1):
        src = i - 1 if rng.random() < 0.75 else rng.randrange(i)
        x = ages[src]
        rel = rng.choices(["older", "younger", "times", "part", "indep"], [30, 30, 15, 12, 13])[0]
        if rel == "older":
            k = rng.randint(1, 60)
            b = x + k
        elif rel == "younger":
            k = rng.randint(1, 60)
            b = x - k
        elif rel == "times":
            k = rng.choice([2, 2, 2, 3, 3, 4, 5])
            b = x * k
            if x > 25 and k > 25:
                raise Retry
        elif rel == "part":
            k = rng.choice([2, 2, 2, 3, 3, 4, 5])
            if x % k:
                raise Retry
            b = x // k
        else:
            k, b = 0, rng.randint(2, 95)
        if not 2 <= b <= 99 or b in ages:
            raise Retry
        ages.append(b)
        links.append((i, src, rel, k))
    oi = rng.randrange(len(ages)) if rng.random() < 0.35 else 0
    people = cast(rng, ages, oi)
    # question
    n = len(people)
    qts = ["future", "past", "when", "ago"]
    if nd and links[-1][2] != "indep":
        qts += ["now"] * 4
    if n >= 2:
        qts += ["sum", "sum", "diff", "futsum", "whenother", "born", "diff"]
    qt = rng.choice(qts)
    if qt == "now":
        z = people[-1]
    elif qt in ("diff", "sum", "futsum", "whenother", "born") or rng.random() < 0.5:
        z = people[-1]
    else:
        z = rng.choice(people)
    if (qt in ("past", "ago") and z.age < 4) or (qt in ("when", "whenother") and z.age > 97):
        raise Retry
    if qt == "diff" and nd == 1 and links[0][2] in ("older", "younger"):
        raise Retry
    # statements: base fact, derived facts (maybe the first derived one before the base)
    order = list(range(n))
    if nd == 1 and rng.random() < 0.3 and links[0][2] != "indep":
        order = [1, 0]
    facts = {}
    for i in order:
        if i == 0 or links[i - 1][2] == "indep":
            facts[i] = base_fact(rng, T, None, people[i], ages[i])
        else:
            _, src, rel, k = links[i - 1]
            facts[i] = derived_fact(rng, T, None, people[i], people[src], rel, k)
    # reasoning in dependency order, equations replayed in that order
    stmt = {i: story.st(facts[i][0]) for i in order}
    for i in range(n):
        text, line = facts[i]
        for eqn in line.deferred:
            story.eq(*eqn)
        story.ln(stmt[i], str(line))
    story.linked = {frozenset((id(people[i]), id(people[src]))) for i, src, rel, k in links
                    if rel in ("older", "younger")}
    question = q_age(rng, T, story, people, z, qt)
    return assemble(rng, story, question, people[0])


class _Line(str):
    deferred = ()


class _Defer:
    """Collects equations while sentences are written in question order; replayed in dependency order."""

    def __init__(self):
        self.eqs, self.last = [], None

    def eq(self, op, a, b):
        r = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b and a % b == 0 else -1}[op]
        if not 1 <= r <= 100 or not 1 <= a <= 100 or not 1 <= b <= 100 or (op == "*" and min(a, b) > 25):
            raise Retry
        self.eqs.append((op, a, b))
        return f"{a} {op} {b} = {r}"


def _wrap(fn):
    def inner(rng, T, story, *args):
        d = _Defer()
        text, line = fn(rng, T, d, *args)
        line = _Line(line)
        line.deferred = list(d.eqs)
        return text, line
    return inner


base_fact = _wrap(base_fact)
derived_fact = _wrap(derived_fact)


def gen_age_special(rng):
    story = Story(rng)
    kind = rng.choice(["born", "then", "total", "twins", "triplets", "candles", "candles", "total"])
    if kind == "born":
        a = named(rng) if rng.random() < 0.7 else Person("I", kind="i")
        gap = rng.randint(1, 12)
        now = rng.randint(gap + 2, 40)
        word, g = rng.choice(YOUNGER[:4] + [("cousin", "f"), ("cousin", "m")])
        b = relative(a, word, g)
        s1 = story.st(rng.choice([f"{sq(a)} {a.was()} {gap} when {b.alt or b.q} {b.was()} born.",
                                  f"When {b.q} {b.was()} born, {a.q} {a.was()} {gap} years old."]))
        story.ln(s1, f"{a.R} {a.be()} {gap} years older than {b.r}.")
        s2 = story.st(rng.choice([f"{sq(a)} {a.be()} {now} now.", f"Today {a.q} {a.v('turn')} {now}.",
                                  f"{sq(a)} {a.be()} {now} years old this year."]))
        story.ln(s2, f"{a.R} {a.be()} {now} years old and {b.r} is {story.eq('-', now, gap)} years old.")
        if rng.random() < 0.4:
            n = rng.randint(1, 20)
            story.fin(f"In {years(n)}, {b.r} will be {story.eq('+', story.last, n)} years old.")
            q = rng.choice([f"How old will {b.alt or b.q} be in {years(n)}?",
                            f"What age will {b.alt or b.q} be {years(n)} from now?"])
        else:
            q = rng.choice([f"How old is {b.alt or b.q} now?", f"What is {b.possq(b.alt or b.q)} age today?",
                            f"How old is {b.alt or b.q} this year?"])
        return assemble(rng, story, q, a)
    if kind == "then":
        a = named(rng) if rng.random() < 0.6 else Person("I", kind="i")
        word, g = rng.choice(PARENT + GRANDP)
        b = relative(a, word, g)
        a1 = rng.randint(1, 15)
        gap = rng.randint(18, 45) if word in dict(PARENT) else rng.randint(45, 70)
        a2 = rng.randint(a1 + 1, 35)
        s1 = story.st(rng.choice([f"When {a.q} {a.was()} {a1}, {b.alt or b.q} was {a1 + gap}.",
                                  f"{cap(b.q)} was {a1 + gap} when {a.q} {a.was()} {a1}."]))
        story.ln(s1, f"{b.R} is {story.eq('-', a1 + gap, a1)} years older than {a.robj()}.")
        s2 = story.st(rng.choice([f"{sq(a)} {a.be()} {a2} now.", f"Now {a.q} {a.be()} {a2}.",
                                  f"This year {a.q} {a.v('turn')} {a2}."]))
        story.ln(s2, f"{a.R} {a.be()} {a2} years old and {b.r} is {story.eq('+', a2, gap)} years old.")
        if rng.random() < 0.4:
            n = rng.randint(1, 15)
            story.fin(f"In {years(n)}, {b.r} will be {story.eq('+', story.last, n)} years old.")
            q = rng.choice([f"How old will {b.q} be in {years(n)}?", f"What age will {b.q} reach {years(n)} from now?"])
        else:
            q = rng.choice([f"How old is {b.alt or b.q} now?", f"What is {b.possq(b.alt or b.q)} age now?",
                            f"How old is {b.q} today?"])
        return assemble(rng, story, q, a)
    if kind == "total":
        a = named(rng) if rng.random() < 0.7 else Person("I", kind="i")
        word, g = rng.choice(PARENT + GRANDP + OLDER[:4])
        b = relative(a, word, g)
        x = rng.randint(2, 40)
        lo, hi = (1, 15) if word in dict(OLDER) else (18, 40) if word in dict(PARENT) else (45, 70)
        y = x + rng.randint(lo, hi)
        if x + y > 100:
            raise Retry
        pair = f"{b.q} and {'I' if a.kind == 'i' else a.q}"
        s1 = story.st(rng.choice([f"{cap(pair)} are {x + y} years old together.",
                                  f"Together, {pair} are {x + y} years old.",
                                  f"The ages of {b.q} and {a.robj() if a.kind == 'i' else a.q} add up to {x + y}."]))
        story.ln(s1, f"Together, {b.r} and {a.r} are {x + y} years old.")
        s2 = story.st(rng.choice([f"{sq(a)} {a.be()} {x}.", f"{sq(a)} {a.be()} {x} years old.",
                                  f"{cap(a.possq())} age is {x}."]))
        story.ln(s2, f"{a.R} {a.be()} {x} years old, so {b.r} is {story.eq('-', x + y, x)} years old.")
        r = rng.random()
        if r < 0.3:
            n = rng.randint(1, 25)
            story.fin(f"{cap(years(n))} ago, {b.r} was {story.eq('-', y, n)} years old.")
            q = f"How old was {b.alt or b.q} {years(n)} ago?"
        elif r < 0.5:
            story.fin(f"{b.R} is {story.eq('-', y, x)} years older than {a.robj()}.")
            q = f"How many years older than {a.obj() if a.kind == 'i' else a.q} is {b.alt or b.q}?"
        else:
            q = rng.choice([f"How old is {b.alt or b.q}?", f"What is {b.possq(b.alt or b.q)} age?"])
        return assemble(rng, story, q, a)
    if kind == "twins":
        a = named(rng) if rng.random() < 0.7 else Person("I", kind="i")
        w = rng.choice(["twin sisters", "twin brothers", "twin cousins"])
        t = rng.randint(1, 30)
        x = rng.randint(2, 50)
        if x == t:
            raise Retry
        s1 = story.st(rng.choice([f"{sq(a)} {a.be()} {x} years old.", f"{sq(a)} just turned {x}."]))
        story.ln(s1, f"{a.R} {a.be()} {x} years old.")
        tw = relative(a, w, None, "pl")
        s2 = story.st(rng.choice([f"{cap(tw.alt or tw.q)} are {t} each.", f"{cap(tw.alt or tw.q)} are both {t}.",
                                  f"Each of {tw.alt or tw.q} is {t} years old."]))
        story.ln(s2, f"Each of {tw.r} is {t} years old, so together they are {story.eq('+', t, t)} years old.")
        tt = story.last
        if rng.random() < 0.6:
            story.fin(f"Together, all three are {story.eq('+', x, tt)} years old.")
            q = rng.choice(["What is the sum of all three ages?", "How old are the three of them together?",
                            f"What is the total of the ages of {a.q if a.kind == 's' else 'me'} and {tw.alt or tw.q}?"])
        else:
            if x == tt:
                raise Retry
            hi, lo = (x, tt) if x > tt else (tt, x)
            story.fin(f"The difference is {story.eq('-', hi, lo)} years.")
            q = rng.choice([f"What is the difference between {a.possq()} age and the twins' ages added together?",
                            f"How far apart are {a.possq()} age and the combined age of the twins?"])
        return assemble(rng, story, q, a)
    if kind == "triplets":
        k = rng.choice([2, 3, 3, 4])
        grp = {2: "twins", 3: "triplets", 4: "quadruplets"}[k]
        e = rng.randint(1, 100 // k)
        owner = rng.choice([Person("I", kind="i"), named(rng), Person("we", kind="we")])
        who = rng.choice([f"the {grp}", f"{owner.pp() if owner.kind != 's' else owner.q + chr(39) + 's'} {grp}"])
        s1 = story.st(rng.choice([f"The ages of {who} add up to {e * k}.",
                                  f"Together, {who} are {e * k} years old.",
                                  f"Added together, the ages of {who} come to {e * k} years."]))
        story.ln(s1, f"Each of {who.replace('my ', 'my ').replace('our ', 'our ')} is {story.eq('/', e * k, k)} years old.")
        if rng.random() < 0.4:
            n = rng.randint(1, 30)
            story.fin(f"In {years(n)}, each will be {story.eq('+', e, n)} years old.")
            q = rng.choice([f"How old will each of them be in {years(n)}?",
                            f"In {years(n)}, how old will each one be?"])
        else:
            q = rng.choice(["How old is each of them?", "How old is each one?", f"What is the age of each?"])
        return assemble(rng, story, q, owner)
    # candles
    a = named(rng) if rng.random() < 0.6 else rng.choice([Person("my grandmother", "my grandmother", "s", "f"),
                                                            Person("my grandfather", "my grandfather", "s", "m"),
                                                            Person("I", kind="i")])
    box = rng.choice([5, 6, 8, 10, 12, 4, 3])
    low = 2 if a.kind == "i" or a.q in NAMES else 55
    if rng.random() < 0.5:
        age = box * rng.randint(max(2, (low + box - 1) // box), 100 // box)
        s1 = story.st(rng.choice([f"{sq(a)} {a.v('turn')} {age} today.", f"{sq(a)} {a.be()} turning {age} this week.",
                                  f"It is {a.possq()} {ordinal(age)} birthday."]))
        story.ln(s1, f"{a.R} {a.v('need')} {age} candles.")
        s2 = story.st(f"Candles come in boxes of {box}.")
        story.ln(s2, f"That is {story.eq('/', age, box)} boxes of candles.")
        q = rng.choice(["How many boxes of candles are needed for the cake?",
                        "How many boxes should we buy for one candle per year?",
                        f"How many boxes of candles does the cake need?"])
    else:
        age = rng.randint(low, 98)
        n = rng.randint(1, min(20, 100 - age))
        s1 = story.st(rng.choice([f"{sq(a)} {a.be()} {age} years old.", f"{sq(a)} just turned {age}."]))
        story.ln(s1, f"{a.R} {a.be()} {age} years old.")
        s2 = story.st("Every birthday cake gets one candle for each year.")
        story.ln(s2, "There is one candle per year.")
        if n == 1:
            story.fin(f"Next birthday, {a.r} will be {story.eq('+', age, 1)} years old, so there will be {story.last} candles.")
            q = f"How many candles will be on {a.possq()} next cake?"
        else:
            story.fin(f"In {years(n)}, {a.r} will be {story.eq('+', age, n)} years old, so there will be {story.last} candles.")
            q = f"How many candles will be on {a.possq()} cake in {years(n)}?"
    return assemble(rng, story, q, a)


# ----------------------------------------------------------------------------------------------
# Durations
# ----------------------------------------------------------------------------------------------

ACTS = [  # base, past, gerund, reasoning noun
    ("practise the piano", "practised the piano", "practising the piano", "minutes of piano practice"),
    ("play the violin", "played the violin", "playing the violin", "minutes of violin practice"),
    ("read", "read", "reading", "minutes of reading"),
    ("jog", "jogged", "jogging", "minutes of jogging"),
    ("swim", "swam", "swimming", "minutes of swimming"),
    ("do yoga", "did yoga", "doing yoga", "minutes of yoga"),
    ("study Spanish", "studied Spanish", "studying Spanish", "minutes of Spanish"),
    ("skip rope", "skipped rope", "skipping rope", "minutes of skipping"),
    ("meditate", "meditated", "meditating", "minutes of meditation"),
    ("walk the dog", "walked the dog", "walking the dog", "minutes of dog walking"),
    ("draw", "drew", "drawing", "minutes of drawing"),
    ("juggle", "juggled", "juggling", "minutes of juggling"),
    ("stretch", "stretched", "stretching", "minutes of stretching"),
    ("cycle", "cycled", "cycling", "minutes of cycling"),
    ("dance", "danced", "dancing", "minutes of dancing"),
    ("practise typing", "practised typing", "practising typing", "minutes of typing practice"),
    ("play chess online", "played chess online", "playing chess online", "minutes of chess"),
    ("knit", "knitted", "knitting", "minutes of knitting"),
    ("do homework", "did homework", "doing homework", "minutes of homework"),
    ("play the drums", "played the drums", "playing the drums", "minutes of drumming"),
    ("sing scales", "sang scales", "singing scales", "minutes of singing"),
    ("learn Japanese", "learned Japanese", "learning Japanese", "minutes of Japanese"),
    ("shoot free throws", "shot free throws", "shooting free throws", "minutes of basketball practice"),
    ("row on the machine", "rowed on the machine", "rowing", "minutes of rowing"),
    ("practise the flute", "practised the flute", "practising the flute", "minutes of flute practice"),
    ("water the garden", "watered the garden", "watering the garden", "minutes of watering"),
]
WORK = [  # hours
    ("work at the bakery", "worked at the bakery", "hours of work"),
    ("volunteer at the animal shelter", "volunteered at the animal shelter", "hours of volunteering"),
    ("babysit", "babysat", "hours of babysitting"),
    ("tutor maths", "tutored maths", "hours of tutoring"),
    ("drive the delivery van", "drove the delivery van", "hours of driving"),
    ("work at the library", "worked at the library", "hours of work"),
    ("help at the farm", "helped at the farm", "hours of farm work"),
    ("paint the fence", "painted the fence", "hours of painting"),
    ("work in the cafe", "worked in the cafe", "hours of work"),
    ("fix bikes in the shop", "fixed bikes in the shop", "hours of repairs"),
    ("stock shelves", "stocked shelves", "hours of work"),
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def vt(p, act, tense):
    return act[1] if tense == "past" else p.v(act[0])


def gen_daily(rng):
    story = Story(rng)
    p = subject(rng)
    act = rng.choice(ACTS)
    tense = rng.choice(["past", "present"])
    V, S, noun = vt(p, act, tense), sq(p), act[3]
    shape = rng.choices(["days", "weeks", "sessions", "plain"], [50, 20, 12, 18])[0]
    if shape == "days":
        m, d = rng.randint(2, 50), rng.randint(2, 14)
        s1 = story.st(rng.choice([f"{S} {V} for {m} minutes a day for {d} days.",
                                  f"{S} {V} {m} minutes every day for {d} days.",
                                  f"For {d} days, {p.q} {V} {m} minutes each day.",
                                  f"Every day for {d} days, {p.q} {V} for {m} minutes.",
                                  f"{S} {V} {m} minutes a day, {d} days in a row."]))
        story.ln(s1, f"{p.R} {p.has()} {story.eq('*', d, m)} {noun}.")
    elif shape == "weeks":
        w, m = rng.randint(2, 3), rng.randint(2, 14)
        s1 = story.st(rng.choice([f"{S} {V} for {m} minutes every day for {pl(w, 'week')}.",
                                  f"For {pl(w, 'week')}, {p.q} {V} {m} minutes a day.",
                                  f"Each day for {pl(w, 'week')}, {p.q} {V} for {m} minutes."]))
        e1 = story.eq('*', w, 7)
        story.ln(s1, f"{pl(w, 'week')} is {e1} days, so {p.r} {p.has()} {story.eq('*', story.last, m)} {noun}."
                 .replace("1 week is", "1 week is"))
        story.plan[-1] = (s1, cap(story.plan[-1][1]))
    elif shape == "sessions":
        w, k, m = rng.randint(2, 6), rng.randint(2, 5), rng.randint(2, 20)
        s1 = story.st(rng.choice([f"{S} {V} {k} times a week for {w} weeks, {m} minutes each time.",
                                  f"For {w} weeks, {p.q} {V} {k} times a week for {m} minutes at a time."]))
        e1 = story.eq('*', w, k)
        story.ln(s1, f"That is {e1} sessions, so {p.r} {p.has()} {story.eq('*', story.last, m)} {noun}.")
    else:
        t = rng.randint(5, 70)
        day = rng.choice(DAYS)
        s1 = story.st(rng.choice([f"{S} {V} for {t} minutes on {day}.", f"On {day}, {p.q} {V} for {t} minutes."]))
        story.ln(s1, f"{p.R} {p.has()} {t} {noun}.")
        story.last = t
    total = story.last
    extras = rng.choices([0, 1, 2], [50, 35, 15])[0] if shape != "plain" else rng.choice([1, 1, 2])
    for _ in range(extras):
        r = rng.random()
        if r < 0.4:
            e = rng.randint(2, 30)
            day = rng.choice([d for d in DAYS if d not in story.stmts[0]["text"]])
            s = story.st(rng.choice([f"On {day}, {p.pron()} {vt(p, act, tense)} for an extra {e} minutes.",
                                     f"{cap(p.pron())} also {vt(p, act, tense)} {e} more minutes on {day}.",
                                     f"Then {p.pron()} added another {e} minutes."]))
            story.ln(s, f"{p.R} {p.has()} {story.eq('+', total, e)} {noun}.")
        elif r < 0.65:
            e = rng.randint(2, 30)
            s = story.st(rng.choice([f"One session was cut short by {e} minutes.",
                                     f"But {p.pron()} {'lost' if tense == 'past' else p.v('lose')} {e} of those minutes to a fire drill.",
                                     f"{cap(p.pron())} skipped {e} of those minutes."]))
            story.ln(s, f"{p.R} {p.has()} {story.eq('-', total, e)} {noun}.")
        else:
            m2, d2 = rng.randint(2, 15), rng.randint(2, 6)
            s = story.st(rng.choice([f"After that, {p.pron()} {vt(p, act, tense)} {m2} minutes a day for {d2} more days.",
                                     f"Then for {d2} more days {p.pron()} {vt(p, act, tense)} {m2} minutes a day."]))
            e1 = story.eq('*', d2, m2)
            story.ln(s, f"That is {e1} minutes and {p.r} {p.has()} {story.eq('+', total, story.last)} {noun}.")
        total = story.last
    r = rng.random()
    base = act[0]
    if r < 0.2 and total < 99:
        g = rng.randint(total + 1, 100)
        s = story.st(rng.choice([f"{cap(p.possq())} goal is {g} minutes.",
                                 f"{S} {'wanted' if tense == 'past' else p.v('want')} to reach {g} minutes."]))
        story.ln(s, f"{p.R} {p.v('want')} {g} minutes.")
        story.fin(f"{p.R} {p.v('need')} {story.eq('-', g, total)} more minutes.")
        q = rng.choice([f"How many more minutes {p.does()} {p.q} need?",
                        f"How many minutes short of the goal {p.be()} {p.q}?",
                        f"How much more time, in minutes, {p.does()} {p.q} need to reach the goal?"])
    elif r < 0.35 and total > 5:
        o = named(rng)
        if o.q == p.q:
            raise Retry
        m2 = rng.randint(1, total - 1)
        s = story.st(rng.choice([f"{o.q} {vt(o, act, tense)} for {m2} minutes in total.",
                                 f"{o.q} only {vt(o, act, tense)} {m2} minutes altogether."]))
        story.ln(s, f"{o.q} has {m2} {noun}.")
        story.fin(f"{p.R} {p.has()} {story.eq('-', total, m2)} more {noun} than {o.q}.")
        if tense == "past":
            q = rng.choice([f"How many more minutes did {p.q} {base} than {o.q}?",
                            f"How much longer, in minutes, did {p.q} spend {act[2]} than {o.q}?"])
        else:
            q = rng.choice([f"How many more minutes {p.does()} {p.q} {base} than {o.q}?",
                            f"How much longer, in minutes, {p.does()} {p.q} spend {act[2]} than {o.q}?"])
    else:
        if tense == "past":
            q = rng.choice([f"How many minutes did {p.q} {base} in total?", "How many minutes is that altogether?",
                            f"What is the total time {p.q} spent {act[2]}?",
                            f"How long did {p.q} {base} altogether, in minutes?",
                            f"For how many minutes did {p.q} {base} in all?"])
        else:
            q = rng.choice([f"How many minutes {p.does()} {p.q} {base} in total?", "How many minutes is that altogether?",
                            f"What is the total time {p.q} {p.v('spend')} {act[2]}?",
                            f"How long {p.does()} {p.q} {base} altogether, in minutes?"])
    return assemble(rng, story, q, p)


def gen_hours(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    job = rng.choice(WORK)
    S = sq(p)
    noun = job[2]
    r = rng.random()
    if r < 0.35:
        k = rng.choice([2, 3, 3])
        days = rng.sample(DAYS, k)
        hs = [rng.randint(1, 12) for _ in days]
        if k == 2:
            s = story.st(rng.choice([f"{S} {job[1]} for {hs[0]} hours on {days[0]} and {hs[1]} hours on {days[1]}.",
                                     f"On {days[0]} {p.q} {job[1]} for {hs[0]} hours, and on {days[1]} for {hs[1]}."]))
            story.ln(s, f"{p.R} {p.has()} {story.eq('+', hs[0], hs[1])} {noun}.")
        else:
            s = story.st(f"{S} {job[1]} for {hs[0]} hours on {days[0]}, {hs[1]} on {days[1]} and {hs[2]} on {days[2]}.")
            e1 = story.eq('+', hs[0], hs[1])
            story.ln(s, f"{p.R} {p.has()} {e1} {noun} and {p.r} {p.has()} {story.eq('+', story.last, hs[2])} {noun}.")
        q = rng.choice([f"How many hours did {p.q} work in all?", "How many hours is that in total?",
                        f"What is the total number of hours {p.q} worked?"])
    elif r < 0.65:
        h, d = rng.randint(2, 12), rng.randint(2, 7)
        s = story.st(rng.choice([f"{S} {p.v(job[0])} {h} hours a day, {d} days a week.",
                                 f"Every week {p.q} {p.v(job[0])} for {d} days, {h} hours each day.",
                                 f"{S} {p.v('spend')} {h} hours a day on {d} days of the week working."]))
        story.ln(s, f"{p.R} {p.has()} {story.eq('*', d, h)} {noun} a week.")
        t = story.last
        if rng.random() < 0.5 and t > 2:
            b = rng.randint(1, max(1, t // 3))
            s2 = story.st(rng.choice([f"{b} of those hours are spent on breaks.", f"{cap(p.pron())} {p.v('take')} {b} hours of breaks in all."]))
            story.ln(s2, f"{p.R} {p.has()} {story.eq('-', t, b)} {noun} without breaks.")
            q = rng.choice(["How many hours of real work is that each week?",
                            f"How many hours a week {p.does()} {p.q} actually work?"])
        else:
            q = rng.choice([f"How many hours a week {p.does()} {p.q} work?", "How many hours is that per week?",
                            f"What is the weekly total of {p.possq()} working hours?"])
    else:
        n, h = rng.randint(2, 8), rng.randint(2, 12)
        t = n * h
        if t > 100:
            raise Retry
        thing = rng.choice(["painting the school hall", "sorting the donated books", "building the stage",
                            "cleaning the beach", "planting the orchard", "moving the furniture"])
        s = story.st(rng.choice([f"{cap(thing)} takes {t} hours of work.",
                                 f"The job of {thing} needs {t} hours in total."]))
        story.ln(s, f"The job takes {t} hours.")
        s2 = story.st(rng.choice([f"{n} friends share the work equally.", f"The hours are split evenly among {n} helpers."]))
        story.ln(s2, f"Each helper has {story.eq('/', t, n)} hours of work.")
        q = rng.choice(["How many hours does each person work?", "How long does each helper work, in hours?",
                        "How many hours of work is that per person?"])
        p = None
    return assemble(rng, story, q, p)


SHOWS = [("film", "watch"), ("movie", "watch"), ("documentary", "watch"), ("football match", "watch"),
         ("school play", "watch"), ("concert", "listen"), ("podcast episode", "listen"),
         ("audiobook chapter", "listen"), ("lecture", "listen"), ("flight", "ride"), ("train journey", "ride"),
         ("bus ride", "ride"), ("ferry crossing", "ride"), ("cake", "cook"), ("loaf of bread", "cook"),
         ("lasagne", "cook"), ("washing machine cycle", "machine"), ("dishwasher cycle", "machine"),
         ("board game", "play"), ("puppet show", "watch"), ("cartoon marathon", "watch")]


LASTS = {"cook": "needs", "machine": "runs for", "ride": "takes", "watch": "lasts", "listen": "lasts",
         "play": "lasts"}


def gen_show(rng):
    story = Story(rng)
    thing, kind = rng.choice(SHOWS)
    p = subject(rng, plural=False)
    S = sq(p)
    L = rng.randint(20, 100)
    r = rng.random()
    if r < 0.18 and L > 60:
        s1 = story.st(rng.choice([f"The {thing} is 1 hour and {L - 60} minutes long.",
                                  f"The {thing} {LASTS[kind]} an hour and {L - 60} minutes."]))
        story.ln(s1, f"1 hour is 60 minutes, so the {thing} {LASTS[kind]} {story.eq('+', 60, L - 60)} minutes.")
    elif r < 0.33:
        k = rng.choice([2, 3, 4, 5])
        if L % k:
            raise Retry
        part = {"watch": "parts", "listen": "parts", "ride": "legs", "cook": "stages", "machine": "stages",
                "play": "rounds"}[kind]
        s1 = story.st(f"The {thing} has {k} {part} of {L // k} minutes each.")
        story.ln(s1, f"The {thing} {LASTS[kind]} {story.eq('*', k, L // k)} minutes.")
    else:
        verb = {"cook": "needs", "machine": "runs for", "ride": "takes"}.get(kind, rng.choice(["lasts", "runs for"]))
        if kind == "cook":
            t = rng.choice([f"The {thing} {verb} {L} minutes in the oven.", f"The recipe says the {thing} {verb} {L} minutes."])
        else:
            t = rng.choice([f"The {thing} {verb} {L} minutes.", f"The {thing} is {L} minutes long.",
                            f"{S} {p.v('start')} {an(L)} {L}-minute {thing}." if kind != "machine" else
                            f"The {thing} {verb} {L} minutes."])
        s1 = story.st(t)
        story.ln(s1, f"The {thing} {LASTS[kind]} {L} minutes.")
    E = rng.randint(2, L - 2)
    r = rng.random()
    if r < 0.3 and kind in ("watch", "listen"):
        e2 = rng.choice([f"{S} {p.has()} {'watched' if kind == 'watch' else 'listened to'} {E} minutes so far.",
                         f"{S} paused it after {E} minutes."])
    elif r < 0.5 and kind == "ride":
        e2 = f"{S} {p.has()} been travelling for {E} minutes."
    elif r < 0.5 and kind == "cook":
        e2 = f"It has been in the oven for {E} minutes."
    else:
        e2 = rng.choice([f"It started {E} minutes ago.", f"{E} minutes have already gone by.",
                         f"{E} minutes have passed since it began."])
    s2 = story.st(e2)
    story.ln(s2, f"{E} minutes have passed, so {story.eq('-', L, E)} minutes are left.")
    if rng.random() < 0.3:
        left = story.last
        if left < 2:
            raise Retry
        if left < 3:
            raise Retry
        e3 = rng.randint(1, left - 2)
        s3 = story.st(rng.choice([f"Then another {e3} minutes go by.", f"After that, {e3} more minutes pass."]))
        story.ln(s3, f"Now {story.eq('-', left, e3)} minutes are left.")
    if kind == "cook":
        q = rng.choice([f"How many more minutes does the {thing} need?", f"How long until the {thing} is ready?",
                        "How many minutes are left on the timer?"])
    elif kind == "ride":
        q = rng.choice([f"How many minutes of the {thing} are left?", f"How much longer is the {thing}, in minutes?",
                        f"How many more minutes until the {thing} ends?"])
    else:
        q = rng.choice(["How many minutes are left?", f"How much longer does the {thing} last?",
                        f"How many more minutes until the {thing} ends?", "How long until the end, in minutes?",
                        f"How many minutes of the {thing} remain?"])
    return assemble(rng, story, q, p)


def gen_back_to_back(rng):
    story = Story(rng)
    p = subject(rng)
    S = sq(p)
    kinds = rng.choice([("episode", "episodes"), ("song", "songs"), ("cartoon", "cartoons"), ("lesson", "lessons"),
                        ("video", "videos"), ("dance class", "dance classes"), ("chapter", "chapters")])
    if rng.random() < 0.5:
        k, m = rng.randint(2, 8), rng.randint(2, 45)
        s1 = story.st(rng.choice([f"Each {kinds[0]} is {m} minutes long.", f"{cap(kinds[1])} last {m} minutes each."]))
        story.ln(s1, f"Each {kinds[0]} lasts {m} minutes.")
        s2 = story.st(rng.choice([f"{S} {p.v('go')} through {k} {kinds[1]} in a row.",
                                  f"{S} {p.v('fit')} in {k} {kinds[1]} one after another."]))
        story.ln(s2, f"{p.R} {p.has()} {story.eq('*', k, m)} minutes of {kinds[1]}.")
        if rng.random() < 0.4:
            b = rng.randint(2, 20)
            s3 = story.st(rng.choice([f"There is also {an(b)} {b}-minute break.", f"Add {b} minutes for snacks in between."]))
            story.ln(s3, f"That is {story.eq('+', story.last, b)} minutes in all.")
        q = rng.choice(["How many minutes does that take?", "How long is that in minutes?",
                        f"For how many minutes {p.be()} {p.q} busy?"])
    else:
        a, b = rng.randint(5, 60), rng.randint(5, 60)
        s1 = story.st(rng.choice([f"{S} {p.v('watch')} {an(a)} {a}-minute show and then {an(b)} {b}-minute show.",
                                  f"First {p.q} {p.v('listen')} to {an(a)} {a}-minute album, then {an(b)} {b}-minute one."]))
        what = "shows" if "show" in s1["text"] else "music"
        story.ln(s1, f"{p.R} {p.has()} {story.eq('+', a, b)} minutes of {what}.")
        q = rng.choice(["How many minutes is that altogether?", "What is the total time in minutes?"])
    return assemble(rng, story, q, p)


PLACES = ["post office", "bakery", "ice cream van", "ticket office", "museum entrance", "doctor's office",
          "bank", "roller coaster", "pharmacy", "food truck", "deli counter", "library desk", "petrol station",
          "school canteen", "passport office"]


def gen_queue(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S, place = sq(p), rng.choice(PLACES)
    r = rng.random()
    if r < 0.4:
        n, m = rng.randint(2, 20), rng.randint(1, 9)
        s1 = story.st(rng.choice([f"There are {pl(n, 'person')} ahead of {p.obj() if p.kind != 's' else p.q} in the queue at the {place}.",
                                  f"At the {place}, {p.q} {p.v('count')} {pl(n, 'person')} in front of {p.obj()}."]))
        story.ln(s1, f"There are {pl(n, 'person')} ahead of {p.robj()}.")
        if rng.random() < 0.4 and n > 2:
            k = rng.randint(1, n - 1)
            s2 = story.st(rng.choice([f"Then {pl(k, 'person')} in front {'gives' if k == 1 else 'give'} up and {'leaves' if k == 1 else 'leave'}.",
                                      f"{cap(pl(k, 'person'))} ahead of {p.obj()} get tired and go home."]))
            story.ln(s2, f"There are {story.eq('-', n, k)} people ahead of {p.robj()}.".replace("are 1 people", "is 1 person"))
            n = story.last
        s3 = story.st(rng.choice([f"Each person takes about {pl(m, 'minute')}.", f"Serving one person takes {pl(m, 'minute')}.",
                                  f"The clerk needs {pl(m, 'minute')} per person."]))
        story.ln(s3, f"{p.R} {p.v('wait')} {story.eq('*', n, m)} minutes.")
        q = rng.choice([f"How long will {p.q} wait?", f"How many minutes {p.does()} {p.q} have to wait?",
                        f"How many minutes until it is {p.possq()} turn?"])
    elif r < 0.7:
        t = rng.randint(10, 99)
        c = rng.randint(1, t - 2)
        s1 = story.st(rng.choice([f"At the {place}, {p.q} {p.v('take')} ticket number {t}.",
                                  f"{S} {p.has()} ticket number {t} at the {place}."]))
        story.ln(s1, f"{p.R} {p.has()} ticket number {t}.")
        s2 = story.st(rng.choice([f"The screen shows number {c}.", f"Number {c} is being served right now."]))
        story.ln(s2, f"Number {c} is being served, so there are {story.eq('-', t, c)} numbers to go.")
        if rng.random() < 0.45:
            m = rng.randint(1, 6)
            s3 = story.st(rng.choice([f"Each number takes about {pl(m, 'minute')}.", f"The line moves one number every {pl(m, 'minute')}." if m > 1 else "The line moves one number every minute."]))
            story.ln(s3, f"{p.R} {p.v('wait')} {story.eq('*', story.last, m)} minutes.")
            q = rng.choice([f"How many minutes will {p.q} wait?", f"How long until {p.possq()} number is called?"])
        else:
            q = rng.choice([f"How many numbers are still ahead of {p.obj() if p.kind != 's' else p.q}?",
                            f"How many numbers until it is {p.possq()} turn?"])
    else:
        n = rng.randint(5, 60)
        k = rng.randint(2, n - 2)
        if rng.random() < 0.5:
            s1 = story.st(rng.choice([f"{S} {p.be()} {ordinal(k)} in line at the {place}.",
                                      f"{S} {p.be()} number {k} in the queue for the {place}."]))
            story.ln(s1, f"{p.R} {p.be()} number {k} in line.")
            j = rng.randint(1, k - 1)
            s2 = story.st(rng.choice([f"{cap(pl(j, 'person'))} in front of {p.obj() if p.kind != 's' else p.q} {'is' if j == 1 else 'are'} served.",
                                      f"The {place} serves {pl(j, 'person')} from the front."]))
            story.ln(s2, f"{p.R} {p.be()} number {story.eq('-', k, j)} in line.")
            q = rng.choice([f"What is {p.possq()} place in line now?", f"Which place in the queue {p.be()} {p.q} in now?"])
        else:
            s1 = story.st(rng.choice([f"There are {n} people in the line at the {place} and {p.q} {p.be()} {ordinal(k)} from the front.",
                                      f"The line at the {place} has {n} people, and {p.q} {p.be()} number {k}."]))
            story.ln(s1, f"There are {n} people and {p.r} {p.be()} number {k}.")
            story.fin(f"There are {story.eq('-', n, k)} people behind {p.robj()}.")
            q = rng.choice([f"How many people are behind {p.obj() if p.kind != 's' else p.q}?",
                            f"How many people stand behind {p.obj() if p.kind != 's' else p.q}?"])
    return assemble(rng, story, q, p)


def gen_bus(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S = sq(p)
    veh = rng.choice(["bus", "tram", "ferry", "shuttle", "train", "cable car"])
    f = rng.randint(5, 60)
    l = rng.randint(1, f - 2)
    s1 = story.st(rng.choice([f"The {veh} comes every {f} minutes.", f"A {veh} leaves every {f} minutes.",
                              f"The {veh} runs every {f} minutes."]))
    story.ln(s1, f"A {veh} comes every {f} minutes.")
    s2 = story.st(rng.choice([f"The last one left {pl(l, 'minute')} ago.", f"{S} just missed one and {p.has()} waited {pl(l, 'minute')} since.",
                              f"{S} arrived {pl(l, 'minute')} after the last {veh} left."]))
    if s2["text"].startswith("The last"):
        p = Person("you", kind="you") if rng.random() < 0.5 else Person("I", kind="i")
    story.ln(s2, f"The last {veh} left {pl(l, 'minute')} ago, so the next one comes in {story.eq('-', f, l)} minutes.")
    if rng.random() < 0.4:
        ride = rng.randint(3, 40)
        s3 = story.st(rng.choice([f"The ride itself takes {ride} minutes.", f"The trip to town takes {ride} minutes."]))
        story.ln(s3, f"That is {story.eq('+', story.last, ride)} minutes in all.")
        q = rng.choice([f"How many minutes from now until {p.q} {p.v('arrive')}?",
                        f"How long until {p.q} {p.v('get')} there?"])
    else:
        q = rng.choice([f"How many minutes until the next {veh}?", f"How much longer must {p.q} wait?",
                        f"How long until the next {veh} comes?"])
    return assemble(rng, story, q, p)


BOOKS = ["book", "novel", "textbook", "mystery novel", "biography", "graphic novel", "fantasy novel",
         "history book", "comic collection", "cookbook", "science book"]


def gen_pages(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S, book = sq(p), rng.choice(BOOKS)
    r = rng.random()
    if r < 0.3:
        d = rng.randint(2, 25)
        rate = rng.randint(2, 100 // d)
        B = d * rate
        s1 = story.st(rng.choice([f"{S} {p.be()} reading {an(B)} {B}-page {book}.", f"{cap(p.possq())} {book} has {B} pages."]))
        story.ln(s1, f"The {book} has {B} pages.")
        if rng.random() < 0.5:
            s2 = story.st(rng.choice([f"{cap(p.pron())} {p.v('read')} {rate} pages a day.", f"The plan is {rate} pages each day."]))
            story.ln(s2, f"{p.R} {p.v('read')} {rate} pages a day.")
            story.fin(f"{p.R} {p.v('need')} {story.eq('/', B, rate)} days.")
            q = rng.choice(["How many days will it take to finish?", f"In how many days will {p.q} finish the {book}?"])
        else:
            s2 = story.st(rng.choice([f"{cap(p.pron())} {p.v('want')} to finish it in {d} days.",
                                      f"{S} {p.v('plan')} to read it in {d} days, the same amount each day."]))
            story.ln(s2, f"{p.R} {p.has()} {d} days.")
            story.fin(f"That is {story.eq('/', B, d)} pages a day.")
            q = rng.choice(["How many pages a day is that?", f"How many pages must {p.q} read each day?"])
    elif r < 0.65:
        B = rng.randint(20, 100)
        k = rng.randint(1, B - 2)
        left = B - k
        divs = [x for x in range(2, 26) if left % x == 0 and left // x >= 2]
        if not divs:
            raise Retry
        rate = rng.choice(divs)
        s1 = story.st(rng.choice([f"The {book} has {B} pages.", f"{S} borrowed a {book} with {B} pages."]))
        story.ln(s1, f"The {book} has {B} pages.")
        s2 = story.st(rng.choice([f"{S} {p.has()} already read {k} pages.", f"{S} read {k} pages on the first night."]))
        story.ln(s2, f"{p.R} {p.has()} read {k} pages, so {story.eq('-', B, k)} pages are left.")
        s3 = story.st(rng.choice([f"From now on {p.pron()} will read {rate} pages a day.",
                                  f"{cap(p.pron())} {p.v('plan')} to read {rate} pages each evening."]))
        story.ln(s3, f"{p.R} will read {rate} pages a day.")
        story.fin(f"{p.R} {p.v('need')} {story.eq('/', left, rate)} more days.")
        q = rng.choice(["How many more days until the book is finished?", f"How many days will the rest take?",
                        f"In how many days will {p.q} finish?"])
    else:
        d, rate = rng.randint(2, 10), rng.randint(2, 15)
        if d * rate >= 100:
            raise Retry
        B = rng.randint(d * rate + 1, 100)
        s1 = story.st(f"{cap(p.possq())} {book} has {B} pages.")
        story.ln(s1, f"The {book} has {B} pages.")
        s2 = story.st(rng.choice([f"{S} {p.v('read')} {rate} pages a day for {d} days.",
                                  f"For {d} days, {p.q} {p.v('read')} {rate} pages each day."]))
        story.ln(s2, f"{p.R} {p.has()} read {story.eq('*', d, rate)} pages.")
        story.fin(f"There are {story.eq('-', B, story.last)} pages left.")
        q = rng.choice(["How many pages are left?", f"How many pages {p.does()} {p.q} still have to read?",
                        "How many pages remain unread?"])
    return assemble(rng, story, q, p)


COLLECT = ["stamps", "coins", "stickers", "seashells", "postcards", "badges", "marbles", "comic books",
           "trading cards", "keychains", "enamel pins", "fridge magnets", "pebbles", "bottle caps", "buttons",
           "patches", "toy cars", "records", "bookmarks", "snow globes", "pressed flowers", "paper cranes",
           "train tickets", "feathers", "fossils", "coasters", "thimbles", "beads", "pine cones"]


def gen_collection(rng):
    story = Story(rng)
    p = subject(rng)
    S, thing = sq(p), rng.choice(COLLECT)
    per = rng.choice(["month", "month", "month", "week"])
    verb = rng.choice(["add", "get", "find", "buy", "collect"])
    r = rng.random()
    c0 = rng.randint(2, 60)
    m = rng.randint(2, 15)
    if r < 0.45:
        n = rng.randint(2, 10)
        s1 = story.st(rng.choice([f"{S} {p.has()} {c0} {thing}.", f"{cap(p.possq())} collection has {c0} {thing}.",
                                  f"{S} {p.v('own')} {c0} {thing} so far."]))
        story.ln(s1, f"{p.R} {p.has()} {c0} {thing}.")
        s2 = story.st(rng.choice([f"Every {per}, {p.q} {p.v(verb)} {m} more.",
                                  f"{S} {p.v(verb)} {m} new {thing} each {per}.",
                                  f"The collection grows by {m} {thing} a {per}."]))
        e1 = story.eq('*', n, m)
        story.ln(s2, f"That is {e1} {thing} and {p.r} {p.has()} {story.eq('+', c0, story.last)} {thing}.")
        if rng.random() < 0.35 and story.last > 2:
            g = rng.randint(1, story.last // 2)
            s3 = story.st(rng.choice([f"At the end, {p.pron()} will give {g} to a friend.",
                                      f"Then {p.pron()} {p.v('plan')} to trade away {g} of them."]))
            story.ln(s3, f"{p.R} {p.has()} {story.eq('-', story.last, g)} {thing}.")
        q = rng.choice([f"How many {thing} will {p.q} have after {n} {per}s?",
                        f"After {n} {per}s, how many {thing} will there be?",
                        f"How many {thing} will the collection have in {n} {per}s?"])
    elif r < 0.65:
        n = rng.randint(2, 10)
        t = c0 + n * m
        if t > 100:
            raise Retry
        s1 = story.st(rng.choice([f"{S} {p.has()} {c0} {thing}.", f"{cap(p.possq())} collection has {c0} {thing}."]))
        story.ln(s1, f"{p.R} {p.has()} {c0} {thing}.")
        s2 = story.st(rng.choice([f"{S} {p.v(verb)} {m} more every {per}.", f"Each {per} brings {m} new {thing}."]))
        story.ln(s2, f"{p.R} {p.v('get')} {m} {thing} a {per}.")
        story.fin(f"{p.R} {p.v('need')} {story.eq('-', t, c0)} more {thing}.")
        story.fin(f"That takes {story.eq('/', t - c0, m)} {per}s.")
        q = rng.choice([f"How many {per}s until {p.q} {p.has()} {t}?", f"In how many {per}s will the collection reach {t}?"])
    elif r < 0.85:
        n = rng.randint(2, 10)
        s1 = story.st(rng.choice([f"{S} started collecting {thing} {n} {per}s ago.",
                                  f"{n} {per}s ago, {p.q} began a collection of {thing}."]))
        story.ln(s1, f"{p.R} started {n} {per}s ago.")
        s2 = story.st(rng.choice([f"{cap(p.pron())} {p.v(verb)} {m} every {per}.", f"Each {per} {p.pron()} {p.v(verb)} {m}."]))
        story.ln(s2, f"{p.R} {p.has()} {story.eq('*', n, m)} {thing}.")
        if rng.random() < 0.4:
            g = rng.randint(1, story.last - 1) if story.last > 1 else 1
            if g >= story.last:
                raise Retry
            s3 = story.st(rng.choice([f"{cap(p.pron())} gave {g} away to a friend.", f"Then {g} got lost in a move."]))
            story.ln(s3, f"{p.R} {p.has()} {story.eq('-', story.last, g)} {thing}.")
        q = rng.choice([f"How many {thing} {p.does()} {p.q} have now?", f"How big is the collection now?",
                        f"How many {thing} are in the collection today?"])
    else:
        o = named(rng)
        n = rng.randint(2, 6)
        s1 = story.st(rng.choice([f"{S} {p.has()} {c0} {thing} and {p.v(verb)} {m} more each {per}.",
                                  f"{S} {p.v('start')} with {c0} {thing} and {p.v(verb)} {m} a {per} after that."]))
        story.ln(s1, f"{p.R} {p.has()} {c0} {thing}.")
        s2 = story.st(rng.choice([f"This goes on for {n} {per}s.", f"{n} {per}s pass like this."]))
        e1 = story.eq('*', n, m)
        story.ln(s2, f"That is {e1} {thing} and {p.r} {p.has()} {story.eq('+', c0, story.last)} {thing}.")
        tot = story.last
        k = rng.randint(2, 4)
        if tot % k:
            raise Retry
        s3 = story.st(f"{o.q} has {rng.choice(['half', 'a third', 'a quarter'][k - 2:k - 1])} as many {thing} as that.")
        story.ln(s3, f"{o.q} has {story.eq('/', tot, k)} {thing}.")
        q = f"How many {thing} does {o.q} have?"
        p = o
    return assemble(rng, story, q, p)


def gen_weeks(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S = sq(p)
    r = rng.random()
    if r < 0.3:
        ev = rng.choice(["Summer camp", "The school trip", "The art course", "The swimming course", "The holiday",
                         "Grandma's visit", "The tournament", "The festival"])
        w = rng.randint(1, 14)
        d = rng.randint(1, w * 7 - 1)
        s1 = story.st(rng.choice([f"{ev} lasts {pl(w, 'week')}.", f"{ev} is {pl(w, 'week')} long."]))
        e1 = story.eq('*', w, 7)
        story.ln(s1, f"{pl(w, 'week')} is {e1} days, so {ev[0].lower() + ev[1:] if not ev.startswith('Grandma') else ev} lasts {story.last} days.")
        story.plan[-1] = (s1, cap(story.plan[-1][1]))
        s2 = story.st(rng.choice([f"{S} {p.has()} been there for {pl(d, 'day')}.", f"{pl(d, 'day')} have passed.".capitalize()
                                  if d > 1 else "1 day has passed."]))
        story.ln(s2, f"{pl(d, 'day')} have passed, so {story.eq('-', story.last, d)} days are left.".replace("1 day have", "1 day has"))
        q = rng.choice(["How many days are left?", "How many days remain?", f"How many more days until it ends?"])
    elif r < 0.55:
        w, d = rng.randint(1, 13), rng.randint(1, 6)
        ev = rng.choice(["holiday", "road trip", "school break", "visit to the cousins", "music course", "stay at the lake"])
        s1 = story.st(rng.choice([f"{cap(p.possq())} {ev} is {pl(w, 'week')} and {pl(d, 'day')} long.",
                                  f"{S} will be away on a {ev} for {pl(w, 'week')} and {pl(d, 'day')}."]))
        e1 = story.eq('*', w, 7)
        story.ln(s1, f"{cap(pl(w, 'week'))} is {e1} days, and {story.eq('+', story.last, d)} days in all.")
        q = rng.choice(["How many days is that?", f"How many days long is the {ev}?", "How many days is that in total?"])
    elif r < 0.75:
        w = rng.randint(2, 14)
        a = rng.choice(["puppy", "kitten", "baby brother", "baby cousin", "tomato plant", "goldfish"])
        s1 = story.st(rng.choice([f"{cap(p.possq())} {a} is {pl(w, 'week')} old.", f"{S} got a {a} that is {pl(w, 'week')} old."]))
        story.ln(s1, f"The {a} is {pl(w, 'week')} old, which is {story.eq('*', w, 7)} days.")
        if rng.random() < 0.4:
            extra = rng.randint(1, 6)
            s2 = story.st(f"That was {pl(extra, 'day')} ago.")
            story.ln(s2, f"Now the {a} is {story.eq('+', story.last, extra)} days old.")
            q = f"How many days old is the {a} now?"
        else:
            q = rng.choice([f"How many days old is the {a}?", f"How old is the {a} in days?"])
    else:
        w = rng.randint(2, 14)
        k = rng.randint(1, w - 1)
        term = rng.choice(["The school term", "The football season", "The reading challenge", "The project"])
        s1 = story.st(f"{term} is {w} weeks long.")
        story.ln(s1, f"{term[0] + term[1:]} is {w} weeks long.")
        s2 = story.st(rng.choice([f"{pl(k, 'week')} {'has' if k == 1 else 'have'} gone by.".capitalize(),
                                  f"{S} {p.has()} finished {pl(k, 'week')} of it."]))
        story.ln(s2, f"There are {story.eq('-', w, k)} weeks left.")
        story.fin(f"That is {story.eq('*', story.last, 7)} days.")
        q = rng.choice(["How many days are left?", "How many days to go?"])
    return assemble(rng, story, q, p)


TASKS = [("get dressed", "getting dressed"), ("eat breakfast", "breakfast"), ("pack a bag", "packing"),
         ("walk the dog", "the dog walk"), ("shower", "the shower"), ("make lunch", "making lunch"),
         ("feed the cat", "feeding the cat"), ("tidy the room", "tidying"), ("water the plants", "watering")]


def gen_schedule(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S = sq(p)
    ev = rng.choice(["School starts", "The bus leaves", "The match begins", "Practice starts", "The guests arrive",
                     "The shop opens", "The train departs"])
    k = rng.choice([1, 2, 2, 3])
    tasks = rng.sample(TASKS, k)
    ts = [rng.randint(2, 30) for _ in tasks]
    tot = sum(ts)
    T = rng.randint(tot + 1, 100) if tot < 100 else None
    if T is None:
        raise Retry
    s0 = story.st(rng.choice([f"{ev} in {T} minutes.", f"In {T} minutes, {ev[0].lower() + ev[1:]}."]))
    story.ln(s0, f"There are {T} minutes.")
    run = None
    for i, ((verb, ing), t) in enumerate(zip(tasks, ts)):
        s = story.st(rng.choice([f"{S} {p.v('need')} {t} minutes to {verb}." if i == 0 else
                                 f"{cap(p.pron())} also {p.v('need')} {t} minutes to {verb}.",
                                 f"It takes {p.obj() if i or p.kind != 's' else p.q} {t} minutes to {verb}.",
                                 f"To {verb} takes {t} minutes." if i and rng.random() < 0.3 else
                                 f"{cap(ing)} takes {t} minutes." if i else f"First {p.q} {p.v('need')} {t} minutes to {verb}."]))
        if run is None:
            story.ln(s, f"{cap(ing)} takes {t} minutes.")
            run = t
        else:
            story.ln(s, f"{cap(ing)} takes {t} minutes, so that is {story.eq('+', run, t)} minutes.")
            run = story.last
    story.fin(f"{p.R} {p.has()} {story.eq('-', T, run)} minutes to spare.")
    q = rng.choice([f"How many minutes {p.does()} {p.q} have to spare?", "How many minutes are left over?",
                    f"How much spare time {p.does()} {p.q} have, in minutes?"])
    return assemble(rng, story, q, p)


TRIPS = ["walk to school", "bus ride to work", "bath", "nap", "piano lesson", "phone call with grandma", "morning run",
         "swim", "homework", "drive to the lake", "bike ride to the park", "commute", "warm-up", "lunch break"]


def gen_compare(rng):
    story = Story(rng)
    a = subject(rng, we=False, plural=False, you=False)
    b = named(rng)
    if b.q == a.q:
        raise Retry
    trip = rng.choice(TRIPS)
    x = rng.randint(4, 90)
    s1 = story.st(rng.choice([f"{cap(a.possq())} {trip} takes {x} minutes.", f"{cap(a.possq())} {trip} lasts {x} minutes."]))
    story.ln(s1, f"{cap(a.possr())} {trip} takes {x} minutes.")
    rel = rng.choice(["more", "less", "twice", "half"])
    if rel == "more":
        d = rng.randint(1, 40)
        t2 = rng.choice([f"{b.q}'s takes {d} minutes longer.", f"{b.q}'s {trip} is {d} minutes longer than that."])
        op, val = "+", d
    elif rel == "less":
        d = rng.randint(1, x - 1)
        t2 = rng.choice([f"{b.q}'s takes {d} minutes less.", f"{b.q}'s {trip} is {d} minutes shorter."])
        op, val = "-", d
    elif rel == "twice":
        k = rng.choice([2, 2, 3])
        t2 = f"{b.q}'s {trip} takes {'twice' if k == 2 else 'three times'} as long."
        op, val = "*", k
    else:
        k = rng.choice([2, 2, 3])
        t2 = f"{b.q}'s {trip} takes {'half' if k == 2 else 'a third of'} that time."
        op, val = "/", k
    s2 = story.st(t2)
    story.ln(s2, f"{b.q}'s {trip} takes {story.eq(op, x, val)} minutes.")
    y = story.last
    r = rng.random()
    if r < 0.2:
        d = rng.randint(2, 6)
        s3 = story.st(rng.choice([f"{b.q} does this every day for {d} days.", f"{b.q} has {d} of these in a week."]))
        story.ln(s3, f"{b.q} spends {story.eq('*', d, y)} minutes on it.")
        q = rng.choice([f"How many minutes is that for {b.q} altogether?", f"How long does {b.q} spend in total, in minutes?"])
    elif r < 0.45:
        story.fin(f"Together they take {story.eq('+', x, y)} minutes.")
        q = rng.choice(["How many minutes do both take together?", f"What is the total time of both, in minutes?"])
    elif r < 0.55 and x != y and op in "*/":
        hi, lo = max(x, y), min(x, y)
        story.fin(f"The difference is {story.eq('-', hi, lo)} minutes.")
        q = rng.choice([f"How many minutes longer is the longer one?", f"What is the difference in minutes?"])
    else:
        q = rng.choice([f"How long is {b.q}'s {trip}?", f"How many minutes does {b.q}'s {trip} take?"])
    return assemble(rng, story, q, a)


def gen_split(rng):
    story = Story(rng)
    p = subject(rng)
    S = sq(p)
    n = rng.randint(2, 10)
    e = rng.randint(2, 100 // n)
    T = n * e
    parts = rng.choice([("songs", "song"), ("pieces", "piece"), ("subjects", "subject"), ("chores", "chore"),
                        ("exercises", "exercise"), ("games", "game"), ("puzzles", "puzzle"), ("scenes", "scene")])
    if rng.random() < 0.35:
        br = rng.randint(2, 100 - T) if T < 98 else None
        if br is None:
            raise Retry
        s1 = story.st(rng.choice([f"{S} {p.has()} {T + br} minutes of practice time.",
                                  f"{S} set aside {T + br} minutes this afternoon."]))
        story.ln(s1, f"{p.R} {p.has()} {T + br} minutes.")
        s2 = story.st(rng.choice([f"The first {br} minutes are a warm-up.", f"{br} of those minutes go to a snack break."]))
        story.ln(s2, f"That leaves {story.eq('-', T + br, br)} minutes.")
        s3 = story.st(f"The rest is shared equally among {n} {parts[0]}.")
        story.ln(s3, f"Each {parts[1]} gets {story.eq('/', T, n)} minutes.")
    else:
        s1 = story.st(rng.choice([f"{S} {p.has()} {T} minutes to split equally among {n} {parts[0]}.",
                                  f"{S} {p.v('spend')} {T} minutes on {n} {parts[0]}, the same time on each."]))
        story.ln(s1, f"Each {parts[1]} gets {story.eq('/', T, n)} minutes.")
    q = rng.choice([f"How many minutes does each {parts[1]} get?", f"How long is spent on each {parts[1]}?",
                    f"How many minutes per {parts[1]}?"])
    return assemble(rng, story, q, p)


def gen_countdown(rng):
    story = Story(rng)
    p = subject(rng, plural=False)
    S = sq(p)
    ev = rng.choice(["birthday", "party", "school trip", "concert", "holiday", "wedding anniversary", "piano exam"])
    r = rng.random()
    if r < 0.5:
        d = rng.randint(15, 100)
        w = rng.randint(2, d // 7)
        if w * 7 >= d:
            raise Retry
        s1 = story.st(rng.choice([f"{cap(p.possq())} {ev} is {d} days away.", f"There are {d} days until {p.possq()} {ev}."]))
        story.ln(s1, f"The {ev} is {d} days away.")
        s2 = story.st(rng.choice([f"{pl(w, 'week')} go by.".capitalize() if w > 1 else "1 week goes by.",
                                  f"{S} {p.v('wait')} {pl(w, 'week')}."]))
        e1 = story.eq('*', w, 7)
        story.ln(s2, f"{cap(pl(w, 'week'))} is {e1} days, so {story.eq('-', d, story.last)} days are left.")
        q = rng.choice([f"How many days are left until the {ev}?", f"How many days until the {ev} then?"])
    else:
        o = named(rng)
        a = rng.randint(1, 40)
        b = rng.randint(a + 1, 99)
        s1 = story.st(rng.choice([f"{cap(p.possq())} {ev} was {pl(a, 'day')} ago.", f"{S} had {p.pp()} {ev} {pl(a, 'day')} ago."]))
        story.ln(s1, f"{cap(p.possr())} {ev} was {pl(a, 'day')} ago.")
        s2 = story.st(f"{o.q}'s {ev} comes {b} days after {p.possq()}.".replace(f"after {p.pp()}.", "after " + {"my": "mine", "your": "yours", "our": "ours"}.get(p.pp(), p.possq()) + ".") if p.kind != "s" else f"{o.q}'s {ev} comes {b} days after {p.q}'s.")
        story.ln(s2, f"{o.q}'s {ev} is {story.eq('-', b, a)} days from now.")
        q = rng.choice([f"How many days until {o.q}'s {ev}?", f"In how many days is {o.q}'s {ev}?"])
    return assemble(rng, story, q, p)


def gen_bare(rng):
    story = Story(rng)
    r = rng.random()
    if r < 0.4:
        w = rng.randint(1, 14)
        story.fin(f"{story.eq('*', w, 7)}.")
        q = rng.choice([f"How many days are in {pl(w, 'week')}?", f"{pl(w, 'week')} is how many days?",
                        f"Convert {pl(w, 'week')} to days."])
    elif r < 0.7:
        m = rng.randint(1, 40)
        story.fin(f"{story.eq('+', 60, m)}.")
        q = rng.choice([f"How many minutes is 1 hour and {m} minutes?", f"An hour and {m} minutes is how many minutes?"])
    else:
        d = rng.choice([7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98])
        story.fin(f"{story.eq('/', d, 7)}.")
        q = rng.choice([f"How many weeks are in {d} days?", f"{d} days is how many weeks?"])
    return {"user_text": q, "reasoning": story.plan and [t for _, t in story.plan], "worked": story.worked,
            "answer": story.worked[-1]["result"]}


GENS = [(gen_age_chain, 34), (gen_age_special, 12), (gen_daily, 12), (gen_hours, 5), (gen_show, 7),
        (gen_back_to_back, 3), (gen_queue, 5), (gen_bus, 3), (gen_pages, 5), (gen_collection, 6), (gen_weeks, 4),
        (gen_schedule, 3), (gen_compare, 4), (gen_split, 3), (gen_countdown, 3), (gen_bare, 1)]


ONE_PLURAL = re.compile(r"\b(?<!\d )1 (minutes|years|days|hours|pages|weeks|people|numbers|months|boxes|sessions|"
                        r"candles|[a-z]+s (?:old|left|ahead|to go))\b")


def generate(n, seed):
    rng = random.Random(seed)
    fns, ws = zip(*GENS)
    out, seen = [], set()
    want = None
    while len(out) < n:
        if want is None:
            want = rng.choices([1, 2, 3, 4], [45, 35, 15, 5])[0]
        fn = rng.choices(fns, ws)[0]
        try:
            it = fn(rng)
        except Retry:
            continue
        if len(it["worked"]) != want or ONE_PLURAL.search(it["user_text"] + " " + " ".join(it["reasoning"])):
            continue
        want = None
        key = " ".join(it["user_text"].lower().split())
        if key in seen:
            continue
        if items.check(it):
            raise ValueError(f"{fn.__name__}: {it} {items.check(it)}")
        seen.add(key)
        out.append(it)
    return out


if __name__ == "__main__":
    items.main("timeline", generate, __doc__)
