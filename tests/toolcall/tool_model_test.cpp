// The tool-calling test models (fixtures::tool_model): each is read as its family and tool format,
// and its vocabulary carries a rendered tool conversation and a forced call's text unchanged.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "tokenizer/chat_template.h"
#include "toolcall/parser.h"

namespace tool_model_test {

using namespace kvscope;
using ojson = nlohmann::ordered_json;

TEST(ToolModel, EachFamilyIsRecognisedAndItsTextRoundTrips) {
  const ojson tools_json = ojson::parse(
      R"([{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}])");
  const ojson req = "required";
  const toolcall::ToolSpec spec = toolcall::parse_tool_spec(&tools_json, &req, nullptr);
  const struct {
    const char* family;
    tok::ChatFormat chat;
    toolcall::ToolFormat tools;
  } cases[] = {{"hermes", tok::ChatFormat::ChatML, toolcall::ToolFormat::Hermes},
               {"llama3", tok::ChatFormat::Llama3, toolcall::ToolFormat::Llama3},
               {"mistral", tok::ChatFormat::Mistral, toolcall::ToolFormat::Mistral}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.family);
    const auto model = Model::load(fixtures::tool_model(c.family));
    const std::string t = model->chat_template();
    EXPECT_EQ(tok::detect_chat_format(t), c.chat);
    EXPECT_EQ(toolcall::detect_tool_format(t), c.tools);
    const std::vector<tok::ChatMessage> msgs = {{"user", "1+1?", {}, ""},
                                                {"assistant", "", {{"abcdefghi", "add", R"({"a": 1})"}}, ""},
                                                {"tool", "2", {}, "abcdefghi"}};
    std::string prompt = tok::apply_chat_template(c.chat, msgs, true, "", "</s>", "", &spec.template_tools);
    // Mistral's end-of-turn is the control token </s>, after which the SentencePiece vocabulary adds a
    // space prefix: the text between them round-trips.
    for (size_t at; (at = prompt.find("</s>")) != std::string::npos;) prompt.erase(at, 4);
    const auto& tk = model->tokenizer();
    EXPECT_EQ(tk.decode(tk.encode(prompt, false, true), true), prompt);
    const toolcall::ForcedCall fc = toolcall::forced_call(spec, c.tools);
    const std::string call = fc.prefix + R"({"name":"add","arguments":{"a":1}})" + fc.suffix;
    EXPECT_EQ(tk.decode(tk.encode(call, false, true), true), call);
  }
}

}  // namespace tool_model_test
