// tinygsm's natural style: questions said the way people type them.
//
// Two families. Bare arithmetic ("What is 17+26?", "17 plus 26", "Compute 45 - 18 * 2", "(14 + 6)
// * 3", "Divide 84 by 4.") reasons in equations only. Stories are clauses about people (a subject and a verb
// phrase, in present or past tense), told as sentences (pronouns, optional "(1) (2)" numbering)
// or joined into one line ("Ava has 17 marbles, finds 26 more and then gives away 5."), with
// distractors and questions about another person or a total. The slow reasoning names each
// clause with the same "(k)" marker the broad style uses, so the two styles share one answer form.
//
// Vocabulary here is the training vocabulary. The held-out natural set (data/natural/) is written
// by a separate grammar with other names, objects, verbs and sentence shapes.
#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <tuple>

#include "tinygsm/tinygsm.h"
#include "util/hash.h"
#include "util/rng.h"

namespace kvscope::tinygsm {

namespace {

struct Rng : util::SplitMix64 {
  explicit Rng(uint64_t seed) : util::SplitMix64{seed} {}
  int uniform(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }
};

struct Person {
  std::string name;
  bool female;
};
// Names from many languages (ASCII spellings: the tokenizer falls back to bytes for the rest).
const std::vector<Person> kPeople = {
    {"Tom", false},   {"Anna", true},    {"Ben", false},    {"Mia", true},     {"Sam", false},   {"Lily", true},
    {"Max", false},   {"Emma", true},    {"Leo", false},    {"Zoe", true},     {"Jack", false},  {"Lucy", true},
    {"Noah", false},  {"Ella", true},    {"Omar", false},   {"Nina", true},    {"Ravi", false},  {"Sara", true},
    {"Ivan", false},  {"Maya", true},    {"Ava", true},     {"Liam", false},   {"Aiko", true},   {"Kenji", false},
    {"Wei", false},   {"Mei", true},     {"Priya", true},   {"Arjun", false},  {"Fatima", true}, {"Ahmed", false},
    {"Olga", true},   {"Dmitri", false}, {"Lucia", true},   {"Mateo", false},  {"Chloe", true},  {"Lukas", false},
    {"Ingrid", true}, {"Sven", false},   {"Amara", true},   {"Kwame", false},  {"Nia", true},    {"Tariq", false},
    {"Yuki", true},   {"Hiro", false},   {"Sofia", true},   {"Diego", false},  {"Elif", true},   {"Emre", false},
    {"Hana", true},   {"Minh", false},   {"Zara", true},    {"Pablo", false},  {"Ines", true},   {"Jonas", false},
    {"Freya", true},  {"Kofi", false},   {"Ada", true},     {"Raj", false},    {"Lina", true},   {"Oscar", false},
    // round 5: a wider spread, so that a name is less often one the model has learned by heart
    {"Chiara", true}, {"Bruno", false},  {"Ayesha", true},  {"Yusuf", false},  {"Keiko", true},  {"Takeshi", false},
    {"Ling", true},   {"Jun", false},    {"Ananya", true},  {"Vikram", false}, {"Zainab", true}, {"Idris", false},
    {"Svetlana", true}, {"Pavel", false}, {"Camila", true}, {"Santiago", false}, {"Margot", true}, {"Henri", false},
    {"Astrid", true}, {"Nils", false},   {"Abena", true},   {"Kwesi", false},  {"Chidi", false}, {"Adaeze", true},
    {"Mariam", true}, {"Karim", false},  {"Leila", true},   {"Reza", false},   {"Soo-ah", true}, {"Jae", false},
    {"Thanh", true},  {"Bao", false},    {"Siobhan", true}, {"Declan", false}, {"Agnieszka", true}, {"Tomasz", false},
    {"Eszter", true}, {"Bence", false},  {"Niamh", true},   {"Finn", false},   {"Valentina", true}, {"Marco", false},
    {"Isabel", true}, {"Joaquin", false}, {"Beatrice", true}, {"Hugo", false}, {"Greta", true},  {"Matthias", false},
    {"Aaliyah", true}, {"Malik", false}, {"Rosa", true},    {"Andre", false},  {"Grace", true},  {"Ethan", false},
    {"Olivia", true}, {"James", false},  {"Harper", true},  {"Lucas", false},  {"Ruby", true},   {"Henry", false},
    {"Sakura", true}, {"Ren", false},    {"Amina", true},   {"Musa", false},   {"Tendai", false}, {"Rudo", true},
    {"Esi", true},    {"Yaw", false},    {"Nadia", true},   {"Samir", false},  {"Dilnoza", true}, {"Timur", false},
    {"Aigerim", true}, {"Nurlan", false}, {"Kalani", true}, {"Keanu", false},  {"Tupac", false}, {"Quilla", true},
    {"Noor", true},   {"Bilal", false},  {"Hye-jin", true}, {"Min-jun", false}, {"Parisa", true}, {"Dariush", false},
    {"Eleni", true},  {"Nikos", false},  {"Ilse", true},    {"Bram", false},   {"Maja", true},  {"Mikkel", false},
    {"Aroha", true},  {"Tane", false},   {"Ximena", true},  {"Rodrigo", false}, {"Paula", true}, {"Victor", false},
    {"Carmen", true}, {"Ruben", false},  {"Imani", true},   {"Jabari", false}, {"Layla", true}, {"Hamza", false}};

struct Obj {
  const char* many;
  bool food;
};
const std::vector<Obj> kObjs = {
    {"apples", true},    {"pencils", false}, {"stickers", false}, {"marbles", false}, {"cookies", true},
    {"books", false},    {"cards", false},   {"shells", false},   {"balloons", false}, {"eggs", true},
    {"toy cars", false}, {"crayons", false}, {"stamps", false},   {"candies", true},   {"oranges", true},
    {"beads", false},    {"grapes", true},   {"muffins", true},   {"coins", false},    {"flowers", false},
    {"rocks", false},    {"buttons", false}, {"peaches", true},   {"cupcakes", true},  {"bananas", true},
    {"nuts", true},      {"pens", false},    {"toys", false},     {"shirts", false},   {"carrots", true},
    // round 5: more everyday countable things (food marked, so that "eats" is only said of food)
    {"plums", true},     {"pears", true},    {"lemons", true},    {"cherries", true},  {"potatoes", true},
    {"tomatoes", true},  {"pretzels", true}, {"donuts", true},    {"biscuits", true},  {"pies", true},
    {"tacos", true},     {"dumplings", true}, {"mangoes", true},  {"apricots", true},  {"figs", true},
    {"onions", true},    {"rolls", true},    {"waffles", true},   {"pancakes", true},  {"sandwiches", true},
    {"cucumbers", true}, {"peppers", true},  {"strawberries", true}, {"lollipops", true}, {"chocolates", true},
    {"walnuts", true},   {"olives", true},   {"melons", true},    {"kiwis", true},     {"bagels", true},
    {"tulips", false},   {"roses", false},   {"daisies", false},  {"leaves", false},   {"acorns", false},
    {"pinecones", false}, {"pebbles", false}, {"seashells", false}, {"stones", false}, {"sticks", false},
    {"dolls", false},    {"robots", false},  {"kites", false},    {"yo-yos", false},   {"dice", false},
    {"puzzles", false},  {"blocks", false},  {"trains", false},   {"trucks", false},   {"planes", false},
    {"rulers", false},   {"markers", false}, {"folders", false},  {"notebooks", false}, {"glue sticks", false},
    {"paintbrushes", false}, {"scissors", false}, {"envelopes", false}, {"magnets", false}, {"pins", false},
    {"cups", false},     {"mugs", false},    {"forks", false},    {"napkins", false},  {"candles", false},
    {"hats", false},     {"gloves", false},  {"scarves", false},  {"shoes", false},    {"sweaters", false},
    {"chickens", false}, {"ducks", false},   {"goats", false},    {"rabbits", false},  {"fish", false},
    {"goldfish", false}, {"puppies", false}, {"kittens", false},  {"cows", false},     {"horses", false},
    {"tickets", false},  {"postcards", false}, {"photos", false}, {"comics", false},   {"magazines", false},
    {"songs", false},    {"videos", false},  {"emails", false},   {"points", false},   {"goals", false},
    {"bricks", false},   {"nails", false},   {"boards", false},   {"tiles", false},    {"bottles", false},
    {"cans", false},     {"jars", false},    {"boxes", false},    {"bags", false},     {"baskets", false}};
struct Thing {
  const char* one;
  const char* many;
};
const std::vector<Thing> kThings = {{"book", "books"},   {"pen", "pens"},         {"notebook", "notebooks"},
                                    {"toy", "toys"},     {"ticket", "tickets"},   {"ball", "balls"},
                                    {"sandwich", "sandwiches"}, {"kite", "kites"}, {"hat", "hats"},
                                    {"cup of tea", "cups of tea"}, {"game", "games"}, {"plant", "plants"}};

// Names and objects made of random syllables. A model that only ever sees sixty names learns them by
// heart and writes one of them for a name it has never seen; invented words in a share of the
// stories make it copy the name or object from the question instead, which is what users' own
// names, objects and units need.
std::string invented_word(Rng& rng, int syllables) {
  static const std::vector<std::string> kOnsets = {"b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s",
                                                   "t", "v", "w", "z", "ch", "sh", "th", "br", "dr", "kr", "st", "tr"};
  static const std::vector<std::string> kVowels = {"a", "e", "i", "o", "u", "a", "o", "ai", "ee", "ou"};
  std::string w;
  for (int i = 0; i < syllables; ++i) w += rng.pick(kOnsets) + rng.pick(kVowels);
  if (rng.chance(40)) w += rng.pick(std::vector<std::string>{"n", "r", "l", "k", "m", "s"});
  return w;
}

Person invented_person(Rng& rng) {
  std::string n = invented_word(rng, rng.uniform(2, 3));
  n[0] = static_cast<char>(n[0] - 'a' + 'A');
  return {n, rng.chance(50)};
}

// Plural nouns beyond kObjs (never food, so "eats" is not said of them), and invented ones.
std::string invented_objects(Rng& rng) {
  static const std::vector<std::string> kMore = {
      "bricks", "candles", "paper clips", "ribbons", "jars", "spoons", "blocks", "feathers", "keys", "tiles",
      "boxes", "bottles", "puzzles", "socks", "nails", "bowls", "maps", "lamps", "tickets",
      "seeds", "logs", "bells", "postcards", "badges", "erasers", "brushes", "coats", "plates", "ropes",
      "comic books", "glass beads", "wooden spoons", "paper cups",
      "chairs", "towels", "baskets", "rings", "trophies", "cables", "screws", "bolts", "letters", "photos"};
  if (rng.chance(50)) return rng.pick(kMore);
  std::string w = invented_word(rng, rng.uniform(1, 2));
  return w + (w.back() == 's' ? "es" : "s");
}

enum class Dom { Objects, Money, Pages, Miles };
// GroupStart: a first statement that is itself a product ("buys 3 packs of 6 pencils"); Share:
// the last event divides among people or containers and the question asks for one share.
// TwoAdd/TwoSub: two amounts under one verb ("spends $25 on shoes and $30 on a jacket"); OwnAmount:
// another person with an amount of their own, and the question asks for the total.
enum class Op { Start, Add, Sub, Mul, Div, GroupAdd, GroupSub, More, Fewer, Times, GroupStart, Share, TwoAdd, TwoSub, OwnAmount };

// A verb phrase of the subject, present and past. Placeholders: {N} amount, {K} factor or count,
// {O} the objects, {M} an amount of money ("$12" or "12 dollars"), {F} another person, {I}/{Is}
// a thing bought, {him} {his} the subject's pronouns, {Km1} K - 1. Compare phrases (More, Fewer,
// Times) are said by the other person about the subject, {P}.
struct Phrase {
  Dom dom;
  Op op;
  const char* pres;
  const char* past;
  int k = 0;          // a fixed factor ("doubles": 2, "half": 2); 0: drawn
  bool food = false;  // only for edible objects
  // Someone else acts on the subject: the phrase is said by {F} about {P} ("gives {P} 5 more
  // apples", "takes 3 of {P}'s apples"); a Start phrase is a whole sentence ("There are 12 apples
  // in {P}'s bag").
  bool by_other = false;
};

const std::vector<Phrase> kPhrases = {
    // ---- objects
    {Dom::Objects, Op::Start, "has {N} {O}", "had {N} {O}"},
    {Dom::Objects, Op::Start, "owns {N} {O}", "owned {N} {O}"},
    {Dom::Objects, Op::Start, "starts with {N} {O}", "started with {N} {O}"},
    {Dom::Objects, Op::Start, "has a box of {N} {O}", "had a box of {N} {O}"},
    {Dom::Objects, Op::Start, "has collected {N} {O}", "had collected {N} {O}"},
    {Dom::Objects, Op::Add, "buys {N} more {O}", "bought {N} more {O}"},
    {Dom::Objects, Op::Add, "buys {N} more", "bought {N} more"},
    {Dom::Objects, Op::Add, "finds {N} more", "found {N} more"},
    {Dom::Objects, Op::Add, "finds {N} more {O}", "found {N} more {O}"},
    {Dom::Objects, Op::Add, "gets {N} more {O}", "got {N} more {O}"},
    {Dom::Objects, Op::Add, "gets {N} {O} from {F}", "got {N} {O} from {F}"},
    {Dom::Objects, Op::Add, "receives {N} {O} from {F}", "received {N} {O} from {F}"},
    {Dom::Objects, Op::Add, "is given {N} more {O}", "was given {N} more {O}"},
    {Dom::Objects, Op::Add, "picks up {N} more {O}", "picked up {N} more {O}"},
    {Dom::Objects, Op::Add, "collects {N} more", "collected {N} more"},
    {Dom::Objects, Op::Add, "wins {N} {O}", "won {N} {O}"},
    {Dom::Objects, Op::Add, "gets another {N}", "got another {N}"},
    {Dom::Objects, Op::Add, "adds {N} {O} to the pile", "added {N} {O} to the pile"},
    {Dom::Objects, Op::Add, "earns {N} more {O}", "earned {N} more {O}"},
    {Dom::Objects, Op::Add, "makes {N} more {O}", "made {N} more {O}"},
    {Dom::Objects, Op::Add, "is handed {N} more {O}", "was handed {N} more {O}"},
    {Dom::Objects, Op::Add, "borrows {N} {O} from {F}", "borrowed {N} {O} from {F}"},
    {Dom::Objects, Op::Add, "gathers {N} more {O}", "gathered {N} more {O}"},
    {Dom::Objects, Op::Add, "orders {N} more {O}", "ordered {N} more {O}"},
    {Dom::Objects, Op::Add, "brings home {N} more", "brought home {N} more"},
    {Dom::Objects, Op::Add, "adds {N} more", "added {N} more"},
    {Dom::Objects, Op::Sub, "throws away {N}", "threw away {N}"},
    {Dom::Objects, Op::Sub, "trades away {N} {O}", "traded away {N} {O}"},
    {Dom::Objects, Op::Sub, "lends {N} {O} to {F}", "lent {N} {O} to {F}"},
    {Dom::Objects, Op::Sub, "hands {F} {N} of the {O}", "handed {F} {N} of the {O}"},
    {Dom::Objects, Op::Sub, "breaks {N} of them", "broke {N} of them"},
    {Dom::Objects, Op::Sub, "returns {N} {O} to the shop", "returned {N} {O} to the shop"},
    {Dom::Objects, Op::Sub, "misplaces {N} {O}", "misplaced {N} {O}"},
    {Dom::Objects, Op::Sub, "gives away {N}", "gave away {N}"},
    {Dom::Objects, Op::Sub, "gives away {N} {O}", "gave away {N} {O}"},
    {Dom::Objects, Op::Sub, "gives {N} {O} to {F}", "gave {N} {O} to {F}"},
    {Dom::Objects, Op::Sub, "gives {F} {N} of them", "gave {F} {N} of them"},
    {Dom::Objects, Op::Sub, "loses {N}", "lost {N}"},
    {Dom::Objects, Op::Sub, "loses {N} of the {O}", "lost {N} of the {O}"},
    {Dom::Objects, Op::Sub, "sells {N} of them", "sold {N} of them"},
    {Dom::Objects, Op::Sub, "sells {N} {O}", "sold {N} {O}"},
    {Dom::Objects, Op::Sub, "uses {N} {O}", "used {N} {O}"},
    {Dom::Objects, Op::Sub, "uses {N} of them", "used {N} of them"},
    {Dom::Objects, Op::Sub, "donates {N} {O}", "donated {N} {O}"},
    {Dom::Objects, Op::Sub, "drops {N} of the {O}", "dropped {N} of the {O}"},
    {Dom::Objects, Op::Sub, "eats {N}", "ate {N}", 0, true},
    {Dom::Objects, Op::Sub, "eats {N} of the {O}", "ate {N} of the {O}", 0, true},
    {Dom::Objects, Op::Mul, "doubles the {O}", "doubled the {O}", 2},
    {Dom::Objects, Op::Mul, "doubles the number of {O}", "doubled the number of {O}", 2},
    {Dom::Objects, Op::Mul, "triples the number of {O}", "tripled the number of {O}", 3},
    {Dom::Objects, Op::Mul, "ends up with twice as many", "ended up with twice as many", 2},
    {Dom::Objects, Op::Mul, "ends up with {K} times as many {O}", "ended up with {K} times as many {O}"},
    {Dom::Objects, Op::Mul, "multiplies the {O} by {K}", "multiplied the {O} by {K}"},
    {Dom::Objects, Op::Div, "gives away half of them", "gave away half of them", 2},
    {Dom::Objects, Op::Div, "loses half of the {O}", "lost half of the {O}", 2},
    {Dom::Objects, Op::Div, "keeps only half of the {O}", "kept only half of the {O}", 2},
    {Dom::Objects, Op::Div, "keeps a third of them", "kept a third of them", 3},
    {Dom::Objects, Op::Div, "keeps a quarter of the {O}", "kept a quarter of the {O}", 4},
    {Dom::Objects, Op::Div, "splits them equally into {K} bags and keeps one bag",
     "split them equally into {K} bags and kept one bag"},
    {Dom::Objects, Op::Div, "shares the {O} equally with {Km1} friends and keeps one share",
     "shared the {O} equally with {Km1} friends and kept one share"},
    {Dom::Objects, Op::Div, "eats half of them", "ate half of them", 2, true},
    {Dom::Objects, Op::GroupAdd, "buys {K} packs of {N} {O}", "bought {K} packs of {N} {O}"},
    {Dom::Objects, Op::GroupAdd, "buys {K} boxes with {N} {O} in each", "bought {K} boxes with {N} {O} in each"},
    {Dom::Objects, Op::GroupAdd, "gets {K} bags of {N} {O} each", "got {K} bags of {N} {O} each"},
    {Dom::Objects, Op::GroupAdd, "receives {N} {O} from each of {K} friends", "received {N} {O} from each of {K} friends"},
    {Dom::Objects, Op::GroupAdd, "finds {N} {O} a day for {K} days", "found {N} {O} a day for {K} days"},
    {Dom::Objects, Op::GroupSub, "gives {N} {O} to each of {K} friends", "gave {N} {O} to each of {K} friends"},
    {Dom::Objects, Op::GroupSub, "uses {N} {O} a day for {K} days", "used {N} {O} a day for {K} days"},
    {Dom::Objects, Op::GroupSub, "sells {K} bags of {N} {O}", "sold {K} bags of {N} {O}"},
    {Dom::Objects, Op::More, "has {N} more {O} than {P}", "had {N} more {O} than {P}"},
    {Dom::Objects, Op::More, "has {N} more than {P}", "had {N} more than {P}"},
    {Dom::Objects, Op::More, "has {N} {O} more than {P}", "had {N} {O} more than {P}"},
    {Dom::Objects, Op::Fewer, "has {N} fewer {O} than {P}", "had {N} fewer {O} than {P}"},
    {Dom::Objects, Op::Fewer, "has {N} fewer than {P}", "had {N} fewer than {P}"},
    {Dom::Objects, Op::Fewer, "has {N} less {O} than {P}", "had {N} less {O} than {P}"},
    {Dom::Objects, Op::Times, "has twice as many {O} as {P}", "had twice as many {O} as {P}", 2},
    {Dom::Objects, Op::Times, "has {K} times as many {O} as {P}", "had {K} times as many {O} as {P}"},
    {Dom::Objects, Op::Times, "has three times as many as {P}", "had three times as many as {P}", 3},
    {Dom::Objects, Op::GroupStart, "buys {K} packs of {N} {O}", "bought {K} packs of {N} {O}"},
    {Dom::Objects, Op::GroupStart, "has {K} boxes with {N} {O} in each", "had {K} boxes with {N} {O} in each"},
    {Dom::Objects, Op::GroupStart, "gets {K} bags of {N} {O} each", "got {K} bags of {N} {O} each"},
    {Dom::Objects, Op::GroupStart, "picks {N} {O} a day for {K} days", "picked {N} {O} a day for {K} days"},
    {Dom::Objects, Op::GroupStart, "fills {K} jars with {N} {O} each", "filled {K} jars with {N} {O} each"},
    {Dom::Objects, Op::Share, "shares them equally among {K} friends", "shared them equally among {K} friends"},
    {Dom::Objects, Op::Share, "splits the {O} equally into {K} bags", "split the {O} equally into {K} bags"},
    {Dom::Objects, Op::Share, "divides the {O} evenly between {K} boxes", "divided the {O} evenly between {K} boxes"},
    {Dom::Objects, Op::Share, "gives all of them out equally to {K} kids", "gave all of them out equally to {K} kids"},
    // ---- objects, more verbs and constructions
    {Dom::Objects, Op::Add, "picks {N} more {O}", "picked {N} more {O}"},
    {Dom::Objects, Op::Add, "catches {N} more", "caught {N} more"},
    {Dom::Objects, Op::Add, "buys another {N} {O}", "bought another {N} {O}"},
    {Dom::Objects, Op::Add, "gets {N} extra {O}", "got {N} extra {O}"},
    {Dom::Objects, Op::Add, "is sent {N} more {O}", "was sent {N} more {O}"},
    {Dom::Objects, Op::Add, "gets {N} more as a gift", "got {N} more as a gift"},
    {Dom::Objects, Op::Add, "comes home with {N} more {O}", "came home with {N} more {O}"},
    {Dom::Objects, Op::Add, "puts {N} more {O} in the box", "put {N} more {O} in the box"},
    {Dom::Objects, Op::Add, "buys {N} new {O}", "bought {N} new {O}"},
    {Dom::Objects, Op::Add, "wins another {N}", "won another {N}"},
    {Dom::Objects, Op::Add, "saves up {N} more {O}", "saved up {N} more {O}"},
    {Dom::Objects, Op::Add, "trades for {N} more {O}", "traded for {N} more {O}"},
    {Dom::Objects, Op::Add, "grows {N} more {O}", "grew {N} more {O}", 0, true},
    {Dom::Objects, Op::Add, "takes {N} more {O} from the shelf", "took {N} more {O} from the shelf"},
    {Dom::Objects, Op::Sub, "gives {N} of them to {F}", "gave {N} of them to {F}"},
    {Dom::Objects, Op::Sub, "sends {N} {O} to {F}", "sent {N} {O} to {F}"},
    {Dom::Objects, Op::Sub, "loses {N} {O} on the way home", "lost {N} {O} on the way home"},
    {Dom::Objects, Op::Sub, "puts {N} of the {O} back", "put {N} of the {O} back"},
    {Dom::Objects, Op::Sub, "leaves {N} {O} at school", "left {N} {O} at school"},
    {Dom::Objects, Op::Sub, "sells off {N} {O}", "sold off {N} {O}"},
    {Dom::Objects, Op::Sub, "uses up {N} of the {O}", "used up {N} of the {O}"},
    {Dom::Objects, Op::Sub, "throws out {N} {O}", "threw out {N} {O}"},
    {Dom::Objects, Op::Sub, "removes {N} {O}", "removed {N} {O}"},
    {Dom::Objects, Op::Sub, "gives up {N} {O}", "gave up {N} {O}"},
    {Dom::Objects, Op::Sub, "takes {N} {O} out of the box", "took {N} {O} out of the box"},
    {Dom::Objects, Op::Sub, "packs {N} of them for a trip and gives them away", "packed {N} of them for a trip and gave them away"},
    {Dom::Objects, Op::Sub, "uses {N} of them to make a necklace", "used {N} of them to make a necklace"},
    {Dom::Objects, Op::Sub, "uses {N} {O} for a school project", "used {N} {O} for a school project"},
    {Dom::Objects, Op::Sub, "gives {N} to {his} teacher", "gave {N} to {his} teacher"},
    {Dom::Objects, Op::Sub, "cooks {N} of the {O}", "cooked {N} of the {O}", 0, true},
    {Dom::Objects, Op::Sub, "feeds {N} {O} to the dog", "fed {N} {O} to the dog", 0, true},
    {Dom::Objects, Op::Sub, "snacks on {N} of them", "snacked on {N} of them", 0, true},
    {Dom::Objects, Op::Mul, "doubles {his} {O}", "doubled {his} {O}", 2},
    {Dom::Objects, Op::Mul, "ends up with double the {O}", "ended up with double the {O}", 2},
    {Dom::Objects, Op::Mul, "multiplies {his} {O} by {K}", "multiplied {his} {O} by {K}"},
    {Dom::Objects, Op::Mul, "grows the pile to {K} times its size", "grew the pile to {K} times its size"},
    {Dom::Objects, Op::Div, "sells half of the {O}", "sold half of the {O}", 2},
    {Dom::Objects, Op::Div, "uses half of them", "used half of them", 2},
    {Dom::Objects, Op::Div, "gives half of the {O} to {F}", "gave half of the {O} to {F}", 2},
    {Dom::Objects, Op::Div, "keeps half and gives the rest away", "kept half and gave the rest away", 2},
    {Dom::Objects, Op::GroupAdd, "buys {K} more boxes of {N} {O}", "bought {K} more boxes of {N} {O}"},
    {Dom::Objects, Op::GroupAdd, "gets {N} {O} from each of {K} neighbors", "got {N} {O} from each of {K} neighbors"},
    {Dom::Objects, Op::GroupAdd, "picks {N} {O} each day for {K} days", "picked {N} {O} each day for {K} days"},
    {Dom::Objects, Op::GroupAdd, "adds {K} rows of {N} {O}", "added {K} rows of {N} {O}"},
    {Dom::Objects, Op::GroupSub, "gives each of {K} friends {N} {O}", "gave each of {K} friends {N} {O}"},
    {Dom::Objects, Op::GroupSub, "sells {N} {O} a day for {K} days", "sold {N} {O} a day for {K} days"},
    {Dom::Objects, Op::GroupSub, "eats {N} {O} a day for {K} days", "ate {N} {O} a day for {K} days", 0, true},
    {Dom::Objects, Op::GroupSub, "packs {K} bags of {N} {O} for {his} friends", "packed {K} bags of {N} {O} for {his} friends"},
    {Dom::Objects, Op::More, "owns {N} more {O} than {P}", "owned {N} more {O} than {P}"},
    {Dom::Objects, Op::Fewer, "owns {N} fewer {O} than {P}", "owned {N} fewer {O} than {P}"},
    {Dom::Objects, Op::Times, "has double the {O} {P} has", "had double the {O} {P} had", 2},
    {Dom::Objects, Op::Times, "owns {K} times as many {O} as {P}", "owned {K} times as many {O} as {P}"},
    {Dom::Objects, Op::Add, "picks {N} more", "picked {N} more"},
    {Dom::Objects, Op::Add, "gets {N} more", "got {N} more"},
    {Dom::Objects, Op::Sub, "sells {N}", "sold {N}"},
    {Dom::Objects, Op::Sub, "uses {N}", "used {N}"},
    {Dom::Objects, Op::Sub, "gives {N} away", "gave {N} away"},
    {Dom::Objects, Op::Share, "puts the rest into {K} equal bowls", "put the rest into {K} equal bowls"},
    {Dom::Objects, Op::Share, "splits the rest equally among {K} friends", "split the rest equally among {K} friends"},
    // two amounts under one verb ({N2}: the second)
    {Dom::Objects, Op::TwoAdd, "finds {N} in the garden and {N2} in the park", "found {N} in the garden and {N2} in the park"},
    {Dom::Objects, Op::TwoAdd, "buys {N} on Monday and {N2} on Friday", "bought {N} on Monday and {N2} on Friday"},
    {Dom::Objects, Op::TwoAdd, "gets {N} from {his} mom and {N2} from {his} dad", "got {N} from {his} mom and {N2} from {his} dad"},
    {Dom::Objects, Op::TwoAdd, "picks {N} more {O} in the morning and {N2} in the afternoon", "picked {N} more {O} in the morning and {N2} in the afternoon"},
    {Dom::Objects, Op::TwoSub, "sells {N} on Monday and {N2} on Tuesday", "sold {N} on Monday and {N2} on Tuesday"},
    {Dom::Objects, Op::TwoSub, "uses {N} for a card and {N2} for a poster", "used {N} for a card and {N2} for a poster"},
    {Dom::Objects, Op::TwoSub, "gives away {N} on Saturday and {N2} on Sunday", "gave away {N} on Saturday and {N2} on Sunday"},
    {Dom::Objects, Op::TwoSub, "loses {N} {O} at school and {N2} at home", "lost {N} {O} at school and {N2} at home"},
    {Dom::Objects, Op::TwoSub, "eats {N} in the morning and {N2} at night", "ate {N} in the morning and {N2} at night", 0, true},
    {Dom::Objects, Op::TwoSub, "gives {N} to {F} and {N2} to {his} teacher", "gave {N} to {F} and {N2} to {his} teacher"},
    {Dom::Money, Op::TwoAdd, "earns {M} on Saturday and {M2} on Sunday", "earned {M} on Saturday and {M2} on Sunday"},
    {Dom::Money, Op::TwoAdd, "gets {M} from {his} aunt and {M2} from {his} uncle", "got {M} from {his} aunt and {M2} from {his} uncle"},
    {Dom::Money, Op::TwoSub, "spends {M} on a {I} and {M2} on lunch", "spent {M} on a {I} and {M2} on lunch"},
    {Dom::Money, Op::TwoSub, "pays {M} for a {I} and {M2} for a snack", "paid {M} for a {I} and {M2} for a snack"},
    {Dom::Money, Op::TwoSub, "spends {M} on Monday and {M2} on Tuesday", "spent {M} on Monday and {M2} on Tuesday"},
    {Dom::Pages, Op::TwoAdd, "reads {N} pages on Tuesday and {N2} on Wednesday", "read {N} pages on Tuesday and {N2} on Wednesday"},
    {Dom::Miles, Op::TwoAdd, "walks {N} miles on Tuesday and {N2} on Wednesday", "walked {N} miles on Tuesday and {N2} on Wednesday"},
    // said by another person ({F}) about the subject
    {Dom::Objects, Op::Add, "gives {P} {N} more {O}", "gave {P} {N} more {O}", 0, false, true},
    {Dom::Objects, Op::Add, "gives {P} another {N}", "gave {P} another {N}", 0, false, true},
    {Dom::Objects, Op::Add, "brings {P} {N} {O}", "brought {P} {N} {O}", 0, false, true},
    {Dom::Objects, Op::Add, "sends {P} {N} more {O}", "sent {P} {N} more {O}", 0, false, true},
    {Dom::Objects, Op::Add, "buys {P} {N} more {O}", "bought {P} {N} more {O}", 0, false, true},
    {Dom::Objects, Op::Add, "adds {N} {O} to {P}'s pile", "added {N} {O} to {P}'s pile", 0, false, true},
    {Dom::Objects, Op::Sub, "takes {N} of {P}'s {O}", "took {N} of {P}'s {O}", 0, false, true},
    {Dom::Objects, Op::Sub, "borrows {N} {O} from {P}", "borrowed {N} {O} from {P}", 0, false, true},
    {Dom::Objects, Op::Sub, "eats {N} of {P}'s {O}", "ate {N} of {P}'s {O}", 0, true, true},
    {Dom::Objects, Op::Sub, "buys {N} {O} from {P}", "bought {N} {O} from {P}", 0, false, true},
    {Dom::Objects, Op::Div, "takes half of {P}'s {O}", "took half of {P}'s {O}", 2, false, true},
    {Dom::Objects, Op::Mul, "doubles {P}'s {O}", "doubled {P}'s {O}", 2, false, true},
    {Dom::Objects, Op::Start, "There are {N} {O} in {P}'s bag", "There were {N} {O} in {P}'s bag", 0, false, true},
    {Dom::Objects, Op::Start, "{P}'s box holds {N} {O}", "{P}'s box held {N} {O}", 0, false, true},
    {Dom::Objects, Op::Start, "{P}'s collection has {N} {O}", "{P}'s collection had {N} {O}", 0, false, true},
    {Dom::Objects, Op::Start, "In {P}'s basket there are {N} {O}", "In {P}'s basket there were {N} {O}", 0, false, true},
    {Dom::Objects, Op::Start, "keeps {N} {O} in a jar", "kept {N} {O} in a jar"},
    {Dom::Objects, Op::Start, "begins with {N} {O}", "began with {N} {O}"},
    {Dom::Objects, Op::Start, "has got {N} {O}", "had got {N} {O}"},
    // ---- money
    {Dom::Money, Op::GroupStart, "earns {M} per hour for {K} hours", "earned {M} per hour for {K} hours"},
    {Dom::Money, Op::GroupStart, "saves {M} a week for {K} weeks", "saved {M} a week for {K} weeks"},
    {Dom::Money, Op::GroupStart, "sells {K} cakes at {M} each", "sold {K} cakes at {M} each"},
    {Dom::Money, Op::Share, "splits the money equally among {K} friends", "split the money equally among {K} friends"},
    {Dom::Money, Op::Share, "shares it evenly between {K} children", "shared it evenly between {K} children"},
    {Dom::Money, Op::Start, "has {M}", "had {M}"},
    {Dom::Money, Op::Start, "has {M} in a wallet", "had {M} in a wallet"},
    {Dom::Money, Op::Start, "has saved {M}", "had saved {M}"},
    {Dom::Money, Op::Start, "starts with {M}", "started with {M}"},
    {Dom::Money, Op::Start, "has {M} in {his} piggy bank", "had {M} in {his} piggy bank"},
    {Dom::Money, Op::Add, "earns {M}", "earned {M}"},
    {Dom::Money, Op::Add, "earns {M} more", "earned {M} more"},
    {Dom::Money, Op::Add, "gets {M} from {F}", "got {M} from {F}"},
    {Dom::Money, Op::Add, "is paid {M}", "was paid {M}"},
    {Dom::Money, Op::Add, "receives {M}", "received {M}"},
    {Dom::Money, Op::Add, "finds {M}", "found {M}"},
    {Dom::Money, Op::Add, "makes {M} selling lemonade", "made {M} selling lemonade"},
    {Dom::Money, Op::Add, "wins {M}", "won {M}"},
    {Dom::Money, Op::Add, "is given {M}", "was given {M}"},
    {Dom::Money, Op::Add, "saves {M} more", "saved {M} more"},
    {Dom::Money, Op::Sub, "spends {M}", "spent {M}"},
    {Dom::Money, Op::Sub, "spends {M} on a {I}", "spent {M} on a {I}"},
    {Dom::Money, Op::Sub, "pays {M} for a {I}", "paid {M} for a {I}"},
    {Dom::Money, Op::Sub, "buys a {I} for {M}", "bought a {I} for {M}"},
    {Dom::Money, Op::Sub, "gives {M} to {F}", "gave {M} to {F}"},
    {Dom::Money, Op::Sub, "loses {M}", "lost {M}"},
    {Dom::Money, Op::Sub, "uses {M} to buy a {I}", "used {M} to buy a {I}"},
    {Dom::Money, Op::Sub, "donates {M}", "donated {M}"},
    {Dom::Money, Op::Sub, "pays {F} {M}", "paid {F} {M}"},
    {Dom::Money, Op::Mul, "doubles {his} money", "doubled {his} money", 2},
    {Dom::Money, Op::Mul, "ends up with twice as much money", "ended up with twice as much money", 2},
    {Dom::Money, Op::Mul, "ends up with {K} times as much money", "ended up with {K} times as much money"},
    {Dom::Money, Op::Mul, "triples {his} savings", "tripled {his} savings", 3},
    {Dom::Money, Op::Div, "spends half of the money", "spent half of the money", 2},
    {Dom::Money, Op::Div, "gives half of {his} money to {F}", "gave half of {his} money to {F}", 2},
    {Dom::Money, Op::Div, "keeps a third of the money", "kept a third of the money", 3},
    {Dom::Money, Op::Div, "loses half of it", "lost half of it", 2},
    {Dom::Money, Op::Div, "splits the money equally into {K} parts and keeps one part",
     "split the money equally into {K} parts and kept one part"},
    {Dom::Money, Op::GroupAdd, "earns {M} per hour for {K} hours", "earned {M} per hour for {K} hours"},
    {Dom::Money, Op::GroupAdd, "earns {M} a day for {K} days", "earned {M} a day for {K} days"},
    {Dom::Money, Op::GroupAdd, "gets {M} each week for {K} weeks", "got {M} each week for {K} weeks"},
    {Dom::Money, Op::GroupAdd, "is paid {M} per hour for {K} hours", "was paid {M} per hour for {K} hours"},
    {Dom::Money, Op::GroupAdd, "sells {K} cups of lemonade at {M} each", "sold {K} cups of lemonade at {M} each"},
    {Dom::Money, Op::GroupSub, "buys {K} {Is} at {M} each", "bought {K} {Is} at {M} each"},
    {Dom::Money, Op::GroupSub, "buys {K} {Is} for {M} each", "bought {K} {Is} for {M} each"},
    {Dom::Money, Op::GroupSub, "pays {M} each for {K} {Is}", "paid {M} each for {K} {Is}"},
    {Dom::Money, Op::GroupSub, "spends {M} a day for {K} days", "spent {M} a day for {K} days"},
    {Dom::Money, Op::More, "has {M} more than {P}", "had {M} more than {P}"},
    {Dom::Money, Op::Fewer, "has {M} less than {P}", "had {M} less than {P}"},
    {Dom::Money, Op::Times, "has twice as much money as {P}", "had twice as much money as {P}", 2},
    {Dom::Money, Op::Times, "has {K} times as much money as {P}", "had {K} times as much money as {P}"},
    {Dom::Money, Op::Add, "gets paid {M}", "got paid {M}"},
    {Dom::Money, Op::Add, "earns another {M}", "earned another {M}"},
    {Dom::Money, Op::Add, "sells {his} old bike for {M}", "sold {his} old bike for {M}"},
    {Dom::Money, Op::Add, "gets {M} for {his} birthday", "got {M} for {his} birthday"},
    {Dom::Money, Op::Add, "makes {M} mowing lawns", "made {M} mowing lawns"},
    {Dom::Money, Op::Add, "collects {M} in tips", "collected {M} in tips"},
    {Dom::Money, Op::Sub, "pays {M} for lunch", "paid {M} for lunch"},
    {Dom::Money, Op::Sub, "spends {M} at the store", "spent {M} at the store"},
    {Dom::Money, Op::Sub, "buys a {I} that costs {M}", "bought a {I} that cost {M}"},
    {Dom::Money, Op::Sub, "spends another {M}", "spent another {M}"},
    {Dom::Money, Op::Sub, "donates {M} to charity", "donated {M} to charity"},
    {Dom::Money, Op::Sub, "lends {F} {M}", "lent {F} {M}"},
    {Dom::Money, Op::Add, "gives {P} {M}", "gave {P} {M}", 0, false, true},
    {Dom::Money, Op::Add, "pays {P} {M} for helping", "paid {P} {M} for helping", 0, false, true},
    {Dom::Money, Op::Add, "sends {P} {M}", "sent {P} {M}", 0, false, true},
    {Dom::Money, Op::Sub, "borrows {M} from {P}", "borrowed {M} from {P}", 0, false, true},
    {Dom::Money, Op::Sub, "charges {P} {M} for a {I}", "charged {P} {M} for a {I}", 0, false, true},
    {Dom::Money, Op::Start, "There is {M} in {P}'s wallet", "There was {M} in {P}'s wallet", 0, false, true},
    {Dom::Money, Op::Start, "{P}'s piggy bank holds {M}", "{P}'s piggy bank held {M}", 0, false, true},
    {Dom::Money, Op::Start, "begins the week with {M}", "began the week with {M}"},
    // ---- pages read (a running total)
    {Dom::Pages, Op::GroupStart, "reads {N} pages a day for {K} days", "read {N} pages a day for {K} days"},
    {Dom::Pages, Op::Start, "reads {N} pages on Monday", "read {N} pages on Monday"},
    {Dom::Pages, Op::Start, "has read {N} pages of a book", "had read {N} pages of a book"},
    {Dom::Pages, Op::Add, "reads {N} more pages on Tuesday", "read {N} more pages on Tuesday"},
    {Dom::Pages, Op::Add, "reads {N} more pages", "read {N} more pages"},
    {Dom::Pages, Op::Add, "reads another {N} pages", "read another {N} pages"},
    {Dom::Pages, Op::GroupAdd, "reads {N} pages a day for {K} days", "read {N} pages a day for {K} days"},
    {Dom::Pages, Op::More, "reads {N} more pages than {P}", "read {N} more pages than {P}"},
    {Dom::Pages, Op::Fewer, "reads {N} fewer pages than {P}", "read {N} fewer pages than {P}"},
    {Dom::Pages, Op::Times, "reads twice as many pages as {P}", "read twice as many pages as {P}", 2},
    // ---- miles walked, run or driven (a running total)
    {Dom::Miles, Op::GroupStart, "walks {N} miles a day for {K} days", "walked {N} miles a day for {K} days"},
    {Dom::Miles, Op::GroupStart, "cycles {N} miles every day for {K} days", "cycled {N} miles every day for {K} days"},
    {Dom::Miles, Op::Start, "walks {N} miles on Monday", "walked {N} miles on Monday"},
    {Dom::Miles, Op::Start, "runs {N} miles in the morning", "ran {N} miles in the morning"},
    {Dom::Miles, Op::Start, "drives {N} miles", "drove {N} miles"},
    {Dom::Miles, Op::Add, "walks {N} more miles", "walked {N} more miles"},
    {Dom::Miles, Op::Add, "runs {N} more miles in the evening", "ran {N} more miles in the evening"},
    {Dom::Miles, Op::Add, "drives another {N} miles", "drove another {N} miles"},
    {Dom::Miles, Op::GroupAdd, "walks {N} miles a day for {K} days", "walked {N} miles a day for {K} days"},
    {Dom::Miles, Op::More, "walks {N} more miles than {P}", "walked {N} more miles than {P}"},
    {Dom::Miles, Op::Fewer, "walks {N} fewer miles than {P}", "walked {N} fewer miles than {P}"},
    {Dom::Miles, Op::Times, "walks twice as far as {P}", "walked twice as far as {P}", 2},
    {Dom::Miles, Op::Start, "jogs {N} miles", "jogged {N} miles"},
    {Dom::Miles, Op::Start, "hikes {N} miles on Saturday", "hiked {N} miles on Saturday"},
    {Dom::Miles, Op::Add, "bikes {N} more miles", "biked {N} more miles"},
    {Dom::Miles, Op::Add, "hikes another {N} miles", "hiked another {N} miles"},
    {Dom::Miles, Op::Add, "jogs {N} more miles", "jogged {N} more miles"},
    {Dom::Pages, Op::Add, "finishes {N} more pages", "finished {N} more pages"},
    {Dom::Pages, Op::Add, "reads another {N} pages in the evening", "read another {N} pages in the evening"},
    {Dom::Pages, Op::Start, "reads {N} pages of a novel", "read {N} pages of a novel"},
};

// Final questions about one person ({P} the name, {he} the pronoun) and about two ({P0} {P1}).
struct Final {
  Dom dom;
  bool together;
  const char* pres;
  const char* past;
};
const std::vector<Final> kFinals = {
    {Dom::Objects, false, "How many {O} does {P} have now?", "How many {O} does {P} have now?"},
    {Dom::Objects, false, "How many {O} does {he} have now?", "How many {O} did {he} have then?"},
    {Dom::Objects, false, "How many {O} does {P} have left?", "How many {O} did {P} have left?"},
    {Dom::Objects, false, "How many does {he} have now?", "How many does {he} have now?"},
    {Dom::Objects, false, "How many {O} are left?", "How many {O} were left?"},
    {Dom::Objects, false, "How many {O} does {P} end up with?", "How many {O} did {P} end up with?"},
    {Dom::Objects, false, "How many {O} does {P} have?", "How many {O} did {P} have in the end?"},
    {Dom::Objects, false, "How many {O} does {P} have in the end?", "How many {O} did {P} have at the end?"},
    {Dom::Objects, false, "What is the number of {O} {P} has now?", "How many {O} does {P} have now?"},
    {Dom::Objects, true, "How many {O} do {P0} and {P1} have together?", "How many {O} did {P0} and {P1} have together?"},
    {Dom::Objects, true, "How many {O} do they have altogether?", "How many {O} did they have altogether?"},
    {Dom::Objects, true, "How many {O} do they have in total?", "How many {O} did they have in total?"},
    {Dom::Money, false, "How much money does {P} have now?", "How much money does {P} have now?"},
    {Dom::Money, false, "How much money does {he} have left?", "How much money did {he} have left?"},
    {Dom::Money, false, "How much does {P} have now?", "How much did {P} have then?"},
    {Dom::Money, false, "How many dollars does {P} have?", "How many dollars did {P} have in the end?"},
    {Dom::Money, false, "How much money is left?", "How much money was left?"},
    {Dom::Money, true, "How much money do {P0} and {P1} have together?", "How much money did {P0} and {P1} have together?"},
    {Dom::Money, true, "How much money do they have in total?", "How much money did they have in total?"},
    {Dom::Pages, false, "How many pages does {P} read in total?", "How many pages did {P} read in total?"},
    {Dom::Pages, false, "How many pages has {he} read?", "How many pages had {he} read?"},
    {Dom::Pages, true, "How many pages do {P0} and {P1} read together?", "How many pages did {P0} and {P1} read together?"},
    {Dom::Pages, true, "How many pages do they read altogether?", "How many pages did they read altogether?"},
    {Dom::Miles, false, "How many miles does {P} go in total?", "How many miles did {P} go in total?"},
    {Dom::Miles, false, "How far does {he} go altogether?", "How far did {he} go altogether?"},
    {Dom::Miles, true, "How many miles do {P0} and {P1} cover together?", "How many miles did {P0} and {P1} cover together?"},
    {Dom::Miles, true, "How many miles do they cover in total?", "How many miles did they cover in total?"},
    {Dom::Objects, false, "How many {O} remain?", "How many {O} remained?"},
    {Dom::Objects, false, "How many {O} does {P} still have?", "How many {O} did {P} still have?"},
    {Dom::Objects, false, "How many {O} is {P} left with?", "How many {O} was {P} left with?"},
    {Dom::Objects, false, "How many {O} are there now?", "How many {O} were there then?"},
    {Dom::Objects, false, "How many {O} does {P} have at the end?", "How many {O} did {P} have at the end?"},
    {Dom::Objects, false, "How many {O} now?", "How many {O} then?"},
    {Dom::Objects, false, "So how many {O} does {P} have?", "So how many {O} did {P} have?"},
    {Dom::Objects, false, "how many {O} does {P} have now", "how many {O} did {P} have"},
    {Dom::Objects, true, "How many {O} do {P0} and {P1} have combined?", "How many {O} did {P0} and {P1} have combined?"},
    {Dom::Objects, true, "How many {O} do the two of them have?", "How many {O} did the two of them have?"},
    {Dom::Objects, true, "How many {O} do they have in all?", "How many {O} did they have in all?"},
    {Dom::Money, false, "How much money remains?", "How much money remained?"},
    {Dom::Money, false, "How much does {he} have left?", "How much did {he} have left?"},
    {Dom::Money, false, "How many dollars are left?", "How many dollars were left?"},
    {Dom::Money, true, "How much money do they have combined?", "How much money did they have combined?"},
    {Dom::Pages, false, "How many pages is that in all?", "How many pages was that in all?"},
    {Dom::Miles, false, "How many miles is that altogether?", "How many miles was that altogether?"},
};

// Sentences that change nothing: {X} another person, {O2} other objects, {P} the subject.
const std::vector<const char*> kDistractors = {
    "{X} has {N} {O2}.",         "{P} is {N} years old.",        "{X} lives {N} miles away.",
    "{X} buys {N} {O2}.",        "{P}'s friend {X} likes {O2}.", "It is a sunny day.",
    "{X} is {N} years old.",     "{P} has a dog named Rex.",     "The shop opens at 9.",
    "{X} reads {N} pages of a comic."};

// Sentences that open a story and change nothing ("Kai is saving for a bike."): {P} the subject.
const std::vector<const char*> kIntros = {
    "{P} is saving for a bike.", "{P} loves {O}.",          "{P} goes to the market.", "It is {P}'s birthday.",
    "{P} is cleaning {his} room.", "{P} and {his} family go to the park.", "{P} wants to count {his} {O}.",
    "{P} is at the fair.",         "{P} likes to collect {O}.",     "School is over for the day."};

const std::vector<const char*> kPrefixes = {"", "", "", "", "Question: ", "Q: ", "Please solve: ", "Help me with this: "};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

std::string capitalize(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string lowercase_first(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && !(s.size() > 1 && s[1] == ' ')) s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

std::string eq(int a, char op, int b, int r) {
  return std::to_string(a) + " " + op + " " + std::to_string(b) + " = " + std::to_string(r);
}

// ---------------------------------------------------------------------------------------------
// Bare arithmetic.
const char* op_word(char op, Rng& rng) {
  switch (op) {
    case '+': return rng.chance(70) ? "plus" : rng.chance(50) ? "and" : "added to";
    case '-': return rng.chance(80) ? "minus" : "take away";
    case '*': return rng.chance(70) ? "times" : "multiplied by";
    default: return "divided by";
  }
}

std::string op_symbol(char op, Rng& rng) {
  if (op == '*' && rng.chance(25)) return "x";
  return std::string(1, op);
}

// Two operands of op with a result in [0, 198]; returns {a, b}.
std::pair<int, int> operands(char op, Rng& rng) {
  switch (op) {
    case '+': return {rng.uniform(2, 99), rng.uniform(2, 99)};
    case '-': {
      const int a = rng.uniform(3, 99);
      return {a, rng.uniform(1, a - 1)};
    }
    case '*':
      if (rng.chance(60)) return {rng.uniform(2, 12), rng.uniform(2, 12)};
      return {rng.uniform(2, 25), rng.uniform(2, 4)};
    default: {
      const int b = rng.uniform(2, 9);
      return {b * rng.uniform(2, 12), b};
    }
  }
}

// All lower case, no final punctuation.
void typed_quickly(std::string& text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text.back() == '?' || text.back() == '.') text.pop_back();
}

// "What is 45 - 18 * 2?", "Compute (14 + 6) * 3 =": an expression asked for as people type it.
std::string expression_question(Rng& rng, const std::string& expr) {
  const std::vector<std::string> pre = {"What is ", "Compute ", "Calculate ", "", "Evaluate ", "What's ", "Work out "};
  const std::string p = rng.pick(pre);
  const std::string q = p.rfind("What", 0) == 0 ? "?" : rng.pick(std::vector<std::string>{"", "?", " =", "."});
  return p + expr + q;
}

// Operations said one after another in words and done in that order ("Take 18 away from 40 and then
// add 5.", "Start with 20, add 15, subtract 9 and then double it."): left to right, whatever the
// operators, unlike the symbols.
bool build_chain(Rng& rng, int n_ops, Item& item) {
  const char ops[] = {'+', '-', '*', '/'};
  int v = 0;
  std::vector<std::string> phrases;  // one per operation after the first number
  std::string opening;               // the first operation with both its numbers ("subtract 18 from 40")
  for (int i = 0; i < n_ops; ++i) {
    const char op = ops[rng.uniform(0, 3)];
    int a = v, b = 0;
    if (i == 0) {
      std::tie(a, b) = operands(op, rng);
    } else {
      switch (op) {
        case '+': b = rng.uniform(2, 60); break;
        case '-':
          if (v < 3) return false;
          b = rng.uniform(1, v - 1);
          break;
        case '*': b = rng.uniform(2, 5); break;
        default: {
          std::vector<int> ks;
          for (int k = 2; k <= 9; ++k)
            if (v % k == 0 && v / k >= 1) ks.push_back(k);
          if (ks.empty()) return false;
          b = rng.pick(ks);
        }
      }
    }
    const int r = op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : a / b;
    if (r < 0 || r > 198) return false;
    item.worked.push_back({op, a, b, r, ""});
    const std::string A = std::to_string(a), B = std::to_string(b);
    if (i == 0) {
      switch (op) {
        case '+': opening = rng.pick(std::vector<std::string>{"add " + B + " to " + A, "add " + A + " and " + B}); break;
        case '-': opening = rng.pick(std::vector<std::string>{"take " + B + " away from " + A, "subtract " + B + " from " + A}); break;
        case '*': opening = "multiply " + A + " by " + B; break;
        default: opening = "divide " + A + " by " + B;
      }
    }
    switch (op) {
      case '+': phrases.push_back(rng.pick(std::vector<std::string>{"add " + B, "add " + B + " more", "add " + B + " to it"})); break;
      case '-': phrases.push_back(rng.pick(std::vector<std::string>{"subtract " + B, "take away " + B, "take " + B + " away"})); break;
      case '*':
        phrases.push_back(b == 2 && rng.chance(60)   ? std::string("double it")
                          : b == 3 && rng.chance(60) ? std::string("triple it")
                                                     : rng.pick(std::vector<std::string>{"multiply by " + B, "multiply it by " + B}));
        break;
      default:
        phrases.push_back(b == 2 && rng.chance(60) ? std::string("halve it")
                                                   : rng.pick(std::vector<std::string>{"divide by " + B, "divide it by " + B,
                                                                                       "split it into " + B + " equal parts"}));
    }
    v = r;
  }
  const std::string first = std::to_string(item.worked[0].a);
  // "x, y and then z" over the operations from `from` on
  auto listed = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < phrases.size(); ++i) {
      if (i > from) s += i + 1 == phrases.size() ? rng.pick(std::vector<std::string>{" and then ", ", then ", " and "}) : ", ";
      s += phrases[i];
    }
    return s;
  };
  const std::vector<std::string> asks = {"", " What do you get?", " What is the result?", " What number do you end up with?"};
  std::string text;
  switch (rng.uniform(0, 3)) {
    case 0: text = "Start with " + first + ", " + listed(0) + "." + rng.pick(asks); break;
    case 1: text = capitalize(opening) + (rng.chance(50) ? " and then " : ", then ") + listed(1) + "." + rng.pick(asks); break;
    case 2: {
      text = rng.pick(std::vector<std::string>{"Think of ", "Take ", "Start with "}) + first + ".";
      for (auto& p : phrases) text.append(" ").append(capitalize(p)).append(".");
      text += rng.pick(std::vector<std::string>{" What do you get?", " What is the answer?", " What number is it now?"});
      break;
    }
    default: text = "If you " + opening + " and then " + listed(1) + ", what do you get?";
  }
  if (rng.chance(8)) typed_quickly(text);
  item.user_text = text;
  return true;
}

