// tinygsm generator: templates, deterministic sampling, splits, prompt/target formats.
#include "tinygsm/tinygsm.h"

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/error.h"
#include "util/hash.h"
#include "util/rng.h"

namespace kvscope::tinygsm {

namespace {

// ---------------------------------------------------------------------------------------------
// PRNG: splitmix64. Integer ranges by modulo (the bias is irrelevant here and it is portable).
uint64_t mix64(uint64_t x) { return util::SplitMix64{x}.next(); }

struct Rng : util::SplitMix64 {
  explicit Rng(uint64_t seed) : util::SplitMix64{seed} {}
  int uniform(int lo, int hi) {  // inclusive; requires lo <= hi
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }
};

// ---------------------------------------------------------------------------------------------
// Vocabulary of the stories.
const std::vector<std::string> kNames = {"Tom", "Anna", "Ben",  "Mia",  "Sam",  "Lily", "Max",
                                         "Emma", "Leo", "Zoe",  "Jack", "Lucy", "Noah", "Ella",
                                         "Omar", "Nina", "Ravi", "Sara", "Ivan", "Maya"};
const std::vector<std::string> kObjects = {"apples",  "pencils", "stickers", "marbles", "cookies", "books",
                                           "cards",   "shells",  "balloons", "eggs",    "toy cars", "crayons",
                                           "stamps",  "candies", "oranges",  "beads"};
struct Thing {
  std::string one, many;
};
const std::vector<Thing> kThings = {{"book", "books"},         {"pen", "pens"},   {"notebook", "notebooks"},
                                    {"toy", "toys"},           {"ticket", "tickets"}, {"ball", "balls"},
                                    {"sandwich", "sandwiches"}, {"kite", "kites"}};
struct Activity {
  std::string third, base;  // "reads" / "read"
};
const std::vector<Activity> kActivities = {{"reads", "read"},           {"practices the piano", "practice the piano"},
                                           {"swims", "swim"},           {"draws", "draw"},
                                           {"plays chess", "play chess"}, {"runs", "run"}};

// ---------------------------------------------------------------------------------------------
// Templates. Placeholders: {P} subject, {F} another person, {N} amount, {K} factor / count,
// {O} plural object, {I}/{Is} a thing bought (money), {A}/{a} activity (time), {H} fraction word,
// {P0} {P1} the two people of a "together" question.
enum class Domain { Objects, Money, Time };
enum class Kind { Start, Add, Sub, Mul, Div, GroupAdd, GroupSub, More, Fewer, Times, Final, Together };

struct Template {
  Domain domain;
  Kind kind;
  bool heldout;
  const char* text;
  bool broad = false;  // used only by Style::Broad
};

constexpr bool H = true, T = false;
using D = Domain;
using K = Kind;

const Template kTemplates[] = {
    // ---- objects
    {D::Objects, K::Start, T, "{P} has {N} {O}."},
    {D::Objects, K::Start, T, "{P} starts with {N} {O}."},
    {D::Objects, K::Start, T, "There are {N} {O} in {P}'s bag."},
    {D::Objects, K::Start, H, "{P} collected {N} {O} last week."},
    {D::Objects, K::Add, T, "{P} buys {N} more {O}."},
    {D::Objects, K::Add, T, "Then {P} finds {N} more {O}."},
    {D::Objects, K::Add, T, "{F} gives {P} {N} {O}."},
    {D::Objects, K::Add, H, "{P} gets another {N} {O} as a gift."},
    {D::Objects, K::Sub, T, "{P} gives {N} {O} to {F}."},
    {D::Objects, K::Sub, T, "{P} loses {N} {O}."},
    {D::Objects, K::Sub, T, "{P} sells {N} of the {O}."},
    {D::Objects, K::Sub, H, "{F} takes {N} {O} away from {P}."},
    {D::Objects, K::Mul, T, "Then the number of {O} {P} has becomes {K} times as large."},
    {D::Objects, K::Mul, T, "{P} ends up with {K} times as many {O} as before."},
    {D::Objects, K::Mul, H, "{P} multiplies the number of {O} by {K}."},
    {D::Objects, K::Div, T, "{P} splits the {O} into {K} equal groups and keeps one group."},
    {D::Objects, K::Div, T, "{P} divides the {O} into {K} equal piles and keeps just one pile."},
    {D::Objects, K::Div, H, "{P} keeps only one of {K} equal parts of the {O}."},
    {D::Objects, K::GroupAdd, T, "{P} buys {K} boxes of {O} with {N} in each box."},
    {D::Objects, K::GroupAdd, T, "{P} gets {K} bags with {N} {O} in each bag."},
    {D::Objects, K::GroupAdd, H, "{P} picks up {K} packs of {N} {O} each."},
    {D::Objects, K::More, T, "{F} has {N} more {O} than {P}."},
    {D::Objects, K::More, H, "{F} owns {N} {O} more than {P} does."},
    {D::Objects, K::Fewer, T, "{F} has {N} fewer {O} than {P}."},
    {D::Objects, K::Fewer, H, "{F} owns {N} fewer {O} than {P} does."},
    {D::Objects, K::Times, T, "{F} has {K} times as many {O} as {P}."},
    {D::Objects, K::Times, H, "{F} owns {K} times the number of {O} that {P} has."},
    {D::Objects, K::Final, T, "How many {O} does {P} have now?"},
    {D::Objects, K::Final, T, "How many {O} does {P} have in the end?"},
    {D::Objects, K::Final, H, "What is the number of {O} that {P} has now?"},
    {D::Objects, K::Together, T, "How many {O} do {P0} and {P1} have together?"},
    {D::Objects, K::Together, H, "How many {O} do {P0} and {P1} have in total?"},
    // ---- money
    {D::Money, K::Start, T, "{P} has ${N}."},
    {D::Money, K::Start, T, "{P} has ${N} in a wallet."},
    {D::Money, K::Start, H, "{P} saved ${N}."},
    {D::Money, K::Add, T, "{P} earns ${N}."},
    {D::Money, K::Add, T, "{F} gives {P} ${N}."},
    {D::Money, K::Add, H, "{P} is paid ${N} for doing chores."},
    {D::Money, K::Sub, T, "{P} spends ${N} on a {I}."},
    {D::Money, K::Sub, T, "{P} pays ${N} for a {I}."},
    {D::Money, K::Sub, H, "{P} gives ${N} to {F}."},
    {D::Money, K::Mul, T, "The money {P} has becomes {K} times as much."},
    {D::Money, K::Mul, T, "{P}'s money grows to {K} times as much."},
    {D::Money, K::Mul, H, "{P} multiplies the money by {K}."},
    {D::Money, K::Div, T, "{P} splits the money into {K} equal parts and keeps one part."},
    {D::Money, K::Div, H, "{P} keeps only one of {K} equal parts of the money."},
    {D::Money, K::GroupAdd, T, "{P} earns ${N} a day for {K} days."},
    {D::Money, K::GroupAdd, T, "{P} gets ${N} each week for {K} weeks."},
    {D::Money, K::GroupAdd, H, "For {K} days in a row, {P} earns ${N} per day."},
    {D::Money, K::GroupSub, T, "{P} buys {K} {Is} for ${N} each."},
    {D::Money, K::GroupSub, T, "{P} buys {K} {Is} that cost ${N} each."},
    {D::Money, K::GroupSub, H, "Each {I} costs ${N}, and {P} buys {K} of them."},
    {D::Money, K::More, T, "{F} has ${N} more than {P}."},
    {D::Money, K::More, H, "{F} has ${N} more money than {P} does."},
    {D::Money, K::Fewer, T, "{F} has ${N} less than {P}."},
    {D::Money, K::Fewer, H, "{F} has ${N} less money than {P} does."},
    {D::Money, K::Times, T, "{F} has {K} times as much money as {P}."},
    {D::Money, K::Times, H, "{F} has {K} times the money that {P} has."},
    {D::Money, K::Final, T, "How much money does {P} have now?"},
    {D::Money, K::Final, T, "How many dollars does {P} have in the end?"},
    {D::Money, K::Final, H, "How much money is left for {P}?"},
    {D::Money, K::Together, T, "How much money do {P0} and {P1} have together?"},
    {D::Money, K::Together, H, "How much money do {P0} and {P1} have in total?"},
    // ---- time
    {D::Time, K::Start, T, "{P} {A} for {N} minutes on Monday."},
    {D::Time, K::Start, T, "On Monday, {P} {A} for {N} minutes."},
    {D::Time, K::Start, H, "On the first day, {P} {A} for {N} minutes."},
    {D::Time, K::Add, T, "The next day, {P} {A} for {N} minutes more than the day before."},
    {D::Time, K::Add, T, "The day after that, {P} {A} {N} minutes longer."},
    {D::Time, K::Add, H, "Then {P} adds {N} minutes the next day."},
    {D::Time, K::Sub, T, "The next day, {P} {A} for {N} minutes less than the day before."},
    {D::Time, K::Sub, T, "The day after that, {P} {A} {N} minutes shorter."},
    {D::Time, K::Sub, H, "Then {P} cuts {N} minutes the next day."},
    {D::Time, K::Mul, T, "The next day, {P} {A} {K} times as long as the day before."},
    {D::Time, K::Mul, T, "The day after that, {P} {A} for {K} times as many minutes."},
    {D::Time, K::Mul, H, "Then {P} multiplies the time by {K} the next day."},
    {D::Time, K::Div, T, "The next day, {P} {A} for {H} as long."},
    {D::Time, K::Div, T, "The day after that, {P} {A} only {H} as long."},
    {D::Time, K::Div, H, "Then {P} divides the time by {K} the next day."},
    {D::Time, K::Final, T, "How many minutes does {P} {a} on the last day?"},
    {D::Time, K::Final, T, "For how many minutes does {P} {a} on the last day?"},
    {D::Time, K::Final, H, "How long, in minutes, does {P} {a} on the last day?"},
    // ---- broad style only (Style::Broad): paraphrases, other clause orders, the held-out
    // templates' words in other sentences. Appended so the classic ids stay put.
    {D::Objects, K::Start, T, "{P} owns {N} {O}.", true},
    {D::Objects, K::Start, T, "At first, {P} has {N} {O}.", true},
    {D::Objects, K::Start, T, "{P} keeps {N} {O} in a box.", true},
    {D::Objects, K::Add, T, "{P} collects {N} more {O}.", true},
    {D::Objects, K::Add, T, "{P} receives {N} {O} as a present.", true},
    {D::Objects, K::Add, T, "{N} more {O} are given to {P}.", true},
    {D::Objects, K::Add, T, "{P} picks {N} more {O} from the shelf.", true},
    {D::Objects, K::Sub, T, "{P} uses {N} of the {O}.", true},
    {D::Objects, K::Sub, T, "{N} of {P}'s {O} get lost.", true},
    {D::Objects, K::Sub, T, "{P} hands {N} {O} over to {F}.", true},
    {D::Objects, K::Mul, T, "{P}'s {O} become {K} times as many.", true},
    {D::Objects, K::Mul, T, "The number of {O} that {P} owns grows {K} times.", true},
    {D::Objects, K::Div, T, "{P} puts the {O} into {K} equal stacks and keeps one stack.", true},
    {D::Objects, K::Div, T, "Only one of {K} equal shares of the {O} stays with {P}.", true},
    {D::Objects, K::GroupAdd, T, "{P} buys {K} bags of {O}, and each bag holds {N}.", true},
    {D::Objects, K::GroupAdd, T, "With {N} {O} in each box, {P} gets {K} boxes.", true},
    {D::Objects, K::More, T, "Compared with {P}, {F} has {N} more {O}.", true},
    {D::Objects, K::More, T, "{F} has {N} {O} more than {P}.", true},
    {D::Objects, K::Fewer, T, "Compared with {P}, {F} has {N} fewer {O}.", true},
    {D::Objects, K::Fewer, T, "{F} has {N} {O} fewer than {P}.", true},
    {D::Objects, K::Times, T, "Compared with {P}, {F} has {K} times as many {O}.", true},
    {D::Objects, K::Final, T, "How many {O} does {P} own now?", true},
    {D::Objects, K::Final, T, "How many {O} does {P} end up with?", true},
    {D::Objects, K::Together, T, "How many {O} do {P0} and {P1} have combined?", true},
    {D::Objects, K::Together, T, "What is the total number of {O} that {P0} and {P1} have?", true},
    {D::Money, K::Start, T, "{P} owns ${N}.", true},
    {D::Money, K::Start, T, "At first, {P} has ${N}.", true},
    {D::Money, K::Add, T, "{P} makes ${N} selling lemonade.", true},
    {D::Money, K::Add, T, "{P} receives ${N} from {F}.", true},
    {D::Money, K::Add, T, "{P} is given ${N} as a present.", true},
    {D::Money, K::Sub, T, "{P} uses ${N} to buy a {I}.", true},
    {D::Money, K::Sub, T, "A {I} costs {P} ${N}.", true},
    {D::Money, K::Sub, T, "{P} hands ${N} over to {F}.", true},
    {D::Money, K::Mul, T, "{P} ends up with {K} times as much money.", true},
    {D::Money, K::Div, T, "{P} divides the money into {K} equal parts and keeps one.", true},
    {D::Money, K::Div, T, "Only one of {K} equal shares of the money stays with {P}.", true},
    {D::Money, K::GroupAdd, T, "{P} is paid ${N} per day for {K} days.", true},
    {D::Money, K::GroupAdd, T, "For {K} weeks, {P} gets ${N} each week.", true},
    {D::Money, K::GroupSub, T, "{P} pays ${N} each for {K} {Is}.", true},
    {D::Money, K::GroupSub, T, "{K} {Is} cost ${N} each, and {P} buys all of them.", true},
    {D::Money, K::More, T, "Compared with {P}, {F} has ${N} more.", true},
    {D::Money, K::Fewer, T, "Compared with {P}, {F} has ${N} less.", true},
    {D::Money, K::Times, T, "Compared with {P}, {F} has {K} times as much money.", true},
    {D::Money, K::Final, T, "How much money does {P} have at the end?", true},
    {D::Money, K::Final, T, "What amount of money does {P} have now?", true},
    {D::Money, K::Together, T, "How much money do {P0} and {P1} have combined?", true},
    {D::Time, K::Start, T, "On Sunday, {P} {A} for {N} minutes.", true},
    {D::Time, K::Start, T, "{P} {A} for {N} minutes on the first day of the week.", true},
    {D::Time, K::Add, T, "The next day, {P} {A} {N} minutes more.", true},
    {D::Time, K::Add, T, "On the following day, {P} {A} {N} extra minutes.", true},
    {D::Time, K::Sub, T, "The next day, {P} {A} {N} minutes less.", true},
    {D::Time, K::Sub, T, "On the following day, {P} {A} {N} fewer minutes.", true},
    {D::Time, K::Mul, T, "On the following day, {P} {A} {K} times longer.", true},
    {D::Time, K::Div, T, "On the following day, {P} {A} for just {H} of that time.", true},
    {D::Time, K::Final, T, "How many minutes does {P} spend on it on the last day?", true},
    // Added 2026-12-05 (stage 2c): the operation words and question shapes of the held-out templates
    // ("multiplies", "divides ... by", "packs", "... each", "What is the number of", "in total",
    // "left for"), each in a sentence of another shape, so that a held-out statement differs from
    // training in its phrasing rather than in its vocabulary.
    {D::Objects, K::Mul, T, "{P}'s {O} are multiplied by {K}.", true},
    {D::Objects, K::Mul, T, "After a trade, the count of {O} that {P} has is multiplied by {K}.", true},
    {D::Objects, K::Div, T, "{P}'s {O} are divided by {K}.", true},
    {D::Objects, K::Div, T, "{P} divides the {O} among {K} friends equally and keeps one share.", true},
    {D::Objects, K::GroupAdd, T, "{P} opens {K} packs, and there are {N} {O} in each pack.", true},
    {D::Objects, K::GroupAdd, T, "{K} friends each give {P} {N} {O}.", true},
    {D::Objects, K::GroupAdd, T, "{P} gets {K} crates that hold {N} {O} each.", true},
    {D::Objects, K::Add, T, "{F} sends {P} {N} {O} as a gift.", true},
    {D::Objects, K::Sub, T, "{F} takes {N} of the {O} from {P}.", true},
    {D::Objects, K::More, T, "{F} owns {N} more {O} than {P}.", true},
    {D::Objects, K::Fewer, T, "{F} owns {N} fewer {O} than {P}.", true},
    {D::Objects, K::Times, T, "The number of {O} that {F} owns is {K} times {P}'s.", true},
    {D::Objects, K::Final, T, "What is {P}'s number of {O} now?", true},
    {D::Objects, K::Final, T, "In the end, what is the count of {O} that {P} owns?", true},
    {D::Objects, K::Final, T, "Now, how many {O} are left with {P}?", true},
    {D::Objects, K::Final, T, "What number of {O} does {P} have at the end?", true},
    {D::Objects, K::Together, T, "In total, how many {O} do {P0} and {P1} own?", true},
    {D::Objects, K::Together, T, "What is the number of {O} that {P0} and {P1} have together?", true},
    {D::Money, K::Mul, T, "{P}'s money is multiplied by {K}.", true},
    {D::Money, K::Div, T, "{P}'s money is divided by {K}.", true},
    {D::Money, K::Add, T, "{P} gets ${N} for doing homework.", true},
    {D::Money, K::Sub, T, "{P} gives {F} ${N}.", true},
    {D::Money, K::GroupAdd, T, "{P} earns ${N} per day, {K} days in a row.", true},
    {D::Money, K::GroupSub, T, "{P} buys {K} {Is}; each one costs ${N}.", true},
    {D::Money, K::More, T, "{F} owns ${N} more than {P}.", true},
    {D::Money, K::Final, T, "How much money does {P} have left?", true},
    {D::Money, K::Final, T, "What is {P}'s amount of money now?", true},
    {D::Money, K::Together, T, "In total, how much money do {P0} and {P1} own?", true},
    {D::Time, K::Start, T, "On day one, {P} {A} for {N} minutes.", true},
    {D::Time, K::Add, T, "The next day, {P} adds {N} more minutes to it.", true},
    {D::Time, K::Sub, T, "The next day, {P} cuts the time short by {N} minutes.", true},
    {D::Time, K::Mul, T, "The next day, the time {P} spends is multiplied by {K}.", true},
    {D::Time, K::Div, T, "The next day, the time {P} spends is divided by {K}.", true},
    {D::Time, K::Final, T, "On the last day, how many minutes does {P} {a}?", true},
    {D::Time, K::Final, T, "How long does {P} {a} on the last day, counted in minutes?", true},
    // Added 2026-12-05 (stage 2d): 2c still failed three held-out templates every time, each by a
    // surface-word shortcut. "What is the number of {O} that ..." was only ever a total (its one
    // training use was the together question), "keeps only" was a subtraction and "is paid" was
    // only the per-day earning or, by "pays", money going out. These sentences share each opening
    // between both readings, so the rest of the sentence has to decide.
    {D::Objects, K::Final, T, "What is the number of {O} {P} ends up with?", true},
    {D::Objects, K::Final, T, "What is the number of {O} in {P}'s hands now?", true},
    {D::Objects, K::Final, T, "What is the number of {O} left with {P} at the end?", true},
    {D::Objects, K::Together, T, "What is the number of {O} {P0} and {P1} own in total?", true},
    {D::Objects, K::Div, T, "{P} keeps only one of the {K} equal piles that the {O} are split into.", true},
    {D::Objects, K::Div, T, "After cutting the {O} into {K} equal parts, {P} keeps only one part.", true},
    {D::Objects, K::Sub, T, "{P} keeps only some of the {O} and gives {N} of them away.", true},
    {D::Money, K::Div, T, "{P} keeps only one of the {K} equal shares that the money is split into.", true},
    {D::Money, K::Div, T, "After dividing the money into {K} equal parts, {P} keeps only one part.", true},
    {D::Money, K::Add, T, "{P} is paid ${N} for washing the car.", true},
    {D::Money, K::Add, T, "{F} pays {P} ${N} for help in the garden.", true},
    {D::Money, K::Add, T, "For walking the dog, {P} is paid ${N}.", true},
    {D::Money, K::Sub, T, "{P} pays {F} ${N} for a ride.", true},
    {D::Money, K::Final, T, "What is the amount of money left for {P} now?", true},
    {D::Time, K::Div, T, "The next day, {P} keeps only one of {K} equal parts of that time.", true},
};
constexpr int kNumTemplates = static_cast<int>(sizeof(kTemplates) / sizeof(kTemplates[0]));

// Template ids of (domain, kind), split into the training pool and the held-out pool.
struct Pools {
  std::vector<int> normal, held;
};
const Pools& pools(Domain d, Kind k, bool broad) {
  static const auto table = [] {
    std::array<std::array<std::array<Pools, 12>, 3>, 2> t{};
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < kNumTemplates; ++i) {
        if (kTemplates[i].broad && !b) continue;
        auto& p = t[b][static_cast<int>(kTemplates[i].domain)][static_cast<int>(kTemplates[i].kind)];
        (kTemplates[i].heldout ? p.held : p.normal).push_back(i);
      }
    return t;
  }();
  return table[broad ? 1 : 0][static_cast<int>(d)][static_cast<int>(k)];
}

// Broad style: more objects, three currencies, connectives before statements, and statements
// that change nothing (distractors, which the reasoning must recognise and skip).
const std::vector<std::string> kObjectsBroad = {
    "apples", "pencils", "stickers", "marbles", "cookies", "books", "cards",    "shells",  "balloons", "eggs",
    "toy cars", "crayons", "stamps", "candies", "oranges", "beads", "rocks", "buttons", "flowers", "peaches",
    "cupcakes", "ribbons"};
struct Currency {
  std::string unit;  // "dollars"
  bool sign;         // "$12" rather than "12 dollars"
};
const std::vector<Currency> kCurrencies = {{"dollars", true}, {"dollars", true}, {"euros", false}, {"pounds", false}};
const std::vector<std::string> kConnectives = {"After that, ", "Later, ", "Next, ", "Soon after, "};
const std::vector<std::string> kDistractors = {"{X} has {N} {O2}.", "{X} is {N} years old.",
                                               "{P}'s friend {X} likes {O2}.", "{X} lives {N} miles away.",
                                               "The {I} is red."};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

const char* fraction_word(int k) {
  switch (k) {
    case 2: return "half";
    case 3: return "a third";
    case 4: return "a quarter";
    default: return "?";
  }
}

// All the words a template may mention.
struct Vars {
  std::string P, F, O, I, Is, A, a, P0, P1, X, O2;
  std::string currency = "dollars";
  bool currency_sign = true;
  int N = 0, Kf = 0;
};

std::string fill(std::string s, const Vars& v) {
  if (!v.currency_sign) replace_all(s, "${N}", "{N} " + v.currency);
  if (v.currency != "dollars") replace_all(s, "dollars", v.currency);
  replace_all(s, "{X}", v.X);
  replace_all(s, "{O2}", v.O2);
  replace_all(s, "{P0}", v.P0);
  replace_all(s, "{P1}", v.P1);
  replace_all(s, "{P}", v.P);
  replace_all(s, "{F}", v.F);
  replace_all(s, "{O}", v.O);
  replace_all(s, "{Is}", v.Is);
  replace_all(s, "{I}", v.I);
  replace_all(s, "{A}", v.A);
  replace_all(s, "{a}", v.a);
  replace_all(s, "{H}", fraction_word(v.Kf));
  replace_all(s, "{N}", std::to_string(v.N));
  replace_all(s, "{K}", std::to_string(v.Kf));
  return s;
}

struct Builder {
  Rng& rng;
  bool heldout_split;
  bool broad;
  Domain domain;
  Item& item;
  bool used_heldout = false;

