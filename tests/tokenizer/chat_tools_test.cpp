// Tool conversations rendered by the built-in families, compared with the text the models' own
// Jinja templates give for the same conversation: each expected string below was rendered by
// jinja2 3.1.6 with Hugging Face's tojson (json.dumps, ensure_ascii=False) from the templates of
// Qwen/Qwen2.5-7B-Instruct, Qwen/Qwen3-0.6B, meta-llama/Llama-3.1-8B-Instruct (as in llama.cpp's
// models/templates/) and mistralai/Mistral-7B-Instruct-v0.3, with tool-call arguments passed as objects
// (as vLLM and llama.cpp pass them) and bos_token "" (the tokenizer adds BOS).
#include <gtest/gtest.h>

#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace chat_tools_test {

using namespace kvscope;
using namespace kvscope::tok;
using ojson = nlohmann::ordered_json;

namespace {

const ojson& tools() {
  static const ojson t = ojson::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"},
      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "add", "description": "Add two integers",
      "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
  ])");
  return t;
}

// Two parallel calls, their results, an answer and a new question.
std::vector<ChatMessage> convo() {
  return {{"system", "You are a helpful assistant.", {}, ""},
          {"user", "What is the weather in Paris, and 2+3?", {}, ""},
          {"assistant", "", {{"call_a1", "get_weather", R"({"city":"Paris","unit":"celsius"})"}, {"call_b2", "add", R"({"a":2,"b":3})"}}, ""},
          {"tool", R"({"temperature": 21, "sky": "clear"})", {}, "call_a1"},
          {"tool", "5", {}, "call_b2"},
          {"assistant", "It is 21 \u00b0C and clear in Paris; 2+3 is 5.", {}, ""},
          {"user", "And in Lyon?", {}, ""}};
}

// One call with content beside it, and its result last (the agent's next turn).
std::vector<ChatMessage> single() {
  return {{"system", "You are a helpful assistant.", {}, ""},
          {"user", "What is the weather in Paris?", {}, ""},
          {"assistant", "Let me check.", {{"a1B2c3D4e", "get_weather", R"({"city": "Paris"})"}}, ""},
          {"tool", R"({"temperature": 21})", {}, "a1B2c3D4e"}};
}

std::string render(ChatFormat f, const std::vector<ChatMessage>& m, const ojson* t) {
  return apply_chat_template(f, m, true, "", f == ChatFormat::Mistral ? "</s>" : "", "", t);
}

}  // namespace

TEST(ChatTools, Qwen25Conversation) {
  EXPECT_EQ(render(ChatFormat::ChatML, convo(), &tools()),
            R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris, and 2+3?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
</tool_call>
<tool_call>
{"name": "add", "arguments": {"a": 2, "b": 3}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21, "sky": "clear"}
</tool_response>
<tool_response>
5
</tool_response><|im_end|>
<|im_start|>assistant
It is 21 °C and clear in Paris; 2+3 is 5.<|im_end|>
<|im_start|>user
And in Lyon?<|im_end|>
<|im_start|>assistant
)EXP");
}

TEST(ChatTools, Qwen3Conversation) {
  // Qwen2.5's and Qwen3's templates give the same text once a system message is given.
  static const char* qwen25 = R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris, and 2+3?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
</tool_call>
<tool_call>
{"name": "add", "arguments": {"a": 2, "b": 3}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21, "sky": "clear"}
</tool_response>
<tool_response>
5
</tool_response><|im_end|>
<|im_start|>assistant
It is 21 °C and clear in Paris; 2+3 is 5.<|im_end|>
<|im_start|>user
And in Lyon?<|im_end|>
<|im_start|>assistant
)EXP";
  static const char* qwen3 = R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris, and 2+3?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
</tool_call>
<tool_call>
{"name": "add", "arguments": {"a": 2, "b": 3}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21, "sky": "clear"}
</tool_response>
<tool_response>
5
</tool_response><|im_end|>
<|im_start|>assistant
It is 21 °C and clear in Paris; 2+3 is 5.<|im_end|>
<|im_start|>user
And in Lyon?<|im_end|>
<|im_start|>assistant
)EXP";
  EXPECT_EQ(std::string(qwen25), qwen3);
  EXPECT_EQ(render(ChatFormat::ChatML, convo(), &tools()), qwen3);
  EXPECT_EQ(render(ChatFormat::ChatML, single(), &tools()), R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris?<|im_end|>
<|im_start|>assistant
Let me check.
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21}
</tool_response><|im_end|>
<|im_start|>assistant
)EXP");
  EXPECT_EQ(std::string(R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris?<|im_end|>
<|im_start|>assistant
Let me check.
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21}
</tool_response><|im_end|>
<|im_start|>assistant
)EXP"), R"EXP(<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What is the weather in Paris?<|im_end|>
<|im_start|>assistant
Let me check.
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temperature": 21}
</tool_response><|im_end|>
<|im_start|>assistant
)EXP");
}

TEST(ChatTools, Qwen3WithoutSystemMessage) {
  const ojson add = ojson::array({tools()[1]});
  EXPECT_EQ(render(ChatFormat::ChatML, {{"user", "Hi, what can you do?", {}, ""}}, &add), R"EXP(<|im_start|>system
# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
Hi, what can you do?<|im_end|>
<|im_start|>assistant
)EXP");
}