bool build_arithmetic(Rng& rng, int steps, Item& item) {
  const char ops[] = {'+', '-', '*', '/'};
  const int n_ops = steps;
  if (n_ops > 3) return false;
  if (n_ops == 1) {
    const char op = ops[rng.uniform(0, 3)];
    auto [a, b] = operands(op, rng);
    const int r = op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : a / b;
    item.worked.push_back({op, a, b, r, ""});
    std::string text;
    const std::string A = std::to_string(a), B = std::to_string(b);
    switch (rng.uniform(0, 5)) {
      case 0: {  // a verbal instruction or question
        switch (op) {
          case '+': text = rng.pick(std::vector<std::string>{"Add " + A + " and " + B + ".", "What is the sum of " + A + " and " + B + "?",
                                                               "What do you get if you add " + A + " and " + B + "?", "What is " + B + " more than " + A + "?",
                                                               "Find the sum of " + A + " and " + B + ".", "What is the total of " + A + " and " + B + "?",
                                                               "If you add " + B + " to " + A + ", what do you get?", "Add " + B + " to " + A + ".",
                                                               "What number is " + B + " more than " + A + "?", A + " and " + B + " added together is what?"});
            break;
          case '-': text = rng.pick(std::vector<std::string>{"Subtract " + B + " from " + A + ".", "What is the difference between " + A + " and " + B + "?",
                                                               "What is " + B + " less than " + A + "?", "Take " + B + " away from " + A + ".",
                                                               "If you take " + B + " from " + A + ", what is left?", "What is " + A + " take away " + B + "?",
                                                               "How much is " + A + " minus " + B + "?", "What do you get when you subtract " + B + " from " + A + "?"});
            break;
          case '*': text = rng.pick(std::vector<std::string>{"Multiply " + A + " by " + B + ".", "What is the product of " + A + " and " + B + "?",
                                                               "What is " + A + " multiplied by " + B + "?", "What do you get when you multiply " + A + " by " + B + "?",
                                                               "What is " + B + " times " + A + "?", "How much is " + A + " times " + B + "?",
                                                               b == 2 ? "What is double " + A + "?" : "What is " + B + " lots of " + A + "?",
                                                               b == 2 ? "What is twice " + A + "?" : "Multiply " + B + " and " + A + "."});
            break;
          default: text = rng.pick(std::vector<std::string>{"Divide " + A + " by " + B + ".", "What is " + A + " divided by " + B + "?",
                                                              "How many times does " + B + " go into " + A + "?",
                                                              "If you split " + A + " into " + B + " equal parts, how big is each part?",
                                                              "What do you get when you divide " + A + " by " + B + "?",
                                                              b == 2 ? "What is half of " + A + "?" : "How much is " + A + " divided by " + B + "?"});
        }
        break;
      }
      case 1: text = A + " " + op_word(op, rng) + " " + B; break;
      default: {
        const bool spaced = rng.chance(50);
        const std::string sym = op_symbol(op, rng);
        text = spaced ? A + " " + sym + " " + B : A + sym + B;
      }
    }
    if (text.back() != '.' && text.back() != '?') {
      const std::vector<std::string> pre = {"What is ", "What's ", "Compute ", "Calculate ", "How much is ", "", "", "Solve ",
                                            "what is ", "Please calculate ", "Can you work out ", "Tell me ", "Find ",
                                            "What does "};
      const std::string p = rng.pick(pre);
      const std::vector<std::string> post = {"?", "", " =", " = ?", ".", "?", " please", "? Thanks"};
      std::string q = rng.pick(post);
      if (p == "What does ") q = rng.pick(std::vector<std::string>{" equal?", " come to?", " make?"});
      else if (p.rfind("What", 0) == 0 || p.rfind("what", 0) == 0 || p.rfind("How", 0) == 0 || p.rfind("Can", 0) == 0) q = "?";
      text = p + text + q;
    }
    if (rng.chance(8)) typed_quickly(text);
    item.user_text = text;
  } else if (rng.chance(25)) {
    if (!build_chain(rng, n_ops, item)) return false;
  } else if (n_ops == 2 && rng.chance(25)) {
    // A bracket, computed first whatever the operators: "(14 + 6) * 3", "60 / (2 + 3)".
    const char inner = ops[rng.uniform(0, 3)], outer = ops[rng.uniform(0, 3)];
    auto [a, b] = operands(inner, rng);
    const int r1 = inner == '+' ? a + b : inner == '-' ? a - b : inner == '*' ? a * b : a / b;
    const bool bracket_first = rng.chance(60);  // "(a op b) op c" or "c op (a op b)"
    int c = 0;
    switch (outer) {
      case '+': c = rng.uniform(2, 60); break;
      case '-':
        if (bracket_first && r1 < 3) return false;
        c = bracket_first ? rng.uniform(1, r1 - 1) : r1 + rng.uniform(1, 60);
        break;
      case '*': c = rng.uniform(2, 9); break;
      default:
        if (r1 < 2) return false;
        c = bracket_first ? rng.uniform(2, 9) : r1 * rng.uniform(2, 12);
        if (bracket_first && r1 % c != 0) return false;
    }
    if (c > 198) return false;  // every number said or computed stays in [0, 198]
    const int x = bracket_first ? r1 : c, y = bracket_first ? c : r1;
    const int r = outer == '+' ? x + y : outer == '-' ? x - y : outer == '*' ? x * y : x / y;
    item.worked.push_back({inner, a, b, r1, ""});
    item.worked.push_back({outer, x, y, r, ""});
    const std::string sp = rng.chance(60) ? " " : "";
    const std::string bracket = "(" + std::to_string(a) + sp + op_symbol(inner, rng) + sp + std::to_string(b) + ")";
    const std::string o = sp + op_symbol(outer, rng) + sp;
    const std::string expr = bracket_first ? bracket + o + std::to_string(c) : std::to_string(c) + o + bracket;
    item.user_text = expression_question(rng, expr);
  } else {
    // a op1 b op2 c [op3 d], evaluated with the usual precedence; every value in [0, 198].
    std::vector<int> vals;
    std::vector<char> os;
    vals.push_back(rng.uniform(2, 60));
    for (int i = 0; i < n_ops; ++i) {
      os.push_back(ops[rng.uniform(0, 3)]);
      vals.push_back(os.back() == '*' || os.back() == '/' ? rng.uniform(2, 9) : rng.uniform(2, 60));
    }
    // Multiplications and divisions first, left to right, then additions and subtractions.
    std::vector<int> v = vals;
    std::vector<char> o = os;
    for (size_t i = 0; i < o.size();) {
      if (o[i] == '*' || o[i] == '/') {
        const int a = v[i], b = v[i + 1];
        if (o[i] == '*' ? a * b > 198 : a % b != 0) return false;
        const int r = o[i] == '*' ? a * b : a / b;
        item.worked.push_back({o[i], a, b, r, ""});
        v[i] = r;
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        o.erase(o.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    while (!o.empty()) {
      const int a = v[0], b = v[1];
      const int r = o[0] == '+' ? a + b : a - b;
      if (r < 0 || r > 198) return false;
      item.worked.push_back({o[0], a, b, r, ""});
      v[0] = r;
      v.erase(v.begin() + 1);
      o.erase(o.begin());
    }
    std::string expr = std::to_string(vals[0]);
    const int form = rng.uniform(0, 9);
    for (size_t i = 0; i < os.size(); ++i) {
      if (form < 2) expr += std::string(" ") + op_word(os[i], rng) + " ";
      else if (form < 6) expr.append(" ").append(op_symbol(os[i], rng)).append(" ");
      else expr += op_symbol(os[i], rng);
      expr += std::to_string(vals[i + 1]);
    }
    item.user_text = expression_question(rng, expr);
  }
  for (auto& s : item.worked) {
    if (s.result < 0 || s.result > 198) return false;
    s.sentence = eq(s.a, s.op, s.b, s.result) + ".";
    item.reasoning.push_back(s.sentence);
  }
  item.answer = item.worked.back().result;
  item.steps = static_cast<int>(item.worked.size());
  item.question = item.user_text;
  item.final_question = item.user_text;
  return item.steps == steps;
}

// ---------------------------------------------------------------------------------------------
// Stories.

// "$12" or "12 dollars".
std::string money_text(int n, bool dollar_sign) {
  std::string s = std::to_string(n);
  if (dollar_sign) s.insert(s.begin(), '$');  // (not "$" + s: GCC 12 warns -Wrestrict on it, falsely)
  else s += " dollars";
  return s;
}
struct Clause {
  int subject = -1;  // index into the story's people; -1: no person (a scene sentence)
  std::string vp;    // the verb phrase, or the whole sentence when subject < 0
  bool counts = true;
  bool lead = true;  // may open with "Then", "Later, " ... (not a second person's own amount)
  // Said as the end of the sentence before (", who has 26.", ", which is 7 fewer than Nikolai.").
  bool joined = false;
  // Its reasoning needs the next clause's amount ("Pedro has 3 times as many coins as Hannah.
  // Hannah has 15 coins."): the next clause is reasoned first.
  bool after_next = false;
};

// "buys 12 more and keeps one" -> "buy 12 more and keep one": a verb phrase of the third person
// said by "I" (present tense; past forms are the same for everyone).
std::string first_person_verb(const std::string& w) {
  if (w == "has") return "have";
  if (w == "is") return "am";
  if (w == "does") return "do";
  if (w == "goes") return "go";
  if (w == "was" || w.size() < 3 || w.back() != 's') return w;
  if (w.ends_with("ies")) return w.substr(0, w.size() - 3) + "y";
  for (const char* e : {"ches", "shes", "sses", "xes", "zes"})
    if (w.ends_with(e)) return w.substr(0, w.size() - 2);
  return w.substr(0, w.size() - 1);
}
std::string first_person_vp(const std::string& vp) {
  std::string out;
  bool verb = true;  // the first word, and the first after " and "
  for (size_t i = 0; i < vp.size();) {
    const size_t e = std::min(vp.find(' ', i), vp.size());
    const std::string w = vp.substr(i, e - i);
    out += verb ? first_person_verb(w) : w;
    verb = w == "and" || w == "then";
    if (e < vp.size()) out += ' ';
    i = e + 1;
  }
  return out;
}
// The story's teller in a template: "does {P} have" -> "do I have", "{P}'s" -> "my", "gives {P}"
// -> "gives me"; a sentence that opens with "{P}" has its verb said by "I".
void first_person(std::string& s) {
  replace_all(s, "{P} and {his} family", "my family and I");
  replace_all(s, "{P}'s", "my");
  for (const char* who : {"{P}", "{he}"}) {
    const std::string w = who;
    replace_all(s, " does " + w, " do I");
    replace_all(s, " did " + w, " did I");
    replace_all(s, " is " + w, " am I");
    replace_all(s, " was " + w, " was I");
    replace_all(s, " has " + w, " have I");
    replace_all(s, " had " + w, " had I");
  }
  if (s.starts_with("{P} ")) s = "I " + first_person_vp(s.substr(4));
  replace_all(s, "{P} has", "I have");
  replace_all(s, "{P} is", "I am");
  replace_all(s, "{P}", "me");
  replace_all(s, "{him}", "me");
  replace_all(s, "{his}", "my");
  replace_all(s, "{he}", "I");
}

// Shares of stories whose people and objects are invented words (see invented_word).
constexpr int kInventedNamePercent = 35;
constexpr int kInventedObjectPercent = 30;
// Share of stories told by "I" ("I had 50 candies and ate 12. How many are left?").
constexpr int kNarratorPercent = 12;

struct Story {
  Rng& rng;
  Dom dom;
  bool past;
  std::vector<Person> people;
  std::string O, I, Is;
  bool food = false;
  bool dollar_sign = true;
  int narrator = -1;  // the person who tells the story ("I"), or -1

  int add_person() {
    for (;;) {
      const Person p = rng.chance(kInventedNamePercent) ? invented_person(rng) : rng.pick(kPeople);
      bool used = false;
      for (auto& q : people) used |= q.name == p.name;
      if (!used) {
        people.push_back(p);
        return static_cast<int>(people.size()) - 1;
      }
    }
  }
  std::string money(int n) const { return money_text(n, dollar_sign); }
  std::string unit() const {
    switch (dom) {
      case Dom::Objects: return O;
      case Dom::Money: return "dollars";
      case Dom::Pages: return "pages";
      case Dom::Miles: return "miles";
    }
    return "";
  }
  std::string fill(std::string s, int subj, int other, int n, int k) const {
    if (subj >= 0 && subj == narrator) first_person(s);  // before the objects' words go in
    replace_all(s, "{M}", money(n));
    replace_all(s, "{Km1} friends", k == 2 ? "a friend" : std::to_string(k - 1) + " friends");
    replace_all(s, "{N}", std::to_string(n));
    replace_all(s, "{K}", std::to_string(k));
    replace_all(s, "{O}", O);
    replace_all(s, "{Is}", Is);
    replace_all(s, "{I}", I);
    if (subj >= 0) {
      replace_all(s, "{him}", people[subj].female ? "her" : "him");
      replace_all(s, "{his}", people[subj].female ? "her" : "his");
      replace_all(s, "{he}", people[subj].female ? "she" : "he");
      replace_all(s, "{P}", people[subj].name);
    }
    if (other >= 0) replace_all(s, "{F}", people[other].name);
    return s;
  }
  const Phrase* phrase(Op op, int k, bool allow_other = true) {
    std::vector<const Phrase*> c;
    for (auto& p : kPhrases)
      if (p.dom == dom && p.op == op && (!p.food || food) && (k == 0 || p.k == 0 || p.k == k) && (allow_other || !p.by_other))
        c.push_back(&p);
    if (c.empty()) return nullptr;
    return c[rng.next() % c.size()];
  }
};

// The canonical reasoning clause "Tom has 12 + 5 = 17 apples".
std::string has(const Story& st, int who, const std::string& e) {
  return st.people[who].name + (who == st.narrator ? " have " : " has ") + e + " " + st.unit();
}
// "Marco and Aisha", "Marco and I" (the teller last).
std::string two_names(const Story& st, int a, int b) {
  if (a == st.narrator) std::swap(a, b);
  return st.people[a].name + " and " + st.people[b].name;
}

bool build_story(Rng& rng, int steps, Item& item) {
  const int droll = rng.uniform(0, 19);
  const Dom dom = droll < 11 ? Dom::Objects : droll < 16 ? Dom::Money : droll < 18 ? Dom::Pages : Dom::Miles;
  Story st{rng, dom, rng.chance(35), {}, "", "", "", false, rng.chance(65)};
  if (rng.chance(kInventedObjectPercent)) {
    st.O = invented_objects(rng);
  } else {
    const Obj& obj = rng.pick(kObjs);
    st.O = obj.many;
    st.food = obj.food;
  }
  const Thing& th = rng.pick(kThings);
  st.I = th.one;
  st.Is = th.many;
  const bool accumulate = dom == Dom::Pages || dom == Dom::Miles;

  std::vector<Clause> clauses;
  std::vector<std::pair<int, std::string>> reasons;  // clause index (-1: after all) and its reasoning
  std::vector<int> step_clause;                       // the clause of each worked step (-1: the total)
  int P = st.add_person();
  if (rng.chance(kNarratorPercent)) {
    st.people[P] = Person{"I", false};
    st.narrator = P;
  }
  int v = dom == Dom::Money ? rng.uniform(5, 80) : rng.uniform(2, 50);
  int remaining = steps;
  if (rng.chance(15)) {  // the first statement is a product: it is the first step
    const int k = rng.uniform(2, 7), n = rng.uniform(2, 12);
    const Phrase* ph = st.phrase(Op::GroupStart, 0);
    v = k * n;
    clauses.push_back({P, st.fill(st.past ? ph->past : ph->pres, P, -1, n, k)});
    item.worked.push_back({'*', k, n, v, ""});
    step_clause.push_back(0);
    reasons.emplace_back(0, has(st, P, eq(k, '*', n, v)));
    remaining -= 1;
  } else {
    const Phrase* start = st.phrase(Op::Start, 0);
    clauses.push_back({start->by_other ? -1 : P, st.fill(st.past ? start->past : start->pres, P, -1, v, 0)});
    reasons.emplace_back(0, has(st, P, std::to_string(v)));
  }
  bool shared = false;  // the story ended with a Share: the question asks for one share
  int prev_subject = -1, prev_value = 0;
  bool last_compare = false, together = false;
  bool others_act = false;  // someone else acts on the subject: "he" in the question could be them
  bool after_sub = false;  // the last event took something away
  auto step = [&](char op, int a, int b, int r, std::string text) {
    after_sub = op == '-';
    item.worked.push_back({op, a, b, r, ""});
    step_clause.push_back(static_cast<int>(clauses.size()) - 1);
    reasons.emplace_back(static_cast<int>(clauses.size()) - 1, std::move(text));
  };
  while (remaining > 0) {
    struct Option {
      Op op;
      int weight;
    };
    std::vector<Option> opts;
    if (v + 2 <= kMaxValue) opts.push_back({Op::Add, accumulate ? 50 : 30});
    if (!accumulate && v >= 4) opts.push_back({Op::Sub, 30});
    if (!accumulate && v * 2 <= kMaxValue) opts.push_back({Op::Mul, 12});
    if (!accumulate && v % 2 == 0 && v >= 4) opts.push_back({Op::Div, 15});
    if (remaining >= 2 && v + 4 <= kMaxValue) opts.push_back({Op::GroupAdd, 12});
    if (!accumulate && remaining >= 2 && v >= 6) opts.push_back({Op::GroupSub, 10});
    if (remaining >= 2 && v + 4 <= kMaxValue) opts.push_back({Op::TwoAdd, 7});
    if (!accumulate && remaining >= 2 && v >= 8) opts.push_back({Op::TwoSub, 7});
    if (v + 2 <= kMaxValue) opts.push_back({Op::More, 10});
    if (v >= 4) opts.push_back({Op::Fewer, 10});
    if (v * 2 <= kMaxValue) opts.push_back({Op::Times, 6});
    if (remaining == 1 && last_compare && v + prev_value <= kMaxValue) opts.push_back({Op::Start, 60});  // together
    // another person with an amount of their own ("Marco has 47 cards and Aisha has 36 cards."), then the total
    if (remaining == 1 && !last_compare && prev_subject < 0 && !others_act && v + 4 <= kMaxValue)
      opts.push_back({Op::OwnAmount, 12});
    if (remaining == 1 && dom != Dom::Pages && dom != Dom::Miles && v >= 4) opts.push_back({Op::Share, 14});
    int total = 0;
    for (auto& o : opts) total += o.weight;
    if (total == 0) return false;
    int roll = rng.uniform(0, total - 1);
    Op op = opts.back().op;
    for (auto& o : opts) {
      if (roll < o.weight) {
        op = o.op;
        break;
      }
      roll -= o.weight;
    }
    last_compare = false;
    if (op == Op::Start) {  // the final question asks for the total of the two people
      const int r = prev_value + v;
      item.worked.push_back({'+', prev_value, v, r, ""});
      step_clause.push_back(-1);
      reasons.emplace_back(-1, "Together, " + two_names(st, prev_subject, P) + " have " + eq(prev_value, '+', v, r) + " " +
                                   st.unit() + ".");
      v = r;
      together = true;
      remaining -= 1;
      continue;
    }
    if (op == Op::OwnAmount) {
      const int G = st.add_person();
      const int n = rng.uniform(2, std::min(60, kMaxValue - v));
      const Phrase* start = st.phrase(Op::Start, 0, false);
      clauses.push_back({G, st.fill(st.past ? start->past : start->pres, G, -1, n, 0), true, false});
      reasons.emplace_back(static_cast<int>(clauses.size()) - 1, has(st, G, std::to_string(n)));
      const int r = v + n;
      item.worked.push_back({'+', v, n, r, ""});
      step_clause.push_back(-1);
      reasons.emplace_back(-1, "Together, " + two_names(st, P, G) + " have " + eq(v, '+', n, r) + " " + st.unit() + ".");
      prev_subject = P;
      P = G;
      v = r;
      together = true;
      remaining -= 1;
      continue;
    }
    if (op == Op::Share) {
      std::vector<int> ks;
      for (int d = 2; d <= 8; ++d)
        if (v % d == 0 && v / d >= 2) ks.push_back(d);
      if (ks.empty()) return false;
      const int k = rng.pick(ks);
      // "the rest" only right after something was taken away
      auto out_of_place = [&](const Phrase* p) { return !after_sub && std::string_view(p->pres).find("the rest") != std::string_view::npos; };
      const Phrase* ph = st.phrase(Op::Share, 0);
      for (int t = 0; t < 8 && out_of_place(ph); ++t) ph = st.phrase(Op::Share, 0);
      if (out_of_place(ph)) return false;
      clauses.push_back({P, st.fill(st.past ? ph->past : ph->pres, P, -1, 0, k)});
      std::string what = ph->pres;
      what = what.find("bags") != std::string::npos ? "each bag" : what.find("boxes") != std::string::npos ? "each box"
           : what.find("bowls") != std::string::npos ? "each bowl"
           : what.find("kids") != std::string::npos ? "each kid" : what.find("children") != std::string::npos ? "each child"
           : "each friend";
      step('/', v, k, v / k, capitalize(what) + " gets " + eq(v, '/', k, v / k) + " " + st.unit());
      v /= k;
      remaining -= 1;
      shared = true;
      // The question names the share: "How many pencils does each friend get?"
      item.final_question = dom == Dom::Money ? "How much money does " + what + " get?"
                                              : "How many " + st.O + " does " + what + " get?";
      if (what == "each bag" || what == "each box" || what == "each bowl")
        item.final_question = "How many " + st.O + " are in " + what + "?";
      continue;
    }
    int F = -1;
    auto other = [&] {
      if (F < 0) F = st.add_person();
      return F;
    };
    // The clause of an event phrase: said by the subject, or by someone else about the subject
    // ("Ana gives him 5 more"; "him" only right after a sentence about the subject).
    auto event_clause = [&](const Phrase* ph, std::string vp, int n, int k) {
      if (ph->by_other) {
        if (prev_subject < 0 && !clauses.empty() && clauses.back().subject == P && rng.chance(35)) {
          replace_all(vp, "{P}'s", "{his}");
          replace_all(vp, "{P}", "{him}");
        }
        const int by = other();
        clauses.push_back({by, st.fill(vp, P, -1, n, k)});
        others_act = true;
        return;
      }
      const bool needs_f = vp.find("{F}") != std::string::npos;
      clauses.push_back({P, st.fill(vp, P, needs_f ? other() : -1, n, k)});
    };
    switch (op) {
      case Op::Add:
      case Op::Sub: {
        const int n = op == Op::Add ? rng.uniform(2, std::min(30, kMaxValue - v)) : rng.uniform(2, std::min(30, v - 2));
        const Phrase* ph = st.phrase(op, 0);
        event_clause(ph, st.past ? ph->past : ph->pres, n, 0);
        const int r = op == Op::Add ? v + n : v - n;
        step(op == Op::Add ? '+' : '-', v, n, r, has(st, P, eq(v, op == Op::Add ? '+' : '-', n, r)));
        v = r;
        remaining -= 1;
        break;
      }
      case Op::Mul:
      case Op::Div: {
        int k = 0;
        if (op == Op::Mul) {
          k = rng.uniform(2, std::max(2, std::min(4, kMaxValue / v)));
        } else {
          std::vector<int> ks;
          for (int d = 2; d <= 4; ++d)
            if (v % d == 0 && v / d >= 2) ks.push_back(d);
          if (ks.empty()) return false;
          k = rng.pick(ks);
        }
        const Phrase* ph = st.phrase(op, k);
        if (!ph) return false;
        if (ph->k) k = ph->k;
        if (op == Op::Mul && v * k > kMaxValue) return false;
        if (op == Op::Div && (v % k != 0 || v / k < 2)) return false;
        event_clause(ph, st.past ? ph->past : ph->pres, 0, k);
        const char c = op == Op::Mul ? '*' : '/';
        const int r = op == Op::Mul ? v * k : v / k;
        step(c, v, k, r, has(st, P, eq(v, c, k, r)));
        v = r;
        remaining -= 1;
        break;
      }
      case Op::TwoAdd:
      case Op::TwoSub: {
        const bool add = op == Op::TwoAdd;
        const int room = add ? kMaxValue - v : v - 4;  // both amounts and what is left stay in range
        const int n1 = rng.uniform(2, std::max(2, std::min(30, room / 2))), n2 = rng.uniform(2, std::max(2, std::min(30, room - n1)));
        if (n1 + n2 > room) return false;
        const Phrase* ph = st.phrase(op, 0);
        if (!ph) return false;
        std::string vp = st.past ? ph->past : ph->pres;
        replace_all(vp, "{N2}", std::to_string(n2));
        replace_all(vp, "{M2}", st.money(n2));
        event_clause(ph, vp, n1, 0);
        const char c = add ? '+' : '-';
        const int r1 = add ? v + n1 : v - n1, r2 = add ? r1 + n2 : r1 - n2;
        step(c, v, n1, r1, has(st, P, eq(v, c, n1, r1)));
        step(c, r1, n2, r2, has(st, P, eq(r1, c, n2, r2)));
        v = r2;
        remaining -= 2;
        break;
      }
      case Op::GroupAdd:
      case Op::GroupSub: {
        int k = 0, n = 0;
        bool ok = false;
        for (int t = 0; t < 20 && !ok; ++t) {
          k = rng.uniform(2, 6);
          n = rng.uniform(2, dom == Dom::Money ? 15 : 12);
          ok = op == Op::GroupAdd ? v + k * n <= kMaxValue : k * n <= v - 2;
        }
        if (!ok) return false;
        const Phrase* ph = st.phrase(op, 0);
        if (!ph) return false;
        clauses.push_back({P, st.fill(st.past ? ph->past : ph->pres, P, -1, n, k)});
        const int t = k * n;
        step('*', k, n, t, "that is " + eq(k, '*', n, t) + " " + st.unit());
        if (op == Op::GroupAdd) {
          step('+', v, t, v + t, has(st, P, eq(v, '+', t, v + t)));
          v += t;
        } else {
          step('-', v, t, v - t, has(st, P, eq(v, '-', t, v - t)));
          v -= t;
        }
        remaining -= 2;
        break;
      }
      default: {  // More, Fewer, Times: another person, said relative to the subject
        int n = 0, k = 0, r = 0;
        char c = '+';
        if (op == Op::More) {
          n = rng.uniform(2, std::min(30, kMaxValue - v));
          r = v + n;
        } else if (op == Op::Fewer) {
          n = rng.uniform(2, std::min(30, v - 2));
          r = v - n;
          c = '-';
        } else {
          k = rng.uniform(2, std::max(2, std::min(4, kMaxValue / v)));
          c = '*';
        }
        const Phrase* ph = st.phrase(op, k);
        if (!ph) return false;
        if (ph->k) k = ph->k;
        if (op == Op::Times) {
          r = v * k;
          if (r > kMaxValue) return false;
        }
        const int G = st.add_person();
        const std::string reason = has(st, G, eq(v, c, op == Op::Times ? k : n, r));
        // Right after the subject's first amount, the comparison may be said from the other side
        // ("Farah has 18 plums, which is 7 fewer than Nikolai.") or before that amount ("Pedro has 3
        // times as many coins as Hannah. Hannah has 15 coins."): people give the known amount last.
        const bool first_amount = clauses.size() == 1 && clauses[0].subject == P && prev_subject < 0 && !others_act;
        const int form = first_amount ? rng.uniform(0, 99) : 99;
        std::string inverse;
        if (form < 22 && (dom == Dom::Objects || dom == Dom::Money)) {
          const std::string was = st.past ? "which was " : "which is ";
          const std::string g = st.people[G].name;
          const std::string amount = dom == Dom::Money ? st.money(n) : std::to_string(n);
          if (op == Op::More) inverse = was + amount + rng.pick(std::vector<std::string>{" fewer than ", " less than "}) + g;
          else if (op == Op::Fewer) inverse = was + amount + " more than " + g;
          else if (op == Op::Times && k == 2)
            inverse = dom == Dom::Money ? was + "half as much as " + g
                                        : was + rng.pick(std::vector<std::string>{"half as many as ", "half of what "}) + g;
          if (inverse.find("half of what ") != std::string::npos) inverse += st.past ? " had" : " has";
        }
        if (!inverse.empty()) {
          if (dom == Dom::Money) replace_all(inverse, " fewer than ", " less than ");
          clauses.push_back({G, inverse, true, false, true, false});
          step(c, v, op == Op::Times ? k : n, r, reason);
        } else {
          // The compare phrase is said by G about P: {P} is the subject's name, or a pronoun.
          std::string vp = st.past ? ph->past : ph->pres;
          const bool reversed = form < 45;
          if (!reversed && clauses.back().subject == P && rng.chance(30) && !others_act) replace_all(vp, "{P}", "{him}");
          vp = st.fill(vp, P, -1, n, k);
          if (reversed) {
            // The comparison first; the subject's amount, maybe as ", who has 26.", after it.
            const std::string p_name = st.people[P].name;
            const bool ends_with_name = vp.size() > p_name.size() && vp.compare(vp.size() - p_name.size(), p_name.size(), p_name) == 0;
            if (ends_with_name && item.worked.empty() && rng.chance(40)) {  // not when the amount was a product
              const std::string amount = dom == Dom::Money ? st.money(v) : std::to_string(v);
              const std::string who = st.past ? "who had " : "who has ";
              clauses[0].vp = dom == Dom::Pages ? (st.past ? "who read " : "who reads ") + amount
                            : dom == Dom::Miles ? (st.past ? "who walked " : "who walks ") + amount + " miles"
                            : who + amount;
              clauses[0].joined = true;
            }
            clauses.insert(clauses.begin(), Clause{G, vp, true, false, false, true});
            for (auto& rs : reasons) ++rs.first;
            for (auto& sc : step_clause) ++sc;
            item.worked.push_back({c, v, op == Op::Times ? k : n, r, ""});
            step_clause.push_back(0);
            reasons.emplace_back(0, reason);
            after_sub = false;
          } else {
            clauses.push_back({G, vp});
            step(c, v, op == Op::Times ? k : n, r, reason);
          }
        }
        prev_subject = P;
        prev_value = v;
        P = G;
        v = r;
        last_compare = true;
        remaining -= 1;
      }
    }
  }
  // A clause that changes nothing goes in at `at`: the clause indexes of the reasoning and the steps
  // after it move up by one.
  auto insert_clause = [&](size_t at, Clause d) {
    clauses.insert(clauses.begin() + static_cast<std::ptrdiff_t>(at), std::move(d));
    for (auto& r : reasons)
      if (r.first >= static_cast<int>(at)) ++r.first;
    for (auto& c : step_clause)
      if (c >= static_cast<int>(at)) ++c;
  };
  // Distractors: a sentence that changes nothing, or an event of the person no longer asked about.
  const size_t distractor_at = static_cast<size_t>(rng.uniform(1, static_cast<int>(clauses.size())));
  const bool splits_pair = distractor_at < clauses.size() && (clauses[distractor_at].joined || clauses[distractor_at - 1].after_next);
  if (rng.chance(35) && !splits_pair) {
    const size_t at = distractor_at;
    Clause d;
    d.counts = false;
    if (prev_subject >= 0 && !together && at == clauses.size() && rng.chance(50) && dom == Dom::Objects) {
      const Phrase* ph = st.phrase(Op::Add, 0, false);
      d.subject = prev_subject;
      const bool needs_f = std::string_view(ph->pres).find("{F}") != std::string_view::npos;
      int X = needs_f ? st.add_person() : -1;
      d.vp = st.fill(st.past ? ph->past : ph->pres, prev_subject, X, rng.uniform(2, 20), 0);
    } else {
      std::string s = rng.pick(kDistractors);
      std::string o2;
      do o2 = rng.pick(kObjs).many;
      while (o2 == st.O);
      const int X = st.add_person();
      replace_all(s, "{X}", st.people[X].name);
      replace_all(s, "{O2}", o2);
      s = st.fill(s, 0, -1, rng.uniform(2, 60), 0);
      d.vp = s.substr(0, s.size() - 1);  // a whole sentence without its period
    }
    insert_clause(at, std::move(d));
  }

  // An opening sentence that changes nothing, before the first amount.
  if (rng.chance(10) && (clauses.front().subject < 0 || clauses.front().subject == 0)) {
    std::string s = st.fill(rng.pick(kIntros), 0, -1, 0, 0);
    Clause d;
    d.counts = false;
    d.vp = s.substr(0, s.size() - 1);
    insert_clause(0, std::move(d));
  }

  // The final question.
  const std::string share_question = item.final_question;
  std::vector<const Final*> finals;
  for (auto& f : kFinals)
    if (f.dom == dom && f.together == together) finals.push_back(&f);
  const Final* fin = finals[rng.next() % finals.size()];
  std::string fq = st.past ? fin->past : fin->pres;
  if (together) {
    replace_all(fq, "{P0} and {P1}", two_names(st, prev_subject, P));
  }
  // A pronoun or an elided "are left" only when the question cannot mean someone else.
  const bool ambiguous = (prev_subject >= 0 || others_act) && !together;
  if (ambiguous && (fq.find("{he}") != std::string::npos || fq.find("{P}") == std::string::npos) && !together) {
    fq = dom == Dom::Money ? "How much money does {P} have?" : dom == Dom::Objects ? "How many {O} does {P} have?"
         : dom == Dom::Pages ? "How many pages does {P} read?" : "How many miles does {P} walk?";
    if (st.past) replace_all(fq, "does", "did");
  }
  fq = st.fill(fq, P, -1, 0, 0);
  if (shared) fq = share_question;

  // Render: sentences (pronouns, optional numbering) or one line.
  // The teller's verbs are said by "I".
  if (st.narrator >= 0)
    for (auto& c : clauses)
      if (c.subject == st.narrator && !st.past) c.vp = first_person_vp(c.vp);
  auto subject_text = [&](const Clause& c, bool pronoun) {
    if (c.subject == st.narrator) return std::string("I");
    if (pronoun) return std::string(st.people[c.subject].female ? "She" : "He");
    return std::string(st.people[c.subject].name);
  };
  std::vector<std::string> sentences;  // one per clause, for the numbered form and the reasoning
  const int form = rng.uniform(0, 9);  // 0-5 sentences, 6-9 one line
  std::string text;
  bool scene = false;  // a sentence without a person reads badly inside one line
  bool joined = false;  // a clause said as the end of the sentence before: no numbering, no one line
  bool reversed = false;
  for (auto& c : clauses) {
    scene |= c.subject < 0;
    joined |= c.joined;
    reversed |= c.after_next;
  }
  if (form <= 5 || clauses.size() > 4 || scene || joined || reversed) {
    const bool numbered = clauses.size() >= 2 && !joined && rng.chance(30);
    int prev = -1;
    bool prev_counts = false;
    for (size_t i = 0; i < clauses.size(); ++i) {
      const Clause& c = clauses[i];
      // Unnumbered, two events of the same person may share a sentence ("He buys 12 more and
      // then gives away 5."); the reasoning still names each clause.
      if (!numbered && i > 0 && c.subject >= 0 && c.counts && prev_counts && c.subject == prev && rng.chance(30)) {
        text.pop_back();  // the space
        text.pop_back();  // the period
        text += rng.pick(std::vector<std::string>{" and ", " and then ", ", then "}) + c.vp + ". ";
        sentences.push_back(capitalize(std::string(st.people[c.subject].name) + " " + c.vp) + ".");
        continue;
      }
      if (c.joined) {
        text.pop_back();
        text.pop_back();
        text += ", " + c.vp + ". ";
        sentences.push_back(capitalize(c.vp) + ".");
        prev = -1;  // "..., who has 26 and then buys 5" would not say who buys
        prev_counts = false;
        continue;
      }
      prev_counts = c.counts;
      std::string s;
      if (c.subject < 0 || !c.counts) {
        s = c.subject < 0 ? capitalize(c.vp) + "." : subject_text(c, false) + " " + c.vp + ".";
      } else {
        const bool pron = prev == c.subject && ambiguous == false && rng.chance(50);
        std::string lead;
        if (i > 0 && c.lead && rng.chance(18))
          lead = rng.pick(std::vector<std::string>{"Then ", "Later, ", "After that, ", "Next, ", "In the afternoon, ",
                                                   "The next day, ", "After school, ", "Later that day, ", "Afterwards, ",
                                                   "After a while, ", "Then ", "Soon, "});
        else if (i == 0 && dom != Dom::Pages && rng.chance(12))
          lead = rng.pick(std::vector<std::string>{"At first, ", "In the morning, ", "At the start of the week, ", "Earlier, ",
                                                   st.past ? "Last week, " : "Today, ", st.past ? "Yesterday, " : "This morning, "});
        std::string subj = subject_text(c, pron);
        if (!lead.empty() && pron && c.subject != st.narrator) subj = lowercase_first(subj);
        s = lead + subj + " " + c.vp + ".";
      }
      prev = c.subject;
      sentences.push_back(s);
      if (numbered) {
        text.append("(").append(std::to_string(i + 1)).append(") ");
      }
      text += s + " ";
    }
    text += fq;
  } else {
    // One line: clauses of the same subject share it; "and then" before the last.
    std::string line;
    int prev = -1;
    for (size_t i = 0; i < clauses.size(); ++i) {
      const Clause& c = clauses[i];
      std::string part;
      if (c.subject < 0) part = c.vp;
      else if (c.subject == prev && c.counts) part = c.vp;
      else part = std::string(st.people[c.subject].name) + " " + c.vp;
      sentences.push_back(capitalize(c.subject < 0 ? c.vp : std::string(st.people[c.subject].name) + " " + c.vp) + ".");
      if (i == 0) line = part;
      else if (i + 1 == clauses.size()) line += rng.pick(std::vector<std::string>{" and ", " and then ", ", and ", ", then "}) + part;
      else line += ", " + part;
      prev = c.subject;
    }
    if (rng.chance(30) && clauses.size() <= 3 && !fq.empty()) {
      text = "If " + line + ", " + lowercase_first(fq.rfind("So ", 0) == 0 ? fq.substr(3) : fq);
    } else {
      text = capitalize(line) + ". " + fq;
    }
  }
  // Sometimes no question at all, as in "Tom has 34 apples. He buys 12 more.": the amount of the
  // one person the story is about is what is asked.
  if (!together && !ambiguous && !shared && rng.chance(8)) {
    const size_t q = text.rfind(fq);
    if (q != std::string::npos && q > 0 && text.compare(0, 3, "If ") != 0) {
      text = text.substr(0, q);
      while (!text.empty() && text.back() == ' ') text.pop_back();
      item.final_question.clear();
      fq.clear();
    }
  }
  std::string prefix = rng.pick(kPrefixes);
  item.user_text = prefix + text;
  item.sentences = sentences;
  item.final_question = fq;
  item.question = text;
  // Slow reasoning: "(k) <what clause k gives>." per clause, the total last.
  std::vector<size_t> reason_order;  // a reversed comparison is reasoned after the amount it needs
  for (size_t i = 0; i < clauses.size(); ++i) {
    if (clauses[i].after_next && i + 1 < clauses.size()) {
      reason_order.push_back(i + 1);
      reason_order.push_back(i);
      ++i;
    } else {
      reason_order.push_back(i);
    }
  }
  std::vector<size_t> reasoning_line(clauses.size());
  for (size_t i : reason_order) {
    std::string line;
    for (auto& [idx, r] : reasons)
      if (idx == static_cast<int>(i)) line += (line.empty() ? "" : " and ") + r;
    if (line.empty()) line = "This does not change the answer";
    reasoning_line[i] = item.reasoning.size();
    std::string numbered_line = "(";
    numbered_line.append(std::to_string(i + 1)).append(") ").append(capitalize(line)).append(".");
    item.reasoning.push_back(std::move(numbered_line));
  }
  for (auto& [idx, r] : reasons)
    if (idx < 0) item.reasoning.push_back(r);
  for (size_t w = 0; w < item.worked.size(); ++w)
    item.worked[w].sentence = step_clause[w] < 0 ? item.reasoning.back() : item.reasoning[reasoning_line[static_cast<size_t>(step_clause[w])]];
  item.answer = v;
  item.steps = static_cast<int>(item.worked.size());
  if (item.steps != steps) return false;
  for (auto& s : item.worked)
    if (s.result < 2 || s.result > kMaxValue) return false;
  return true;
}

// A rate said in one sentence and the count asked in the question ("Felix reads 12 pages every
// night. How many pages does he read in 5 nights?", "Each ticket costs $8. How much do 9 tickets
// cost?"), or what is still missing ("Ana needs 40 cups and has 23. How many more does she need?").
// One step each; the slow reasoning is the one sentence that computes it.
bool build_rate_or_need(Rng& rng, Item& item) {
  Person p = rng.chance(kInventedNamePercent) ? invented_person(rng) : rng.pick(kPeople);
  const std::string P = p.name, he = p.female ? "she" : "he";
  std::string O;
  if (rng.chance(kInventedObjectPercent)) O = invented_objects(rng);
  else O = rng.pick(kObjs).many;
  const Thing& th = rng.pick(kThings);
  const bool dollar = rng.chance(65);
  auto money = [&](int n) { return money_text(n, dollar); };
  std::string statement, question, closing;
  char op = '*';
  int a = 0, b = 0;
  const int kind = rng.uniform(0, 12);
  if (kind >= 10) {  // two parts of one total ("17 points in the first game and 25 in the second"), or change
    a = rng.uniform(2, 60);
    b = rng.uniform(2, 60);
    const std::string A = std::to_string(a), B = std::to_string(b);
    const std::string He = p.female ? "She" : "He";
    op = '+';
    if (kind == 12) {
      // What was paid with, less the price: the change.
      const int price = rng.uniform(2, 95);
      const int paid = rng.pick(std::vector<int>{10, 20, 50, 100, 100, 20, 50});
      if (price >= paid - 1) return false;
      a = paid;
      b = price;
      op = '-';
      statement = rng.pick(std::vector<std::string>{
          P + " buys a " + std::string(th.one) + " for " + money(price) + ". " + He + " pays with " + money(paid) + ".",
          P + " bought a " + std::string(th.one) + " for " + money(price) + " and paid with " + (dollar ? "a " + money(paid) + " bill." : money(paid) + "."),
          "A " + std::string(th.one) + " costs " + money(price) + ". " + P + " gives the cashier " + money(paid) + "."});
      question = rng.pick(std::vector<std::string>{"How much change does " + he + " get?", "How much change did " + P + " get back?",
                                                   "How much change should " + P + " get?"});
      closing = P + " gets " + eq(paid, '-', price, paid - price) + " dollars in change.";
    } else {
      struct Parts {
        const char* verb_pres;
        const char* verb_past;
        const char* unit;
        const char* base;  // the verb in questions ("did he run")
      };
      const Parts pt = rng.pick(std::vector<Parts>{{"scores", "scored", "points", "score"}, {"runs", "ran", "laps", "run"},
                                                   {"walks", "walked", "km", "walk"},        {"swims", "swam", "laps", "swim"},
                                                   {"reads", "read", "pages", "read"},       {"cycles", "cycled", "km", "cycle"},
                                                   {"sells", "sold", "tickets", "sell"},     {"picks", "picked", O.c_str(), "pick"},
                                                   {"bakes", "baked", "cakes", "bake"},      {"writes", "wrote", "pages", "write"},
                                                   {"earns", "earned", "dollars", "earn"},   {"collects", "collected", O.c_str(), "collect"}});
      const auto when = rng.pick(std::vector<std::pair<std::string, std::string>>{
          {"on Monday", "on Tuesday"}, {"in the morning", "in the evening"}, {"in the first game", "in the second"},
          {"on Saturday", "on Sunday"}, {"in the first week", "in the second week"}, {"before lunch", "after lunch"},
          {"last year", "this year"}, {"in the first half", "in the second half"}});
      const bool past = when.first == "last year" || rng.chance(60);
      const std::string unit = pt.unit, verb = past ? pt.verb_past : pt.verb_pres;
      const std::string second = rng.chance(50) ? B + " " + unit + " " + when.second : B + " " + when.second;
      statement = rng.pick(std::vector<std::string>{P + " " + verb + " " + A + " " + unit + " " + when.first + " and " + second + ".",
                                                    when.first == "last year" ? P + " " + verb + " " + A + " " + unit + " " + when.first + ". " + He + " " + verb + " " + B + " " + unit + " " + when.second + "."
                                                                              : capitalize(when.first) + ", " + P + " " + verb + " " + A + " " + unit + ". " + capitalize(when.second) + ", " + he + " " + verb + " " + B + " more."});
      const std::string does = past ? "did" : "does";
      question = rng.pick(std::vector<std::string>{"How many " + unit + " " + does + " " + he + " " + pt.base + " in total?",
                                                   "How many " + unit + " " + does + " " + P + " " + pt.base + " altogether?",
                                                   "How many " + unit + " is that in all?",
                                                   "What is the total number of " + unit + "?"});
      if (unit == "km") question = rng.pick(std::vector<std::string>{"How far " + does + " " + he + " " + pt.base + " in total?",
                                                                     "How many km " + does + " " + P + " " + pt.base + " altogether?"});
      if (unit == "dollars") question = "How much " + does + " " + P + " " + pt.base + " in total?";
      closing = P + " " + verb + " " + eq(a, '+', b, a + b) + " " + unit + " in total.";
    }
  } else if (kind <= 5) {  // rate times count
    a = rng.uniform(2, 15);
    b = rng.uniform(2, 9);
    if (a * b > kMaxValue) return false;
    const std::string A = std::to_string(a), B = std::to_string(b);
    switch (kind) {
      case 0: {
        const auto per = rng.pick(std::vector<std::pair<std::string, std::string>>{
            {"a day", "days"}, {"every day", "days"}, {"each week", "weeks"}, {"every hour", "hours"}, {"a month", "months"}});
        const auto verb = rng.pick(std::vector<std::pair<std::string, std::string>>{
            {"picks", "pick"}, {"collects", "collect"}, {"makes", "make"}, {"finds", "find"}, {"sells", "sell"}, {"buys", "buy"}});
        statement = P + " " + verb.first + " " + A + " " + O + " " + per.first + ".";
        question = rng.pick(std::vector<std::string>{"How many " + O + " does " + he + " " + verb.second + " in " + B + " " + per.second + "?",
                                                     "How many " + O + " will " + P + " " + verb.second + " in " + B + " " + per.second + "?",
                                                     "How many " + O + " is that after " + B + " " + per.second + "?"});
        closing = "In " + B + " " + per.second + ", " + P + " " + verb.first + " " + eq(a, '*', b, a * b) + " " + O + ".";
        break;
      }
      case 1: {
        const auto per = rng.pick(std::vector<std::pair<std::string, std::string>>{{"every night", "nights"}, {"a day", "days"}, {"each morning", "mornings"}});
        statement = P + " reads " + A + " pages " + per.first + ".";
        question = rng.pick(std::vector<std::string>{"How many pages does " + he + " read in " + B + " " + per.second + "?",
                                                     "How many pages will " + P + " have read after " + B + " " + per.second + "?"});
        closing = "In " + B + " " + per.second + ", " + P + " reads " + eq(a, '*', b, a * b) + " pages.";
        break;
      }
      case 2: {
        statement = P + " " + rng.pick(std::vector<std::string>{"walks", "runs", "cycles", "drives"}) + " " + A + " miles " +
                    rng.pick(std::vector<std::string>{"a day", "every day", "each day"}) + ".";
        question = rng.pick(std::vector<std::string>{"How many miles does " + he + " go in " + B + " days?",
                                                     "How far does " + P + " go in " + B + " days?"});
        closing = "In " + B + " days, " + P + " goes " + eq(a, '*', b, a * b) + " miles.";
        break;
      }
      case 3: case 4: {
        statement = rng.pick(std::vector<std::string>{"Each " + std::string(th.one) + " costs " + money(a) + ".",
                                                      "One " + std::string(th.one) + " costs " + money(a) + ".",
                                                      "A " + std::string(th.one) + " costs " + money(a) + "."});
        question = rng.pick(std::vector<std::string>{"How much do " + B + " " + th.many + " cost?",
                                                     "How much does " + P + " pay for " + B + " " + th.many + "?",
                                                     "How much money do " + B + " " + th.many + " cost?"});
        closing = B + " " + th.many + " cost " + eq(a, '*', b, a * b) + " dollars.";
        break;
      }
      default: {
        const auto per = rng.pick(std::vector<std::pair<std::string, std::string>>{{"an hour", "hours"}, {"a day", "days"}, {"a week", "weeks"}});
        statement = P + " " + rng.pick(std::vector<std::string>{"earns", "makes", "is paid", "saves"}) + " " + money(a) + " " + per.first + ".";
        question = rng.pick(std::vector<std::string>{"How much does " + he + " get in " + B + " " + per.second + "?",
                                                     "How much money does " + P + " have after " + B + " " + per.second + "?"});
        closing = "In " + B + " " + per.second + ", " + P + " gets " + eq(a, '*', b, a * b) + " dollars.";
      }
    }
  } else if (kind <= 6) {  // a total shared out: the price of one
    b = rng.uniform(2, 9);
    const int one = rng.uniform(2, 12);
    a = one * b;
    op = '/';
    const std::string B = std::to_string(b);
    statement = rng.pick(std::vector<std::string>{P + " pays " + money(a) + " for " + B + " " + th.many + ".",
                                                  B + " " + th.many + " cost " + money(a) + " in all."});
    question = rng.pick(std::vector<std::string>{"How much does one " + std::string(th.one) + " cost?",
                                                 "What is the price of each " + std::string(th.one) + "?"});
    closing = "One " + std::string(th.one) + " costs " + eq(a, '/', b, one) + " dollars.";
  } else {  // what is still missing
    a = rng.uniform(10, kMaxValue);
    b = rng.uniform(2, a - 2);
    op = '-';
    const std::string A = std::to_string(a), B = std::to_string(b);
    const std::string He = p.female ? "She" : "He";
    if (kind == 7) {
      statement = rng.pick(std::vector<std::string>{P + " needs " + A + " " + O + " and has " + B + ".",
                                                    P + " wants to collect " + A + " " + O + ". " + He + " has " + B + " so far.",
                                                    P + " needs " + A + " " + O + " for a party. " + He + " already has " + B + "."});
      question = rng.pick(std::vector<std::string>{"How many more " + O + " does " + he + " need?", "How many more does " + P + " need?"});
      closing = P + " needs " + eq(a, '-', b, a - b) + " more " + O + ".";
    } else {
      statement = rng.pick(std::vector<std::string>{
          P + " wants a " + std::string(th.one) + " that costs " + money(a) + ". " + He + " has saved " + money(b) + ".",
          P + " is saving for a " + std::string(th.one) + " that costs " + money(a) + " and has " + money(b) + "."});
      question = rng.pick(std::vector<std::string>{"How much more money does " + he + " need?", "How much more does " + P + " need to save?"});
      closing = P + " needs " + eq(a, '-', b, a - b) + " more dollars.";
    }
  }
  const int r = op == '*' ? a * b : op == '/' ? a / b : op == '+' ? a + b : a - b;
  if (r < 2 || r > kMaxValue) return false;
  item.worked.push_back({op, a, b, r, closing});
  item.user_text = rng.pick(kPrefixes) + statement + " " + question;
  item.question = statement + " " + question;
  item.final_question = question;
  item.sentences = {statement};
  item.reasoning = {closing};
  item.answer = r;
  item.steps = 1;
  return true;
}

// The tail the scene and age builders share: the text as typed (with one of the openings), and each
// worked step tied to the reasoning line after the opening "(1)" line that states the start.
void finish_item(Rng& rng, const std::string& text, std::vector<std::string> sentences, int answer, Item& item) {
  item.user_text = rng.pick(kPrefixes) + text + item.final_question;
  item.question = text + item.final_question;
  item.sentences = std::move(sentences);
  for (size_t w = 0; w < item.worked.size(); ++w) item.worked[w].sentence = item.reasoning[w + 1];
  item.answer = answer;
  item.steps = static_cast<int>(item.worked.size());
}

// A place and a crowd that comes and goes, with no person to own it ("There are 45 kids on the bus.
// 17 get off and 8 more get on. How many kids are on the bus now?"): the numbers are the sentences'
// subjects. Reasoned as "(2) There are 45 - 17 = 28 kids on the bus."
bool build_scene(Rng& rng, int steps, Item& item) {
  struct Scene {
    const char* crowd;
    const char* place;
    const char* come_pres;
    const char* come_past;
    const char* go_pres;
    const char* go_past;
  };
  static const std::vector<Scene> kScenes = {
      {"kids", "on the bus", "get on", "got on", "get off", "got off"},
      {"people", "at the party", "arrive", "arrived", "leave", "left"},
      {"cars", "in the parking lot", "drive in", "drove in", "drive away", "drove away"},
      {"birds", "in the tree", "land in it", "landed in it", "fly away", "flew away"},
      {"students", "in the classroom", "come in", "came in", "go home", "went home"},
      {"fish", "in the tank", "are added", "were added", "are taken out", "were taken out"},
      {"ducks", "on the pond", "swim over", "swam over", "fly off", "flew off"},
      {"passengers", "on the train", "board", "boarded", "get off", "got off"},
      {"players", "on the field", "join", "joined", "go to the bench", "went to the bench"},
      {"books", "on the shelf", "are put back", "were put back", "are borrowed", "were borrowed"},
      {"boats", "in the harbor", "sail in", "sailed in", "sail out", "sailed out"},
      {"customers", "in the shop", "walk in", "walked in", "walk out", "walked out"}};
  const Scene& sc = rng.pick(kScenes);
  const bool past = rng.chance(40);
  const std::string crowd = sc.crowd, place = sc.place;
  int v = rng.uniform(10, 90);
  std::vector<std::string> sentences{std::string(past ? "There were " : "There are ") + std::to_string(v) + " " + crowd + " " + place + "."};
  if (rng.chance(30)) sentences[0] = capitalize(place) + (past ? ", there were " : ", there are ") + std::to_string(v) + " " + crowd + ".";
  item.reasoning.push_back("(1) There are " + std::to_string(v) + " " + crowd + " " + place + ".");
  for (int i = 0; i < steps; ++i) {
    const bool come = v < 6 || (v + 2 <= kMaxValue && rng.chance(50));
    const int n = come ? rng.uniform(2, std::min(30, kMaxValue - v)) : rng.uniform(2, std::min(30, v - 2));
    const int r = come ? v + n : v - n;
    const std::string N = std::to_string(n);
    std::string verb = come ? (past ? sc.come_past : sc.come_pres) : (past ? sc.go_past : sc.go_pres);
    std::string s;
    switch (rng.uniform(0, 3)) {
      case 0: s = N + (come ? " more " + crowd + " " : " " + crowd + " ") + verb; break;
      case 1: s = come ? N + " more " + verb : N + " of them " + verb; break;
      case 2: s = (i == 0 ? std::string("Then ") : std::string("After that, ")) + N + (come ? " more " : " ") + verb; break;
      default: s = N + " " + verb; break;
    }
    sentences.push_back(capitalize(s) + ".");
    item.worked.push_back({come ? '+' : '-', v, n, r, ""});
    std::string line = "(";
    line.append(std::to_string(i + 2)).append(") There are ").append(eq(v, come ? '+' : '-', n, r)).append(" ").append(crowd);
    item.reasoning.push_back(line.append(" ").append(place).append("."));
    v = r;
  }
  std::string text;
  for (size_t i = 0; i < sentences.size(); ++i) {
    // two events may share a sentence: "17 get off and 8 more get on."
    if (i >= 2 && rng.chance(35)) {
      text.pop_back();
      text.pop_back();
      text += " and " + lowercase_first(sentences[i]) + " ";
    } else {
      text += sentences[i] + " ";
    }
  }
  const std::string are = past ? "were" : "are";
  item.final_question = rng.pick(std::vector<std::string>{"How many " + crowd + " " + are + " " + place + " now?",
                                                          "How many " + crowd + " " + are + " there now?",
                                                          "How many " + crowd + " " + are + " left " + place + "?",
                                                          "How many " + crowd + " " + are + " " + place + " in the end?"});
  if (past) replace_all(item.final_question, " now?", " then?");
  finish_item(rng, text, std::move(sentences), v, item);
  return true;
}

// Ages along a family ("Pedro is 11 years old. His sister is 4 years younger. His dad is 3 times as
// old as his sister. How old is his dad?"), each relative said against the one before; the last
// step may be the years ahead ("How old will she be in 5 years?").
bool build_ages(Rng& rng, int steps, Item& item) {
  const Person p = rng.chance(kInventedNamePercent) ? invented_person(rng) : rng.pick(kPeople);
  const std::string his = p.female ? "her" : "his", His = p.female ? "Her" : "His";
  std::vector<std::string> relatives = {"sister", "brother", "cousin", "mom", "dad", "aunt", "uncle", "grandma", "grandpa", "friend"};
  int v = rng.uniform(4, 40);
  std::vector<std::string> sentences{p.name + " is " + std::to_string(v) + " years old."};
  item.reasoning.push_back("(1) " + p.name + " is " + std::to_string(v) + " years old.");
  std::string prev_name = p.name, prev_ref = p.name;  // the person said last: reasoning name, text reference
  // "His sister" inside a sentence is "his sister"; a name stays as it is.
  auto reference = [&](const std::string& r) { return r.rfind(His + " ", 0) == 0 ? lowercase_first(r) : r; };
  const bool ahead = steps >= 2 && rng.chance(30);
  for (int i = 0; i < steps - (ahead ? 1 : 0); ++i) {
    const size_t ri = static_cast<size_t>(rng.uniform(0, static_cast<int>(relatives.size()) - 1));
    const std::string rel = relatives[ri];
    relatives.erase(relatives.begin() + static_cast<std::ptrdiff_t>(ri));
    const std::string subject = rng.chance(50) ? His + " " + rel : p.name + "'s " + rel;
    const std::string name = p.name + "'s " + rel;
    // elders are older than the one they are said against; a sister or a friend may be either
    const bool elder = rel != "sister" && rel != "brother" && rel != "cousin" && rel != "friend";
    std::vector<char> ops = {'+', '+'};
    if (!elder) ops.push_back('-');
    if (v * 2 <= 90) ops.push_back('*');
    if (!elder && v % 2 == 0 && v >= 8) ops.push_back('/');
    const char op = ops[rng.next() % ops.size()];
    int n = 0, r = 0;
    std::string s;
    const std::string than = i == 0 && rng.chance(50) ? "" : " than " + reference(prev_ref);
    const std::string as = " as " + reference(prev_ref);
    if (op == '+' || op == '-') {
      if (op == '-' && v < 6) return false;
      n = op == '+' ? rng.uniform(2, std::max(2, std::min(40, 99 - v))) : rng.uniform(2, std::min(30, v - 2));
      r = op == '+' ? v + n : v - n;
      s = subject + " is " + std::to_string(n) + " years " + (op == '+' ? "older" : "younger") + than + ".";
    } else if (op == '*') {
      n = v * 3 <= 90 && rng.chance(50) ? 3 : 2;
      r = v * n;
      s = subject + " is " + (n == 2 ? std::string("twice") : std::to_string(n) + " times") + " as old" + as + ".";
    } else {
      n = 2;
      r = v / 2;
      s = subject + " is half as old" + as + ".";
    }
    sentences.push_back(s);
    item.worked.push_back({op, v, n, r, ""});
    std::string line = "(";
    line.append(std::to_string(i + 2)).append(") ").append(name).append(" is ").append(eq(v, op, n, r)).append(" years old.");
    item.reasoning.push_back(line);
    v = r;
    prev_name = name;
    prev_ref = subject;
  }
  std::string who = reference(prev_ref);
  if (ahead) {
    const int n = rng.uniform(2, 20);
    item.final_question = rng.pick(std::vector<std::string>{"How old will " + who + " be in " + std::to_string(n) + " years?",
                                                            "In " + std::to_string(n) + " years, how old will " + who + " be?"});
    item.worked.push_back({'+', v, n, v + n, ""});
    item.reasoning.push_back("In " + std::to_string(n) + " years, " + prev_name + " will be " + eq(v, '+', n, v + n) + " years old.");
    v += n;
  } else {
    item.final_question = rng.pick(std::vector<std::string>{"How old is " + who + "?", "What is the age of " + who + "?",
                                                            "How many years old is " + who + "?"});
  }
  std::string text;
  for (auto& s : sentences) text += s + " ";
  finish_item(rng, text, std::move(sentences), v, item);
  for (auto& w : item.worked)
    if (w.result < 2 || w.result > kMaxValue) return false;
  return item.steps == steps;
}

// Two kinds under one word ("A farmer has 33 cows and 28 sheep. He sells 10 sheep. How many
// animals does he have now?", "There are 14 girls and 15 boys in the class. How many students are
// in the class?"): changes to one kind first, then the total, which is said in the category's word.
bool build_kinds(Rng& rng, int steps, Item& item) {
  struct Category {
    const char* word;  // what the question counts
    std::vector<const char*> kinds;
    const char* place;  // non-empty: the kinds are in a place, not owned
  };
  static const std::vector<Category> kCategories = {
      {"animals", {"cows", "sheep", "goats", "pigs", "hens", "horses", "ducks", "rabbits"}, ""},
      {"pieces of fruit", {"apples", "oranges", "pears", "bananas", "plums", "lemons", "peaches"}, ""},
      {"pets", {"cats", "dogs", "fish", "hamsters", "parrots"}, ""},
      {"flowers", {"roses", "tulips", "daisies", "lilies", "sunflowers"}, ""},
      {"books", {"comics", "novels", "picture books", "cookbooks"}, ""},
      {"vehicles", {"cars", "trucks", "bikes", "buses", "vans"}, ""},
      {"coins", {"gold coins", "silver coins", "copper coins"}, ""},
      {"pens", {"red pens", "blue pens", "black pens", "green pens"}, ""},
      {"balls", {"tennis balls", "footballs", "basketballs", "golf balls"}, ""},
      {"toys", {"toy cars", "dolls", "robots", "teddy bears", "puzzles"}, ""},
      {"students", {"girls", "boys"}, "in the class"},
      {"children", {"girls", "boys"}, "at the park"},
      {"trees", {"oak trees", "pine trees", "apple trees", "maple trees"}, "in the garden"},
      {"vegetables", {"carrots", "potatoes", "onions", "tomatoes"}, "in the basket"}};
  const Category& cat = rng.pick(kCategories);
  const bool owned = cat.place[0] == '\0';
  if (!owned && steps != 1) return false;  // a place's kinds are only counted
  std::vector<const char*> kinds = cat.kinds;
  const size_t i1 = static_cast<size_t>(rng.uniform(0, static_cast<int>(kinds.size()) - 1));
  const std::string k1 = kinds[i1];
  kinds.erase(kinds.begin() + static_cast<std::ptrdiff_t>(i1));
  const std::string k2 = rng.pick(kinds);
  const bool past = rng.chance(35);
  Person p = rng.chance(kInventedNamePercent) ? invented_person(rng) : rng.pick(kPeople);
  std::string owner = p.name, owner_line = p.name;  // as said in the text, in the reasoning
  if (std::string(cat.word) == "animals" && rng.chance(50)) {
    owner = "A farmer";
    owner_line = "The farmer";
    p.female = rng.chance(40);
  }
  const std::string he = p.female ? "she" : "he", He = p.female ? "She" : "He";
  int v[2] = {rng.uniform(2, 60), rng.uniform(2, 60)};
  const std::string names[2] = {k1, k2};
  std::vector<std::string> sentences;
  const std::string has = past ? "had" : "has", A = std::to_string(v[0]), B = std::to_string(v[1]);
  std::string text;
  if (owned) {
    sentences.push_back(owner + " " + has + " " + A + " " + k1 + " and " + B + " " + k2 + ".");
    if (rng.chance(30)) {
      text = owner + " " + has + " " + A + " " + k1 + ". " + He + " also " + has + " " + B + " " + k2 + ". ";
    } else {
      text = sentences[0] + " ";
    }
    item.reasoning.push_back("(1) " + owner_line + " has " + A + " " + k1 + " and " + B + " " + k2 + ".");
  } else {
    const std::string are = past ? "were" : "are";
    sentences.push_back(rng.chance(50) ? "There " + are + " " + A + " " + k1 + " and " + B + " " + k2 + " " + cat.place + "."
                                       : capitalize(cat.place) + " there " + are + " " + A + " " + k1 + " and " + B + " " + k2 + ".");
    text = sentences[0] + " ";
    item.reasoning.push_back("(1) There are " + A + " " + k1 + " and " + B + " " + k2 + " " + cat.place + ".");
  }
  struct Verb {
    bool add;
    const char* pres;
    const char* past;
  };
  static const std::vector<Verb> kVerbs = {{false, "sells", "sold"},   {false, "gives away", "gave away"}, {false, "loses", "lost"},
                                           {true, "buys", "bought"},   {true, "gets", "got"},             {true, "is given", "was given"},
                                           {false, "gives", "gave"}};
  for (int i = 0; i + 1 < steps; ++i) {
    const int w = rng.uniform(0, 1);
    const Verb& vb = rng.pick(kVerbs);
    const bool add = vb.add;
    if (add ? v[w] + 2 > kMaxValue : v[w] < 4) return false;
    const int n = add ? rng.uniform(2, std::min(30, kMaxValue - v[w])) : rng.uniform(2, v[w] - 2);
    const int r = add ? v[w] + n : v[w] - n;
    const std::string verb = past ? vb.past : vb.pres;
    std::string s = He + " " + verb + " " + std::to_string(n) + " " + (add && rng.chance(40) ? "more " : "") + names[w];
    if (std::string(vb.pres) == "gives" && !add) s += " to " + rng.pick(std::vector<std::string>{"a friend", "a neighbor", "the school"});
    sentences.push_back(s + ".");
    if (i > 0 && rng.chance(40)) text.append("Then ").append(lowercase_first(s));
    else text.append(s);
    text.append(". ");
    item.worked.push_back({add ? '+' : '-', v[w], n, r, ""});
    item.reasoning.push_back(std::string("(").append(std::to_string(i + 2)) + ") " + owner_line + " has " + eq(v[w], add ? '+' : '-', n, r) + " " + names[w] + ".");
    v[w] = r;
  }
  const int total = v[0] + v[1];
  if (total > kMaxValue) return false;
  item.worked.push_back({'+', v[0], v[1], total, ""});
  const std::string word = cat.word;
  if (owned) {
    const std::string who = owner == "A farmer" ? "the farmer" : owner;
    item.reasoning.push_back("In all, " + who + " has " + eq(v[0], '+', v[1], total) + " " + word + ".");
    const std::string now = steps > 1 ? " now" : "";
    item.final_question = rng.pick(std::vector<std::string>{"How many " + word + " does " + he + " have" + now + "?",
                                                            "How many " + word + " does " + who + " have" + now + "?",
                                                            "How many " + word + " does " + he + " have in all?",
                                                            "How many " + word + " is that altogether?"});
  } else {
    item.reasoning.push_back("In all, there are " + eq(v[0], '+', v[1], total) + " " + word + " " + cat.place + ".");
    item.final_question = rng.pick(std::vector<std::string>{
        "How many " + word + " are " + cat.place + "?", "How many " + word + " are there?",
        std::string("How many ") + word + " " + (past ? "were" : "are") + " there in all?"});
  }
  finish_item(rng, text, std::move(sentences), total, item);
  return item.steps == steps;
}

int draw_steps(Rng& rng, bool arithmetic) {
  const int r = rng.uniform(0, 99);
  if (arithmetic) return r < 60 ? 1 : r < 90 ? 2 : 3;
  // Mostly short: what users type is one or two steps, and a short story is a new sentence per token
  // trained (long problems stay in the broad style's half of the data).
  return r < 40 ? 1 : r < 70 ? 2 : r < 86 ? 3 : r < 94 ? 4 : r < 98 ? 5 : 6;
}

}  // namespace

Item generate_natural_item(Split split, uint64_t seed, uint64_t index, int steps) {
  if (split == Split::Heldout)
    throw std::invalid_argument("the natural style has no held-out templates (its held-out set is data/natural/heldout.jsonl)");
  const uint64_t base =
      util::SplitMix64{util::SplitMix64{util::SplitMix64{seed}.next() ^ (0x7A7C1A11ull + static_cast<uint64_t>(split))}.next() ^ index}.next();
  Item item;
  for (uint64_t attempt = 0;; ++attempt) {
    Rng rng(util::SplitMix64{base ^ (attempt * 0xD1B54A32D192ED03ull)}.next());
    item = Item{};
    const bool arithmetic = rng.chance(20) && (steps == 0 || steps <= 3);
    const int n = steps > 0 ? steps : draw_steps(rng, arithmetic);
    const bool ok = arithmetic                    ? build_arithmetic(rng, n, item)
                    : n == 1 && rng.chance(30) ? build_rate_or_need(rng, item)
                    : n <= 3 && rng.chance(8)   ? build_scene(rng, n, item)
                    : n <= 3 && rng.chance(6)   ? build_ages(rng, n, item)
                    : n <= 3 && rng.chance(6)   ? build_kinds(rng, n, item)
                                               : build_story(rng, n, item);
    if (!ok) continue;
    if (hash_split(item.user_text) != split) continue;
    break;
  }
  item.split = split;
  item.seed = seed;
  item.index = index;
  return item;
}

}  // namespace kvscope::tinygsm
