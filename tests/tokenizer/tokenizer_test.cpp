// Tokenizer unit tests: UTF-8 validation, streaming decode, round trips, special tokens, errors,
// speed, and chat templates.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tok_test_util.h"
#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace kvscope::tok::testing {
namespace {

std::unique_ptr<Tokenizer> load(const std::string& name) {
  const std::string path = name == "stories260K" ? kvscope::test::shared_model("stories260K.gguf")
                                                 : oracle_dir() + "/llama.cpp/models/ggml-vocab-" + name + ".gguf";
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << missing_oracle_msg(path);
    return nullptr;
  }
  auto f = gguf::File::open(path);
  return Tokenizer::from_gguf(*f);
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"));
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));    // U+10FFFF
  EXPECT_TRUE(is_valid_utf8("\xed\x9f\xbf"));        // U+D7FF
  EXPECT_FALSE(is_valid_utf8("\x80"));               // lone continuation
  EXPECT_FALSE(is_valid_utf8("\xc3"));               // truncated
  EXPECT_FALSE(is_valid_utf8("\xe6\x97"));           // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));           // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xc1\xbf"));           // overlong
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));       // overlong
  EXPECT_FALSE(is_valid_utf8("\xf0\x80\x80\xaf"));   // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));       // surrogate U+D800
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));   // > U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xf5\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("a\xc3(b"));            // bad continuation
  EXPECT_FALSE(is_valid_utf8(std::string("ok\0\xfe", 4)));
}

TEST(StreamDecoder, EmojiSplitOverByteTokens) {
  auto tok = load("llama-spm");
  ASSERT_TRUE(tok);
  const std::string emoji = "\xf0\x9f\xa6\x99";  // U+1F999, not a single token in Llama 2's vocab
  const auto ids = tok->encode("ok " + emoji + " done", false, false);
  int n_byte_tokens = 0;
  for (TokenId id : ids) n_byte_tokens += tok->vocab().types[static_cast<size_t>(id)] == TokenType::Byte;
  ASSERT_EQ(n_byte_tokens, 4) << ids_str(ids);
  StreamDecoder sd(*tok);
  std::string all;
  for (TokenId id : ids) {
    const std::string part = sd.push(id);
    EXPECT_TRUE(is_valid_utf8(part)) << "piece for id " << id;
    all += part;
  }
  all += sd.flush();
  EXPECT_EQ(all, " ok " + emoji + " done");  // streams keep the SPM prefix space
  EXPECT_EQ(tok->decode(ids), "ok " + emoji + " done");
}

TEST(StreamDecoder, TruncatedAndInvalidBytes) {
  auto tok = load("llama-spm");
  ASSERT_TRUE(tok);
  const TokenId f0 = tok->encode("\xf0\x9f\xa6\x99", false, false).at(1);  // <0xF0> after "▁"
  ASSERT_EQ(tok->token_to_piece(f0), "\xf0");
  StreamDecoder sd(*tok);
  EXPECT_EQ(sd.push(f0), "");
  EXPECT_EQ(sd.flush(), "\xef\xbf\xbd");  // an unfinished sequence becomes U+FFFD
  const TokenId ff = tok->encode("\xff", false, false).back();
  ASSERT_EQ(tok->token_to_piece(ff), "\xff");
  StreamDecoder sd2(*tok);
  const std::string s = sd2.push(ff) + sd2.flush();
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_EQ(s, "\xef\xbf\xbd");
}

const std::vector<std::string>& round_trip_texts() {
  static const std::vector<std::string> t = {
      "Hello world", "  spaced   out  ", "line\nbreaks\r\n\ttabs", "Café 日本語 😀 👨‍👩‍👧",
      "code: if (a<b) { return a+b; }", "12345 67.89", "I'm fine, you're ok", "",
  };
  return t;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};
