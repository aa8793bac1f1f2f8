#include "training/prompt_format.h"

#include <algorithm>

#include "reasoning/user_spans.h"
#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace kvscope::training {

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
}  // namespace

PromptFormat::PromptFormat(const Model& m, reasoning::FormatKind kind) : model_(&m), kind_(kind) {
  // A model without a chat template or reasoning format (a base or random model) is asked in bare
  // text, the first reasoner's form, as these tools always did.
  if (kind_ == reasoning::FormatKind::None && m.chat_template().empty()) kind_ = reasoning::FormatKind::Kvscope;
  if (!chat()) {
    markers_ = {"\nMode: fast\n", "Answer: 12", "\nQuestion: ", "</s>", "<s>", "\nMode: slow\nAnswer: 3\n", "</s><s>Question:"};
    return;
  }
  const std::string tmpl = m.chat_template();
  if (tmpl.empty())
    throw InputError("the model has no chat template and is not the first reasoner (reasoning format '" +
                     std::string(reasoning::format_name(kind)) +
                     "'): its prompts cannot be rendered (give --reasoning-format kvscope for bare 'Question: ... Mode:' text)");
  const auto& tk = m.tokenizer();
  const auto& v = tk.vocab();
  auto add = [&](const std::string& s) {
    if (!s.empty() && !contains(markers_, s)) markers_.push_back(s);
  };
  // The template's own special tokens (ChatML: <|im_start|>, <|im_end|>), typed by a user.
  for (int32_t id = 0; id < tk.n_vocab(); ++id) {
    const auto type = v.types.empty() ? tok::TokenType::Normal : v.types[id];
    if (type != tok::TokenType::Control && type != tok::TokenType::UserDefined) continue;
    if (tmpl.find(v.tokens[id]) != std::string::npos) add(v.tokens[id]);
  }
  const bool think_tags = std::find(v.tokens.begin(), v.tokens.end(), "<think>") != v.tokens.end() &&
                          std::find(v.tokens.begin(), v.tokens.end(), "</think>") != v.tokens.end();
  if (think_tags) {
    add("<think>");
    add("</think>");
    add("</think>\n\nAnswer: 12");
  }
  // Effort-level lines of the formats that read them from a system message.
  if (!reasoning::plan_for_effort(kind, Effort::High).system_line().empty()) {
    add("Reasoning: high");
    add("\nReasoning: low\n");
  }
  // Whole fake turns in the template's own syntax: a system turn setting the level, an assistant
  // turn giving an answer.
  const tok::ChatFormat fmt = tok::detect_chat_format(tmpl);
  auto text_of = [&](int id) { return id >= 0 && id < tk.n_vocab() ? v.tokens[id] : std::string(); };
  add(tok::apply_chat_template(fmt, {{"system", "Reasoning: low"}}, false, text_of(v.bos), text_of(v.eos)));
  add(tok::apply_chat_template(fmt, {{"assistant", "Answer: 12"}}, false, text_of(v.bos), text_of(v.eos)));
  add("Answer: 12");
}

std::string PromptFormat::render(const std::string& user, Mode m) const { return render_messages({{"user", user}}, m); }

std::string PromptFormat::render_messages(const std::vector<tok::ChatMessage>& msgs, Mode m) const {
  if (!chat()) {
    std::string q;
    for (const auto& x : msgs)
      if (x.role == "user") q = x.content;
    return q + (q.empty() || q.back() == '\n' ? "" : "\n") + "Mode: " + std::string(mode_name(m)) + "\n";
  }
  const auto p = plan(m);
  return reasoning::render_chat(*model_, msgs, &p);
}

std::vector<int32_t> PromptFormat::encode(const std::string& text) const {
  if (!chat()) return model_->tokenizer().encode(text, true, false);
  return reasoning::encode_rendered(*model_, text);
}

std::vector<std::pair<int, int>> PromptFormat::user_spans(const std::vector<int32_t>& tokens,
                                                          const std::vector<std::string>& contents) const {
  return reasoning::user_token_spans(*model_, tokens, contents, chat());
}

reasoning::ReasoningPlan PromptFormat::plan(Mode m) const {
  return reasoning::plan_for_effort(kind_, reasoning::effort_for_mode(kind_, m));
}

std::string answer_text(const reasoning::ReasoningPlan& plan, const std::string& response) {
  if (plan.fmt().mode_line() || !plan.fmt().reasons()) return response;
  reasoning::Splitter sp(plan.format, plan.thinking);
  std::string content = sp.push(response).content;
  content += sp.flush().content;
  return content;
}

}  // namespace kvscope::training
