#include "sampling/regex.h"

#include <algorithm>
#include <bitset>
#include <deque>
#include <map>
#include <memory>

#include "util/error.h"

namespace kvscope {

namespace {

// Bounds on the work a hostile pattern can cause (the DFA's construction is about
// DFA states x byte classes x NFA states).
constexpr int kMaxNfaStates = 5000;
constexpr int kMaxDfaStates = 3000;

using Bytes = std::bitset<256>;

// A class of characters: ASCII members, and whether every non-ASCII character belongs.
struct CharClass {
  std::bitset<128> ascii;
  bool non_ascii = false;
  void add_range(int lo, int hi) {
    for (int c = lo; c <= hi; ++c) ascii.set(static_cast<size_t>(c));
  }
  CharClass negated() const {
    CharClass n;
    n.ascii = ~ascii;
    n.non_ascii = !non_ascii;
    return n;
  }
};

struct Node {
  enum class T : uint8_t { Bytes, Cat, Alt, Rep } t = T::Cat;
  Bytes set;  // T::Bytes: one byte from the set
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = -1;  // T::Rep; -1: no maximum
};
using P = std::unique_ptr<Node>;

P bytes(const Bytes& b) {
  auto n = std::make_unique<Node>();
  n->t = Node::T::Bytes;
  n->set = b;
  return n;
}
P cat() { return std::make_unique<Node>(); }
P alt() {
  auto n = std::make_unique<Node>();
  n->t = Node::T::Alt;
  return n;
}
P range_bytes(int lo, int hi) {
  Bytes b;
  for (int c = lo; c <= hi; ++c) b.set(static_cast<size_t>(c));
  return bytes(b);
}

// The UTF-8 encodings of every non-ASCII character (well-formed lead and continuation bytes; the JSON
// layer checks the finer rules).
P any_non_ascii() {
  P a = alt();
  const int leads[3][2] = {{0xC2, 0xDF}, {0xE0, 0xEF}, {0xF0, 0xF4}};
  for (int k = 0; k < 3; ++k) {
    P c = cat();
    c->kids.push_back(range_bytes(leads[k][0], leads[k][1]));
    for (int i = 0; i <= k; ++i) c->kids.push_back(range_bytes(0x80, 0xBF));
    a->kids.push_back(std::move(c));
  }
  return a;
}

P of_class(const CharClass& cc) {
  Bytes b;
  for (int c = 0; c < 128; ++c)
    if (cc.ascii[static_cast<size_t>(c)]) b.set(static_cast<size_t>(c));
  if (!cc.non_ascii) return bytes(b);
  P a = alt();
  if (b.any()) a->kids.push_back(bytes(b));
  a->kids.push_back(any_non_ascii());
  return a;
}

P literal(uint32_t cp) {
  std::string u;
  if (cp < 0x80) {
    u += static_cast<char>(cp);
  } else if (cp < 0x800) {
    u += static_cast<char>(0xC0 | (cp >> 6));
    u += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    u += static_cast<char>(0xE0 | (cp >> 12));
    u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    u += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    u += static_cast<char>(0xF0 | (cp >> 18));
    u += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    u += static_cast<char>(0x80 | (cp & 0x3F));
  }
  P c = cat();
  for (unsigned char b : u) {
    Bytes s;
    s.set(b);
    c->kids.push_back(bytes(s));
  }
  return c;
}

class Parser {
 public:
  explicit Parser(const std::string& p) : s_(p) {}

  // The whole pattern: top-level alternatives, each anchored or searched for.
  P parse() {
    P top = alt();
    for (;;) {
      const bool head = eat('^');
      P body = sequence(true);
      const bool tail = tail_anchor_;
      tail_anchor_ = false;
      P whole = cat();
      if (!head) whole->kids.push_back(anything());
      whole->kids.push_back(std::move(body));
      if (!tail) whole->kids.push_back(anything());
      top->kids.push_back(std::move(whole));
      if (at_end()) break;
      if (!eat('|')) refuse("an unbalanced ')'");
    }
    return top;
  }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw InputError("pattern '" + s_.substr(0, 80) + "': " + what + " is not supported");
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (peek() != c || at_end()) return false;
    ++i_;
    return true;
  }
  static P anything() {  // [\s\S]*: what an unanchored pattern allows around its match
    CharClass all;
    all.ascii.set();
    all.non_ascii = true;
    P r = std::make_unique<Node>();
    r->t = Node::T::Rep;
    r->kids.push_back(of_class(all));
    return r;
  }