TEST_P(RoundTrip, DecodeEncode) {
  auto tok = load(GetParam());
  ASSERT_TRUE(tok);
  for (const std::string& t : round_trip_texts()) {
    for (bool add_special : {false, true}) {
      const auto ids = tok->encode(t, add_special, false);
      EXPECT_EQ(tok->decode(ids), t) << GetParam() << " add_special=" << add_special << " ids " << ids_str(ids);
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Vocabs, RoundTrip, ::testing::Values("llama-spm", "llama-bpe", "qwen2", "gpt-2", "stories260K"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Tokenizer, SpecialTokensAndBos) {
  auto spm = load("llama-spm");
  ASSERT_TRUE(spm);
  const Vocab& v = spm->vocab();
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_EQ(spm->encode("", true, false), std::vector<TokenId>{1});
  EXPECT_TRUE(spm->encode("", false, false).empty());
  auto ids = spm->encode("Hi</s>", true, true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids.back(), 2);
  EXPECT_NE(spm->encode("Hi</s>", true, false).back(), 2);  // plain text without parse_special
  EXPECT_TRUE(spm->is_eog(2));
  EXPECT_FALSE(spm->is_eog(1));
  EXPECT_EQ(spm->token_to_piece(1), "");
  EXPECT_EQ(spm->token_to_piece(1, true), "<s>");
  EXPECT_THROW(spm->token_to_piece(spm->n_vocab()), InputError);

  auto qwen = load("qwen2");
  ASSERT_TRUE(qwen);
  EXPECT_FALSE(qwen->vocab().add_bos);
  const auto q = qwen->encode("<|im_start|>user\nHi<|im_end|>", true, true);
  ASSERT_EQ(q.size(), 5u) << ids_str(q);
  EXPECT_EQ(qwen->vocab().tokens[static_cast<size_t>(q[0])], "<|im_start|>");
  EXPECT_TRUE(qwen->is_eog(q.back()));
  EXPECT_EQ(qwen->decode(q), "user\nHi");
  EXPECT_EQ(qwen->decode(q, true), "<|im_start|>user\nHi<|im_end|>");

  auto l3 = load("llama-bpe");
  ASSERT_TRUE(l3);
  Vocab v3 = l3->vocab();  // llama.cpp's vocab file lacks add_bos_token; real Llama 3 files set it
  v3.add_bos = true;
  auto l3b = Tokenizer::create(v3);
  const auto l = l3b->encode("Hello", true, false);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l3->vocab().tokens[static_cast<size_t>(l[0])], "<|begin_of_text|>");
  EXPECT_EQ(l3b->decode(l), "Hello");
  const TokenId eot = l3->encode("<|eot_id|>", false, true).at(0);
  EXPECT_TRUE(l3->is_eog(eot));
  EXPECT_EQ(l3->vocab().eot, eot);
}

Vocab tiny_vocab(const std::string& model, const std::string& pre) {
  Vocab v;
  v.model = model;
  v.pre = pre;
  v.tokens = {"<unk>", "<s>", "</s>", "a", "b"};
  v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control, TokenType::Normal, TokenType::Normal};
  v.unk = 0;
  return v;
}

TEST(Tokenizer, UnknownModelAndPreAreFormatErrors) {
  try {
    Tokenizer::create(tiny_vocab("gpt2", "no-such-pre"));
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-pre"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tokenizer::create(tiny_vocab("bert", "")), FormatError);
  Vocab empty;
  empty.model = "llama";
  EXPECT_THROW(Tokenizer::create(empty), FormatError);
  // SPM without byte tokens: an unknown character becomes one <unk>.
  auto t = Tokenizer::create(tiny_vocab("llama", ""));
  EXPECT_EQ(t->encode("ab", false, false), (std::vector<TokenId>{0, 3, 4}));  // "▁" -> unk
}

// Forced answers may only open with these: digits or a minus sign after any leading spaces (SPM's
// word marker is a space in the token's text).
TEST(Tokenizer, NumberStartMask) {
  Vocab v = tiny_vocab("llama", "");
  for (const char* t : {"\xE2\x96\x81" "12", "7", "\xE2\x96\x81-", "x1", "\xE2\x96\x81" "Answer"}) {
    v.tokens.push_back(t);
    v.types.push_back(TokenType::Normal);
  }
  auto t = Tokenizer::create(v);
  const auto& m = t->number_start_mask();
  EXPECT_EQ(m, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(&t->number_start_mask(), &m);  // built once
  EXPECT_TRUE(Tokenizer::create(tiny_vocab("llama", ""))->number_start_mask().empty());  // no such token
  // A number already begun goes on only with digits, with no space before them.
  EXPECT_EQ(t->number_continue_mask(), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_TRUE(Tokenizer::create(tiny_vocab("llama", ""))->number_continue_mask().empty());
}

// 100 KB in one call: the whole text comes back; the time is printed, not asserted (speed is for
// benchmarks, and this test also runs under sanitizers on a shared machine).
TEST(Tokenizer, LongTextRoundTrips) {
  for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
    auto tok = load(name);
    ASSERT_TRUE(tok);
    std::string text;
    const std::string para = "The quick brown fox jumps over the lazy dog. Café 日本語 😀 12345\n\tcode(x) { y++; }  ";
    while (text.size() < 100 * 1024) text += para;
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = tok->encode(text, true, true);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[tokenizer] %s: %zu bytes -> %zu tokens in %.3f s\n", name, text.size(), ids.size(), s);
    EXPECT_GT(ids.size(), 10000u);
    EXPECT_EQ(tok->decode(ids), text) << name;
  }
}

// ---- chat templates: expected renderings follow llama.cpp's tests/test-chat-template.cpp ----

const std::vector<ChatMessage>& conversation() {
  static const std::vector<ChatMessage> c = {
      {"system", "You are a helpful assistant"}, {"user", "Hello"},
      {"assistant", "Hi there"},                 {"user", "Who are you"},
      {"assistant", "   I am an assistant   "},  {"user", "Another question"},
  };
  return c;
}

TEST(ChatTemplate, ChatML) {
  EXPECT_EQ(apply_chat_template(ChatFormat::ChatML, conversation(), true, "", ""),
            "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
            "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3) {
  EXPECT_EQ(apply_chat_template(ChatFormat::Llama3, conversation(), true, "<|begin_of_text|>", "<|eot_id|>"),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
            "\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user"
            "<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama2) {
  EXPECT_EQ(apply_chat_template(ChatFormat::Llama2, conversation(), true, "<s>", "</s>"),
            "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you "
            "[/INST]   I am an assistant   </s><s>[INST] Another question [/INST]");
}

TEST(ChatTemplate, Mistral) {
  EXPECT_EQ(apply_chat_template(ChatFormat::Mistral, conversation(), true, "<s>", "</s>"),
            "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an "
            "assistant</s>[INST] Another question[/INST]");
}

TEST(ChatTemplate, Zephyr) {
  EXPECT_EQ(apply_chat_template(ChatFormat::Zephyr, conversation(), true, "<s>", "</s>"),
            "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi there</s>\n"
            "<|user|>\nWho are you</s>\n<|assistant|>\n   I am an assistant   </s>\n<|user|>\nAnother question</s>\n"
            "<|assistant|>\n");
  // llama.cpp's zephyr test template ends turns with <|endoftext|>.
  EXPECT_EQ(apply_chat_template(ChatFormat::Zephyr, {{"user", "Hi"}}, false, "", "<|endoftext|>"),
            "<|user|>\nHi<|endoftext|>\n");
}

TEST(ChatTemplate, Gemma) {
  // No system turn: the system text opens the first user turn; the assistant is "model".
  EXPECT_EQ(apply_chat_template(ChatFormat::Gemma, conversation(), true, "<bos>", "<eos>"),
            "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi "
            "there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an "
            "assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatTemplate, Phi3) {
  EXPECT_EQ(apply_chat_template(ChatFormat::Phi3, conversation(), true, "<s>", "<|endoftext|>"),
            "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n"
            "<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother "
            "question<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, DetectsGemmaAndPhi3) {
  EXPECT_EQ(detect_chat_format("{{ bos_token }}{% for message in loop_messages %}{{ '<start_of_turn>' + role + '\n' + "
                               "message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"),
            ChatFormat::Gemma);
  EXPECT_EQ(detect_chat_format("{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + "
                               "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' "
                               "+ message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
                               "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}"),
            ChatFormat::Phi3);
}

TEST(ChatTemplate, Detect) {
  EXPECT_EQ(detect_chat_format("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                               "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"),
            ChatFormat::ChatML);
  EXPECT_EQ(detect_chat_format("{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' "
                               "+ message['content'] | trim + '<|eot_id|>' %}"),
            ChatFormat::Llama3);
  EXPECT_EQ(detect_chat_format("{% if message['role'] == 'system' %}{{ '<<SYS>>\\n' + content + '\\n<</SYS>>\\n\\n' }}"
                               "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"),
            ChatFormat::Llama2);
  EXPECT_EQ(detect_chat_format("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
                               "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + "
                               "eos_token}}{% endif %}{% endfor %}"),
            ChatFormat::Mistral);
  EXPECT_EQ(detect_chat_format("{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + "
                               "message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ "
                               "'<|assistant|>\\n'  + message['content'] + eos_token }}{% endif %}{% endfor %}"),
            ChatFormat::Zephyr);
  const std::string unknown = "{{ 'Human: ' + message['content'] }} and a long tail of text that is cut off somewhere";
  try {
    detect_chat_format(unknown);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown chat template: " + unknown.substr(0, 60));
  }
}

TEST(ChatTemplate, Names) {
  for (ChatFormat f : {ChatFormat::Llama2, ChatFormat::Llama3, ChatFormat::ChatML, ChatFormat::Mistral, ChatFormat::Zephyr,
                       ChatFormat::Gemma, ChatFormat::Phi3})
    EXPECT_EQ(chat_format_from_name(chat_format_name(f)), f);
  EXPECT_THROW(chat_format_from_name("vicuna"), InputError);
  EXPECT_THROW(apply_chat_template(ChatFormat::ChatML, {{"function", "x"}}, false, "", ""), InputError);
}

TEST(ChatTemplate, EncodesToSpecialTokens) {
  auto qwen = load("qwen2");
  ASSERT_TRUE(qwen);
  const std::string prompt = apply_chat_template(ChatFormat::ChatML, {{"user", "Hi"}}, true, "", "");
  const auto ids = qwen->encode(prompt, true, true);
  int n_special = 0;
  for (TokenId id : ids) n_special += qwen->vocab().types[static_cast<size_t>(id)] == TokenType::Control;
  EXPECT_EQ(n_special, 3) << ids_str(ids);
}

}  // namespace
}  // namespace kvscope::tok::testing
