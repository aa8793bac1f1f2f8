// SentencePiece-style tokenizer ("llama" GGUF model), reproducing llama.cpp: spaces become U+2581,
// a leading U+2581 is added at the start and after special tokens (add_space_prefix), then
// adjacent symbols are merged greedily by the score of the merged token (ties: leftmost first);
// pieces that are not tokens are re-split along their merge history and fall back to <0xNN>
// byte tokens.
#include <queue>

#include "tokenizer/internal.h"
#include "tokenizer/unicode.h"

namespace kvscope::tok::detail {
namespace {

struct Symbol {
  int prev, next;
  size_t off, n;  // byte range in the escaped text
};

struct Bigram {
  int left, right;
  float score;
  size_t size;
  bool operator<(const Bigram& o) const {  // priority_queue: top = highest score, then leftmost
    return score < o.score || (score == o.score && left > o.left);
  }
};

class SpmTokenizer final : public TokenizerBase {
 public:
  explicit SpmTokenizer(Vocab v) : TokenizerBase(std::move(v)) {
    is_spm_ = true;
    for (int b = 0; b < 256; ++b) {
      static const char* hex = "0123456789ABCDEF";
      const char buf[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
      TokenId id = find(buf);
      if (id < 0) id = find(std::string(1, static_cast<char>(b)));
      byte_tokens_[b] = id;
    }
  }

 protected:
  void encode_fragment(const std::string& raw, bool after_special, std::vector<TokenId>& out) const override {
    std::string text;
    text.reserve(raw.size() + 8);
    if (vocab_.add_space_prefix && after_special) text = "\xE2\x96\x81";
    for (char c : raw) {
      if (c == ' ') text += "\xE2\x96\x81";
      else text += c;
    }
    tokenize(text, out);
  }

  std::string normal_piece(TokenId id) const override {
    const std::string& t = vocab_.tokens[static_cast<size_t>(id)];
    std::string r;
    r.reserve(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
        r += ' ';
        i += 2;
      } else {
        r += t[i];
      }
    }
    return r;
  }

 private:
  struct Session {
    const SpmTokenizer& tk;
    const std::string& text;
    std::vector<Symbol> sym;
    std::priority_queue<Bigram> queue;
    std::unordered_map<std::string, std::pair<int, int>> rev_merge;

    void try_add(int left, int right) {
      if (left < 0 || right < 0) return;
      const auto& l = sym[static_cast<size_t>(left)];
      const auto& r = sym[static_cast<size_t>(right)];
      std::string s = text.substr(l.off, l.n + r.n);
      const TokenId id = tk.find(s);
      if (id < 0) return;
      queue.push({left, right, tk.vocab_.scores[static_cast<size_t>(id)], s.size()});
      rev_merge[std::move(s)] = {left, right};
    }

    void resegment(const Symbol& s, std::vector<TokenId>& out) {
      const std::string piece = text.substr(s.off, s.n);
      const TokenId id = tk.find(piece);
      if (id >= 0) {
        out.push_back(id);
        return;
      }
      auto it = rev_merge.find(piece);
      if (it == rev_merge.end()) {  // byte fallback; without byte tokens, one <unk> per piece
        bool all_bytes = true;
        for (char c : piece) all_bytes &= tk.byte_tokens_[static_cast<unsigned char>(c)] >= 0;
        if (!all_bytes) {
          if (tk.vocab_.unk >= 0) out.push_back(tk.vocab_.unk);
          return;
        }
        for (char c : piece) out.push_back(tk.byte_tokens_[static_cast<unsigned char>(c)]);
        return;
      }
      const auto [a, b] = it->second;
      resegment(sym[static_cast<size_t>(a)], out);
      resegment(sym[static_cast<size_t>(b)], out);
    }
  };

  void tokenize(const std::string& text, std::vector<TokenId>& out) const {
    if (text.empty()) return;
    Session ss{*this, text, {}, {}, {}};
    ss.sym.reserve(text.size());
    for (size_t off = 0; off < text.size();) {
      const size_t len = std::min(uni::utf8_len(static_cast<unsigned char>(text[off])), text.size() - off);
      const int idx = static_cast<int>(ss.sym.size());
      off += len;
      ss.sym.push_back({idx - 1, off == text.size() ? -1 : idx + 1, off - len, len});
    }
    for (int i = 1; i < static_cast<int>(ss.sym.size()); ++i) ss.try_add(i - 1, i);
    while (!ss.queue.empty()) {
      const Bigram bg = ss.queue.top();
      ss.queue.pop();
      auto& l = ss.sym[static_cast<size_t>(bg.left)];
      auto& r = ss.sym[static_cast<size_t>(bg.right)];
      if (l.n == 0 || r.n == 0 || l.n + r.n != bg.size) continue;  // stale
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) ss.sym[static_cast<size_t>(r.next)].prev = bg.left;
      ss.try_add(l.prev, bg.left);
      ss.try_add(bg.left, l.next);
    }
    for (int i = 0; i != -1; i = ss.sym[static_cast<size_t>(i)].next) ss.resegment(ss.sym[static_cast<size_t>(i)], out);
  }

  TokenId byte_tokens_[256];
};

}  // namespace

std::unique_ptr<Tokenizer> make_spm(Vocab v) { return std::make_unique<SpmTokenizer>(std::move(v)); }

}  // namespace kvscope::tok::detail