  P alternation() {
    P a = alt();
    a->kids.push_back(sequence(false));
    while (eat('|')) a->kids.push_back(sequence(false));
    return a->kids.size() == 1 ? std::move(a->kids[0]) : std::move(a);
  }

  P sequence(bool top) {
    P c = cat();
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        ++i_;
        if (!top || !(at_end() || peek() == '|')) refuse("'$' before the end of the pattern");
        tail_anchor_ = true;
        break;
      }
      if (peek() == '^') refuse("'^' after the start of the pattern");
      P a = atom();
      c->kids.push_back(quantified(std::move(a)));
    }
    if (top && peek() == ')') refuse("an unbalanced ')'");
    return c;
  }

  bool number(int* out) {
    const size_t b = i_;
    long v = 0;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 1000) refuse("a repetition count above 1000");
      ++i_;
    }
    *out = static_cast<int>(v);
    return i_ > b;
  }

  P quantified(P a) {
    for (;;) {
      int lo = -1, hi = -1;
      const size_t save = i_;
      if (eat('*')) lo = 0;
      else if (eat('+')) lo = 1;
      else if (eat('?')) lo = 0, hi = 1;
      else if (eat('{')) {
        int n = 0;
        if (number(&n)) {
          lo = n;
          hi = n;
          if (eat(',')) {
            int m = 0;
            hi = number(&m) ? m : -1;
          }
          if (!eat('}')) lo = -1;
          if (hi >= 0 && hi < lo) refuse("a repetition {n,m} with m below n");
        }
        if (lo < 0) {  // not a quantifier: '{' is a literal, as in ECMA-262 without the u flag
          i_ = save;
          return a;
        }
      } else {
        return a;
      }
      if (eat('+')) refuse("a possessive quantifier");
      eat('?');  // lazy: the same strings match
      P r = std::make_unique<Node>();
      r->t = Node::T::Rep;
      r->min = lo;
      r->max = hi;
      r->kids.push_back(std::move(a));
      a = std::move(r);
    }
  }

  uint32_t utf8_char() {
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (i_ + static_cast<size_t>(n) > s_.size()) refuse("broken UTF-8");
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s_[i_ + static_cast<size_t>(k)]) & 0x3F);
    i_ += static_cast<size_t>(n);
    return cp;
  }

  static CharClass shorthand(char e) {
    CharClass c;
    switch (std::tolower(static_cast<unsigned char>(e))) {
      case 'd': c.add_range('0', '9'); break;
      case 'w':
        c.add_range('0', '9');
        c.add_range('a', 'z');
        c.add_range('A', 'Z');
        c.ascii.set('_');
        break;
      default:  // s: ASCII white space (a subset of ECMA-262's \s)
        for (char w : {' ', '\t', '\n', '\r', '\f', '\v'}) c.ascii.set(static_cast<size_t>(w));
    }
    return std::isupper(static_cast<unsigned char>(e)) ? c.negated() : c;
  }

  // After '\': a character (returned) or a shorthand class (*cls set).
  uint32_t escape(CharClass* cls, bool* is_class, bool in_class) {
    if (at_end()) refuse("a trailing '\\'");
    const char e = s_[i_++];
    *is_class = false;
    switch (e) {
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
        *is_class = true;
        *cls = shorthand(e);
        return 0;
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x':
      case 'u': {
        const int n = e == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (int k = 0; k < n; ++k, ++i_) {
          const int h = at_end() ? -1 : std::isxdigit(static_cast<unsigned char>(peek())) ? std::stoi(std::string(1, peek()), nullptr, 16) : -1;
          if (h < 0) refuse(std::string("a \\") + e + " escape without " + std::to_string(n) + " hex digits");
          v = v * 16 + static_cast<uint32_t>(h);
        }
        if (v >= 0xD800 && v <= 0xDFFF) refuse("a surrogate \\u escape");
        return v;
      }
      case 'b':
        if (in_class) return '\b';
        refuse("'\\b' (a word boundary)");
      case 'B': refuse("'\\B' (a word boundary)");
      case 'p': case 'P': refuse("'\\p{...}' (Unicode properties)");
      case 'k': refuse("'\\k<...>' (a backreference)");
      default:
        if (std::isdigit(static_cast<unsigned char>(e))) refuse("a backreference");
        if (std::isalnum(static_cast<unsigned char>(e))) refuse(std::string("the escape '\\") + e + "'");
        return static_cast<unsigned char>(e);
    }
  }

  P char_class() {
    CharClass cc;
    const bool neg = eat('^');
    bool first = true;
    for (;;) {
      if (at_end()) refuse("an unclosed '['");
      if (peek() == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      auto member = [&](CharClass* sub, bool* is_class) -> uint32_t {
        if (eat('\\')) return escape(sub, is_class, true);
        *is_class = false;
        return utf8_char();
      };
      CharClass sub;
      bool is_class = false;
      const uint32_t lo = member(&sub, &is_class);
      if (is_class) {
        cc.ascii |= sub.ascii;
        cc.non_ascii = cc.non_ascii || sub.non_ascii;
        continue;
      }
      uint32_t hi = lo;
      if (peek() == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
        ++i_;
        CharClass sub2;
        bool cls2 = false;
        hi = member(&sub2, &cls2);
        if (cls2) refuse("a range ending in a class");
        if (hi < lo) refuse("a range out of order");
      }
      if (hi >= 0x80) refuse("a non-ASCII character in a class");
      cc.add_range(static_cast<int>(lo), static_cast<int>(hi));
    }
    return of_class(neg ? cc.negated() : cc);
  }

  P atom() {
    const char c = peek();
    if (c == '(') {
      ++i_;
      if (eat('?')) {
        if (eat(':')) {
        } else if (peek() == '<' && i_ + 1 < s_.size() && s_[i_ + 1] != '=' && s_[i_ + 1] != '!') {
          while (!at_end() && peek() != '>') ++i_;  // a named group: the name does not change what matches
          if (!eat('>')) refuse("an unclosed group name");
        } else {
          refuse("lookaround '(?" + std::string(1, peek()) + "'");
        }
      }
      if (++depth_ > 64) refuse("groups nested deeper than 64");
      P inner = alternation();
      --depth_;
      if (!eat(')')) refuse("an unclosed '('");
      return inner;
    }
    if (c == '[') {
      ++i_;
      return char_class();
    }
    if (c == '.') {
      ++i_;
      CharClass dot;
      dot.ascii.set();
      dot.ascii.reset('\n');
      dot.ascii.reset('\r');
      dot.non_ascii = true;
      return of_class(dot);
    }
    if (c == '*' || c == '+' || c == '?') refuse(std::string("a quantifier '") + c + "' with nothing before it");
    if (c == '\\') {
      ++i_;
      CharClass cls;
      bool is_class = false;
      const uint32_t cp = escape(&cls, &is_class, false);
      return is_class ? of_class(cls) : literal(cp);
    }
    return literal(utf8_char());
  }

  const std::string& s_;
  size_t i_ = 0;
  int depth_ = 0;
  bool tail_anchor_ = false;
};