  int choose_template(Kind k) {
    const Pools& p = pools(domain, k, broad);
    if (heldout_split && !p.held.empty() && (p.normal.empty() || rng.chance(50))) {
      used_heldout = true;
      int id = rng.pick(p.held);
      item.templates.push_back(id);
      return id;
    }
    if (p.normal.empty()) throw std::logic_error("tinygsm: no template");
    int id = rng.pick(p.normal);
    item.templates.push_back(id);
    return id;
  }
};

std::string unit_text(Domain d, const Vars& v) {
  switch (d) {
    case Domain::Objects: return v.O;
    case Domain::Money: return v.currency;
    case Domain::Time: return "minutes";
  }
  return "";
}

// "(k) ". Built by appends: GCC 12 warns falsely (-Wrestrict) on "(" + std::string temporaries.
std::string statement_marker(size_t k) {
  std::string m = "(";
  m += std::to_string(k);
  m += ") ";
  return m;
}

// One attempt at building an item; returns false when the random walk got stuck.
bool build(Rng& rng, bool heldout_split, Style style, int steps, Item& item) {
  const bool broad = style == Style::Broad;
  item.question.clear();
  item.final_question.clear();
  item.sentences.clear();
  item.reasoning.clear();
  item.worked.clear();
  item.templates.clear();

  const int droll = rng.uniform(0, 9);
  const Domain domain = droll < 5 ? Domain::Objects : (droll < 8 ? Domain::Money : Domain::Time);
  Builder b{rng, heldout_split, broad, domain, item};

  // People in order of appearance (distinct).
  std::vector<std::string> people;
  auto new_person = [&]() {
    for (;;) {
      const std::string& n = rng.pick(kNames);
      bool used = false;
      for (auto& p : people) used |= (p == n);
      if (!used) {
        people.push_back(n);
        return n;
      }
    }
  };
  auto other_person = [&](const std::string& not_this) {
    for (;;) {
      const std::string& n = rng.pick(kNames);
      if (n != not_this) return n;
    }
  };

  Vars vars;
  vars.P = new_person();
  vars.O = rng.pick(broad ? kObjectsBroad : kObjects);
  const Thing& thing = rng.pick(kThings);
  vars.I = thing.one;
  vars.Is = thing.many;
  const Activity& act = rng.pick(kActivities);
  vars.A = act.third;
  vars.a = act.base;
  if (broad) {
    const Currency& c = rng.pick(kCurrencies);
    vars.currency = c.unit;
    vars.currency_sign = c.sign;
  }
  const std::string unit = unit_text(domain, vars);
  // A statement of a step; the broad style sometimes opens it with a connective.
  auto statement = [&](Kind k) {
    std::string s = fill(kTemplates[b.choose_template(k)].text, vars);
    if (broad && rng.chance(20) && s.compare(0, vars.P.size(), vars.P) == 0) s = rng.pick(kConnectives) + s;
    return s;
  };

  std::vector<std::string> sentences;
  int v = 0;
  switch (domain) {
    case Domain::Objects: v = rng.uniform(2, 40); break;
    case Domain::Money: v = rng.uniform(10, 60); break;
    case Domain::Time: v = rng.uniform(10, 40); break;
  }
  vars.N = v;
  sentences.push_back(fill(kTemplates[b.choose_template(Kind::Start)].text, vars));

  std::string prev_subject;
  int prev_value = 0;
  bool last_compare = false;
  int remaining = steps;

  // clause: what the step computes, e.g. "Leo has 48 + 7 = 55 dollars"; it joins the quoted
  // question sentence it belongs to (sentence index), or stands alone (-1: "together").
  std::vector<std::pair<int, std::string>> clauses;
  auto add_step = [&](char op, int a, int bb, int r, std::string clause) {
    Step s;
    s.op = op;
    s.a = a;
    s.b = bb;
    s.result = r;
    item.worked.push_back(std::move(s));
    clauses.emplace_back(static_cast<int>(sentences.size()) - 1, std::move(clause));
  };
  auto has = [&](const std::string& who, const std::string& e) {
    return domain == Domain::Time ? "that is " + e + " minutes" : who + " has " + e + " " + unit;
  };
  auto eq = [](int a, char op, int bb, int r) {
    return std::to_string(a) + " " + op + " " + std::to_string(bb) + " = " + std::to_string(r);
  };

  while (remaining > 0) {
    // Which kinds can be used now, with weights.
    struct Option {
      Kind kind;
      int weight;
    };
    std::vector<Option> opts;
    const bool can_compare = domain != Domain::Time;
    if (v + 2 <= kMaxValue) opts.push_back({Kind::Add, 30});
    if (v >= 4) opts.push_back({Kind::Sub, 30});
    if (v <= kMaxMulInput && v * 2 <= kMaxValue) opts.push_back({Kind::Mul, 15});
    std::vector<int> divisors;
    for (int k = 2; k <= (domain == Domain::Time ? 4 : 5); ++k)
      if (v % k == 0 && v / k >= 2) divisors.push_back(k);
    if (!divisors.empty()) opts.push_back({Kind::Div, 20});
    if (domain != Domain::Time && remaining >= 2 && v + 4 <= kMaxValue) opts.push_back({Kind::GroupAdd, 12});
    if (domain == Domain::Money && remaining >= 2 && v >= 6) opts.push_back({Kind::GroupSub, 12});
    if (can_compare && v + 2 <= kMaxValue) opts.push_back({Kind::More, 10});
    if (can_compare && v >= 4) opts.push_back({Kind::Fewer, 10});
    if (can_compare && v <= kMaxMulInput && v * 2 <= kMaxValue) opts.push_back({Kind::Times, 7});
    if (remaining == 1 && last_compare && v + prev_value <= kMaxValue) opts.push_back({Kind::Together, 60});
    if (opts.empty()) return false;
    int total = 0;
    for (auto& o : opts) total += o.weight;
    int roll = rng.uniform(0, total - 1);
    Kind kind = opts.back().kind;
    for (auto& o : opts) {
      if (roll < o.weight) {
        kind = o.kind;
        break;
      }
      roll -= o.weight;
    }

    last_compare = false;
    switch (kind) {
      case Kind::Add: {
        const int hi = std::min(20, kMaxValue - v);
        const int n = rng.uniform(2, hi);
        vars.N = n;
        vars.F = other_person(vars.P);
        sentences.push_back(statement(kind));
        const int r = v + n;
        const std::string s = has(vars.P, eq(v, '+', n, r));
        add_step('+', v, n, r, s);
        v = r;
        remaining -= 1;
        break;
      }
      case Kind::Sub: {
        const int hi = std::min(20, v - 2);
        const int n = rng.uniform(2, hi);
        vars.N = n;
        vars.F = other_person(vars.P);
        sentences.push_back(statement(kind));
        const int r = v - n;
        const std::string s = has(vars.P, eq(v, '-', n, r));
        add_step('-', v, n, r, s);
        v = r;
        remaining -= 1;
        break;
      }
      case Kind::Mul: {
        const int hi = std::min(domain == Domain::Time ? 3 : 4, kMaxValue / v);
        const int k = rng.uniform(2, hi);
        vars.Kf = k;
        sentences.push_back(statement(kind));
        const int r = v * k;
        const std::string s = has(vars.P, eq(v, '*', k, r));
        add_step('*', v, k, r, s);
        v = r;
        remaining -= 1;
        break;
      }
      case Kind::Div: {
        const int k = rng.pick(divisors);
        vars.Kf = k;
        sentences.push_back(statement(kind));
        const int r = v / k;
        const std::string s = has(vars.P, eq(v, '/', k, r));
        add_step('/', v, k, r, s);
        v = r;
        remaining -= 1;
        break;
      }
      case Kind::GroupAdd:
      case Kind::GroupSub: {
        int k = 0, n = 0;
        bool ok = false;
        for (int tries = 0; tries < 20 && !ok; ++tries) {
          k = rng.uniform(2, 5);
          n = rng.uniform(2, 9);
          ok = kind == Kind::GroupAdd ? v + k * n <= kMaxValue : k * n <= v - 2;
        }
        if (!ok) return false;
        vars.Kf = k;
        vars.N = n;
        sentences.push_back(statement(kind));
        const int t = k * n;
        if (kind == Kind::GroupAdd) {
          add_step('*', k, n, t, "that is " + eq(k, '*', n, t) + " " + unit);
          add_step('+', v, t, v + t, has(vars.P, eq(v, '+', t, v + t)));
          v += t;
        } else {
          add_step('*', k, n, t, "that costs " + eq(k, '*', n, t) + " " + unit);
          add_step('-', v, t, v - t, has(vars.P, eq(v, '-', t, v - t)));
          v -= t;
        }
        remaining -= 2;
        break;
      }
      case Kind::More:
      case Kind::Fewer:
      case Kind::Times: {
        int r = 0;
        char op = '+';
        if (kind == Kind::More) {
          const int n = rng.uniform(2, std::min(20, kMaxValue - v));
          vars.N = n;
          r = v + n;
        } else if (kind == Kind::Fewer) {
          const int n = rng.uniform(2, std::min(20, v - 2));
          vars.N = n;
          r = v - n;
          op = '-';
        } else {
          const int k = rng.uniform(2, std::min(4, kMaxValue / v));
          vars.Kf = k;
          r = v * k;
          op = '*';
        }
        vars.F = new_person();
        sentences.push_back(statement(kind));
        const int operand = kind == Kind::Times ? vars.Kf : vars.N;
        add_step(op, v, operand, r, has(vars.F, eq(v, op, operand, r)));
        prev_subject = vars.P;
        prev_value = v;
        vars.P = vars.F;
        v = r;
        last_compare = true;
        remaining -= 1;
        break;
      }
      case Kind::Together: {
        vars.P0 = prev_subject;
        vars.P1 = vars.P;
        const int r = prev_value + v;
        // The together question replaces the final question.
        item.final_question = fill(kTemplates[b.choose_template(kind)].text, vars);
        add_step('+', prev_value, v, r,
                 "Together, " + prev_subject + " and " + vars.P + " have " + eq(prev_value, '+', v, r) + " " + unit + ".");
        clauses.back().first = -1;
        v = r;
        remaining -= 1;
        break;
      }
      default: return false;
    }
  }
  if (item.final_question.empty())  // no "together" question: ask about the current subject
    item.final_question = fill(kTemplates[b.choose_template(Kind::Final)].text, vars);
  if (broad && rng.chance(30)) {  // one statement that changes nothing, anywhere after the first
    vars.X = new_person();
    do vars.O2 = rng.pick(kObjectsBroad);
    while (vars.O2 == vars.O);
    vars.N = rng.uniform(2, 60);
    const size_t at = static_cast<size_t>(rng.uniform(1, static_cast<int>(sentences.size())));
    sentences.insert(sentences.begin() + static_cast<std::ptrdiff_t>(at), fill(rng.pick(kDistractors), vars));
    for (auto& c : clauses)
      if (c.first >= static_cast<int>(at)) ++c.first;
  }
  item.sentences = sentences;
  for (auto& s : sentences) item.question += s + " ";
  item.question += item.final_question;
  // Slow reasoning: the starting statement, then for each numbered statement what it gives, as a
  // sentence that names the statement ("(3) Tom has 12 + 5 = 17 apples."). The statement is not
  // quoted again: a small model copies long quotes badly (statements share whole phrases), while
  // the number "(k)" alone is enough to look statement k up in the question.
  item.reasoning.push_back("(1) " + sentences[0]);
  for (size_t i = 1; i < sentences.size(); ++i) {
    std::string line;
    for (auto& [idx, c] : clauses)
      if (idx == static_cast<int>(i)) line += (line.empty() ? "" : " and ") + c;
    if (line.empty()) line = "This does not change the answer";  // a distractor
    if (line[0] >= 'a' && line[0] <= 'z') line[0] = static_cast<char>(line[0] - 'a' + 'A');
    std::string numbered = statement_marker(i + 1);
    numbered += line;
    numbered += '.';
    item.reasoning.push_back(std::move(numbered));
  }
  for (auto& [idx, c] : clauses)
    if (idx < 0) item.reasoning.push_back(c);
  for (size_t k = 0; k < item.worked.size(); ++k) {
    const int idx = clauses[k].first;
    item.worked[k].sentence = idx < 0 ? item.reasoning.back() : item.reasoning[idx];
  }
  item.answer = v;
  item.steps = static_cast<int>(item.worked.size());
  if (item.steps != steps) return false;
  for (auto& s : item.worked)
    if (s.result < 2 || s.result > kMaxValue) return false;
  if (heldout_split && !b.used_heldout) return false;
  return true;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
std::string_view split_name(Split s) {
  switch (s) {
    case Split::Train: return "train";
    case Split::Validation: return "validation";
    case Split::Test: return "test";
    case Split::Heldout: return "heldout";
  }
  return "?";
}

std::optional<Split> parse_split(std::string_view n) {
  if (n == "train") return Split::Train;
  if (n == "validation" || n == "val") return Split::Validation;
  if (n == "test") return Split::Test;
  if (n == "heldout") return Split::Heldout;
  return std::nullopt;
}

std::string Step::equation() const {
  return std::to_string(a) + " " + op + " " + std::to_string(b) + " = " + std::to_string(result);
}
std::string Step::compact_equation() const {
  return std::to_string(a) + op + std::to_string(b) + "=" + std::to_string(result);
}
int Step::compute() const {
  switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return b != 0 ? a / b : 0;
  }
  return 0;
}

Split hash_split(std::string_view question) {
  const uint64_t h = mix64(util::fnv1a(question)) % 20;
  if (h == 0) return Split::Validation;
  if (h == 1) return Split::Test;
  return Split::Train;
}

int template_count() { return kNumTemplates; }
bool template_is_heldout(int id) { return id >= 0 && id < kNumTemplates && kTemplates[id].heldout; }
bool template_is_broad(int id) { return id >= 0 && id < kNumTemplates && kTemplates[id].broad; }
std::string_view template_text(int id) { return id >= 0 && id < kNumTemplates ? kTemplates[id].text : ""; }

Item generate_item(Split split, uint64_t seed, uint64_t index, int steps, Style style) {
  if (style == Style::Natural) return generate_natural_item(split, seed, index, steps);
  const uint64_t base = mix64(mix64(mix64(seed) ^ (0x51ED2701ull + static_cast<uint64_t>(split))) ^ index);
  Item item;
  for (uint64_t attempt = 0;; ++attempt) {
    Rng rng(mix64(base ^ (attempt * 0xD1B54A32D192ED03ull)));
    const int n_steps = steps > 0 ? steps : rng.uniform(kMinSteps, kMaxSteps);
    if (!build(rng, split == Split::Heldout, style, n_steps, item)) continue;
    if (split != Split::Heldout && hash_split(item.question) != split) continue;
    break;
  }
  item.split = split;
  item.seed = seed;
  item.index = index;
  return item;
}

std::vector<Item> generate(Split split, size_t n, uint64_t seed, int steps, Style style) {
  std::vector<Item> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(generate_item(split, seed, i, steps, style));
  return out;
}

std::string numbered_question(const Item& item) {
  std::string q;
  for (size_t i = 0; i < item.sentences.size(); ++i) {
    q += statement_marker(i + 1);
    q += item.sentences[i];
    q += ' ';
  }
  return q + item.final_question;
}

std::string format_prompt(const Item& item, Mode mode) {
  return user_message(item) + "\nMode: " + std::string(mode_name(mode)) + "\n";
}

std::string format_target(const Item& item, Mode mode) {
  std::string out;
  switch (mode) {
    case Mode::Fast: break;
    case Mode::Mixed:
      for (auto& s : item.worked) out += s.compact_equation() + ". ";
      break;
    case Mode::Slow:
      for (auto& s : item.reasoning) out += s + " ";
      break;
  }
  return out + "Answer: " + std::to_string(item.answer);
}

std::optional<Style> parse_style(std::string_view n) {
  if (n == "classic") return Style::Classic;
  if (n == "broad") return Style::Broad;
  if (n == "natural") return Style::Natural;
  return std::nullopt;
}

std::vector<Item> load_items(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot read " + path);
  std::vector<Item> out;
  std::string line;
  for (size_t no = 1; std::getline(f, line); ++no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(no) + ": ";
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(where + "not a JSON object");
    // tinygsm --jsonl's natural items carry the text as typed in "user_text" (a prefix included).
    auto q = j.find("user_text");
    if (q == j.end()) q = j.find("question");
    const auto a = j.find("answer");
    if (q == j.end() || !q->is_string() || q->get<std::string>().empty())
      throw InputError(where + "\"question\" must be a non-empty string");
    if (a == j.end() || !a->is_number_integer()) throw InputError(where + "\"answer\" must be an integer");
    Item it;
    it.user_text = q->get<std::string>();
    it.question = it.user_text;
    it.final_question = it.user_text;
    it.answer = a->get<int>();
    if (const auto s = j.find("steps"); s != j.end()) {
      if (!s->is_number_integer() || s->get<int>() < 0) throw InputError(where + "\"steps\" must be a non-negative integer");
      it.steps = s->get<int>();
    }
    it.index = out.size();
    out.push_back(std::move(it));
  }
  if (out.empty()) throw InputError(path + ": no questions");
  return out;
}

std::string user_message(const Item& item) {
  return item.user_text.empty() ? "Question: " + numbered_question(item) : item.user_text;
}

std::string format_chat_prompt(const Item& item, Mode mode) {
  std::string p = "<|im_start|>user\n";
  p += user_message(item);
  p += "<|im_end|>\n<|im_start|>system\nReasoning: ";
  p += level_name(mode);
  p += "<|im_end|>\n<|im_start|>assistant\n<think>\n";
  return p;
}

std::string format_chat_target(const Item& item, Mode mode) {
  std::string thinking;
  auto add = [&](const std::string& s) {
    if (!thinking.empty()) thinking += ' ';
    thinking += s;
  };
  if (mode == Mode::Mixed)
    for (auto& s : item.worked) add(s.compact_equation() + ".");
  if (mode == Mode::Slow)
    for (auto& s : item.reasoning) add(s);
  return thinking + "\n</think>\n\nAnswer: " + std::to_string(item.answer) + "<|im_end|>";
}

std::optional<int> parse_answer(std::string_view text) {
  const std::string_view key = "Answer:";
  const size_t pos = text.rfind(key);
  if (pos == std::string_view::npos) return std::nullopt;
  size_t i = pos + key.size();
  while (i < text.size() && text[i] == ' ') ++i;
  bool neg = false;
  if (i < text.size() && text[i] == '-') {
    neg = true;
    ++i;
  }
  long long v = 0;
  size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 10) {
    v = v * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0 || digits >= 10) return std::nullopt;
  return static_cast<int>(neg ? -v : v);
}