TEST(ChatTools, Llama31) {
  EXPECT_EQ(render(ChatFormat::Llama3, single(), &tools()), R"EXP(<|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string",
                    "description": "City name, e.g. Paris"
                },
                "unit": {
                    "type": "string",
                    "enum": [
                        "celsius",
                        "fahrenheit"
                    ]
                }
            },
            "required": [
                "city"
            ]
        }
    }
}

{
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {
                    "type": "integer"
                },
                "b": {
                    "type": "integer"
                }
            },
            "required": [
                "a",
                "b"
            ]
        }
    }
}

What is the weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"{\"temperature\": 21}"<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)EXP");
  const ojson add = ojson::array({tools()[1]});
  EXPECT_EQ(render(ChatFormat::Llama3, {{"system", "Be brief.", {}, ""}, {"user", "Hi, what can you do?", {}, ""}}, &add),
            R"EXP(<|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {
                    "type": "integer"
                },
                "b": {
                    "type": "integer"
                }
            },
            "required": [
                "a",
                "b"
            ]
        }
    }
}

Hi, what can you do?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)EXP");
  // Llama 3.1 makes one call a turn; its template refuses more, and so does the renderer.
  EXPECT_THROW(render(ChatFormat::Llama3, convo(), &tools()), InputError);
}

TEST(ChatTools, MistralV03) {
  EXPECT_EQ(render(ChatFormat::Mistral, single(), &tools()), R"EXP([AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}][/AVAILABLE_TOOLS][INST] What is the weather in Paris?[/INST][TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]</s>[TOOL_RESULTS] {"content": {"temperature": 21}, "call_id": "a1B2c3D4e"}[/TOOL_RESULTS])EXP");
  auto m = single();
  m.push_back({"assistant", "It is 21 degrees.", {}, ""});
  m.push_back({"user", "Thanks!", {}, ""});
  EXPECT_EQ(render(ChatFormat::Mistral, m, &tools()), R"EXP([INST] What is the weather in Paris?[/INST][TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]</s>[TOOL_RESULTS] {"content": {"temperature": 21}, "call_id": "a1B2c3D4e"}[/TOOL_RESULTS] It is 21 degrees.</s>[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "add", "description": "Add two integers", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}][/AVAILABLE_TOOLS][INST] You are a helpful assistant.

Thanks![/INST])EXP");
}

TEST(ChatTools, PyJsonWritesAsPythonDoes) {
  const ojson v = ojson::parse(R"({"s": "a\"b\\c\n\u0001 \u00e9", "n": [1, -2.5, 1e+100, true, null], "e": {}, "a": []})");
  EXPECT_EQ(py_json(v), "{\"s\": \"a\\\"b\\\\c\\n\\u0001 \u00e9\", \"n\": [1, -2.5, 1e+100, true, null], \"e\": {}, \"a\": []}");
  EXPECT_EQ(py_json(ojson::parse(R"({"a": [1], "b": {}})"), 2), "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
}

TEST(ChatTools, OtherIdsAndFamilies) {
  // An OpenAI-style id maps to the same 9 characters in the call and in its result.
  auto m = single();
  m[2].tool_calls[0].id = "call_Zq81XbYw3";
  m[3].tool_call_id = "call_Zq81XbYw3";
  const std::string text = render(ChatFormat::Mistral, m, &tools());
  const size_t a = text.find("\"id\": \"") + 7, b = text.find("\"call_id\": \"") + 12;
  EXPECT_EQ(text.substr(a, 9), text.substr(b, 9));
  EXPECT_EQ(text.substr(a + 9, 1), "\"");
  m[3].tool_call_id.clear();
  EXPECT_THROW(render(ChatFormat::Mistral, m, &tools()), InputError);
  // A family without a tool format: the tools in the system text, calls and results as JSON.
  const std::string g = render(ChatFormat::Phi3, single(), &tools());
  EXPECT_EQ(g.rfind("<|system|>\nYou are a helpful assistant.\n\nYou can call these functions:\n{\"name\": \"get_weather\"", 0), 0u) << g;
  EXPECT_NE(g.find("<|assistant|>\nLet me check.\n{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]}<|end|>"),
            std::string::npos)
      << g;
  EXPECT_NE(g.find("<|user|>\n{\"tool_response\": {\"tool_call_id\": \"a1B2c3D4e\", \"content\": \"{\\\"temperature\\\": 21}\"}}<|end|>"),
            std::string::npos)
      << g;
  // Without tools and tool messages nothing changes; an empty tools array is no tools.
  const std::vector<ChatMessage> plain = {{"user", "Hi", {}, ""}};
  const ojson none = ojson::array();
  for (ChatFormat f : {ChatFormat::ChatML, ChatFormat::Llama3, ChatFormat::Mistral, ChatFormat::Gemma})
    EXPECT_EQ(render(f, plain, &none), render(f, plain, nullptr));
  EXPECT_EQ(render(ChatFormat::ChatML, plain, nullptr), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // The embedded model's reasoning level keeps its place with tools.
  const std::string lv = apply_chat_template(ChatFormat::ChatML, plain, true, "", "", "low", &tools());
  const std::string tail = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>system\nReasoning: low<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(lv.substr(lv.size() - std::min(lv.size(), tail.size())), tail);
}

}  // namespace chat_tools_test