// Thompson NFA: a state either moves on a byte set to `out`, or has epsilon edges.
struct Nfa {
  struct S {
    Bytes set;
    int out = -1;
    std::vector<int> eps;
  };
  std::vector<S> st;
  int add() {
    if (static_cast<int>(st.size()) >= kMaxNfaStates) throw InputError("pattern: more than 5000 automaton states (repetition counts too large)");
    st.emplace_back();
    return static_cast<int>(st.size()) - 1;
  }
  // Builds n between a fresh start and end state; returns {start, end}.
  std::pair<int, int> build(const Node& n) {
    switch (n.t) {
      case Node::T::Bytes: {
        const int a = add(), b = add();
        st[static_cast<size_t>(a)].set = n.set;
        st[static_cast<size_t>(a)].out = b;
        return {a, b};
      }
      case Node::T::Cat: {
        const int a = add();
        int cur = a;
        for (const auto& k : n.kids) {
          const auto [s, e] = build(*k);
          st[static_cast<size_t>(cur)].eps.push_back(s);
          cur = e;
        }
        return {a, cur};
      }
      case Node::T::Alt: {
        const int a = add(), b = add();
        for (const auto& k : n.kids) {
          const auto [s, e] = build(*k);
          st[static_cast<size_t>(a)].eps.push_back(s);
          st[static_cast<size_t>(e)].eps.push_back(b);
        }
        return {a, b};
      }
      case Node::T::Rep: {
        const int a = add();
        int cur = a;
        for (int i = 0; i < n.min; ++i) {
          const auto [s, e] = build(*n.kids[0]);
          st[static_cast<size_t>(cur)].eps.push_back(s);
          cur = e;
        }
        if (n.max < 0) {  // then any number more
          const auto [s, e] = build(*n.kids[0]);
          const int b = add();
          st[static_cast<size_t>(cur)].eps.push_back(s);
          st[static_cast<size_t>(cur)].eps.push_back(b);
          st[static_cast<size_t>(e)].eps.push_back(s);
          st[static_cast<size_t>(e)].eps.push_back(b);
          return {a, b};
        }
        const int b = add();
        st[static_cast<size_t>(cur)].eps.push_back(b);
        for (int i = n.min; i < n.max; ++i) {  // optional copies
          const auto [s, e] = build(*n.kids[0]);
          st[static_cast<size_t>(cur)].eps.push_back(s);
          st[static_cast<size_t>(e)].eps.push_back(b);
          cur = e;
        }
        return {a, b};
      }
    }
    return {-1, -1};
  }
  void closure(std::vector<int>& set) const {
    std::vector<char> seen(st.size(), 0);
    std::vector<int> stack = set;
    for (int s : set) seen[static_cast<size_t>(s)] = 1;
    while (!stack.empty()) {
      const int s = stack.back();
      stack.pop_back();
      for (int t : st[static_cast<size_t>(s)].eps)
        if (!seen[static_cast<size_t>(t)]) {
          seen[static_cast<size_t>(t)] = 1;
          set.push_back(t);
          stack.push_back(t);
        }
    }
    std::sort(set.begin(), set.end());
  }
};

}  // namespace

