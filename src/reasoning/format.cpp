#include "reasoning/format.h"
#include "reasoning/user_spans.h"

#include <algorithm>

#include "model/model.h"
#include "util/error.h"

namespace kvscope::reasoning {

namespace {

bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool has_token(const tok::Tokenizer& tk, const std::string& text) {
  const auto& toks = tk.vocab().tokens;
  return std::find(toks.begin(), toks.end(), text) != toks.end();
}

// gpt-oss's channel markers around the analysis (reasoning) and the final answer.
constexpr const char* kHarmonyAnalysis = "<|channel|>analysis<|message|>";
constexpr const char* kHarmonyEnd = "<|end|>";
constexpr const char* kHarmonyFinal = "<|start|>assistant<|channel|>final<|message|>";

}  // namespace

// ---- the formats ----

namespace {

class NoneFormat final : public Format {
 public:
  FormatKind kind() const override { return FormatKind::None; }
  std::string_view name() const override { return "none"; }
  bool reasons() const override { return false; }
};

// think, qwen3, deepseek-r1: a <think> block the prompt opens (thinking) or leaves empty (none).
class ThinkFormat final : public Format {
 public:
  ThinkFormat(FormatKind k, std::string_view n) : kind_(k), name_(n) {}
  FormatKind kind() const override { return kind_; }
  std::string_view name() const override { return name_; }
  bool think_block() const override { return true; }
  Effort effort_for_mode(Mode m) const override {
    return m == Mode::Fast ? Effort::None : m == Mode::Mixed ? Effort::Medium : Effort::High;
  }
  void shape(ReasoningPlan& p, const EffortBudgets& b) const override {
    p.thinking = p.effort >= Effort::Low;
    p.budget = p.effort == Effort::Low ? b.low : p.effort == Effort::Medium ? b.medium : -1;
  }
  void no_thinking(ReasoningPlan& p) const override { p.thinking = false; }
  std::string prompt_suffix(const ReasoningPlan& p) const override {
    return p.thinking ? "<think>\n" : "<think>\n\n</think>\n\n";
  }
  std::string cut_text() const override { return "\n</think>\n\n"; }
  Delimiters delimiters() const override { return {"<think>", "</think>", ""}; }

