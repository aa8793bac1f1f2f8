#!/usr/bin/env python3
"""scenes: word problems about groups and places, the textbook kind.

Covers: people and teams/classes who own things (shells, stickers, apples, muffins, points, cans...)
and places that hold things (buses and trains with passengers, halls and parties with guests, farms
and zoos with animals, gardens and orchards with plants, shelves, warehouses and bakeries with
goods).  Stories are chains of facts: a start (a plain count or equal groups: rows, boxes, packs,
crates, trays), arrivals and departures, giving and getting, equal groups added or removed,
doubling, "half of", "a third of ... leave", comparisons that make a second or third person/group/
place ("N more than", "N fewer than", "three times as many as", "half as many as", "..., which is
N more than X"), "the rest are ...", "N boys and M girls", goals ("needs 60 chairs").  Questions ask
about any of the people/places (often not the first one named), totals of two, "how many more ...
than ...", equal sharing ("how many each"), grouping ("how many boxes of 6"), what is still needed.
Distractor sentences (with and without numbers) and facts given before what they depend on
("Zoe has 5 fewer than Nadia, who has 27") are mixed in; lead-ins, numbered statements,
question-first and "If ..., how many ...?" forms, present and past tense.

Independence: written from the brief and the reasoning conventions only (restating each
statement as "(k) X has ..." / "(k) There are ... in the hall."), with its own vocabulary,
sentence frames, scene lists and generation engine; it shares no code or phrase tables with
src/tinygsm.  Python standard library only; deterministic for a given --seed.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import items  # noqa: E402


class Retry(Exception):
    pass


# ---------------------------------------------------------------- names
FEMALE = """Aisha Amara Ana Anika Astrid Bea Beatriz Chiara Dana Dilnoza Elif Elena Esi Farah Freya
Gulnara Hana Ines Ingrid Isla Jana Keiko Kamala Laila Lena Lucia Mai Maren Marisol Mei Nadia Nia
Noor Olga Oona Paula Priya Rania Rosa Saanvi Sakura Sina Sofia Tamar Thandi Uma Valentina Wanjiru
Ximena Yara Yuki Zainab Zofia Amelie Bronwyn Carmen Daria Fiona Greta Hiba Ilse Kalani Leilani Mira
Ottilie Pilar Renata Siobhan Tuuli Ulla Adaeze Birgit Chidi Dagny Eszter Folake Hye-jin Imani""".split()
MALE = """Ali Arjun Bao Bruno Chen Dmitri Diego Emre Eli Felix Goran Hamid Hugo Ibrahim Ivan Jamal
Jonas Kofi Kenji Lars Luca Mateo Malik Nikhil Omar Oskar Pablo Pedro Quentin Rafael Ravi Sami Sven
Tariq Tomas Umar Vikram Wei Xavier Yusuf Yosef Zane Aarav Bilal Cyrus Dawit Enzo Farid Gustavo
Haruto Idris Joaquin Kwame Leon Mikko Nuno Obi Piotr Rohan Santiago Teo Ugo Vasil Wiremu Yannick
Zoltan Anders Bjorn Ciaran Demetrios Eamon Florin Jun-ho Kaito Lwazi Mehmet""".split()

RELATIVES = ["a friend", "a neighbor", "a classmate", "{pos} sister", "{pos} brother", "{pos} cousin",
             "{pos} teacher", "{pos} aunt", "{pos} grandma", "the coach", "a younger kid"]
RELGROUPS = ["neighbors", "aunts", "classmates", "cousins", "friends", "uncles", "teammates"]
TIMES = ["on Monday", "on Tuesday", "after lunch", "in the afternoon", "the next day", "later that day",
         "on Saturday", "that evening", "after school", "in the morning", "on the weekend"]
TIMES2 = [("on Monday", "on Tuesday"), ("in the morning", "in the afternoon"), ("on Saturday", "on Sunday"),
          ("before lunch", "after lunch"), ("in the first week", "in the second week"),
          ("at the market", "at the fair")]

# ---------------------------------------------------------------- owned things
# (singular, plural, category)
OWN_THINGS = {
    "collect": [("shell", "shells"), ("pebble", "pebbles"), ("sticker", "stickers"), ("stamp", "stamps"),
                ("marble", "marbles"), ("trading card", "trading cards"), ("bead", "beads"),
                ("button", "buttons"), ("badge", "badges"), ("postcard", "postcards"), ("feather", "feathers"),
                ("acorn", "acorns"), ("pine cone", "pine cones"), ("keychain", "keychains"),
                ("seashell", "seashells"), ("bottle cap", "bottle caps"), ("coin", "coins")],
    "fruit": [("apple", "apples"), ("pear", "pears"), ("plum", "plums"), ("peach", "peaches"),
              ("orange", "oranges"), ("lemon", "lemons"), ("apricot", "apricots"), ("cherry", "cherries"),
              ("strawberry", "strawberries"), ("tomato", "tomatoes"), ("fig", "figs"), ("mango", "mangoes")],
    "bake": [("muffin", "muffins"), ("cookie", "cookies"), ("cupcake", "cupcakes"), ("bagel", "bagels"),
             ("bread roll", "bread rolls"), ("pretzel", "pretzels"), ("croissant", "croissants"),
             ("tart", "tarts"), ("brownie", "brownies"), ("scone", "scones"), ("dumpling", "dumplings")],
    "craft": [("paper crane", "paper cranes"), ("bracelet", "bracelets"), ("kite", "kites"),
              ("paper boat", "paper boats"), ("clay pot", "clay pots"), ("mask", "masks"),
              ("greeting card", "greeting cards"), ("paper star", "paper stars"), ("candle", "candles")],
    "farmgoods": [("egg", "eggs"), ("carrot", "carrots"), ("potato", "potatoes"), ("pumpkin", "pumpkins"),
                  ("onion", "onions"), ("ear of corn", "ears of corn"), ("melon", "melons")],
    "book": [("book", "books"), ("comic", "comics"), ("magazine", "magazines"), ("picture book", "picture books"),
             ("library book", "library books")],
}
OWN_START = {
    "collect": [("has", "had"), ("owns", "owned"), ("collects", "collected"), ("has saved", "had saved")],
    "fruit": [("picks", "picked"), ("has", "had"), ("buys", "bought")],
    "bake": [("bakes", "baked"), ("makes", "made"), ("has", "had")],
    "craft": [("makes", "made"), ("has", "had")],
    "farmgoods": [("gathers", "gathered"), ("harvests", "harvested"), ("has", "had")],
    "book": [("borrows", "borrowed"), ("has", "had"), ("owns", "owned")],
}
OWN_ADD = {
    "collect": [("finds", "found"), ("gets", "got"), ("is given", "was given"), ("buys", "bought"),
                ("wins", "won"), ("trades for", "traded for"), ("picks up", "picked up")],
    "fruit": [("picks", "picked"), ("gets", "got"), ("buys", "bought"), ("is given", "was given")],
    "bake": [("bakes", "baked"), ("makes", "made"), ("buys", "bought")],
    "craft": [("makes", "made"), ("finishes", "finished"), ("is given", "was given")],
    "farmgoods": [("gathers", "gathered"), ("collects", "collected"), ("buys", "bought")],
    "book": [("borrows", "borrowed"), ("buys", "bought"), ("is given", "was given")],
}
OWN_SUB = {
    "collect": [("gives away", "gave away"), ("loses", "lost"), ("trades away", "traded away"), ("sells", "sold")],
    "fruit": [("eats", "ate"), ("gives away", "gave away"), ("sells", "sold"), ("drops", "dropped")],
    "bake": [("sells", "sold"), ("eats", "ate"), ("gives away", "gave away"), ("hands out", "handed out")],
    "craft": [("sells", "sold"), ("gives away", "gave away"), ("hands out", "handed out")],
    "farmgoods": [("sells", "sold"), ("uses", "used"), ("gives away", "gave away")],
    "book": [("returns", "returned"), ("gives away", "gave away"), ("lends out", "lent out")],
}
OWN_CONT = {
    "collect": [("bag", "bags"), ("box", "boxes"), ("pack", "packs"), ("jar", "jars"), ("tin", "tins")],
    "fruit": [("basket", "baskets"), ("bag", "bags"), ("crate", "crates"), ("box", "boxes")],
    "bake": [("tray", "trays"), ("box", "boxes"), ("batch", "batches"), ("bag", "bags")],
    "craft": [("box", "boxes"), ("bag", "bags"), ("pack", "packs")],
    "farmgoods": [("basket", "baskets"), ("crate", "crates"), ("sack", "sacks"), ("carton", "cartons")],
    "book": [("box", "boxes"), ("stack", "stacks"), ("bag", "bags")],
}
HOLDERS = {"collect": ["box", "bag", "jar", "tin"], "fruit": ["basket", "bag", "box"], "bake": ["box", "tin", "basket"],
           "craft": ["box", "bag"], "farmgoods": ["basket", "crate", "bag"], "book": ["bag", "backpack", "box"]}
SHARE_PARTS_OWN = [("friend", "friends"), ("child", "children"), ("kid", "kids"), ("classmate", "classmates"),
                   ("neighbor", "neighbors"), ("teammate", "teammates"), ("cousin", "cousins")]
PILE_PARTS = [("pile", "piles"), ("bag", "bags"), ("box", "boxes"), ("jar", "jars"), ("envelope", "envelopes"),
              ("basket", "baskets")]

# teams / classes / clubs that own counts
TEAM_COLORS = ["red", "blue", "green", "yellow", "orange", "purple", "white", "silver", "gold", "black"]
TEAM_NAMES = ["the Tigers", "the Falcons", "the Otters", "the Comets", "the Rockets", "the Wolves",
              "the Dragons", "the Bears", "the Hornets", "the Lynxes", "the Sharks", "the Owls"]
TEAM_THINGS = [("point", "points"), ("goal", "goals"), ("run", "runs"), ("basket", "baskets")]
CLASS_NAMES = ["Ms. Ortiz's class", "Mr. Ahmed's class", "Mrs. Novak's class", "Mr. Tanaka's class",
               "Ms. Okafor's class", "the chess club", "the art club", "the choir", "the robotics club",
               "the hiking club", "the garden club", "the drama club", "the morning group",
               "the afternoon group", "the scout troop", "Miss Lindqvist's class"]
CLASS_THINGS = [("can", "cans"), ("bottle", "bottles"), ("book", "books"), ("kite", "kites"),
                ("paper crane", "paper cranes"), ("poster", "posters"),
                ("jar of jam", "jars of jam"), ("blanket", "blankets"), ("toy", "toys")]
CLASS_MADE = {"kites", "paper cranes", "posters", "jars of jam", "blankets"}
CLASS_PARTS = [("shelter", "shelters"), ("classroom", "classrooms"), ("family", "families"), ("box", "boxes"),
               ("school", "schools")]

# ---------------------------------------------------------------- places
# family: places [(name, prep)], things [(s, p, cat)], share parts, containers
PLACE_FAMILIES = [
    dict(key="bus", places=[("the first bus", "on"), ("the second bus", "on"), ("the school bus", "on"),
                            ("the red bus", "on"), ("the blue bus", "on"), ("the morning bus", "on"),
                            ("the city bus", "on"), ("the night bus", "on")],
         things=[("passenger", "passengers", "ride"), ("child", "children", "ride"),
                 ("student", "students", "ride"), ("person", "people", "ride"), ("seat", "seats", "seat")],
         parts=[("group", "groups"), ("team", "teams")], conts=[("class", "classes"), ("group", "groups")]),
    dict(key="train", places=[("the train", "on"), ("the tram", "on"), ("the ferry", "on"),
                              ("the first carriage", "in"), ("the last carriage", "in"), ("the boat", "on")],
         things=[("passenger", "passengers", "ride"), ("traveler", "travelers", "ride"),
                 ("person", "people", "ride"), ("seat", "seats", "seat")],
         parts=[("group", "groups"), ("team", "teams")], conts=[("group", "groups"), ("family", "families")]),
    dict(key="room", places=[("the hall", "in"), ("the gym", "in"), ("the music room", "in"),
                             ("the art room", "in"), ("the dining hall", "in"), ("the classroom", "in"),
                             ("the library", "in"), ("the cafeteria", "in"), ("the main room", "in"),
                             ("the auditorium", "in")],
         things=[("student", "students", "people"), ("child", "children", "people"),
                 ("parent", "parents", "people"), ("visitor", "visitors", "people"),
                 ("chair", "chairs", "goods"), ("desk", "desks", "goods"), ("poster", "posters", "goods"),
                 ("balloon", "balloons", "goods"), ("lamp", "lamps", "goods"), ("seat", "seats", "seat"),
                 ("book", "books", "book")],
         parts=[("table", "tables"), ("group", "groups"), ("row", "rows")],
         gparts=[("classroom", "classrooms"), ("room", "rooms"), ("hallway", "hallways")],
         conts=[("stack", "stacks"), ("box", "boxes"), ("group", "groups")]),
    dict(key="party", places=[("the party", "at"), ("the picnic", "at"), ("the wedding", "at"),
                              ("the birthday party", "at"), ("the concert", "at"), ("the fair", "at"),
                              ("the barbecue", "at"), ("the school dance", "at")],
         things=[("guest", "guests", "people"), ("person", "people", "people"), ("child", "children", "people"),
                 ("friend", "friends", "people")],
         parts=[("table", "tables"), ("group", "groups")], conts=[("car", "cars"), ("family", "families"),
                                                                   ("group", "groups")]),
    dict(key="zoo", places=[("the zoo", "at"), ("the aquarium", "at"), ("the museum", "at"),
                            ("the science center", "at"), ("the reptile house", "in"), ("the gallery", "in")],
         things=[("visitor", "visitors", "people"), ("child", "children", "people"), ("person", "people", "people"),
                 ("tourist", "tourists", "people")],
         parts=[("group", "groups"), ("tour", "tours")], conts=[("tour group", "tour groups"),
                                                                 ("class", "classes"), ("bus", "buses")]),
    dict(key="farm", places=[("the barn", "in"), ("the north field", "in"), ("the south field", "in"),
                             ("the big pen", "in"), ("the small pen", "in"), ("the meadow", "in"),
                             ("the east paddock", "in"), ("the west paddock", "in"), ("the petting zoo", "at")],
         things=[("cow", "cows", "animal"), ("sheep", "sheep", "animal"), ("goat", "goats", "animal"),
                 ("pig", "pigs", "animal"), ("horse", "horses", "animal"), ("lamb", "lambs", "animal"),
                 ("llama", "llamas", "animal"), ("donkey", "donkeys", "animal"), ("hen", "hens", "animal"),
                 ("rabbit", "rabbits", "animal"), ("animal", "animals", "animal")],
         parts=[("pen", "pens"), ("field", "fields"), ("stall", "stalls")],
         conts=[("truck", "trucks"), ("trailer", "trailers")]),
    dict(key="pond", places=[("the pond", "on"), ("the lake", "on"), ("the river bank", "on")],
         things=[("duck", "ducks", "bird"), ("goose", "geese", "bird"), ("swan", "swans", "bird")],
         parts=[("group", "groups")], conts=[("flock", "flocks")]),
    dict(key="garden", places=[("the orchard", "in"), ("the garden", "in"), ("the greenhouse", "in"),
                               ("the front garden", "in"), ("the back garden", "in"), ("the school garden", "in"),
                               ("the community garden", "in"), ("the park", "in")],
         things=[("apple tree", "apple trees", "plant"), ("pear tree", "pear trees", "plant"),
                 ("plum tree", "plum trees", "plant"), ("cherry tree", "cherry trees", "plant"),
                 ("rose bush", "rose bushes", "plant"), ("tomato plant", "tomato plants", "plant"),
                 ("sunflower", "sunflowers", "plant"), ("pepper plant", "pepper plants", "plant"),
                 ("tulip", "tulips", "plant"), ("bean plant", "bean plants", "plant"),
                 ("tree", "trees", "plant"), ("flower", "flowers", "plant")],
         parts=[("row", "rows"), ("bed", "beds")], conts=[("row", "rows"), ("bed", "beds")]),
    dict(key="shelf", places=[("the top shelf", "on"), ("the bottom shelf", "on"), ("the middle shelf", "on"),
                              ("the first shelf", "on"), ("the second shelf", "on"),
                              ("the shelf by the window", "on"), ("the book cart", "on")],
         things=[("book", "books", "book"), ("jar", "jars", "goods"), ("can", "cans", "goods"),
                 ("plate", "plates", "goods"), ("toy", "toys", "goods"), ("picture book", "picture books", "book"),
                 ("comic", "comics", "book"), ("magazine", "magazines", "book"), ("cup", "cups", "goods")],
         parts=[("shelf", "shelves"), ("table", "tables"), ("classroom", "classrooms")],
         conts=[("box", "boxes"), ("stack", "stacks"), ("crate", "crates")]),
    dict(key="warehouse", places=[("the warehouse", "in"), ("the storeroom", "in"), ("the stockroom", "in"),
                                  ("the back room", "in"), ("the factory", "at"), ("the loading dock", "at"),
                                  ("the toy shop", "in"), ("the garage", "in")],
         things=[("toy car", "toy cars", "goods"), ("bike", "bikes", "goods"), ("lamp", "lamps", "goods"),
                 ("tire", "tires", "goods"), ("helmet", "helmets", "goods"), ("jar of jam", "jars of jam", "goods"),
                 ("bag of rice", "bags of rice", "goods"), ("can of paint", "cans of paint", "goods"),
                 ("teddy bear", "teddy bears", "goods"), ("chair", "chairs", "goods"), ("melon", "melons", "goods"),
                 ("box of nails", "boxes of nails", "goods"), ("blanket", "blankets", "goods")],
         parts=[("store", "stores"), ("truck", "trucks"), ("shop", "shops"), ("van", "vans")],
         conts=[("crate", "crates"), ("box", "boxes"), ("pallet", "pallets"), ("case", "cases")]),
    dict(key="bakery", places=[("the bakery", "in"), ("the display case", "in"), ("the front counter", "on"),
                               ("the cooling rack", "on"), ("the shop window", "in"), ("the cafe", "in")],
         things=[("muffin", "muffins", "bake"), ("bread roll", "bread rolls", "bake"), ("bagel", "bagels", "bake"),
                 ("cupcake", "cupcakes", "bake"), ("cookie", "cookies", "bake"), ("pie", "pies", "bake"),
                 ("croissant", "croissants", "bake"), ("loaf", "loaves", "bake"), ("pretzel", "pretzels", "bake")],
         parts=[("tray", "trays"), ("plate", "plates"), ("basket", "baskets")],
         conts=[("tray", "trays"), ("batch", "batches"), ("box", "boxes")]),
    dict(key="club", places=[("the pool", "at"), ("the tennis club", "at"), ("the sports club", "at"),
                             ("the track", "at"), ("the football field", "on"), ("the climbing gym", "at")],
         things=[("swimmer", "swimmers", "people"), ("player", "players", "people"), ("runner", "runners", "people"),
                 ("member", "members", "people"), ("kid", "kids", "people"),
                 ("ball", "balls", "goods"), ("racket", "rackets", "goods"), ("cone", "cones", "goods")],
         parts=[("team", "teams"), ("group", "groups"), ("lane", "lanes")],
         gparts=[("team", "teams"), ("coach", "coaches"), ("bag", "bags")],
         conts=[("team", "teams"), ("group", "groups"), ("bag", "bags")]),
]

# wholes that split into kinds: whole noun -> [kinds]
KINDS = {
    "students": [("boy", "boys"), ("girl", "girls")],
    "children": [("boy", "boys"), ("girl", "girls")],
    "kids": [("boy", "boys"), ("girl", "girls")],
    "passengers": [("adult", "adults"), ("child", "children")],
    "visitors": [("adult", "adults"), ("child", "children")],
    "guests": [("adult", "adults"), ("child", "children")],
    "animals": [("cow", "cows"), ("goat", "goats"), ("sheep", "sheep"), ("pig", "pigs"), ("horse", "horses")],
    "trees": [("apple tree", "apple trees"), ("pear tree", "pear trees"), ("plum tree", "plum trees")],
    "flowers": [("tulip", "tulips"), ("rose", "roses"), ("daisy", "daisies")],
    "books": [("novel", "novels"), ("comic", "comics"), ("picture book", "picture books"), ("cookbook", "cookbooks")],
    "balloons": [("red balloon", "red balloons"), ("blue balloon", "blue balloons"), ("yellow balloon", "yellow balloons")],
    "marbles": [("red marble", "red marbles"), ("blue marble", "blue marbles"), ("glass marble", "glass marbles")],
    "stickers": [("star sticker", "star stickers"), ("heart sticker", "heart stickers"), ("animal sticker", "animal stickers")],
    "muffins": [("blueberry muffin", "blueberry muffins"), ("banana muffin", "banana muffins"), ("lemon muffin", "lemon muffins")],
    "cookies": [("chocolate cookie", "chocolate cookies"), ("oat cookie", "oat cookies")],
    "players": [("boy", "boys"), ("girl", "girls")],
    "balls": [("football", "footballs"), ("basketball", "basketballs"), ("tennis ball", "tennis balls")],
}

DISTRACT_GENERIC = [
    "It [is|was] a sunny day", "It [is|was] raining outside", "The sky [is|was] gray and cloudy",
    "Everyone [is|was] in a good mood", "A radio [plays|played] music in the corner",
    "Nobody [remembers|remembered] to bring an umbrella", "The wind [is|was] strong that day",
]
DISTRACT_PLACE = {
    "bus": ["The driver [is|was] called {N2}", "The trip [takes|took] {m} minutes", "The bus [is|was] painted yellow",
            "The bus [leaves|left] the depot at {h} o'clock"],
    "train": ["The train [leaves|left] at {h} o'clock", "The trip [takes|took] {m} minutes",
              "A ticket [costs|cost] {m} dollars"],
    "room": ["The room [is|was] painted blue", "The event [starts|started] at {h} o'clock",
             "The janitor [is|was] called {N2}"],
    "party": ["The cake [has|had] {m} candles on it", "The party [starts|started] at {h} o'clock",
              "The music [is|was] very loud"],
    "zoo": ["A ticket [costs|costs] {m} dollars", "The doors [open|opened] at {h} o'clock",
            "The gift shop [sells|sold] hats"],
    "farm": ["The farmer [owns|owned] {m} tractors", "The barn [has|had] a red roof",
             "The farmer's dog [is|was] called Biscuit"],
    "pond": ["The water [is|was] cold", "A heron [stands|stood] by the reeds"],
    "garden": ["The gardener [has|had] worked there for {m} years", "The garden [has|had] a wooden gate",
               "It [rains|rained] on {m} days that month"],
    "shelf": ["The shelves [are|were] made of oak", "The shop [opens|opened] at {h} o'clock"],
    "warehouse": ["The warehouse [has|had] {m} workers", "The trucks [are|were] painted white",
                  "The manager [is|was] called {N2}"],
    "bakery": ["The oven [is|was] very hot", "The baker [starts|started] work at {h} o'clock",
               "A loaf of bread [costs|cost] {m} dollars"],
    "club": ["The coach [is|was] called {N2}", "Practice [lasts|lasted] {m} minutes",
             "The club [has|had] a blue flag"],
}
DISTRACT_PERSON = [
    "{N} [is|was] {age} years old", "{N} [has|had] a dog named Pepper", "{N}'s favorite color [is|was] {color}",
    "{N} [lives|lived] next to the library", "{N} [is|was] wearing a {color} hat", "{N} [likes|liked] to sing",
    "{N} [has|had] {m} cousins", "{N} [walks|walked] to school with {N2}",
]
COLORS = ["green", "red", "yellow", "blue", "orange", "purple"]

LEADS = ["", "", "", "", "", "", "", "Q: ", "Question: ", "Please solve: ", "Help me with this: ",
         "Word problem: ", "Homework question: ", "Can you solve this? ", "My daughter's worksheet says: ",
         "Try this one. ", "Math problem: ", "Here is a problem: ", "Quick question: ", "Solve: ",
         "From my son's homework: ", "Story problem: "]

MULT_WORD = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}
FRAC_WORD = {2: "half", 3: "a third", 4: "a quarter"}

LOWER_FIRST = {"The", "There", "Then", "After", "Later", "Next", "A", "An", "It", "Each", "Half", "Some",
               "Another", "By", "In", "On", "At", "Meanwhile", "Soon", "That", "This", "Only", "Every",
               "Someone", "Customers", "Workers", "Nobody", "Everyone", "We", "Before", "Of", "All"}


def cap(s):
    return s[:1].upper() + s[1:]


def decap(s):
    w = s.split(" ", 1)[0]
    if w in LOWER_FIRST:
        return s[:1].lower() + s[1:]
    return s


IRREG_BASE = {"has": "have", "is": "are", "does": "do", "goes": "go"}


def base_form(v3):
    first, _, rest = v3.partition(" ")
    if first in IRREG_BASE:
        b = IRREG_BASE[first]
    elif first.endswith("ies"):
        b = first[:-3] + "y"
    elif first.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        b = first[:-2]
    elif first.endswith("s"):
        b = first[:-1]
    else:
        b = first
    return b + (" " + rest if rest else "")


def conj(v3, past, num, tense):
    """v3: present 3rd singular; num: '3sg', '1sg', 'pl'."""
    if tense == "past":
        if num == "pl" and past.split(" ")[0] == "was":
            return "were" + past[3:]
        return past
    if num == "3sg":
        return v3
    if num == "1sg" and v3.split(" ")[0] == "is":
        return "am" + v3[2:]
    return base_form(v3)


def word(noun, v):
    return noun[0] if v == 1 else noun[1]


# ---------------------------------------------------------------- entities
class Ent:
    def __init__(self, kind, name, noun, gender=None, prep=None, plural=False, cat=None, fam=None):
        self.kind = kind          # person, me, we, group, place
        self.name = name
        self.noun = noun          # (singular, plural)
        self.gender = gender
        self.prep = prep
        self.plural = plural
        self.cat = cat
        self.fam = fam
        self.val = None
        self.frozen = False
        self.last_kind = "start"
        self.pair = None          # the other kind of a pair ("boys" / "girls"), with .whole
        self.whole = None

    # text forms
    def num(self):
        if self.kind == "me":
            return "1sg"
        if self.kind == "we" or self.plural:
            return "pl"
        return "3sg"

    def subj(self):
        return {"me": "I", "we": "we"}.get(self.kind) or self.name

    def obj(self):
        return {"me": "me", "we": "us"}.get(self.kind) or self.name

    def pos(self):
        if self.kind == "me":
            return "my"
        if self.kind == "we":
            return "our"
        if self.plural and self.name.endswith("s"):
            return self.name + "'"
        return self.name + "'s"

    def ppos(self):
        """possessive pronoun for later mentions"""
        if self.kind in ("me", "we"):
            return self.pos()
        if self.kind == "person":
            return "her" if self.gender == "f" else "his"
        return "their" if self.plural else "its"

    def label(self):
        """name as used in reasoning (sentence initial)"""
        return {"me": "I", "we": "We"}.get(self.kind) or cap(self.name)

    def has(self):
        return "have" if self.kind in ("me", "we") or self.plural else "has"

    def restate(self, expr, val, noun=None, lower=False):
        n = noun or self.noun
        if self.kind == "place":
            s = f"There {'is' if val == 1 else 'are'} {expr} {word(n, val)} {self.prep} {self.name}."
        else:
            s = f"{self.label()} {self.has()} {expr} {word(n, val)}."
        return decap(s) if lower else s


class Clause:
    def __init__(self, text, body=None, steps=(), out=None, inputs=(), subj=None, pred=None, rel=None,
                 alone=None, kind="op"):
        self.text = text          # sentence text without final period
        self.body = body          # reasoning line without marker
        self.steps = list(steps)
        self.out = out
        self.inputs = list(inputs)
        self.subj = subj
        self.pred = pred
        self.rel = rel            # relative-clause text to attach to previous sentence (optional)
        self.alone = alone
        self.kind = kind
        self.key = None
        self.needed = False


def st(op, a, b):
    r = items.compute(op, a, b)
    if r is None or not (1 <= a <= 100 and 1 <= b <= 100 and 1 <= r <= 100):
        raise Retry
    if op == "*" and min(a, b) > 25:
        raise Retry
    return {"op": op, "a": a, "b": b, "result": r}


def eq(s):
    return f"{s['a']} {s['op']} {s['b']} = {s['result']}"


# ---------------------------------------------------------------- story engine
class Story:
    def __init__(self, rng):
        self.rng = rng
        self.tense = "past" if rng.random() < 0.4 else "present"
        self.clauses = []
        self.ents = []
        self.last = {}
        self.used_names = set()
        self.q_steps = []
        self.q_lines = []
        self.q_text = None
        self.q_inputs = []

    # -- helpers
    def R(self, a, b):
        return self.rng.randint(a, b)

    def C(self, seq):
        return self.rng.choice(seq)

    def fresh_name(self):
        if len(self.used_names) > 40:
            raise Retry
        while True:
            g = "f" if self.rng.random() < 0.5 else "m"
            n = self.C(FEMALE if g == "f" else MALE)
            if n not in self.used_names:
                self.used_names.add(n)
                return n, g

    def other(self, ent, as_subject=False):
        r = self.rng.random()
        if r < 0.5 or ent.kind == "group":
            return self.fresh_name()[0]
        return self.C(RELATIVES).format(pos=ent.pos() if as_subject and ent.kind not in ("me", "we") else ent.ppos())

    def fill(self, frame, ent=None, **kw):
        """Format a frame: <v3|past> conjugated for ent, [pres|past] by tense, {slots}."""
        num = ent.num() if ent is not None else "pl"

        def angle(m):
            return conj(m.group(1), m.group(2), num, self.tense)

        def square(m):
            return m.group(1) if self.tense == "present" else m.group(2)

        s = re.sub(r"<([^|<>]+)\|([^|<>]+)>", angle, frame)
        s = re.sub(r"\[([^|\[\]]+)\|([^|\[\]]+)\]", square, s)
        if ent is not None:
            kw.setdefault("A", ent.subj())
            kw.setdefault("A_obj", ent.obj())
            kw.setdefault("A_pos", ent.pos())
            kw.setdefault("A_ppos", ent.ppos())
        return s.format(**kw)

    def add_clause(self, c, logical=None):
        c.key = len(self.clauses) if logical is None else logical
        c.idx = len(self.clauses)
        self.clauses.append(c)
        if c.out is not None:
            for o in (c.out if isinstance(c.out, list) else [c.out]):
                self.last[o] = c.idx
        return c

    def inp(self, *ents):
        return [self.last[e] for e in ents if e in self.last]

    def subj_clause(self, ent, pred_frame, body, steps, inputs, **kw):
        if ent.pair is not None and "{x}" not in pred_frame:
            raise Retry
        pred = self.fill(pred_frame, ent, **kw)
        text = cap(ent.subj()) + " " + pred
        return Clause(text, body, steps, ent, inputs, subj=ent, pred=pred)

    def plain_clause(self, frame, ent, body, steps, inputs, conj_ent=None, **kw):
        text = cap(self.fill(frame, conj_ent, **kw) if conj_ent else self.fill_noent(frame, ent, **kw))
        return Clause(text, body, steps, ent, inputs)

    def fill_noent(self, frame, ent, **kw):
        if ent is not None:
            kw.setdefault("A", ent.subj())
            kw.setdefault("A_obj", ent.obj())
            kw.setdefault("A_pos", ent.pos())
            kw.setdefault("A_ppos", ent.ppos())
        s = re.sub(r"\[([^|\[\]]+)\|([^|\[\]]+)\]",
                   lambda m: m.group(1) if self.tense == "present" else m.group(2), frame)
        return s.format(**kw)


# ================================================================ owner stories
class OwnerWorld:
    """people (or I / we) or teams/classes who own things"""

    def __init__(self, S):
        self.S = S
        rng = S.rng
        r = rng.random()
        if r < 0.62:
            self.mode = "person"
            self.cat = S.C(list(OWN_THINGS))
            s, p = S.C(OWN_THINGS[self.cat])
            self.noun = (s, p)
        elif r < 0.8:
            self.mode = "team"
            self.cat = "score"
            self.noun = S.C(TEAM_THINGS)
            self.team_style = S.C(["color", "name"])
            S.tense = "past" if rng.random() < 0.7 else "present"
        else:
            self.mode = "class"
            self.cat = "drive"
            self.noun = S.C(CLASS_THINGS)
        self.used_groups = set()

    def new_ent(self, allow_me=True):
        S = self.S
        if self.mode == "person":
            if allow_me and not any(e.kind in ("me", "we") for e in S.ents) and S.rng.random() < 0.12:
                e = Ent(S.C(["me", "me", "we"]), None, self.noun, cat=self.cat)
            else:
                n, g = S.fresh_name()
                e = Ent("person", n, self.noun, gender=g, cat=self.cat)
        elif self.mode == "team":
            if len(self.used_groups) > 6:
                raise Retry
            while True:
                if self.team_style == "color":
                    nm, pl = f"the {S.C(TEAM_COLORS)} team", False
                else:
                    nm, pl = S.C(TEAM_NAMES), True
                if nm not in self.used_groups:
                    break
            self.used_groups.add(nm)
            e = Ent("group", nm, self.noun, plural=pl, cat="score")
        else:
            if len(self.used_groups) > 6:
                raise Retry
            while True:
                nm = S.C(CLASS_NAMES)
                if nm not in self.used_groups:
                    break
            self.used_groups.add(nm)
            e = Ent("group", nm, self.noun, cat="drive")
        S.ents.append(e)
        return e

    # ---- frames
    def start_frames(self, e):
        x = "{x}"
        if self.cat == "score":
            return ["<scores|scored> {v} {x}", "<has|had> {v} {x} at halftime", "<gets|got> {v} {x} in the first game",
                    "<finishes|finished> the first round with {v} {x}", "<has|had> {v} {x} on the scoreboard"]
        if self.cat == "drive":
            if self.noun[1] in CLASS_MADE:
                return ["<makes|made> {v} {x} for the fair", "<has|had> {v} {x}", "<finishes|finished> {v} {x}",
                        "<makes|made> {v} {x} in art class"]
            return ["<collects|collected> {v} {x} for the drive", "<has|had> {v} {x}", "<brings|brought> in {v} {x}",
                    "<starts|started> the week with {v} {x}", "<gathers|gathered> {v} {x} for charity"]
        verbs = OWN_START[self.cat]
        fr = [f"<{a}|{b}> {{v}} {x}" for a, b in verbs]
        S = self.S
        c1 = S.C(HOLDERS[self.cat])
        fr += ["<starts|started> with {v} {x}", "<has|had> {v} {x} in a " + c1, "<keeps|kept> {v} {x} in a " + c1,
               "<has|had> a %s of {v} {x}" % S.C(HOLDERS[self.cat]), "<has|had> {v} {x} at first"]
        return fr

    def start(self, e, groups=False):
        S = self.S
        if not groups:
            v = S.R(4, 90)
            e.val = v
            body = e.restate(str(v), v)
            r = S.rng.random()
            if self.mode == "person" and r < 0.18:
                cont = S.C(HOLDERS.get(self.cat, ["box", "bag"]))
                if e.kind == "person":
                    txt = S.fill("There [are|were] {v} {x} in {A_pos} " + cont, e, v=v, x=word(e.noun, v))
                else:
                    txt = S.fill("{A_pos} " + cont + " [holds|held] {v} {x}", e, v=v, x=word(e.noun, v))
                return Clause(cap(txt), body, [], e, [])
            fr = S.C(self.start_frames(e))
            return S.subj_clause(e, fr, body, [], [], v=v, x=word(e.noun, v))
        k, n = S.R(2, 9), S.R(2, 12)
        s = st("*", k, n)
        e.val = s["result"]
        body = e.restate(eq(s), e.val)
        if self.cat == "score":
            frs = ["<scores|scored> {n} {x} in each of {k} games", "<gets|got> {n} {x} in each of {k} rounds",
                   "<plays|played> {k} matches and <scores|scored> {n} {x} in each one"]
        elif self.cat == "drive":
            frs = ["<brings|brought> in {k} boxes of {n} {x}", "<collects|collected> {n} {x} a day for {k} days",
                   "<gets|got> {n} {x} from each of {k} families"]
        else:
            c = S.C(OWN_CONT[self.cat])
            frs = ["<has|had> {k} " + c[1] + " with {n} {x} in each",
                   "<buys|bought> {k} " + c[1] + " of {n} {x}",
                   "<gets|got> {n} {x} a day for {k} days",
                   "<fills|filled> {k} " + c[1] + " with {n} {x} each",
                   "<gets|got> {n} {x} from each of {k} " + S.C(RELGROUPS)]
            if self.cat == "fruit":
                frs.append("<picks|picked> {n} {x} from each of {k} trees")
            if self.cat == "bake":
                frs.append("<bakes|baked> {k} trays of {n} {x}")
        return S.subj_clause(e, S.C(frs), body, [s], [], k=k, n=n, x=e.noun[1])

    def add(self, e):
        S = self.S
        if e.val > 97:
            raise Retry
        n = S.R(2, min(40, 100 - e.val))
        s = st("+", e.val, n)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "add"
        x = word(e.noun, n)
        if self.cat == "score":
            fr = S.C(["<scores|scored> {n} more {x} in the second half", "<adds|added> {n} {x}",
                      "<gets|got> another {n} {x} before the break", "<earns|earned> {n} bonus {x}",
                      "<picks|picked> up {n} more {x} in the last round"])
            return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x)
        if self.cat == "drive":
            fr = S.C(["<collects|collected> {n} more {x}", "<brings|brought> in another {n} {x}",
                      "<gets|got> {n} more {x} from parents", "<adds|added> {n} {x} on Friday"])
            return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x)
        r = S.rng.random()
        if r < 0.15:
            o = S.other(e, as_subject=True)
            txt = cap(S.fill_noent("{O} [gives|gave] {A_obj} {n} more {x}", e, O=o, n=n, x=x))
            return Clause(txt, body, [s], e, inputs)
        if r < 0.25:
            o = S.other(e)
            return S.subj_clause(e, "<gets|got> {n} {x} from {O}", body, [s], inputs, O=o, n=n, x=x)
        a, b = S.C(OWN_ADD[self.cat])
        t = S.C(TIMES)
        fr = S.C(["<%s|%s> {n} more {x}", "<%s|%s> another {n} {x}", "<%s|%s> {n} {x} {t}",
                  "<%s|%s> {n} more", "<%s|%s> {n} more {x} {t}", "then <%s|%s> {n} more {x}"])
        fr = fr % (a, b)
        return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x, t=t)

    def sub(self, e):
        S = self.S
        if e.val < 4:
            raise Retry
        n = S.R(2, e.val - 1) if S.rng.random() < 0.5 else S.R(2, max(2, min(e.val - 1, 30)))
        s = st("-", e.val, n)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "sub"
        x = word(e.noun, n)
        if self.cat == "score":
            fr = S.C(["<loses|lost> {n} {x} for a penalty", "<has|had> {n} {x} taken away for a foul",
                      "<loses|lost> {n} {x} in the last round"])
            return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x)
        if self.cat == "drive":
            fr = S.C(["<sends|sent> {n} {x} to the shelter", "<gives|gave> {n} {x} to another school",
                      "<uses|used> {n} of the {x}", "<gives|gave> away {n} {x}"])
            return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x)
        r = S.rng.random()
        if r < 0.25:
            o = S.other(e)
            fr = S.C(["<gives|gave> {n} {x} to {O}", "<hands|handed> {O} {n} {x}", "<gives|gave> {O} {n} of them",
                      "<sends|sent> {n} {x} to {O}"])
            return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x, O=o)
        a, b = S.C(OWN_SUB[self.cat])
        t = S.C(TIMES)
        fr = S.C(["<%s|%s> {n} {x}", "<%s|%s> {n} of them", "<%s|%s> {n} of {A_ppos} {x}", "<%s|%s> {n} {x} {t}",
                  "then <%s|%s> {n}"])
        fr = fr % (a, b)
        return S.subj_clause(e, fr, body, [s], inputs, n=n, x=x, t=t)

    def groups(self, e, sign):
        S = self.S
        if e.pair is not None:
            raise Retry
        k, n = S.R(2, 6), S.R(2, 12)
        m = st("*", k, n)
        s = st(sign, e.val, m["result"])
        body = f"That is {eq(m)} {e.noun[1]} and " + e.restate(eq(s), s["result"], lower=True)
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "add" if sign == "+" else "sub"
        x = e.noun[1]
        if self.cat == "score":
            frs = (["<scores|scored> {n} {x} in each of the next {k} rounds",
                    "<adds|added> {n} {x} in each of {k} extra games"] if sign == "+" else
                   ["<loses|lost> {n} {x} in each of {k} rounds", "<gets|got> {k} penalties of {n} {x} each"])
        elif self.cat == "drive":
            frs = (["<brings|brought> in {k} more boxes of {n} {x}", "<gets|got> {n} {x} from each of {k} families"]
                   if sign == "+" else ["<sends|sent> {k} boxes of {n} {x} to the shelter",
                                       "<gives|gave> {n} {x} to each of {k} schools"])
        else:
            c = S.C(OWN_CONT[self.cat])
            if sign == "+":
                frs = ["<buys|bought> {k} more " + c[1] + " of {n} {x}", "<gets|got> {n} {x} from each of {k} "
                       + S.C(RELGROUPS), "<receives|received> {k} " + c[1] + " with {n} {x} in each",
                       "<finds|found> {n} {x} a day for {k} more days"]
            else:
                frs = ["<gives|gave> {n} {x} to each of {k} " + S.C(RELGROUPS), "<packs|packed> {k} " + c[1]
                       + " of {n} {x} for a trip", "<sells|sold> {k} " + c[1] + " of {n} {x}",
                       "<gives|gave> each of {k} friends {n} {x}"]
        return S.subj_clause(e, S.C(frs), body, [m, s], inputs, k=k, n=n, x=x)

    def two(self, e, sign):
        S = self.S
        if e.pair is not None:
            raise Retry
        n1, n2 = S.R(2, 30), S.R(2, 30)
        s1 = st(sign, e.val, n1)
        s2 = st(sign, s1["result"], n2)
        body = e.restate(eq(s1), s1["result"])[:-1] + " and " + e.restate(eq(s2), s2["result"], lower=True)
        inputs = S.inp(e)
        e.val = s2["result"]
        e.last_kind = "add" if sign == "+" else "sub"
        x = e.noun[1]
        t1, t2 = S.C(TIMES2)
        if self.cat == "score":
            fr = ("<scores|scored> {n1} {x} in the second quarter and {n2} in the third" if sign == "+"
                  else "<loses|lost> {n1} {x} for one foul and {n2} for another")
        elif sign == "+":
            a, b = S.C(OWN_ADD[self.cat]) if self.cat in OWN_ADD else ("collects", "collected")
            fr = S.C(["<%s|%s> {n1} {x} {t1} and {n2} {t2}" % (a, b),
                      "<gets|got> {n1} {x} from {O} and {n2} from {O2}"])
        else:
            a, b = S.C(OWN_SUB[self.cat]) if self.cat in OWN_SUB else ("gives away", "gave away")
            fr = S.C(["<%s|%s> {n1} {x} {t1} and {n2} more {t2}" % (a, b),
                      "<gives|gave> {n1} {x} to {O} and {n2} to {O2}"])
        return S.subj_clause(e, fr, body, [s1, s2], inputs, n1=n1, n2=n2, x=x, t1=t1, t2=t2,
                             O=S.other(e), O2=S.fresh_name()[0])

    def mul(self, e):
        S = self.S
        if e.pair is not None:
            raise Retry
        f = S.C([2, 2, 3, 4])
        s = st("*", e.val, f)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "mul"
        x = e.noun[1]
        if self.cat == "score":
            frs = ["<ends|ended> the game with " + MULT_WORD[f] + " as many {x} as at halftime"]
        else:
            frs = ["<ends|ended> the month with " + MULT_WORD[f] + " as many {x} as before",
                   "<ends|ended> up with " + MULT_WORD[f] + " as many {x}",
                   "<multiplies|multiplied> {A_ppos} {x} by %d" % f]
            if f == 2:
                frs += ["<doubles|doubled> {A_ppos} collection of {x}", "<doubles|doubled> the number of {x}"]
            if f == 3:
                frs += ["<triples|tripled> {A_ppos} {x}"]
        return S.subj_clause(e, S.C(frs), body, [s], inputs, x=x)

    def keep_frac(self, e):
        S = self.S
        if e.pair is not None:
            raise Retry
        d = S.C([2, 2, 2, 3, 4])
        if e.val % d or e.val // d < 1:
            raise Retry
        s = st("/", e.val, d)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "sub"
        x = e.noun[1]
        if d == 2:
            frs = ["<gives|gave> half of {A_ppos} {x} to {O}", "<loses|lost> half of them",
                   "<sells|sold> half of {A_ppos} {x}", "<gives|gave> away half of the {x}"]
        else:
            frs = ["<keeps|kept> %s of {A_ppos} {x} and <gives|gave> the rest to {O}" % FRAC_WORD[d],
                   "<keeps|kept> only %s of the {x}" % FRAC_WORD[d]]
        if self.cat == "score":
            if d != 2:
                raise Retry
            frs = ["<loses|lost> half of {A_ppos} {x} after a rule check"]
        return S.subj_clause(e, S.C(frs), body, [s], inputs, x=x, O=S.other(e))

    def leave_frac(self, e):
        S = self.S
        if e.pair is not None:
            raise Retry
        d = S.C([3, 4, 5])
        if e.val % d:
            raise Retry
        q = st("/", e.val, d)
        s = st("-", e.val, q["result"])
        body = f"That is {eq(q)} {word(e.noun, q['result'])} and " + e.restate(eq(s), s["result"], lower=True)
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "sub"
        fw = {3: "a third", 4: "a quarter", 5: "a fifth"}[d]
        if self.cat in ("score",):
            raise Retry
        frs = ["<gives|gave> %s of {A_ppos} {x} to {O}" % fw, "<sells|sold> %s of the {x}" % fw,
               "<gives|gave> away %s of them" % fw, "<loses|lost> %s of {A_ppos} {x}" % fw]
        return S.subj_clause(e, S.C(frs), body, [q, s], inputs, x=e.noun[1], O=S.other(e))

    # ---- comparisons: new entity from base
    def compare(self, base, new, kind):
        S = self.S
        x = new.noun[1]
        v = base.val
        A_o = base.obj()
        if kind == "more":
            n = S.R(2, min(40, 100 - v)) if v <= 98 else None
            if n is None:
                raise Retry
            s = st("+", v, n)
            if self.cat == "score":
                frs = ["<scores|scored> {n} more {x} than {B}", "<finishes|finished> {n} {x} ahead of {B}",
                       "<beats|beat> {B} by {n} {x}", "<gets|got> {n} {x} more than {B}"]
            else:
                frs = ["<has|had> {n} more {x} than {B}", "<has|had> {n} {x} more than {B}",
                       "<owns|owned> {n} more {x} than {B}", "<has|had> {n} more than {B}"]
                if self.cat in OWN_START:
                    a, b = OWN_START[self.cat][0]
                    frs.append("<%s|%s> {n} more {x} than {B}" % (a, b))
        elif kind == "fewer":
            if v < 4:
                raise Retry
            n = S.R(2, v - 1)
            s = st("-", v, n)
            if self.cat == "score":
                frs = ["<scores|scored> {n} fewer {x} than {B}", "<finishes|finished> {n} {x} behind {B}",
                       "<loses|lost> to {B} by {n} {x}"]
            else:
                frs = ["<has|had> {n} fewer {x} than {B}", "<has|had> {n} {x} fewer than {B}",
                       "<has|had> {n} less than {B}", "<owns|owned> {n} fewer {x} than {B}"]
        elif kind == "times":
            f = S.C([2, 2, 3, 3, 4, 5])
            s = st("*", v, f)
            w = MULT_WORD[f]
            if self.cat == "score":
                frs = ["<scores|scored> %s as many {x} as {B}" % w, "<gets|got> %s as many {x} as {B}" % w]
            else:
                frs = ["<has|had> %s as many {x} as {B}" % w, "<has|had> %d times as many {x} as {B}" % f,
                       "<owns|owned> %s as many {x} as {B}" % w]
                if f == 2:
                    frs.append("<has|had> double the number of {x} that {B_has}")
        else:  # part
            d = S.C([2, 2, 3, 4])
            if v % d:
                raise Retry
            s = st("/", v, d)
            w = FRAC_WORD[d]
            if self.cat == "score":
                frs = ["<scores|scored> %s as many {x} as {B}" % w, "<scores|scored> only %s as many {x} as {B}" % w]
            else:
                frs = ["<has|had> %s as many {x} as {B}" % w, "<has|had> only %s as many {x} as {B}" % w]
                if d == 2:
                    frs.append("<has|had> half the number of {x} that {B_has}")
        new.val = s["result"]
        body = new.restate(eq(s), new.val)
        B_has = S.fill("{A} <has|had>", base)
        c = S.subj_clause(new, S.C(frs), body, [s], S.inp(base), n=s["b"], x=x, B=A_o, B_has=B_has)
        return c

    def inverse(self, base, new):
        """'<base start>, which is N more than NEW' -> new computed from base (base value known)."""
        S = self.S
        v = base.val
        kind = S.C(["more", "fewer", "twice", "half"])
        x = new.noun[1]
        o = new.obj()
        if kind == "more":
            if v < 4:
                raise Retry
            n = S.R(2, v - 1)
            s = st("-", v, n)
            rel = f"which [is|was] {n} more than {o}"
            alone = "That [is|was] %d more {x} than {N} <has|had>" % n
        elif kind == "fewer":
            n = S.R(2, min(40, 100 - v)) if v <= 98 else None
            if n is None:
                raise Retry
            s = st("+", v, n)
            rel = f"which [is|was] {n} fewer than {o}"
            alone = "That [is|was] %d fewer {x} than {N} <has|had>" % n
        elif kind == "twice":
            if v % 2:
                raise Retry
            s = st("/", v, 2)
            rel = f"which [is|was] twice as many as {o}"
            alone = "That [is|was] twice as many {x} as {N} <has|had>"
        else:
            s = st("*", v, 2)
            rel = f"which [is|was] half as many as {o}"
            alone = "That [is|was] half as many {x} as {N} <has|had>"
        new.val = s["result"]
        body = new.restate(eq(s), new.val)
        rel_txt = S.fill_noent(rel, None)
        alone_txt = S.fill(alone.replace("{N}", "{A}"), new, x=x)
        c = Clause(alone_txt, body, [s], new, S.inp(base), rel=rel_txt, alone=alone_txt, kind="inverse")
        return c

    # ---- questions
    def q_value(self, e):
        S = self.S
        x = e.noun[1]
        if self.cat == "score":
            frs = ["How many {x} <does|did> {A} have?", "How many {x} <does|did> {A} score?",
                   "What [is|was] {A_pos} score?", "How many {x} <does|did> {A} end up with?",
                   "What [is|was] {A_pos} final score?"]
            if e.last_kind != "start":
                frs = frs[:1] + frs[2:]
        else:
            frs = ["How many {x} <does|did> {A} have now?", "How many {x} <does|did> {A} end up with?",
                   "How many {x} <does|did> {A} have in the end?", "What is the number of {x} {A} <has|had>?",
                   "So how many {x} <does|did> {A} have?", "Find the number of {x} {A} <has|had>.",
                   "How many {x} <does|did> {A} have?", "how many {x} <does|did> {A} have"]
            if e.last_kind == "sub":
                frs += ["How many {x} <does|did> {A} have left?", "How many {x} <is|was> {A} left with?",
                        "How many {x} <does|did> {A} still have?"]
            if e.kind == "we":
                frs = [f for f in frs if "<is|was>" not in f]
        fr = S.C(frs)
        # question verbs agree with e
        q = S.fill(fr, e, x=x)
        return fix_q(q, e)

    def q_total(self, a, b):
        S = self.S
        x = a.noun[1]
        names = f"{a.obj()} and {b.obj()}" if a.kind in ("me", "we") or b.kind in ("me", "we") else \
            f"{a.name} and {b.name}"
        if self.cat == "score":
            frs = ["How many {x} [do|did] {AB} score in total?", "How many {x} [do|did] {AB} have altogether?",
                   "What [is|was] the total number of {x} for {AB}?", "How many {x} [do|did] the two teams score together?"]
        else:
            frs = ["How many {x} [do|did] {AB} have altogether?", "How many {x} [do|did] {AB} have in all?",
                   "How many {x} [do|did] {AB} have together?", "What is the total number of {x} {AB} [have|had]?",
                   "Altogether, how many {x} [do|did] {AB} have?"]
        if a.kind in ("me", "we") or b.kind in ("me", "we"):
            names2 = f"{(a if a.kind not in ('me', 'we') else b).name} and {'I' if 'me' in (a.kind, b.kind) else 'we'}"
            frs = ["How many {x} [do|did] {AB2} have altogether?", "How many {x} [do|did] {AB2} have in all?",
                   "What is the total number of {x} that {AB} [have|had]?"]
            return cap(S.fill_noent(S.C(frs), None, x=x, AB=names, AB2=names2))
        return cap(S.fill_noent(S.C(frs), None, x=x, AB=names))

    def total_line(self, a, b, s):
        if a.kind in ("me", "we") or b.kind in ("me", "we"):
            p = a if a.kind not in ("me", "we") else b
            me = "I" if "me" in (a.kind, b.kind) else "we"
            who = f"{cap(p.name)} and {me}"
        else:
            who = f"{a.name} and {b.name}"
        return f"Together, {who} have {eq(s)} {word(a.noun, s['result'])}."

    def q_diff(self, big, small, fewer):
        S = self.S
        x = big.noun[1]
        if self.cat == "score" and not fewer:
            frs = ["By how many {x} <does|did> {A} beat {B}?", "How many more {x} <does|did> {A} score than {B}?",
                   "How many {x} ahead of {B} <is|was> {A}?"]
            q = S.fill(S.C(frs), big, x=x, B=small.obj())
            return fix_q(q, big)
        if fewer:
            frs = ["How many fewer {x} <does|did> {A} have than {B}?", "{A} <has|had> how many fewer {x} than {B}?"]
            if self.cat == "score":
                frs = ["How many fewer {x} <does|did> {A} score than {B}?", "By how many {x} <does|did> {A} trail {B}?"]
            return fix_q(cap(S.fill(S.C(frs), small, x=x, B=big.obj())), small)
        frs = ["How many more {x} <does|did> {A} have than {B}?", "How many more {x} <does|did> {A} have compared to {B}?",
               "{A} <has|had> how many more {x} than {B}?", "how many more {x} <does|did> {A} have than {B}"]
        return fix_q(cap(S.fill(S.C(frs), big, x=x, B=small.obj())), big)

    def diff_line(self, big, small, fewer, s):
        x = word(big.noun, s["result"])
        if fewer:
            return f"{small.label()} {small.has()} {eq(s)} fewer {x} than {big.obj()}."
        return f"{big.label()} {big.has()} {eq(s)} more {x} than {small.obj()}."


def fix_q(q, e):
    q = cap(q) if not q.startswith("how") else q
    return q


# ================================================================ place stories
SUB_MULTI = {"ride": "{n} of the {x} {W} [get|got] off", "people": "{n} of the {x} {W} [leave|left]",
             "bird": "{n} of the {x} {W} [fly|flew] away", "plant": "{n} of the {x} {W} [are|were] dug up",
             "animal": "{n} of the {x} {W} [are|were] sold", "bake": "{n} of the {x} {W} [are|were] sold",
             "seat": "{n} of the {x} {W} [are|were] removed"}


class PlaceWorld:
    def __init__(self, S):
        self.S = S
        fam = S.C(PLACE_FAMILIES)
        self.fam = fam
        s, p, cat = S.C(fam["things"])
        self.noun = (s, p)
        self.cat = cat
        self.used = set()

    def new_ent(self, noun=None, place=None):
        S = self.S
        if place is None:
            if len(self.used) >= len(self.fam["places"]) - 1:
                raise Retry
            while True:
                place = S.C(self.fam["places"])
                if place[0] not in self.used:
                    break
            self.used.add(place[0])
        e = Ent("place", place[0], noun or self.noun, prep=place[1], cat=self.cat, fam=self.fam["key"])
        S.ents.append(e)
        return e

    def where(self, e):
        return f"{e.prep} {e.name}"

    def conts(self):
        people = {"group", "class", "tour group", "family", "car", "bus", "team"}
        cs = self.fam["conts"]
        if self.cat in ("people", "ride"):
            return [c for c in cs if c[0] in people] or [("group", "groups"), ("class", "classes")]
        return [c for c in cs if c[0] not in people] or [("box", "boxes")]

    def start(self, e, groups=False):
        S = self.S
        x = e.noun
        if not groups:
            v = S.R(4, 90)
            e.val = v
            body = e.restate(str(v), v)
            X = word(x, v)
            frs = ["There [are|were] {v} {x} {W}", cap(e.name) + " [has|had] {v} {x}", cap(e.prep) + " {P} there [are|were] {v} {x}",
                   "{v} {x} [are|were] {W}"]
            cat = self.cat
            if cat == "people":
                frs += ["{v} {x} [are|were] already {W}", "At first, there [are|were] {v} {x} {W}", "{v} {x} [are|were] waiting {W}"]
            if cat == "ride":
                frs += ["{v} {x} [are|were] riding {W}", "{v} {x} [are|were] sitting {W}", cap(e.name) + " [leaves|left] the depot with {v} {x} on board"]
            if cat in ("goods", "book"):
                frs += [cap(e.name) + " [holds|held] {v} {x}", "{v} {x} [are|were] stored {W}", "Someone [has|had] put {v} {x} {W}"]
            if cat == "animal" or cat == "bird":
                frs += ["{v} {x} [are|were] grazing {W}" if cat == "animal" else "{v} {x} [are|were] swimming {W}",
                        "The farmer [keeps|kept] {v} {x} {W}" if cat == "animal" else "{v} {x} [are|were] resting {W}"]
            if cat == "plant":
                frs += ["{v} {x} [grow|grew] {W}", "The gardener [has|had] {v} {x} {W}"]
            if cat == "bake":
                frs += ["The baker [puts|put] {v} {x} {W}", "{v} fresh {x} [sit|sat] {W}"]
            if v == 1:
                raise Retry
            txt = S.fill_noent(S.C(frs), None, v=v, x=X, W=self.where(e), P=e.name)
            return Clause(cap(txt), body, [], e, [])
        k, n = S.R(2, 9), S.R(2, 12)
        s = st("*", k, n)
        e.val = s["result"]
        body = e.restate(eq(s), e.val)
        cs, cp = S.C(self.conts())
        cat = self.cat
        W = self.where(e)
        if cat == "plant":
            frs = [cap(e.name) + " [has|had] {k} rows of {x} with {n} in each row", "{k} rows of {n} {x} [grow|grew] {W}",
                   "The gardener [plants|planted] {k} rows of {n} {x} {W}", "There [are|were] {k} beds of {x} {W}, with {n} in each bed"]
        elif cat in ("people", "ride"):
            frs = ["{k} %s of {n} {x} [are|were] {W}" % cp, "There [are|were] {k} %s {W} with {n} {x} in each" % cp]
            if cat == "ride":
                frs += ["{k} %s of {n} {x} [get|got] on {P}" % cp, cap(e.name) + " [has|had] {k} rows with {n} {x} in each row"]
            else:
                frs += ["{k} %s of {n} {x} [arrive|arrived] at {P}" % cp,
                        "{x_cap} [come|came] to {P} in {k} %s of {n}" % cp]
        elif cat in ("animal", "bird"):
            frs = ["{k} %s [bring|brought] {n} {x} each to {P}" % cp, "There [are|were] {k} %s of {n} {x} {W}" % ("groups",),
                   "{k} %s, each carrying {n} {x}, [arrive|arrived] at {P}" % cp]
        else:
            frs = [cap(e.name) + " [holds|held] {k} %s of {x}, with {n} in each" % cp,
                   "There [are|were] {k} %s of {n} {x} {W}" % cp,
                   "{k} %s with {n} {x} each [are|were] stacked {W}" % cp,
                   "Someone [puts|put] {k} %s of {n} {x} {W}" % cp]
            if x[1] in ("chairs", "desks", "seats"):
                frs.append(cap(e.name) + " [has|had] {k} rows of {n} {x}")
        txt = S.fill_noent(S.C(frs), None, k=k, n=n, x=x[1], W=W, P=e.name, x_cap=cap(x[1]))
        return Clause(cap(txt), body, [s], e, [])

    def verbs(self, e, sign):
        """frames with {n} {x} {W} {P}"""
        cat = self.cat
        if cat == "seat":
            return (["{n} more {x} [are|were] added {W}", "Workers [set|set] up {n} more {x} {W}",
                     "{n} extra {x} [are|were] brought in"] if sign == "+" else
                    ["{n} {x} [are|were] removed", "{n} of the {x} [are|were] broken and taken away",
                     "{n} {x} [are|were] roped off"])
        if sign == "+":
            if cat == "ride":
                return ["{n} more {x} [get|got] on at the next stop", "At the next stop, {n} {x} [board|boarded] {P}",
                        "{n} {x} [climb|climbed] aboard {P}", "Then {n} more {x} [get|got] on"]
            if cat == "people":
                return ["{n} more {x} [arrive|arrived]", "Another {n} {x} [come|came] in", "{n} {x} [join|joined] them",
                        "{n} late {x} [show|showed] up", "{n} more {x} [arrive|arrived] {W}", "Later, {n} more {x} [turn|turned] up"]
            if cat in ("goods", "book"):
                fr = ["{n} more {x} [are|were] delivered to {P}", "A worker [carries|carried] in {n} more {x}",
                      "{n} {x} [are|were] added {W}", "Someone [puts|put] {n} more {x} {W}",
                      "A truck [drops|dropped] off {n} more {x}"]
                if cat == "book":
                    fr += ["{n} {x} [are|were] returned and put {W}", "The librarian [adds|added] {n} new {x}"]
                return fr
            if cat == "bake":
                return ["The baker [takes|took] {n} more {x} out of the oven", "{n} fresh {x} [are|were] added {W}",
                        "The baker [bakes|baked] {n} more {x}", "Another {n} {x} [come|came] out of the oven"]
            if cat == "animal":
                return ["{n} more {x} [are|were] brought to {P}", "{n} {x} [wander|wandered] in from the next field",
                        "The farmer [buys|bought] {n} more {x}", "{n} more {x} [come|came] back to {P}"]
            if cat == "bird":
                return ["{n} more {x} [land|landed] {W}", "{n} {x} [fly|flew] in", "Another {n} {x} [swim|swam] over"]
            if cat == "plant":
                return ["{n} more {x} [are|were] planted {W}", "The gardener [plants|planted] {n} more {x}",
                        "{n} new {x} [are|were] added {W}"]
        else:
            if cat == "ride":
                return ["{n} {x} [get|got] off at the next stop", "At the station, {n} {x} [get|got] off",
                        "{n} of the {x} [step|stepped] off {P}", "Then {n} {x} [get|got] off"]
            if cat == "people":
                return ["{n} {x} [leave|left]", "{n} of them [go|went] home", "{n} {x} [head|headed] out early",
                        "Later, {n} {x} [leave|left] {P}", "{n} of the {x} [walk|walked] out"]
            if cat in ("goods", "book"):
                fr = ["{n} {x} [are|were] sold", "{n} {x} [are|were] taken away", "{n} {x} [are|were] shipped out",
                      "{n} of the {x} [are|were] moved to another room", "Workers [remove|removed] {n} {x}"]
                if cat == "book":
                    fr += ["{n} {x} [are|were] checked out", "{n} {x} [are|were] taken off {P}"]
                return fr
            if cat == "bake":
                return ["{n} {x} [are|were] sold", "Customers [buy|bought] {n} {x}", "{n} of the {x} [are|were] eaten",
                        "The baker [gives|gave] away {n} {x}"]
            if cat == "animal":
                return ["{n} {x} [are|were] sold at the market", "{n} {x} [wander|wandered] off",
                        "{n} of the {x} [are|were] moved to another field", "The farmer [sells|sold] {n} {x}"]
            if cat == "bird":
                return ["{n} {x} [fly|flew] away", "{n} of the {x} [swim|swam] off", "Then {n} {x} [fly|flew] off"]
            if cat == "plant":
                return ["{n} {x} [are|were] dug up", "{n} {x} [die|died] in the frost", "{n} of the {x} [are|were] moved away",
                        "The gardener [removes|removed] {n} {x}"]
        raise Retry

    def single(self, e):
        return sum(1 for x in self.S.ents if x.kind == "place" and x.name == e.name) == len(self.S.ents) == 1

    def mention(self, txt, e):
        """make sure a frame that does not name the place does when several places exist"""
        if e.name in txt or len({x.name for x in self.S.ents}) == 1:
            return txt
        return cap(self.where(e)) + ", " + decap(txt)

    def add(self, e):
        return self.addsub(e, "+")

    def sub(self, e):
        return self.addsub(e, "-")

    def addsub(self, e, sign):
        S = self.S
        if sign == "+":
            if e.val > 97:
                raise Retry
            n = S.R(2, min(40, 100 - e.val))
        else:
            if e.val < 4:
                raise Retry
            n = S.R(2, e.val - 1)
        s = st(sign, e.val, n)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "add" if sign == "+" else "sub"
        frs = self.verbs(e, sign)
        if e.pair is not None:
            frs = [f for f in frs if "{x}" in f]
        if sign == "+" and len({x.name for x in S.ents}) > 1:
            frs = [f for f in frs if "{P}" in f or "{W}" in f] or frs
        if sign == "-" and len({x.name for x in S.ents}) > 1:
            frs = [f for f in frs if "{P}" in f or "{W}" in f] or [SUB_MULTI.get(self.cat, "{n} of the {x} {W} [are|were] taken away")]
        fr = S.C(frs)
        txt = S.fill_noent(fr, None, n=n, x=word(e.noun, n), W=self.where(e), P=e.name)
        return Clause(cap(self.mention(txt, e)), body, [s], e, inputs)

    def groups(self, e, sign):
        S = self.S
        if self.cat == "seat" or e.pair:
            raise Retry
        k, n = S.R(2, 6), S.R(2, 12)
        m = st("*", k, n)
        s = st(sign, e.val, m["result"])
        body = f"That is {eq(m)} {e.noun[1]} and " + e.restate(eq(s), s["result"], lower=True)
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "add" if sign == "+" else "sub"
        cs, cp = S.C(self.conts())
        cat = self.cat
        if sign == "+":
            if cat in ("people", "ride"):
                frs = ["{k} more %s of {n} {x} [arrive|arrived]" % cp, "{k} %s with {n} {x} each [join|joined] them" % cp]
                if cat == "ride":
                    frs = ["{k} %s of {n} {x} [get|got] on" % cp, "At the next stop, {k} %s of {n} {x} [board|boarded]" % cp]
            elif cat == "plant":
                frs = ["{k} more rows of {n} {x} [are|were] planted", "The gardener [adds|added] {k} rows of {n} {x}"]
            elif cat in ("animal", "bird"):
                frs = ["{k} %s [bring|brought] {n} more {x} each" % cp, "{k} more groups of {n} {x} [arrive|arrived]"]
            else:
                frs = ["{k} more %s of {n} {x} [arrive|arrived]" % cp, "A truck [brings|brought] {k} %s of {n} {x}" % cp,
                       "{k} %s with {n} {x} in each [are|were] added" % cp]
        else:
            if cat in ("people", "ride"):
                frs = ["{k} groups of {n} {x} [leave|left]", "{k} %s of {n} {x} [go|went] home" % cp]
                if cat == "ride":
                    frs = ["{k} groups of {n} {x} [get|got] off", "At the museum, {k} %s of {n} {x} [get|got] off" % cp]
            elif cat == "plant":
                frs = ["{k} rows of {n} {x} [are|were] dug up", "The gardener [removes|removed] {k} rows of {n} {x}"]
            elif cat in ("animal", "bird"):
                frs = ["{k} groups of {n} {x} [are|were] moved out", "{k} %s [take|took] away {n} {x} each" % cp]
            else:
                frs = ["{k} %s of {n} {x} [are|were] sold" % cp, "{k} %s of {n} {x} [are|were] shipped out" % cp,
                       "Workers [load|loaded] {k} %s of {n} {x} onto a truck" % cp]
        txt = S.fill_noent(S.C(frs), None, k=k, n=n, x=e.noun[1])
        return Clause(cap(self.mention(txt, e)), body, [m, s], e, inputs)

    def two(self, e, sign):
        S = self.S
        if self.cat == "seat" or e.pair:
            raise Retry
        n1, n2 = S.R(2, 30), S.R(2, 30)
        s1 = st(sign, e.val, n1)
        s2 = st(sign, s1["result"], n2)
        body = e.restate(eq(s1), s1["result"])[:-1] + " and " + e.restate(eq(s2), s2["result"], lower=True)
        inputs = S.inp(e)
        e.val = s2["result"]
        e.last_kind = "add" if sign == "+" else "sub"
        cat = self.cat
        if cat == "ride":
            fr = ("{n1} {x} [get|got] on at the first stop and {n2} at the second" if sign == "+"
                  else "{n1} {x} [get|got] off at the first stop and {n2} at the second")
        elif cat == "people":
            fr = ("{n1} {x} [arrive|arrived] at noon and {n2} more an hour later" if sign == "+"
                  else "{n1} {x} [leave|left] after lunch and {n2} more before dinner")
        elif cat in ("animal", "bird"):
            fr = ("{n1} {x} [come|came] in {t1} and {n2} {t2}" if sign == "+"
                  else "{n1} {x} [are|were] sold {t1} and {n2} {t2}")
        elif cat == "plant":
            fr = ("{n1} {x} [are|were] planted {t1} and {n2} {t2}" if sign == "+"
                  else "{n1} {x} [are|were] removed {t1} and {n2} {t2}")
        else:
            fr = ("{n1} {x} [are|were] added {t1} and {n2} {t2}" if sign == "+"
                  else "{n1} {x} [are|were] sold {t1} and {n2} {t2}")
        t1, t2 = S.C(TIMES2)
        txt = S.fill_noent(fr, None, n1=n1, n2=n2, x=e.noun[1], t1=t1, t2=t2)
        return Clause(cap(self.mention(txt, e)), body, [s1, s2], e, inputs)

    def mul(self, e):
        S = self.S
        if self.cat == "seat" or e.pair:
            raise Retry
        f = S.C([2, 2, 3])
        s = st("*", e.val, f)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "mul"
        verb = {2: "doubles|doubled", 3: "triples|tripled"}[f]
        frs = ["By noon, the number of {x} {W} [%s]" % verb,
               "Later the number of {x} {W} [%s]" % verb,
               "By the end of the week there [are|were] %s as many {x} {W} as before" % MULT_WORD[f]]
        txt = S.fill_noent(S.C(frs), None, x=e.noun[1], W=self.where(e))
        return Clause(cap(txt), body, [s], e, inputs)

    def keep_frac(self, e):
        S = self.S
        if self.cat == "seat" or e.pair:
            raise Retry
        d = S.C([2, 2, 3])
        if e.val % d:
            raise Retry
        s = st("/", e.val, d)
        body = e.restate(eq(s), s["result"])
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "sub"
        cat = self.cat
        if d == 2:
            frs = {"people": ["Half of the {x} [go|went] home", "Then half of the {x} [leave|left]"],
                   "ride": ["Half of the {x} [get|got] off at the park", "At the big station, half of the {x} [get|got] off"],
                   "animal": ["Half of the {x} [are|were] sold", "The farmer [moves|moved] half of the {x} to another farm"],
                   "bird": ["Half of the {x} [fly|flew] away"],
                   "plant": ["Half of the {x} [are|were] dug up"]}.get(cat, ["Half of the {x} [are|were] sold",
                                                                            "Half of the {x} [are|were] taken away"])
        else:
            frs = ["Only a third of the {x} [stay|stayed] and the rest [leave|left]" if cat in ("people", "ride") else
                   "Only a third of the {x} [are|were] kept and the rest [are|were] sold"]
        txt = S.fill_noent(S.C(frs), None, x=e.noun[1])
        return Clause(cap(self.mention(txt, e)), body, [s], e, inputs)

    def leave_frac(self, e):
        S = self.S
        if self.cat == "seat" or e.pair:
            raise Retry
        d = S.C([3, 4, 5])
        if e.val % d:
            raise Retry
        q = st("/", e.val, d)
        s = st("-", e.val, q["result"])
        body = f"That is {eq(q)} {word(e.noun, q['result'])} and " + e.restate(eq(s), s["result"], lower=True)
        inputs = S.inp(e)
        e.val = s["result"]
        e.last_kind = "sub"
        fw = {3: "a third", 4: "a quarter", 5: "a fifth"}[d]
        cat = self.cat
        verb = {"people": "[leave|left]", "ride": "[get|got] off", "bird": "[fly|flew] away",
                "plant": "[are|were] dug up", "animal": "[are|were] sold"}.get(cat, "[are|were] sold")
        frs = [cap(fw) + " of the {x} " + verb, "Then " + fw + " of the {x} " + verb]
        txt = S.fill_noent(S.C(frs), None, x=e.noun[1])
        return Clause(cap(self.mention(txt, e)), body, [q, s], e, inputs)

    def compare(self, base, new, kind):
        S = self.S
        v = base.val
        x = new.noun[1]
        WB, WA = self.where(new), self.where(base)
        if kind == "more":
            if v > 98:
                raise Retry
            n = S.R(2, min(40, 100 - v))
            s = st("+", v, n)
            frs = ["{PB} [has|had] {n} more {x} than {PA}", "There [are|were] {n} more {x} {WB} than {WA}",
                   "{PB} [holds|held] {n} {x} more than {PA}", "{WBc} there [are|were] {n} more {x} than {WA}"]
        elif kind == "fewer":
            if v < 4:
                raise Retry
            n = S.R(2, v - 1)
            s = st("-", v, n)
            frs = ["{PB} [has|had] {n} fewer {x} than {PA}", "There [are|were] {n} fewer {x} {WB} than {WA}",
                   "{PB} [has|had] {n} {x} fewer than {PA}", "{WBc} there [are|were] {n} fewer {x} than {WA}"]
        elif kind == "times":
            f = S.C([2, 2, 3, 4])
            s = st("*", v, f)
            w = MULT_WORD[f]
            frs = ["{PB} [has|had] %s as many {x} as {PA}" % w, "There [are|were] %s as many {x} {WB} as {WA}" % w,
                   "{PB} [holds|held] %d times as many {x} as {PA}" % f]
        else:
            d = S.C([2, 2, 3])
            if v % d:
                raise Retry
            s = st("/", v, d)
            w = FRAC_WORD[d]
            frs = ["{PB} [has|had] %s as many {x} as {PA}" % w, "There [are|were] only %s as many {x} {WB} as {WA}" % w,
                   "{PB} [has|had] just %s as many {x} as {PA}" % w]
        new.val = s["result"]
        body = new.restate(eq(s), new.val)
        txt = S.fill_noent(S.C(frs), None, PB=new.name, PA=base.name, n=s["b"], x=x, WB=WB, WA=WA, WBc=cap(WB))
        return Clause(cap(txt), body, [s], new, S.inp(base))

    def inverse(self, base, new):
        S = self.S
        v = base.val
        kind = S.C(["more", "fewer", "twice"])
        if kind == "more":
            if v < 4:
                raise Retry
            n = S.R(2, v - 1)
            s = st("-", v, n)
            rel = f"which [is|was] {n} more than {self.where(new)}"
            alone = f"That [is|was] {n} more than {self.where(new)}"
        elif kind == "fewer":
            if v > 98:
                raise Retry
            n = S.R(2, min(40, 100 - v))
            s = st("+", v, n)
            rel = f"which [is|was] {n} fewer than {self.where(new)}"
            alone = f"That [is|was] {n} fewer than {self.where(new)}"
        else:
            if v % 2:
                raise Retry
            s = st("/", v, 2)
            rel = f"which [is|was] twice as many as {self.where(new)}"
            alone = f"That [is|was] twice as many as {self.where(new)}"
        new.val = s["result"]
        body = new.restate(eq(s), new.val)
        a = cap(S.fill_noent(alone, None))
        return Clause(a, body, [s], new, S.inp(base), rel=S.fill_noent(rel, None), alone=a, kind="inverse")

    def q_value(self, e):
        S = self.S
        x = e.noun[1]
        W = self.where(e)
        frs = ["How many {x} [are|were] {W} now?", "How many {x} [are|were] {W} in the end?",
               "What is the number of {x} {W} now?", "How many {x} [are|were] there {W}?",
               "How many {x} [does|did] {P} have?", "Find the number of {x} {W}.", "how many {x} [are|were] {W}"]
        if e.last_kind == "sub":
            frs += ["How many {x} [are|were] left {W}?", "How many {x} [remain|remained] {W}?",
                    "How many {x} [are|were] still {W}?"]
        if self.cat == "ride" and e.last_kind != "start":
            frs += ["How many {x} [are|were] {W} when it [reaches|reached] the last stop?"]
        q = S.fill_noent(S.C(frs), None, x=x, W=W, P=e.name)
        return fix_q(q, e)

    def q_total(self, a, b):
        S = self.S
        x = a.noun[1]
        if a.prep == b.prep:
            both = f"{a.prep} {a.name} and {b.name}"
        else:
            both = f"{a.prep} {a.name} and {b.prep} {b.name}"
        frs = ["How many {x} [are|were] there {both} altogether?", "How many {x} [are|were] {both} combined?",
               "What is the total number of {x} {both}?", "Altogether, how many {x} [are|were] {both}?",
               "How many {x} [are|were] {both} in all?"]
        return cap(S.fill_noent(S.C(frs), None, x=x, both=both))

    def total_line(self, a, b, s):
        return f"Together, {a.name} and {b.name} have {eq(s)} {word(a.noun, s['result'])}."

    def q_diff(self, big, small, fewer):
        S = self.S
        x = big.noun[1]
        if fewer:
            frs = ["How many fewer {x} [are|were] {WS} than {WB}?", "{WSc}, how many fewer {x} [are|were] there than {WB}?"]
        else:
            frs = ["How many more {x} [are|were] {WB} than {WS}?", "How many more {x} [does|did] {PB} have than {PS}?",
                   "How many more {x} [are|were] there {WB} than {WS}?"]
        return cap(S.fill_noent(S.C(frs), None, x=x, WB=self.where(big), WS=self.where(small), PB=big.name,
                                PS=small.name, WSc=cap(self.where(small))))

    def diff_line(self, big, small, fewer, s):
        x = word(big.noun, s["result"])
        if fewer:
            return f"There {'is' if s['result'] == 1 else 'are'} {eq(s)} fewer {x} {self.where(small)} than {self.where(big)}."
        return f"There {'is' if s['result'] == 1 else 'are'} {eq(s)} more {x} {self.where(big)} than {self.where(small)}."


# ================================================================ driver
KINDS["pieces of fruit"] = [("apple", "apples"), ("pear", "pears"), ("plum", "plums"), ("orange", "oranges")]
KINDS["seats"] = [("taken seat", "taken seats"), ("empty seat", "empty seats")]
OWN_WHOLES = {"marbles": ("marble", "collect"), "stickers": ("sticker", "collect"), "books": ("book", "book"),
              "cookies": ("cookie", "bake"), "muffins": ("muffin", "bake"), "balloons": ("balloon", "collect"),
              "pieces of fruit": ("piece of fruit", "fruit"), "flowers": ("flower", "collect")}
OTHER_NOUNS = [("bench", "benches"), ("window", "windows"), ("clock", "clocks"), ("plant pot", "plant pots"),
               ("bike", "bikes"), ("lamp", "lamps"), ("fire extinguisher", "fire extinguishers"), ("flag", "flags")]
OWN_OTHER = [("pencil", "pencils"), ("notebook", "notebooks"), ("crayon", "crayons"), ("eraser", "erasers"),
             ("toy car", "toy cars"), ("rubber duck", "rubber ducks"), ("sock", "socks"), ("hair clip", "hair clips")]
OPCOUNT = {1: [0, 1, 1, 1], 2: [1, 1, 2, 2, 2], 3: [1, 2, 2, 3, 3], 4: [2, 3, 3, 4, 4]}


def clone(e, noun):
    c = Ent(e.kind, e.name, noun, gender=e.gender, prep=e.prep, plural=e.plural, cat=e.cat, fam=e.fam)
    return c


class Builder:
    def __init__(self, rng, target):
        self.rng = rng
        self.target = target
        self.S = S = Story(rng)
        self.order = []

    def C(self, x):
        return self.rng.choice(x)

    def add(self, c, ent=None, kind=None):
        S = self.S
        S.add_clause(c)
        if kind:
            c.kind = kind
        self.order.append(c.idx)
        if ent is not None and getattr(ent, "creator", None) is None:
            ent.creator = c.idx
        return c

    # ---- distractors
    def distract(self, W):
        S = self.S
        rng = self.rng
        r = rng.random()
        persons = [e for e in S.ents if e.kind == "person"]
        kw = dict(m=S.R(2, 60), h=S.R(6, 11), age=S.R(6, 12), color=self.C(COLORS), N2=S.fresh_name()[0])
        if isinstance(W, PlaceWorld):
            if r < 0.45:
                fr = self.C(DISTRACT_PLACE[W.fam["key"]])
            elif r < 0.7 and S.ents:
                e = self.C(S.ents)
                y = self.C([t for t in OTHER_NOUNS if t[1] != e.noun[1]])
                fr = "There [are|were] also {m} %s %s" % (y[1], W.where(e))
            else:
                fr = self.C(DISTRACT_GENERIC)
            txt = S.fill_noent(fr, None, N=S.fresh_name()[0], **kw)
        else:
            if r < 0.4:
                n = persons and rng.random() < 0.6 and self.C(persons).name or S.fresh_name()[0]
                fr = self.C(DISTRACT_PERSON)
                txt = S.fill_noent(fr, None, N=n, **kw)
            elif r < 0.65 and S.ents and W.mode == "person":
                e = self.C(S.ents)
                y = self.C([t for t in OWN_OTHER if t[1] != e.noun[1]])
                txt = S.fill("{A} also <has|had> {m} %s" % y[1], e, **kw)
            elif r < 0.8 and W.mode == "person":
                txt = S.fill_noent("{N} [has|had] {m} {x} at home", None, N=S.fresh_name()[0], x=W.noun[1], **kw)
            else:
                txt = S.fill_noent(self.C(DISTRACT_GENERIC), None, **kw)
        c = Clause(cap(txt), None, [], None, [], kind="distractor")
        if any(x.kind == "distractor" and x.text.split()[:3] == c.text.split()[:3] for x in S.clauses):
            raise Retry
        gen = {cap(S.fill_noent(g, None)) for g in DISTRACT_GENERIC}
        if c.text in gen and any(x.text in gen for x in S.clauses if x.kind == "distractor"):
            raise Retry
        return self.add(c)

    # ---- special starts
    def pair_start(self, W, A):
        S = self.S
        k1, k2 = self.rng.sample(KINDS[A.noun[1]], 2)
        whole = A.noun
        v1, v2 = S.R(2, 60), S.R(2, 60)
        if v1 + v2 > 100:
            raise Retry
        B = clone(A, k2)
        A.noun = k1
        S.ents.append(B)
        A.val, B.val = v1, v2
        A.pair, B.pair = B, A
        A.whole = B.whole = whole
        kw = dict(v1=v1, v2=v2, k1=k1[1], k2=k2[1])
        if A.kind == "place":
            W_ = W.where(A)
            fr = self.C(["There [are|were] {v1} {k1} and {v2} {k2} {W}", cap(A.name) + " [has|had] {v1} {k1} and {v2} {k2}",
                         cap(W_) + " there [are|were] {v1} {k1} and {v2} {k2}", "{v1} {k1} and {v2} {k2} [are|were] {W}"])
            txt = S.fill_noent(fr, None, W=W_, **kw)
            body = f"There are {v1} {k1[1]} and {v2} {k2[1]} {W_}."
            c = Clause(cap(txt), body, [], [A, B], [])
        else:
            fr = self.C(["<has|had> {v1} {k1} and {v2} {k2}", "<owns|owned> {v1} {k1} and {v2} {k2}",
                         "<collects|collected> {v1} {k1} and {v2} {k2}", "<has|had> {v1} {k1} plus {v2} {k2}"])
            body = f"{A.label()} {A.has()} {v1} {k1[1]} and {v2} {k2[1]}."
            c = S.subj_clause(A, fr, body, [], [], **kw)
            c.out = [A, B]
            c.pred = None
        self.add(c, A)
        B.creator = c.idx
        return A, B

    def rest(self, W, e):
        S = self.S
        if e.noun[1] not in KINDS or e.pair is not None or e.val < 4:
            raise Retry
        k1, k2 = self.rng.sample(KINDS[e.noun[1]], 2)
        if e.noun[1] == "seats":
            k1, k2 = KINDS["seats"]
        p = S.R(2, e.val - 1) if e.val > 3 else 2
        s = st("-", e.val, p)
        e1, e2 = clone(e, k1), clone(e, k2)
        e1.val, e2.val = p, s["result"]
        e1.pair, e2.pair = e2, e1
        e1.whole = e2.whole = e.noun
        S.ents += [e1, e2]
        if e.noun[1] == "seats":
            fr = self.C(["{p} of them [are|were] taken", "{p} of the seats [are|were] already taken",
                         "{p} of the seats [are|were] filled and the rest [are|were] empty"])
        else:
            fr = self.C(["{p} of them [are|were] {k1} and the rest [are|were] {k2}",
                         "Of these, {p} [are|were] {k1} and the others [are|were] {k2}",
                         "{p} of the {x} [are|were] {k1}; the rest [are|were] {k2}",
                         "{p} [are|were] {k1}, and all the others [are|were] {k2}"])
        txt = S.fill_noent(fr, None, p=p, k1=k1[1], k2=k2[1], x=e.noun[1])
        c = Clause(cap(txt), e2.restate(eq(s), e2.val), [s], [e1, e2], S.inp(e), kind="rest")
        self.add(c)
        e1.creator = e2.creator = c.idx
        e.frozen = True
        return e2 if self.rng.random() < 0.85 or e.noun[1] == "seats" else e1

    # ---- main
    def run(self):
        S, rng = self.S, self.rng
        target = self.target
        special = rng.choices(["none", "pair", "rest", "need"], [66, 11, 12, 11])[0]
        owner = rng.random() < 0.55
        W = OwnerWorld(S) if owner else PlaceWorld(S)
        self.W = W
        if special in ("pair", "rest"):
            if owner:
                if W.mode != "person":
                    raise Retry
                wn = self.C(list(OWN_WHOLES))
                W.noun = (OWN_WHOLES[wn][0], wn)
                W.cat = OWN_WHOLES[wn][1]
            else:
                cands = [t for t in W.fam["things"] if t[1] in KINDS]
                if not cands:
                    raise Retry
                t = self.C(cands)
                W.noun, W.cat = (t[0], t[1]), t[2]
        if special == "pair" and W.noun[1] == "seats":
            raise Retry
        if rng.random() < 0.12:
            self.distract(W)
        A = W.new_ent()
        if special == "pair":
            cur = self.C(self.pair_start(W, A))
        else:
            c = W.start(A, groups=rng.random() < 0.22)
            c.kind = "start"
            self.add(c, A)
            cur = A
        n_ops = self.C(OPCOUNT[target])
        rested = False
        for i in range(n_ops):
            if rng.random() < 0.12:
                self.distract(W)
            if special == "rest" and not rested:
                cur = self.rest(W, cur)
                rested = True
                continue
            cur = self.op(W, cur)
        if special == "rest" and not rested:
            cur = self.rest(W, cur)
        if rng.random() < 0.15:
            self.distract(W)
        self.question(W, cur, special)
        if rng.random() < 0.06 and self.q_form != "if":
            self.distract(W)
        return self.finish()

    def op(self, W, cur):
        S, rng = self.S, self.rng
        if cur.frozen or cur.val is None:
            cands = [e for e in S.ents if not e.frozen and e.val is not None]
            if not cands:
                raise Retry
            cur = self.C(cands)
        elif rng.random() < 0.15:
            cands = [e for e in S.ents if not e.frozen and e.val is not None]
            cur = self.C(cands)
        team = getattr(W, "cat", "") == "score"
        names = ["add", "sub", "compare", "groups+", "groups-", "two+", "two-", "mul", "keep", "leave", "inverse", "indep"]
        wts = [22, 22, 24, 5, 5, 3, 3, 4, 5, 3, 5, 4]
        if team:
            wts = [22, 14, 30, 3, 2, 3, 1, 0, 0, 0, 6, 4]
        op = rng.choices(names, wts)[0]
        if op == "add":
            c = W.add(cur)
        elif op == "sub":
            c = W.sub(cur)
        elif op in ("groups+", "groups-"):
            c = W.groups(cur, op[-1])
        elif op in ("two+", "two-"):
            c = W.two(cur, op[-1])
        elif op == "mul":
            c = W.mul(cur)
        elif op == "keep":
            c = W.keep_frac(cur)
        elif op == "leave":
            c = W.leave_frac(cur)
        elif op == "indep":
            new = W.new_ent() if isinstance(W, OwnerWorld) else W.new_ent(noun=cur.noun)
            if cur.pair is not None:
                raise Retry
            c = W.start(new, groups=rng.random() < 0.2)
            c.kind = "start"
            self.add(c, new)
            return new
        elif op == "inverse":
            cc = S.clauses[cur.creator] if getattr(cur, "creator", None) is not None else None
            if (cur.pair is not None or cc is None or cc.idx != len(S.clauses) - 1 or self.order[-1] != cc.idx
                    or cc.rel is not None or cur.kind in ("me", "we") and False):
                raise Retry
            new = W.new_ent() if isinstance(W, OwnerWorld) else W.new_ent(noun=cur.noun)
            c = W.inverse(cur, new)
            self.add(c, new)
            return new
        else:  # compare
            if cur.pair is not None:
                raise Retry
            new = W.new_ent() if isinstance(W, OwnerWorld) else W.new_ent(noun=cur.noun)
            kind = rng.choices(["more", "fewer", "times", "part"], [35, 30, 20, 15])[0]
            c = W.compare(cur, new, kind)
            cc = S.clauses[cur.creator]
            self.S.add_clause(c)
            new.creator = c.idx
            if (cc.idx == len(S.clauses) - 2 and cur.last_kind == "start" and rng.random() < 0.35
                    and cc.rel is None):
                # told before the fact it depends on
                pos = self.order.index(cc.idx)
                self.order.insert(pos, c.idx)
                cur.frozen = True
                if cc.kind == "start" and not cc.steps and cur.kind in ("person", "group") and rng.random() < 0.45:
                    rel = self.C(["who <has|had> {v}", "who <has|had> {v} {x}"]) if cur.kind == "person" else \
                        "which <has|had> {v} {x}"
                    if cur.noun[1] not in c.text:
                        rel = "who <has|had> {v} {x}" if cur.kind == "person" else "which <has|had> {v} {x}"
                    if cur.plural:
                        rel = "who <have|had> {v} {x}".replace("<have|had>", "<has|had>")
                    cc.rel = S.fill(rel, cur, v=cur.val, x=word(cur.noun, cur.val))
                    cc.alone = cc.text
            else:
                self.order.append(c.idx)
            return new
        self.add(c)
        return cur

    # ---- questions
    def question(self, W, cur, special):
        S, rng = self.S, self.rng
        self.q_form = "last"
        vals = [e for e in S.ents if e.val is not None]
        same = [(a, b) for i, a in enumerate(vals) for b in vals[i + 1:]
                if a.noun == b.noun and a.pair is None and b.pair is None and (a.name != b.name or a.kind != b.kind)]
        pair = cur.pair if cur.pair is not None and cur.pair.val is not None else None
        if pair is not None and S.last[cur] == S.last[pair] and S.clauses[S.last[cur]].kind == "rest":
            pair = None  # nothing changed since the split: the total is the whole again
        team = getattr(W, "cat", "") == "score"
        if special == "need":
            return self.q_need(W, cur)
        if pair is not None and rng.random() < 0.7:
            a, b = (cur, pair) if S.ents.index(cur) < S.ents.index(pair) else (pair, cur)
            if a.whole[1] != "seats" and (rng.random() < 0.6 or a.val == b.val):
                return self.q_inall(W, a, b)
            if a.val != b.val and a.whole[1] != "seats":
                big, small = (a, b) if a.val > b.val else (b, a)
                return self.q_pairdiff(W, big, small)
        opts = ["value", "share_stmt", "share_q", "pack_stmt", "pack_q"]
        wts = [40, 8, 8, 5, 5]
        if team:
            wts = [40, 0, 0, 0, 0]
        if same:
            opts += ["total", "diff", "total_share"]
            wts += [18, 14, 4 if not team else 0]
        q = rng.choices(opts, wts)[0]
        if q == "value":
            e = cur if rng.random() < 0.75 else self.C(vals)
            S.q_text = W.q_value(e)
            S.q_inputs = S.inp(e)
        elif q in ("total", "diff", "total_share"):
            a, b = self.C(same)
            if q == "total":
                s = st("+", a.val, b.val)
                S.q_text = W.q_total(a, b)
                S.q_lines = [W.total_line(a, b, s)]
                S.q_steps = [s]
            elif q == "diff":
                if a.val == b.val:
                    raise Retry
                big, small = (a, b) if a.val > b.val else (b, a)
                fewer = rng.random() < 0.3
                s = st("-", big.val, small.val)
                S.q_text = W.q_diff(big, small, fewer)
                S.q_lines = [W.diff_line(big, small, fewer, s)]
                S.q_steps = [s]
            else:
                s = st("+", a.val, b.val)
                d, part = self.divisor(W, s["result"], a)
                s2 = st("/", s["result"], d)
                S.q_lines = [W.total_line(a, b, s), f"Each {part[0]} gets {eq(s2)} {word(a.noun, s2['result'])}."]
                S.q_steps = [s, s2]
                if isinstance(W, OwnerWorld):
                    ab = f"{a.obj()} and {b.obj()}" if a.kind not in ("me", "we") else f"{b.name} and {a.obj()}"
                    if a.kind == "me" or b.kind == "me":
                        ab = f"{(b if a.kind == 'me' else a).name} and I"
                    elif a.kind == "we" or b.kind == "we":
                        ab = f"{(b if a.kind == 'we' else a).name} and we"
                    S.q_text = f"If {ab} put all {a.noun[1]} together and share them equally among {d} {part[1]}, " \
                               f"how many {a.noun[1]} does each {part[0]} get?"
                else:
                    both = f"{a.prep} {a.name} and {b.name}" if a.prep == b.prep else \
                        f"{a.prep} {a.name} and {b.prep} {b.name}"
                    S.q_text = f"If all the {a.noun[1]} {both} are shared equally among {d} {part[1]}, " \
                               f"how many {a.noun[1]} does each {part[0]} get?"
            S.q_inputs = S.inp(a, b)
        else:
            e = cur
            if e.pair is not None and q.startswith("pack"):
                raise Retry
            if getattr(W, "cat", "") == "seat":
                raise Retry
            self.q_divide(W, e, q)

    def divisor(self, W, v, e, lo=2, hi=12):
        ds = [d for d in range(lo, hi + 1) if v % d == 0 and v // d >= 2]
        if not ds:
            raise Retry
        d = self.C(ds)
        if isinstance(W, OwnerWorld):
            part = self.C(SHARE_PARTS_OWN if W.mode == "person" else CLASS_PARTS)
        elif W.cat not in ("people", "ride") and "gparts" in W.fam:
            part = self.C(W.fam["gparts"])
        else:
            part = self.C(W.fam["parts"])
        return d, part

    def q_divide(self, W, e, q):
        S, rng = self.S, self.rng
        share = q.startswith("share")
        stmt = q.endswith("stmt")
        x = e.noun[1]
        owner = isinstance(W, OwnerWorld)
        people = not owner and W.cat in ("people", "ride")
        if share:
            d, part = self.divisor(W, e.val, e)
            if owner and W.mode == "person" and rng.random() < 0.35:
                part = self.C(PILE_PARTS)
                pile = True
            else:
                pile = part in PILE_PARTS or not owner
            s = st("/", e.val, d)
            r = word(e.noun, s["result"])
            verb = "has" if people else "gets"
            line = f"Each {part[0]} {verb} {eq(s)} {r}."
            if stmt:
                if owner:
                    fr = (["<puts|put> {A_ppos} {x} into {d} equal {p}", "<divides|divided> the {x} equally into {d} {p}",
                           "<splits|split> them evenly into {d} {p}"] if pile else
                          ["<shares|shared> {A_ppos} {x} equally among {d} {p}", "<splits|split> the {x} evenly between {d} {p}",
                           "<gives|gave> all the {x} to {d} {p}, the same number to each",
                           "<hands|handed> out the {x} equally to {d} {p}"])
                    c = S.subj_clause(e, self.C(fr), line, [s], S.inp(e), x=x, d=d, p=part[1])
                    c.out = None
                else:
                    if people:
                        fr = ["The {x} {W} [split|split] into {d} equal {p}", "The {x} {W} [form|formed] {d} {p} of the same size"]
                        if part[0] == "table":
                            fr = ["The {x} {W} [sit|sat] at {d} tables, with the same number at each table"]
                    else:
                        fr = ["The {x} {W} [are|were] shared equally among {d} {p}",
                              "The {x} {W} [are|were] split evenly among {d} {p}"]
                        if part[0] in ("shelf", "table", "tray", "plate"):
                            fr.append("Someone [puts|put] the same number of {x} from {P} on each of {d} {p}")
                    c = Clause(cap(S.fill_noent(self.C(fr), None, x=x, d=d, p=part[1], W=W.where(e), P=e.name)),
                               line, [s], None, S.inp(e))
                self.add(c)
                S.q_inputs = [c.idx]
                if owner and not pile:
                    qf = ["How many {x} <does|did> each {p1} get?", "How many {x} does each {p1} receive?",
                          "What does each {p1} get?"]
                    S.q_text = cap(S.fill_noent(self.C(qf).replace("<does|did>", "[does|did]"), None, x=x, p1=part[0]))
                else:
                    pp = "on" if part[0] in ("table", "shelf", "tray", "plate") else "in"
                    qf = ["How many {x} [are|were] %s each {p1}?" % pp, "How many {x} [does|did] each {p1} get?",
                          "How many {x} [are|were] there %s each {p1}?" % pp]
                    if people and part[0] == "table":
                        qf = ["How many {x} [sit|sat] at each table?", "How many {x} [are|were] at each table?"]
                    S.q_text = cap(S.fill_noent(self.C(qf), None, x=x, p1=part[0]))
            else:
                old = S.tense
                S.tense = "present"
                if owner:
                    fr = "If {A} <shares|shared> {A_ppos} {x} equally among {d} {p}, how many {x} <does|did> each {p1} get?"
                    fr = fr.replace("<does|did>", "[does|did]")
                    S.q_text = cap(S.fill(fr, e, x=x, d=d, p=part[1], p1=part[0]))
                else:
                    fr = self.C(["If the {x} {W} [are|were] shared equally among {d} {p}, how many {x} [does|did] each {p1} get?",
                                 "The {x} {W} are to be split evenly among {d} {p}. How many {x} will each {p1} get?"])
                    if people:
                        fr = "If the {x} {W} split into {d} equal {p}, how many {x} are in each {p1}?"
                        if part[0] == "table":
                            fr = "If the {x} {W} sit at {d} tables with the same number at each, how many {x} sit at each table?"
                    S.q_text = cap(S.fill_noent(fr, None, x=x, d=d, p=part[1], p1=part[0], W=W.where(e)))
                S.tense = old
                S.q_lines = [line]
                S.q_steps = [s]
                S.q_inputs = S.inp(e)
            return
        # packing into groups of d
        ds = [d for d in range(2, 13) if e.val % d == 0 and e.val // d >= 2]
        if not ds:
            raise Retry
        d = self.C(ds)
        s = st("/", e.val, d)
        q_ = s["result"]
        if people:
            g = self.C([("team", "teams"), ("group", "groups"), ("car", "cars") if W.cat == "people" else ("row", "rows")])
            line = f"The {x} make {eq(s)} {word(g, q_)}." if g[0] != "car" else f"The {x} fill {eq(s)} {word(g, q_)}."
            if stmt:
                fr = {"team": "The {x} {W} [form|formed] teams of {d}", "group": "The {x} {W} [split|split] into groups of {d}",
                      "car": "The {x} {W} [ride|rode] home in cars that hold {d} each",
                      "row": "The {x} {W} [sit|sat] in rows of {d}"}[g[0]]
                qf = "How many {g} [are|were] there?" if g[0] != "car" else "How many cars [are|were] needed?"
        else:
            if owner:
                g = self.C(OWN_CONT.get(W.cat, [("box", "boxes"), ("bag", "bags")]))
                line = f"{e.label()} {'fill' if e.kind in ('me', 'we') or e.plural else 'fills'} {eq(s)} {word(g, q_)}."
            else:
                g = self.C([c for c in W.fam["conts"] if c[0] not in ("group", "family", "class", "team", "tour group",
                                                                       "bus", "car", "truck", "trailer", "flock",
                                                                       "stack")]
                           or [("box", "boxes")])
                if W.cat == "plant":
                    g = ("row", "rows")
                if W.cat == "animal":
                    g = ("pen", "pens")
                if W.cat == "bird":
                    raise Retry
                line = f"The {x} fill {eq(s)} {word(g, q_)}."
        if not stmt:
            S.q_lines = [line.replace(" fill ", " can fill ").replace(" fills ", " can fill ")
                         .replace(" make ", " can make ")]
            S.q_steps = [s]
            S.q_inputs = S.inp(e)
            if owner:
                fr = self.C(["How many {g} of {d} can {A} fill?", "How many full {g} of {d} can {A} make?",
                             "If {A} packs the {x} in {g} of {d}, how many {g} can {A} fill?".replace(
                                 "packs", "pack" if e.kind in ("me", "we") else "packs")])
                S.q_text = cap(S.fill(fr, e, g=g[1], d=d, x=x))
            elif people:
                S.q_text = cap(S.fill_noent(self.C(["How many %s of {d} can the {x} {W} make?" % g[1],
                                                    "If the {x} {W} split into %s of {d}, how many %s are there?" % (g[1], g[1])]),
                                            None, x=x, d=d, W=W.where(e)))
                if g[0] == "car":
                    S.q_lines = [f"The {x} can fill {eq(s)} {word(g, q_)}."]
                    S.q_text = cap(S.fill_noent("How many cars that hold {d} people each can the {x} {W} fill?",
                                                None, x=x, d=d, W=W.where(e)))
            elif W.cat == "animal":
                S.q_text = cap(S.fill_noent(self.C(["If the farmer puts the {x} {W} into pens of {d}, how many pens are filled?",
                                                    "How many pens of {d} can the {x} {W} fill?"]), None, x=x, d=d, W=W.where(e)))
            else:
                S.q_text = cap(S.fill_noent(self.C(["How many %s of {d} can be filled with the {x} {W}?" % g[1],
                                                    "If the {x} {W} are packed %s of {d}, how many %s can be filled?"
                                                    % ("in rows" if g[0] == "row" else "into " + g[1], g[1])]),
                                            None, x=x, d=d, W=W.where(e)))
            return
        if not people:
            if owner:
                fr = self.C(["<packs|packed> all the {x} into {g} of {d}", "<puts|put> the {x} in {g}, {d} in each {g1}",
                             "<fills|filled> {g} with {d} {x} each until none <is|were> left".replace("<is|were>", "[are|were]")])
                c = S.subj_clause(e, fr, line, [s], S.inp(e), x=x, g=g[1], g1=g[0], d=d)
                c.out = None
                qf = S.fill("How many {g} <does|did> {A} fill?", e, g=g[1])
            else:
                fr = self.C(["The {x} {W} [are|were] packed into {g} of {d}", "Workers [put|put] the {x} {W} into {g}, {d} in each {g1}"])
                if W.cat == "plant":
                    fr = "The {x} {W} [are|were] replanted in rows of {d}"
                if W.cat == "animal":
                    fr = "The farmer [puts|put] the {x} {W} into pens of {d}"
                c = Clause(cap(S.fill_noent(fr, None, x=x, g=g[1], g1=g[0], d=d, W=W.where(e))), line, [s], None, S.inp(e))
                qf = S.fill_noent(self.C(["How many {g} [are|were] filled?", "How many {g} [does|did] that make?"]), None, g=g[1])
        else:
            c = Clause(cap(S.fill_noent(fr, None, x=x, d=d, W=W.where(e))), line, [s], None, S.inp(e))
            qf = S.fill_noent(qf, None, g=g[1])
        self.add(c)
        S.q_inputs = [c.idx]
        S.q_text = cap(qf)

    def q_need(self, W, e):
        S, rng = self.S, self.rng
        if e.val > 97:
            raise Retry
        G = S.R(e.val + 2, min(100, e.val + 60))
        s = st("-", G, e.val)
        x = e.noun[1]
        if isinstance(W, OwnerWorld):
            wants = "want" if e.kind in ("me", "we") or e.plural else "wants"
            needs = "need" if e.kind in ("me", "we") or e.plural else "needs"
            if W.cat == "score":
                fr = self.C(["<needs|needed> {G} {x} to win the cup", "<needs|needed> {G} {x} to reach the final"])
                body = f"{e.label()} {needs} {G} {x}."
            else:
                fr = self.C(["<wants|wanted> {G} {x} in all", "<wants|wanted> to have {G} {x}",
                             "<hopes|hoped> to have {G} {x} by the end of the month", "<wants|wanted> {G} {x} for a project"])
                body = f"{e.label()} {wants} {G} {x}."
            c = S.subj_clause(e, fr, body, [], [], G=G, x=x)
            c.out = None
            line = f"{e.label()} {needs} {eq(s)} more {word(e.noun, s['result'])}."
            q = S.fill(self.C(["How many more {x} <does|did> {A} need?", "How many more {x} <does|did> {A} still need?",
                               "How many {x} <is|was> {A} short?"]), e, x=x)
        else:
            cap_ = W.cat in ("people", "ride", "animal", "bird")
            if cap_:
                fr = self.C(["{P} [can|could] hold {G} {x}", "There [is|was] room for {G} {x} {W}",
                             "{P} [has|had] space for {G} {x}"])
                body = f"{cap(e.name)} can hold {G} {x}."
                line = f"{cap(e.name)} has room for {eq(s)} more {word(e.noun, s['result'])}."
                q = S.fill_noent(self.C(["How many more {x} [can|could] fit {W}?", "How many more {x} [is|was] there room for?"
                                         .replace("[is|was]", "[is|was]")]), None, x=x, W=W.where(e))
            else:
                fr = self.C(["{P} [needs|needed] {G} {x}", "There should be {G} {x} {W}", "The plan [is|was] to have {G} {x} {W}"])
                body = f"{cap(e.name)} needs {G} {x}."
                line = f"{cap(e.name)} needs {eq(s)} more {word(e.noun, s['result'])}."
                q = S.fill_noent(self.C(["How many more {x} [are|were] needed?", "How many more {x} [does|did] {P} need?"]),
                                 None, x=x, P=e.name)
            c = Clause(cap(S.fill_noent(fr, None, G=G, x=x, W=W.where(e), P=e.name)), body, [], None, [])
        c.kind = "need"
        self.add(c)
        S.q_lines = [line]
        S.q_steps = [s]
        S.q_inputs = S.inp(e) + [c.idx]
        S.q_text = cap(q)

    def q_inall(self, W, a, b):
        S = self.S
        s = st("+", a.val, b.val)
        wh = a.whole[1]
        if a.kind == "place":
            S.q_text = cap(S.fill_noent(self.C(["How many {w} [are|were] {W} in all?", "How many {w} [are|were] there {W} altogether?",
                                                "What is the total number of {w} {W}?", "In all, how many {w} [are|were] {W}?"]),
                                        None, w=wh, W=W.where(a)))
            S.q_lines = [f"In all, there are {eq(s)} {word(a.whole, s['result'])} {W.where(a)}."]
        else:
            S.q_text = cap(S.fill(self.C(["How many {w} <does|did> {A} have in all?", "How many {w} <does|did> {A} have altogether?",
                                          "What is the total number of {w} {A} <has|had>?"]), a, w=wh))
            S.q_lines = [f"In all, {a.label() if a.kind != 'we' else 'we'} {a.has()} {eq(s)} {word(a.whole, s['result'])}."]
            if a.kind == "me":
                S.q_lines = [f"In all, I have {eq(s)} {word(a.whole, s['result'])}."]
        S.q_steps = [s]
        S.q_inputs = S.inp(a, b)

    def q_pairdiff(self, W, big, small):
        S = self.S
        s = st("-", big.val, small.val)
        if big.kind == "place":
            S.q_text = cap(S.fill_noent(self.C(["How many more {b} than {s} [are|were] there {W}?",
                                                "How many more {b} than {s} [are|were] {W}?"]),
                                        None, b=big.noun[1], s=small.noun[1], W=W.where(big)))
            S.q_lines = [f"There {'is' if s['result'] == 1 else 'are'} {eq(s)} more {word(big.noun, s['result'])} than "
                         f"{small.noun[1]} {W.where(big)}."]
        else:
            S.q_text = cap(S.fill("How many more {b} than {s} <does|did> {A} have?", big, b=big.noun[1], s=small.noun[1]))
            S.q_lines = [f"{big.label()} {big.has()} {eq(s)} more {word(big.noun, s['result'])} than {small.noun[1]}."]
        S.q_steps = [s]
        S.q_inputs = S.inp(big, small)

    # ---- assemble
    def finish(self):
        S, rng = self.S, self.rng
        cl = S.clauses
        # relevance
        todo = list(S.q_inputs)
        while todo:
            i = todo.pop()
            if not cl[i].needed:
                cl[i].needed = True
                todo += cl[i].inputs
        for c in cl:
            if c.kind == "distractor":
                c.needed = False
        worked = [s for c in cl if c.needed for s in c.steps] + S.q_steps
        if len(worked) != self.target:
            raise Retry
        if not any(c.needed for c in cl):
            raise Retry
        # text order and numbering
        for pos, i in enumerate(self.order):
            cl[i].pos = pos + 1
        n_cl = len(self.order)
        numbered = rng.random() < 0.08
        if_form = (not numbered and n_cl <= 2 and all(c.kind != "distractor" for c in cl) and S.tense == "present"
                   and rng.random() < 0.35 and S.q_text[:3] in ("How", "Wha") and "." not in S.q_text[:-1])
        sentences = []
        parts_in = []
        prev = None
        for i in self.order:
            c = cl[i]
            if numbered:
                sentences.append(f"({c.pos}) {c.text}.")
                prev = c
                continue
            if c.rel and sentences and prev is not None:
                sentences[-1] += ", " + c.rel
                parts_in[-1] += 1
            elif (sentences and prev is not None and rng.random() < 0.22 and parts_in[-1] < 2 and not if_form
                  and c.kind not in ("distractor", "rest", "need") and prev.kind != "distractor"):
                if prev.subj is not None and prev.subj is c.subj and c.pred and prev.pred:
                    j = " and " if c.pred.startswith("then ") else self.C([" and ", ", then ", " and then ", " and "])
                    sentences[-1] += j + c.pred
                else:
                    j = ", and " if c.text.startswith("Then ") else self.C([", and ", " and ", ", then ", ", and "])
                    sentences[-1] += j + decap(c.text)
                parts_in[-1] += 1
            else:
                t = c.text
                if (prev is not None and prev.subj is not None and prev.subj is c.subj and c.subj.kind == "person"
                        and t.startswith(c.subj.name + " ") and rng.random() < 0.35
                        and sum(1 for e in S.ents if e.kind == "person" and e.gender == c.subj.gender
                                and e.name != c.subj.name) == 0):
                    t = ("She" if c.subj.gender == "f" else "He") + t[len(c.subj.name):]
                sentences.append(t)
                parts_in.append(1)
            prev = c
        if not numbered:
            sentences = [s + "." for s in sentences]
        q = S.q_text
        if if_form:
            story = " and ".join(decap(cl[i].text) if k else cl[i].text for k, i in enumerate(self.order))
            qq = q[0].lower() + q[1:] if q[:3] in ("How", "Wha") else q
            text = f"If {decap(story)}, {qq}"
            if not text.endswith("?"):
                text = text.rstrip(".") + "?"
            self.q_form = "if"
        else:
            r = rng.random()
            if r < 0.06 and q.endswith("?"):
                q = q[0].lower() + q[1:-1]
            if r > 0.88 and not numbered and q.endswith("?") and not q.startswith("If"):
                text = q + " " + " ".join(sentences)
            else:
                text = " ".join(sentences) + " " + q
        text = self.C(LEADS) + text
        text = " ".join(text.split())
        # reasoning in logical order
        reasoning = []
        for c in cl:
            if c.needed:
                reasoning.append(f"({c.pos}) {c.body}")
            else:
                reasoning.append(f"({c.pos}) This does not change the answer.")
        reasoning += S.q_lines
        return {"user_text": text, "reasoning": reasoning, "worked": worked, "answer": worked[-1]["result"]}


STEP_WEIGHTS = [(1, 45), (2, 35), (3, 15), (4, 5)]


def make_item(rng):
    target = rng.choices([t for t, _ in STEP_WEIGHTS], [w for _, w in STEP_WEIGHTS])[0]
    for _ in range(2000):
        try:
            it = Builder(rng, target).run()
        except Retry:
            continue
        if items.check(it):
            continue
        return it
    raise RuntimeError("could not build an item")


def generate(n, seed):
    rng = random.Random(seed)
    return [make_item(rng) for _ in range(n)]


if __name__ == "__main__":
    items.main("scenes", generate, __doc__)