RegexDfa::RegexDfa(const std::string& pattern) {
  Parser parser(pattern);
  const P ast = parser.parse();
  Nfa nfa;
  const auto [start, end] = nfa.build(*ast);
  std::map<std::vector<int>, int> ids;
  std::vector<std::vector<int>> sets;
  std::vector<int> s0 = {start};
  nfa.closure(s0);
  ids[s0] = 0;
  sets.push_back(s0);
  // Bytes no byte set tells apart move alike: one class, computed once, one move per class.
  std::vector<int> cls(256, 0);
  int n_cls = 1;
  {
    std::vector<Bytes> seen;
    for (const auto& ns : nfa.st) {
      if (ns.out < 0 || std::find(seen.begin(), seen.end(), ns.set) != seen.end()) continue;
      seen.push_back(ns.set);
      std::map<std::pair<int, bool>, int> split;
      for (int b = 0; b < 256; ++b) {
        const auto key = std::make_pair(cls[static_cast<size_t>(b)], static_cast<bool>(ns.set[static_cast<size_t>(b)]));
        auto it = split.emplace(key, static_cast<int>(split.size())).first;
        cls[static_cast<size_t>(b)] = it->second;
      }
      n_cls = static_cast<int>(split.size());
    }
  }
  for (size_t d = 0; d < sets.size(); ++d) {
    accept_.push_back(std::binary_search(sets[d].begin(), sets[d].end(), end) ? 1 : 0);
    trans_.resize(trans_.size() + 256, kDead);
    std::vector<int> moved(static_cast<size_t>(n_cls), -2);
    for (int b = 0; b < 256; ++b) {
      int& known = moved[static_cast<size_t>(cls[static_cast<size_t>(b)])];
      if (known != -2) {
        trans_[d * 256 + static_cast<size_t>(b)] = known;
        continue;
      }
      std::vector<int> to;
      for (int s : sets[d]) {
        const auto& ns = nfa.st[static_cast<size_t>(s)];
        if (ns.out >= 0 && ns.set[static_cast<size_t>(b)]) to.push_back(ns.out);
      }
      if (to.empty()) {
        known = kDead;
        continue;
      }
      nfa.closure(to);
      to.erase(std::unique(to.begin(), to.end()), to.end());
      auto it = ids.find(to);
      if (it == ids.end()) {
        if (static_cast<int>(sets.size()) >= kMaxDfaStates)
          throw InputError("pattern '" + pattern.substr(0, 80) + "': its automaton passes 3000 states");
        it = ids.emplace(to, static_cast<int>(sets.size())).first;
        sets.push_back(to);
      }
      trans_[d * 256 + static_cast<size_t>(b)] = it->second;
      known = it->second;
    }
  }
  finish();
}

