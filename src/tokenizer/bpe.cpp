// Byte-level BPE tokenizer ("gpt2" GGUF model), reproducing llama.cpp: the pre-tokenizer splits the
// text into words, each word's bytes are mapped through GPT-2's byte-to-unicode table, and adjacent
// symbols are merged by lowest merge rank (ties: leftmost first).
#include <queue>

#include "tokenizer/internal.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace kvscope::tok::detail {
namespace {

struct Symbol {
  int prev, next;
  size_t off, n;
};

struct Bigram {
  int left, right;
  int rank;
  std::string text;
  bool operator<(const Bigram& o) const {  // priority_queue: top = lowest rank, then leftmost
    return rank > o.rank || (rank == o.rank && left > o.left);
  }
};

class BpeTokenizer final : public TokenizerBase {
 public:
  explicit BpeTokenizer(Vocab v) : TokenizerBase(std::move(v)) {
    pre_ = pre_type_from_name(vocab_.pre, &ignore_merges_);
    ranks_.reserve(vocab_.merges.size() * 2);
    for (size_t i = 0; i < vocab_.merges.size(); ++i) {
      const std::string& m = vocab_.merges[i];
      const size_t sp = m.find(' ', 1);
      std::string key = sp == std::string::npos ? std::string(1, '\0') : m.substr(0, sp) + '\0' + m.substr(sp + 1);
      ranks_.emplace(std::move(key), static_cast<int>(i));  // first occurrence wins
    }
  }

 protected:
  void encode_fragment(const std::string& text, bool, std::vector<TokenId>& out) const override {
    for (const std::string& word : pre_tokenize(pre_, text)) {
      std::string enc;
      enc.reserve(word.size() * 2);
      for (char c : word) enc += uni::byte_to_unicode(static_cast<uint8_t>(c));
      encode_word(enc, out);
    }
  }

  std::string normal_piece(TokenId id) const override {
    const std::string& t = vocab_.tokens[static_cast<size_t>(id)];
    std::string r;
    for (uint32_t cp : uni::decode_lenient(t)) {
      const int b = uni::unicode_to_byte(cp);
      if (b >= 0) {
        r += static_cast<char>(b);
      } else {  // not a byte stand-in (as llama.cpp, keep it visible)
        std::string u;
        uni::append_utf8(u, cp);
        r += "[UNK_BYTE_0x";
        for (unsigned char c : u) {
          static const char* hex = "0123456789abcdef";
          r += hex[c >> 4];
          r += hex[c & 15];
        }
        r += t + "]";
      }
    }
    return r;
  }

 private:
  int rank(const std::string& w, const Symbol& l, const Symbol& r) const {
    std::string key;
    key.reserve(l.n + r.n + 1);
    key.append(w, l.off, l.n).append(1, '\0').append(w, r.off, r.n);
    auto it = ranks_.find(key);
    return it == ranks_.end() ? -1 : it->second;
  }

  void encode_word(const std::string& w, std::vector<TokenId>& out) const {
    if (w.empty()) return;
    if (ignore_merges_) {
      const TokenId id = find(w);
      if (id >= 0) {
        out.push_back(id);
        return;
      }
    }
    std::vector<Symbol> sym;
    for (size_t off = 0; off < w.size();) {
      const size_t len = std::min(uni::utf8_len(static_cast<unsigned char>(w[off])), w.size() - off);
      const int idx = static_cast<int>(sym.size());
      off += len;
      sym.push_back({idx - 1, off == w.size() ? -1 : idx + 1, off - len, len});
    }
    std::priority_queue<Bigram> queue;
    auto add = [&](int left, int right) {
      if (left < 0 || right < 0) return;
      const Symbol& l = sym[static_cast<size_t>(left)];
      const Symbol& r = sym[static_cast<size_t>(right)];
      const int rk = rank(w, l, r);
      if (rk < 0) return;
      queue.push({left, right, rk, w.substr(l.off, l.n + r.n)});
    };
    for (int i = 1; i < static_cast<int>(sym.size()); ++i) add(i - 1, i);
    while (!queue.empty()) {
      const Bigram bg = queue.top();
      queue.pop();
      Symbol& l = sym[static_cast<size_t>(bg.left)];
      Symbol& r = sym[static_cast<size_t>(bg.right)];
      if (l.n == 0 || r.n == 0) continue;
      // Stale unless the two symbols still spell the bigram (they are adjacent in the word).
      if (l.n + r.n != bg.text.size() || w.compare(l.off, l.n + r.n, bg.text) != 0 || l.off + l.n != r.off) continue;
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = bg.left;
      add(l.prev, bg.left);
      add(bg.left, l.next);
    }
    for (const Symbol& s : sym) {
      if (s.n == 0) continue;
      const std::string piece = w.substr(s.off, s.n);
      const TokenId id = find(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) {  // llama.cpp looks up each raw byte of the mapped text
        const TokenId b = find(std::string(1, c));
        if (b >= 0) out.push_back(b);
      }
    }
  }

  PreType pre_;
  bool ignore_merges_ = false;
  std::unordered_map<std::string, int> ranks_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_bpe(Vocab v) { return std::make_unique<BpeTokenizer>(std::move(v)); }

}  // namespace kvscope::tok::detail