 private:
  FormatKind kind_;
  std::string_view name_;
};

// The embedded model: the level in a system turn after the conversation, thinking in a <think>
// block the prompt always opens (its lowest level writes it empty).
class LevelsFormat final : public Format {
 public:
  FormatKind kind() const override { return FormatKind::Levels; }
  std::string_view name() const override { return "levels"; }
  bool level_after_conversation() const override { return true; }
  std::string prompt_suffix(const ReasoningPlan&) const override { return "<think>\n"; }
  std::string cut_text() const override { return "\n</think>\n\n"; }
  std::string system_line(const ReasoningPlan& p) const override { return "Reasoning: " + level_name(p); }
  std::string level_name(const ReasoningPlan& p) const override { return std::string(kvscope::level_name(p.mode)); }
  Delimiters delimiters() const override { return {"<think>", "</think>", ""}; }
};

// gpt-oss: the level in the system message, the analysis channel, then the final channel.
class GptOssFormat final : public Format {
 public:
  FormatKind kind() const override { return FormatKind::GptOss; }
  std::string_view name() const override { return "gpt-oss"; }
  Effort default_effort() const override { return Effort::Medium; }
  std::string cut_text() const override { return std::string(kHarmonyEnd) + kHarmonyFinal; }
  std::string system_line(const ReasoningPlan& p) const override { return "Reasoning: " + level_name(p); }
  std::string level_name(const ReasoningPlan& p) const override { return std::string(kvscope::level_name(p.mode)); }
  Delimiters delimiters() const override { return {kHarmonyAnalysis, kHarmonyEnd, kHarmonyFinal}; }
};

// The first embedded model: "Mode: fast|mixed|slow" after a bare question, "Answer:" after the working.
class KvscopeFormat final : public Format {
 public:
  FormatKind kind() const override { return FormatKind::Kvscope; }
  std::string_view name() const override { return "kvscope"; }
  bool mode_line() const override { return true; }
  std::string cut_text() const override { return "Answer:"; }
  std::string level_name(const ReasoningPlan& p) const override { return std::string(mode_name(p.mode)); }
  Delimiters delimiters() const override { return {"", "Answer:", ""}; }
};

const NoneFormat kNone;
const ThinkFormat kThink(FormatKind::Think, "think"), kQwen3(FormatKind::Qwen3, "qwen3"),
    kDeepSeek(FormatKind::DeepSeekR1, "deepseek-r1");
const GptOssFormat kGptOss;
const LevelsFormat kLevels;
const KvscopeFormat kKvscope;
// The registry, in the order errors list the names.
const Format* const kFormats[] = {&kNone, &kThink, &kQwen3, &kDeepSeek, &kGptOss, &kLevels, &kKvscope};

}  // namespace

Effort Format::effort_for_mode(Mode m) const {
  return m == Mode::Fast ? Effort::Low : m == Mode::Mixed ? Effort::Medium : Effort::High;
}

void Format::shape(ReasoningPlan& p, const EffortBudgets&) const {
  p.thinking = reasons();  // formats with levels always reason first; the level sets how much
  p.budget = -1;
}

void Format::no_thinking(ReasoningPlan& p) const {
  p.mode = Mode::Fast;
  p.effort = effort_for_mode(Mode::Fast);
}

std::string Format::level_name(const ReasoningPlan& p) const { return std::string(effort_name(p.effort)); }

const Format& format_of(FormatKind f) {
  for (const Format* x : kFormats)
    if (x->kind() == f) return *x;
  return kNone;
}

std::string_view format_name(FormatKind f) { return format_of(f).name(); }

std::optional<FormatKind> parse_format(std::string_view s) {
  for (const Format* x : kFormats)
    if (s == x->name()) return x->kind();
  if (s == "deepseek") return FormatKind::DeepSeekR1;
  return std::nullopt;
}

std::string format_names() {
  std::string out;
  for (const Format* x : kFormats) out += (out.empty() ? "" : ", ") + std::string(x->name());
  return out;
}

FormatKind detect_format(const std::string& t, const tok::Tokenizer& tk, const std::string& name) {
  // The first embedded model (and models trained like it) has no template; its name says what it is.
  if (t.empty() && starts_with(name, "kvscope-reasoner")) return FormatKind::Kvscope;
  if (has(t, "<|channel|>")) return FormatKind::GptOss;
  // Levels in the system message with a think block (the embedded model's template).
  if (has(t, "Reasoning:") && has(t, "<think>")) return FormatKind::Levels;
  if (has(t, "reasoning_effort") && has(t, "Reasoning:")) return FormatKind::GptOss;
  if (has(t, "enable_thinking")) return FormatKind::Qwen3;
  const bool think_tokens = has_token(tk, "<think>") && has_token(tk, "</think>");
  // A template that never mentions a think block belongs to a model that does not think (Qwen3's
  // instruct-only releases keep <think> in the vocabulary); without a template the vocabulary decides.
  const bool think = has(t, "<think>") || has(t, "</think>") || (t.empty() && think_tokens);
  if (!think) return FormatKind::None;
  if (has(t, "\xef\xbd\x9c" "Assistant\xef\xbd\x9c")) return FormatKind::DeepSeekR1;  // <｜Assistant｜>
  return FormatKind::Think;
}

FormatKind detect_format(const Model& m) {
  return detect_format(m.chat_template(), m.tokenizer(), m.file().get_string("general.name", ""));
}

Mode mode_for_effort(FormatKind, Effort e) {
  switch (e) {
    case Effort::Medium: return Mode::Mixed;
    case Effort::High:
    case Effort::Auto: return Mode::Slow;
    default: return Mode::Fast;
  }
}

ReasoningPlan plan_for_effort(FormatKind f, Effort e, const EffortBudgets& b, std::optional<int> budget) {
  const Format& fm = format_of(f);
  ReasoningPlan p;
  p.format = f;
  p.effort = e == Effort::Auto ? Effort::High : e;
  p.mode = mode_for_effort(f, p.effort);
  if (!fm.reasons()) return p;
  fm.shape(p, b);
  if (budget) {
    if (*budget == 0) {  // no thinking at all
      fm.no_thinking(p);
      p.budget = -1;
    } else if (p.thinking) {
      p.budget = *budget;
    }
  }
  if (!p.thinking) p.budget = -1;
  return p;
}

ReasoningPlan plan(FormatKind f, const PlanRequest& r, const EffortBudgets& b) {
  const Format& fm = format_of(f);
  const std::string fmt = "the model's reasoning format is '" + std::string(fm.name()) + "'";
  if (r.budget && *r.budget < -1)
    throw InputError("reasoning budget must be -1 (unbounded), 0 (no thinking) or a positive number of tokens (got " +
                     std::to_string(*r.budget) + ")");
  const bool requested = r.effort || r.enable_thinking || r.budget;
  if (!fm.reasons()) {
    if (r.effort && *r.effort != Effort::None && *r.effort != Effort::Minimal)
      throw InputError("reasoning effort '" + std::string(effort_name(*r.effort)) + "' cannot be expressed: " + fmt +
                       " (no think block or effort levels; start with --reasoning-format to choose one)");
    if (r.enable_thinking.value_or(false))
      throw InputError("enable_thinking cannot be honoured: " + fmt + " (no think block)");
    if (r.budget && *r.budget > 0)
      throw InputError("a thinking budget cannot be honoured: " + fmt + " (no think block)");
    ReasoningPlan p;
    p.requested = requested;
    return p;
  }
  Effort e;
  if (r.effort && *r.effort != Effort::Auto) {
    e = *r.effort;
    const bool off = e == Effort::None || e == Effort::Minimal;
    if (fm.think_block() && r.enable_thinking && *r.enable_thinking == off)
      throw InputError("reasoning effort '" + std::string(effort_name(e)) + "' contradicts enable_thinking " +
                       (*r.enable_thinking ? "true" : "false"));
  } else if (r.enable_thinking && !*r.enable_thinking) {
    e = Effort::None;
  } else if (r.budget) {
    e = *r.budget == 0 ? Effort::None : Effort::High;
  } else {
    // As the model does by default: think formats think without a bound, gpt-oss's default level is
    // medium, the levels template's is high, kvscope writes its own mode line.
    e = fm.default_effort();
  }
  ReasoningPlan p = plan_for_effort(f, e, b, r.budget);
  p.requested = requested;
  return p;
}

std::string ReasoningPlan::prompt_suffix() const { return fmt().prompt_suffix(*this); }
std::string ReasoningPlan::cut_text() const { return fmt().cut_text(); }
std::string ReasoningPlan::system_line() const { return fmt().system_line(*this); }
std::string ReasoningPlan::level_name() const { return fmt().level_name(*this); }

Splitter::Splitter(FormatKind f, bool open) {
  const Format& fm = format_of(f);
  const auto d = fm.delimiters();
  active_ = fm.reasons() && !d.close.empty();
  if (!active_) {
    state_ = State::Content;
    return;
  }
  open_ = d.open, close_ = d.close, awaits_ = d.after_close;
  // A think block the prompt did not open: the model opens it itself or answers directly.
  state_ = open || !fm.think_block() ? State::Reasoning : State::Start;
}

void Splitter::step(Delta& d, bool final) {
  for (;;) {
    switch (state_) {
      case State::Start: {
        // A think format without a prefilled block: the model opens it itself or answers directly.
        const size_t b = held_.find_first_not_of(" \t\r\n");
        if (b == std::string::npos) {
          if (final) held_.clear();
          return;
        }
        std::string_view s(held_);
        s.remove_prefix(b);
        if (starts_with(s, open_)) {
          held_.erase(0, b + open_.size());
          fresh_ = false;
          state_ = State::Reasoning;
          continue;
        }
        if (!final && starts_with(open_, s)) return;
        state_ = State::Content;
        continue;
      }
      case State::Reasoning: {
        if (fresh_ && !open_.empty()) {  // a model that opens the block the prompt already opened
          if (starts_with(held_, open_)) {
            held_.erase(0, open_.size());
            fresh_ = false;
            continue;
          }
          if (!final && starts_with(open_, held_)) return;
          fresh_ = false;
        }
        fresh_ = false;
        const size_t pos = held_.find(close_);
        if (pos != std::string::npos) {
          d.reasoning += held_.substr(0, pos);
          held_.erase(0, pos + close_.size());
          state_ = State::AfterClose;
          continue;
        }
        size_t keep = 0;  // the longest tail that may still become the delimiter
        if (!final)
          for (size_t k = std::min(held_.size(), close_.size() - 1); k > 0; --k)
            if (held_.compare(held_.size() - k, k, close_, 0, k) == 0) {
              keep = k;
              break;
            }
        d.reasoning += held_.substr(0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return;
      }
      case State::AfterClose: {
        const size_t b = held_.find_first_not_of(" \t\r\n");
        held_.erase(0, b == std::string::npos ? held_.size() : b);
        if (!awaits_.empty()) {
          if (starts_with(held_, awaits_)) {
            held_.erase(0, awaits_.size());
            awaits_.clear();
          } else if (!final && starts_with(awaits_, held_)) {
            return;
          }
        }
        if (held_.empty() && !final) return;
        state_ = State::Content;
        continue;
      }
      case State::Content:
        d.content += held_;
        held_.clear();
        return;
    }
  }
}

Splitter::Delta Splitter::push(std::string_view text) {
  Delta d;
  held_.append(text);
  step(d, false);
  return d;
}

Splitter::Delta Splitter::flush() {
  Delta d;
  step(d, true);
  return d;
}

std::string render_chat(const Model& model, const std::vector<tok::ChatMessage>& msgs, const ReasoningPlan* plan) {
  const std::string tmpl = model.chat_template();
  if (tmpl.empty()) throw InputError("the model has no chat template (tokenizer.chat_template); run without --chat");
  const tok::ChatFormat fmt = tok::detect_chat_format(tmpl);
  const auto& tk = model.tokenizer();
  const auto& v = tk.vocab();
  auto text_of = [&](int id) { return id >= 0 && id < tk.n_vocab() ? v.tokens[id] : std::string(); };
  const bool question_only = !plan && format_of(detect_format(model)).level_after_conversation();
  const std::string level = plan && !plan->system_line().empty() ? plan->level_name() : "";
  std::string prompt = tok::apply_chat_template(fmt, msgs, !question_only, text_of(v.bos), text_of(v.eos), level);
  if (plan) prompt += plan->prompt_suffix();  // the think block the plan opens (or leaves empty)
  return prompt;
}

std::vector<int32_t> encode_rendered(const Model& model, const std::string& prompt) {
  const auto& tk = model.tokenizer();
  const auto& v = tk.vocab();
  // Templates that spell out BOS themselves must not get a second one.
  const std::string bos = v.bos >= 0 && v.bos < tk.n_vocab() ? v.tokens[v.bos] : std::string();
  const bool has_bos = !bos.empty() && prompt.rfind(bos, 0) == 0;
  return tk.encode(prompt, !has_bos, true);
}

std::vector<std::pair<int, int>> user_token_spans(const Model& model, const std::vector<int32_t>& prompt,
                                                  const std::vector<std::string>& user_contents, bool parse_special) {
  const auto& tk = model.tokenizer();
  std::vector<std::pair<int, int>> spans;
  size_t from = 0;
  // Knuth-Morris-Pratt, linear in the prompt: the messages are the client's, and a naive search
  // is quadratic on text built to almost match (a long run of one token before the real one).
  auto find = [&](const std::vector<int32_t>& ids, size_t at) -> size_t {
    if (ids.empty() || ids.size() > prompt.size()) return std::string::npos;
    std::vector<size_t> fail(ids.size(), 0);
    for (size_t i = 1, k = 0; i < ids.size(); ++i) {
      while (k > 0 && ids[i] != ids[k]) k = fail[k - 1];
      if (ids[i] == ids[k]) ++k;
      fail[i] = k;
    }
    for (size_t i = at, k = 0; i < prompt.size(); ++i) {
      while (k > 0 && prompt[i] != ids[k]) k = fail[k - 1];
      if (prompt[i] == ids[k]) ++k;
      if (k == ids.size()) return i + 1 - k;
    }
    return std::string::npos;
  };
  for (const auto& c : user_contents) {
    // Templates commonly trim a message; the trimmed text is what the prompt holds.
    const size_t b = c.find_first_not_of(" \t\r\n"), e = c.find_last_not_of(" \t\r\n");
    if (b == std::string::npos) continue;
    const auto ids = tk.encode(c.substr(b, e - b + 1), false, parse_special);
    size_t at = find(ids, from), len = ids.size();
    // The edges may differ inside the prompt (a tokenizer's dummy-prefix space, a merge with a
    // newline): match without the first token, the last, or both; an edge token of the prompt that
    // is the same word but for leading spaces is taken back in.
    auto word = [&](int32_t id) {
      std::string p = tk.token_to_piece(id, true);
      const size_t k = p.find_first_not_of(" \t\n");
      return k == std::string::npos ? std::string() : p.substr(k);
    };
    for (int drop = 1; at == std::string::npos && drop <= 3 && ids.size() > 2; ++drop) {
      const bool head = drop != 2, tail = drop != 1;
      const std::vector<int32_t> part(ids.begin() + head, ids.end() - tail);
      at = find(part, from), len = part.size();
      if (at == std::string::npos) continue;
      if (head && at > from && !word(ids.front()).empty() && word(prompt[at - 1]) == word(ids.front())) --at, ++len;
      if (tail && at + len < prompt.size() && !word(ids.back()).empty() && word(prompt[at + len]) == word(ids.back())) ++len;
    }
    if (at == std::string::npos) continue;
    spans.emplace_back(static_cast<int>(at), static_cast<int>(at + len));
    from = at + len;
  }
  return spans;
}

}  // namespace kvscope::reasoning