RegexDfa RegexDfa::intersect(const RegexDfa& a, const RegexDfa& b) {
  RegexDfa r;
  std::map<std::pair<int, int>, int> ids;
  std::vector<std::pair<int, int>> pairs = {{0, 0}};
  ids[{0, 0}] = 0;
  for (size_t d = 0; d < pairs.size(); ++d) {
    const auto [x, y] = pairs[d];
    r.accept_.push_back(a.accepting(x) && b.accepting(y));
    r.trans_.resize(r.trans_.size() + 256, kDead);
    for (int c = 0; c < 256; ++c) {
      const int nx = a.next(x, static_cast<unsigned char>(c)), ny = b.next(y, static_cast<unsigned char>(c));
      if (nx < 0 || ny < 0) continue;
      auto it = ids.find({nx, ny});
      if (it == ids.end()) {
        if (static_cast<int>(pairs.size()) >= kMaxDfaStates) throw InputError("pattern and format together: their automaton passes 3000 states");
        it = ids.emplace(std::make_pair(nx, ny), static_cast<int>(pairs.size())).first;
        pairs.emplace_back(nx, ny);
      }
      r.trans_[d * 256 + static_cast<size_t>(c)] = it->second;
    }
  }
  r.finish();
  return r;
}

void RegexDfa::finish() {
  // 0-1 BFS backwards from the accepting states: a lead byte costs one character, a continuation none.
  const size_t n = accept_.size();
  std::vector<std::vector<std::pair<int, int>>> rev(n);
  for (size_t s = 0; s < n; ++s)
    for (int b = 0; b < 256; ++b) {
      const int t = trans_[s * 256 + static_cast<size_t>(b)];
      if (t >= 0) rev[static_cast<size_t>(t)].emplace_back(static_cast<int>(s), (b & 0xC0) == 0x80 ? 0 : 1);
    }
  min_chars_.assign(n, -1);
  std::deque<int> q;
  for (size_t s = 0; s < n; ++s)
    if (accept_[s]) {
      min_chars_[s] = 0;
      q.push_back(static_cast<int>(s));
    }
  while (!q.empty()) {
    const int t = q.front();
    q.pop_front();
    for (const auto& [s, cost] : rev[static_cast<size_t>(t)]) {
      const int d = min_chars_[static_cast<size_t>(t)] + cost;
      int& cur = min_chars_[static_cast<size_t>(s)];
      if (cur < 0 || d < cur) {
        cur = d;
        if (cost == 0) q.push_front(s);
        else q.push_back(s);
      }
    }
  }
}

}  // namespace kvscope
