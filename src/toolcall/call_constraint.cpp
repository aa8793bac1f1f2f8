#include "toolcall/call_constraint.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "sampling/mask.h"
#include "util/error.h"

namespace kvscope::toolcall {

namespace {

constexpr int kMaxJoinWhitespace = 8;  // between the name and the arguments; a sampled model must not pad forever

bool is_ws(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

CallSchemas compile_call_schemas(const ToolSpec& spec) {
  CallSchemas out;
  for (const auto& t : spec.tools) {
    try {
      out[t.name] = std::make_shared<const JsonSchema>(t.parameters);
    } catch (const InputError&) {
      // Auto mode leaves this tool's arguments free (the header says why); a forced call refuses it.
    }
  }
  return out;
}

bool AutoCallConstraint::Tail::push(unsigned char c) {
  switch (ph) {
    case Ph::Released: return true;
    case Ph::Args:
      if (!cur.push(c)) return false;
      if (cur.ended()) ph = Ph::Released;
      return true;
    case Ph::Join: break;
  }
  if ((tok == 3 || pos == 0) && is_ws(c)) return ++ws <= kMaxJoinWhitespace;
  switch (tok) {
    case 0:
      if (c != ',') return false;
      tok = 1;
      return true;
    case 1: {
      static constexpr std::string_view kKeys[2] = {"\"arguments\"", "\"parameters\""};
      uint8_t alive = 0;
      for (int i = 0; i < 2; ++i)
        if ((keys >> i & 1) && pos < kKeys[i].size() && static_cast<unsigned char>(kKeys[i][pos]) == c) alive |= 1 << i;
      if (!alive) return false;
      keys = alive;
      ++pos;
      for (int i = 0; i < 2; ++i)
        if ((keys >> i & 1) && pos == kKeys[i].size()) tok = 2;
      return true;
    }
    case 2:
      if (c != ':') return false;
      tok = 3;
      return true;
    default:
      ph = Ph::Args;
      return push(c);
  }
}

AutoCallConstraint::AutoCallConstraint(std::shared_ptr<const TokenPieces> pieces,
                                       std::shared_ptr<const std::vector<std::string>> marks,
                                       std::shared_ptr<const CallSchemas> schemas, ToolFormat format)
    : pieces_(std::move(pieces)),
      marks_(std::move(marks)),
      schemas_(std::move(schemas)),
      // Ids are not read here: a fixed maker spares the clock and randomness per trial.
      parser_(make_tool_call_parser(format, [](ToolFormat, int) { return std::string("x"); })) {}

const std::string& AutoCallConstraint::text_of(int32_t id) const {
  static const std::string kNone;
  const auto i = static_cast<size_t>(id);
  if (id < 0 || i >= pieces_->pieces.size()) return kNone;
  if (!pieces_->pieces[i].empty() || !marks_ || i >= marks_->size()) return pieces_->pieces[i];
  return (*marks_)[i];
}

std::optional<AutoCallConstraint::Tail> AutoCallConstraint::tail_for(const ToolCallParser& p, unsigned char last) const {
  const auto it = schemas_->find(p.calls().back().name);
  if (it == schemas_->end()) return std::nullopt;
  Tail t;
  t.cur = SchemaCursor(*it->second);
  if (last == ']') t.tok = 3;  // Mistral's name[ARGS]: the arguments come next
  return t;
}

bool AutoCallConstraint::free_token_ok(const std::string& text) const {
  const auto p = parser_->clone();
  const size_t n = p->calls().size();
  for (size_t i = 0; i < text.size(); ++i) {
    p->feed(std::string_view(text).substr(i, 1));
    if (p->calls().size() > n) {
      auto t = tail_for(*p, static_cast<unsigned char>(text[i]));
      return !t || t->push(std::string_view(text).substr(i + 1));
    }
  }
  return true;
}

bool AutoCallConstraint::mask(float* logits, int n_vocab) {
  if (tail_) return mask_by_state(*tail_, *pieces_, logits, n_vocab);
  // Free text: only a token that names a call and goes on past the name can leave the schema.
  if (!parser_->naming()) return true;
  const int n = std::min(n_vocab, static_cast<int>(pieces_->pieces.size()));
  for (int id = 0; id < n; ++id) {
    const std::string& t = text_of(id);
    if (t.find_first_of("\"]") == std::string::npos) continue;  // a name ends at '"' (or Mistral's [ARGS])
    if (!free_token_ok(t)) logits[id] = -std::numeric_limits<float>::infinity();
  }
  return true;
}

void AutoCallConstraint::accept(int32_t token) {
  const std::string& t = text_of(token);
  for (size_t i = 0; i < t.size(); ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    const size_t n = parser_->calls().size();
    parser_->feed(std::string_view(t).substr(i, 1));
    if (tail_) {
      tail_->push(c);  // the mask allowed only bytes it takes
      if (tail_->ph == Tail::Ph::Released) tail_.reset();
    } else if (parser_->calls().size() > n) {
      tail_ = tail_for(*parser_, c);
    }
  }
}

}  // namespace kvscope::toolcall