std::string to_json(const Item& item) {
  nlohmann::json j;
  j["split"] = split_name(item.split);
  j["seed"] = item.seed;
  j["index"] = item.index;
  j["question"] = item.question;
  if (!item.user_text.empty()) j["user_text"] = item.user_text;
  // eval --data / train-difficulty --data read this form: the user turn as the model is prompted.
  j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", user_message(item)}}});
  j["sentences"] = item.sentences;
  j["final_question"] = item.final_question;
  j["reasoning"] = item.reasoning;
  j["answer"] = item.answer;
  j["steps"] = item.steps;
  nlohmann::json w = nlohmann::json::array();
  for (auto& s : item.worked)
    w.push_back({{"op", std::string(1, s.op)}, {"a", s.a}, {"b", s.b}, {"result", s.result},
                 {"equation", s.equation()}, {"sentence", s.sentence}});
  j["worked"] = w;
  j["templates"] = item.templates;
  for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) {
    j["prompt"][std::string(mode_name(m))] = format_prompt(item, m);
    j["target"][std::string(mode_name(m))] = format_target(item, m);
    j["chat_prompt"][std::string(mode_name(m))] = format_chat_prompt(item, m);
    j["chat_target"][std::string(mode_name(m))] = format_chat_target(item, m);
  }
  return j.dump();
}

}  // namespace kvscope::tinygsm
