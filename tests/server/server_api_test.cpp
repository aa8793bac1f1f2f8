// The server's routes over real HTTP on loopback: responses, streams chunk by chunk, stop strings,
// logprobs, extension hooks, cancellation on hang-up and graceful shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "context_generate.h"
#include "engine/context.h"
#include "sampling/json_prefix.h"
#include "signals/embedding.h"
#include "server_test_util.h"

namespace server_api_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

server::Server& shared_server() {
  static std::unique_ptr<server::Server> s = [] {
    auto o = test_options();
    auto srv = std::make_unique<server::Server>(o);
    srv->add_extension_hook([](const server::ResponseInfo& info, json& ext) {
      ext["hook"] = {{"prompt_tokens", info.prompt.size()}, {"text_bytes", info.text.size()}};
    });
    srv->start();
    EXPECT_TRUE(srv->wait_ready(60));
    return srv;
  }();
  return *s;
}
int port() { return shared_server().port(); }

const Model& model() {
  static std::unique_ptr<Model> m = Model::load(server_model_path());
  return *m;
}

// A lone greedy run outside the server: what every greedy request must produce.
std::string greedy_text(const std::string& prompt, int n) {
  Context ctx(model(), {0, 2, 512});
  SamplingParams g;
  g.temperature = 0;
  return generate(ctx, model().tokenizer().encode(prompt, true, false), g, n).text;
}

json with(json b, const std::string& k, const json& v) {
  b[k] = v;
  return b;
}

struct Stream {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::vector<json> chunks;
  bool done = false;  // saw data: [DONE]
  std::string text() const {
    std::string t;
    for (const auto& c : chunks)
      if (!c["choices"].empty()) {
        const json& ch = c["choices"][0];
        t += ch.contains("delta") ? ch["delta"].value("content", std::string()) : ch["text"].get<std::string>();
      }
    return t;
  }
};

Stream stream(const std::string& path, const json& body) {
  HttpConn c(port());
  Stream s;
  HttpResponse r;
  EXPECT_TRUE(c.send("POST", path, body.dump()));
  EXPECT_TRUE(c.read_head(r));
  s.status = r.status;
  s.headers = r.headers;
  for (std::string ev; !(ev = c.next_event()).empty();) {
    if (ev == "[DONE]") {
      s.done = true;
      continue;
    }
    EXPECT_FALSE(s.done) << "event after [DONE]";
    s.chunks.push_back(json::parse(ev));
  }
  return s;
}

}  // namespace

TEST(ServerApi, HealthModelsAndMetrics) {
  auto h = http(port(), "GET", "/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.j()["status"], "ok");
  auto m = http(port(), "GET", "/v1/models");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.j()["object"], "list");
  ASSERT_EQ(m.j()["data"].size(), 1u);
  EXPECT_EQ(m.j()["data"][0]["id"], "default");
  EXPECT_EQ(m.j()["data"][0]["object"], "model");
  EXPECT_EQ(http(port(), "GET", "/v1/models/default").j()["id"], "default");
  auto mt = http(port(), "GET", "/metrics");
  ASSERT_EQ(mt.status, 200);
  EXPECT_NE(mt.headers["content-type"].find("text/plain"), std::string::npos);
  for (const char* name : {"kvscope_requests_running", "kvscope_requests_waiting", "kvscope_prompt_tokens_total",
                           "kvscope_generation_tokens_total", "kvscope_time_to_first_token_seconds_count",
                           "kvscope_inter_token_latency_seconds_count", "kvscope_kv_blocks_used", "kvscope_kv_blocks_cached",
                           "kvscope_prefix_cache_hit_rate", "kvscope_preemptions_total"})
    EXPECT_GE(metric(mt.body, name), 0) << name;
  EXPECT_NE(mt.body.find("# TYPE kvscope_time_to_first_token_seconds histogram"), std::string::npos);
  EXPECT_NE(mt.body.find("kvscope_time_to_first_token_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
}

TEST(ServerApi, CompletionMatchesALoneGreedyRun) {
  const std::string prompt = "Once upon a time";
  const std::string m0 = shared_server().metrics_text();
  auto r = post(port(), "/v1/completions", {{"model", "default"}, {"prompt", prompt}, {"max_tokens", 12}, {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.j();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "default");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["text"], greedy_text(prompt, 12));
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  const auto n_prompt = model().tokenizer().encode(prompt, true, false).size();
  EXPECT_EQ(j["usage"]["prompt_tokens"], n_prompt);
  const int completion_tokens = j["usage"]["completion_tokens"];
  EXPECT_EQ(j["usage"]["total_tokens"], n_prompt + completion_tokens);
  if (j["choices"][0]["finish_reason"] == "length") {
    EXPECT_EQ(completion_tokens, 12);
  }
  EXPECT_TRUE(j["kvscope"].contains("prompt_tokens_cached"));
  EXPECT_EQ(j["kvscope"]["hook"]["prompt_tokens"], n_prompt);  // the extension hook ran
  // The counters moved by exactly this request.
  const std::string m1 = shared_server().metrics_text();
  auto delta = [&](const char* name) { return metric(m1, name) - metric(m0, name); };
  EXPECT_EQ(delta("kvscope_requests_total"), 1);
  EXPECT_EQ(delta("kvscope_prompt_tokens_total"), static_cast<double>(n_prompt));
  EXPECT_EQ(delta("kvscope_generation_tokens_total"), completion_tokens);
  EXPECT_EQ(delta("kvscope_time_to_first_token_seconds_count"), 1);
  EXPECT_EQ(delta("kvscope_inter_token_latency_seconds_count"), completion_tokens - 1);
  EXPECT_EQ(metric(m1, "kvscope_kv_blocks_used"), 0);
  EXPECT_GT(metric(m1, "kvscope_kv_blocks_cached"), 0);  // the prompt's full blocks stay reusable
}

TEST(ServerApi, ChatCompletionAndTokenPrompt) {
  auto r = post(port(), "/v1/chat/completions",
                {{"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hello"}}}},
                 {"max_tokens", 6},
                 {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.j();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(j["choices"][0]["message"]["content"].is_string());
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 5);
  // Content given as text parts renders the same prompt.
  auto r2 = post(port(), "/v1/chat/completions",
                 {{"messages", {{{"role", "system"}, {"content", {{{"type", "text"}, {"text", "Be brief."}}}}},
                                {{"role", "user"}, {"content", "Hello"}}}},
                  {"max_tokens", 6},
                  {"temperature", 0}});
  EXPECT_EQ(r2.j()["choices"][0]["message"]["content"], j["choices"][0]["message"]["content"]);
  // A prompt of token ids.
  auto ids = model().tokenizer().encode("Once upon a time", true, false);
  auto r3 = post(port(), "/v1/completions", {{"prompt", ids}, {"max_tokens", 12}, {"temperature", 0}});
  ASSERT_EQ(r3.status, 200) << r3.body;
  EXPECT_EQ(r3.j()["choices"][0]["text"], greedy_text("Once upon a time", 12));
}

TEST(ServerApi, CompletionStreamsChunkByChunk) {
  const json body = {{"prompt", "The cat sat"}, {"max_tokens", 16}, {"temperature", 0}, {"stream", true}};
  Stream s = stream("/v1/completions", body);
  ASSERT_EQ(s.status, 200);
  EXPECT_NE(s.headers["content-type"].find("text/event-stream"), std::string::npos);
  EXPECT_TRUE(s.done);
  ASSERT_GE(s.chunks.size(), 3u);  // several text chunks and the final one
  std::string id = s.chunks[0]["id"];
  for (size_t i = 0; i < s.chunks.size(); ++i) {
    const json& c = s.chunks[i];
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_EQ(c["id"], id);
    EXPECT_FALSE(c.contains("usage"));
    const bool last = i + 1 == s.chunks.size();
    EXPECT_EQ(c["choices"][0]["finish_reason"].is_null(), !last);
    EXPECT_EQ(c.contains("kvscope"), last);
  }
  EXPECT_EQ(s.text(), greedy_text("The cat sat", 16));
  auto whole = post(port(), "/v1/completions", {{"prompt", "The cat sat"}, {"max_tokens", 16}, {"temperature", 0}});
  EXPECT_EQ(whole.j()["choices"][0]["text"], s.text());
}

TEST(ServerApi, ChatStreamSendsRoleFirstAndUsageLast) {
  const json body = {{"messages", {{{"role", "user"}, {"content", "Tell me"}}}},
                     {"max_tokens", 10},
                     {"temperature", 0},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}}};
  Stream s = stream("/v1/chat/completions", body);
  ASSERT_EQ(s.status, 200);
  EXPECT_TRUE(s.done);
  ASSERT_GE(s.chunks.size(), 3u);
  EXPECT_EQ(s.chunks[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(s.chunks[0]["choices"][0]["delta"]["role"], "assistant");
  const json& usage = s.chunks.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"].get<int>() + usage["usage"]["prompt_tokens"].get<int>(),
            usage["usage"]["total_tokens"].get<int>());
  EXPECT_TRUE(usage.contains("kvscope"));
  const json& fin = s.chunks[s.chunks.size() - 2];
  EXPECT_FALSE(fin["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(fin["choices"][0]["delta"].empty());
  for (size_t i = 0; i + 1 < s.chunks.size(); ++i) EXPECT_TRUE(s.chunks[i]["usage"].is_null());
  auto whole = post(port(), "/v1/chat/completions",
                    {{"messages", {{{"role", "user"}, {"content", "Tell me"}}}}, {"max_tokens", 10}, {"temperature", 0}});
  EXPECT_EQ(whole.j()["choices"][0]["message"]["content"], s.text());
  EXPECT_EQ(whole.j()["usage"], usage["usage"]);
}

TEST(ServerApi, StopStringsAcrossTokenBoundaries) {
  const std::string prompt = "In the beginning";
  const int n = 24;
  Context ctx(model(), {0, 2, 512});
  SamplingParams g;
  g.temperature = 0;
  auto ref = generate(ctx, model().tokenizer().encode(prompt, true, false), g, n);
  // A stop string made of the last byte of one token's text and the first of the next.
  std::string stop;
  std::string before;
  for (size_t i = 2; i + 1 < ref.tokens.size() && stop.empty(); ++i) {
    const std::string a = model().tokenizer().token_to_piece(ref.tokens[i]);
    const std::string b = model().tokenizer().token_to_piece(ref.tokens[i + 1]);
    auto ascii = [](unsigned char c) { return c >= 0x20 && c < 0x7f; };
    if (!a.empty() && !b.empty() && ascii(a.back()) && ascii(b.front())) stop = std::string(1, a.back()) + b.front();
  }
  ASSERT_FALSE(stop.empty()) << "no two adjacent ASCII pieces in " << ref.text;
  const std::string expected = ref.text.substr(0, ref.text.find(stop));
  auto r = post(port(), "/v1/completions",
                {{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}, {"stop", {"\x01never", stop}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j()["choices"][0]["text"], expected);
  EXPECT_EQ(r.j()["choices"][0]["finish_reason"], "stop");
  Stream s = stream("/v1/completions", {{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}, {"stop", stop}, {"stream", true}});
  EXPECT_EQ(s.text(), expected);
  EXPECT_EQ(s.chunks.back()["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(s.text().find(stop), std::string::npos);
}

TEST(ServerApi, Logprobs) {
  auto r = post(port(), "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 3}});
  ASSERT_EQ(r.status, 200) << r.body;
  json lp = r.j()["choices"][0]["logprobs"];
  const size_t n = r.j()["usage"]["completion_tokens"];
  ASSERT_EQ(lp["tokens"].size(), n);
  ASSERT_EQ(lp["token_logprobs"].size(), n);
  ASSERT_EQ(lp["top_logprobs"].size(), n);
  ASSERT_EQ(lp["text_offset"].size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    // An object keyed by token text: tokens with the same text share a key.
    EXPECT_GE(lp["top_logprobs"][i].size(), 1u);
    EXPECT_LE(lp["top_logprobs"][i].size(), 3u);
    double best = -1e9;
    for (auto& [k, v] : lp["top_logprobs"][i].items()) best = std::max(best, v.get<double>());
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), best, 1e-5);  // greedy picks the most likely
  }
  auto c = post(port(), "/v1/chat/completions",
                {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}, {"temperature", 0}, {"logprobs", true},
                 {"top_logprobs", 2}});
  ASSERT_EQ(c.status, 200) << c.body;
  json content = c.j()["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), c.j()["usage"]["completion_tokens"].get<size_t>());
  EXPECT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_TRUE(content[0]["bytes"].is_array());
  // Streams carry each token's logprobs with its chunk.
  Stream s = stream("/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 1}, {"stream", true}});
  size_t streamed = 0;
  for (const auto& ch : s.chunks)
    if (!ch["choices"][0]["logprobs"].is_null()) streamed += ch["choices"][0]["logprobs"]["tokens"].size();
  EXPECT_EQ(streamed, n);
}

TEST(ServerApi, SeedMakesSamplingReproducible) {
  const json body = {{"prompt", "Hello"}, {"max_tokens", 12}, {"temperature", 1.0}, {"top_k", 40}, {"top_p", 0.9},
                     {"min_p", 0.01}, {"seed", 42}, {"presence_penalty", 0.5}, {"frequency_penalty", 0.5}};
  auto a = post(port(), "/v1/completions", body);
  auto b = post(port(), "/v1/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.j()["choices"][0]["text"], b.j()["choices"][0]["text"]);
}

TEST(ServerApi, LogitBiasSteersAndBansTokens) {
  const std::string prompt = "Once upon a time";
  Context ctx(model(), {0, 2, 512});
  SamplingParams g;
  g.temperature = 0;
  const auto lone = generate(ctx, model().tokenizer().encode(prompt, true, false), g, 1);
  ASSERT_EQ(lone.tokens.size(), 1u);
  const int32_t greedy_first = lone.tokens[0];
  auto gen = [&](const json& bias) {
    auto r = post(port(), "/v1/completions",
                  {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"logprobs", 0}, {"logit_bias", bias}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.j()["choices"][0];
  };
  // +100 on one token makes greedy decoding write nothing else.
  const int32_t pushed = 42;
  const std::string piece = model().tokenizer().token_to_piece(pushed);
  json c = gen({{std::to_string(pushed), 100}});
  std::string want;
  for (int i = 0; i < 4; ++i) want += piece;
  EXPECT_EQ(c["text"], want);
  // -100 (OpenAI) and false (llama.cpp's array form) ban the greedy choice: another token comes first.
  for (const json& ban : {json{{std::to_string(greedy_first), -100}}, json::array({json::array({greedy_first, false})})}) {
    json b = gen(ban);
    ASSERT_FALSE(b["logprobs"]["tokens"].empty());
    EXPECT_NE(b["logprobs"]["tokens"][0], model().tokenizer().token_to_piece(greedy_first)) << ban.dump();
  }
  // An empty map changes nothing.
  EXPECT_EQ(gen(json::object())["text"], greedy_text(prompt, 4));
}

TEST(ServerApi, SeveralChoicesShareThePromptsKV) {
  std::string prompt;
  for (int i = 0; i < 8; ++i) prompt += "the choices share this prompt ";
  // Greedy: every choice is the lone greedy run; usage counts the prompt once and every choice's tokens.
  auto g = post(port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", 6}, {"temperature", 0}, {"n", 3}});
  ASSERT_EQ(g.status, 200) << g.body;
  const json gj = g.j();
  ASSERT_EQ(gj["choices"].size(), 3u);
  int completion = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(gj["choices"][i]["index"], i);
    EXPECT_EQ(gj["choices"][i]["text"], greedy_text(prompt, 6));
    completion += static_cast<int>(model().tokenizer().encode(gj["choices"][i]["text"].get<std::string>(), false, false).size());
  }
  const auto n_prompt = model().tokenizer().encode(prompt, true, false).size();
  EXPECT_EQ(gj["usage"]["prompt_tokens"], n_prompt);
  EXPECT_EQ(gj["usage"]["completion_tokens"].get<int>() + gj["usage"]["prompt_tokens"].get<int>(), gj["usage"]["total_tokens"]);
  EXPECT_GE(gj["usage"]["completion_tokens"].get<int>(), 3);
  // The later choices start once the first one's prompt is in the cache, and take its full blocks.
  for (int i = 1; i < 3; ++i) EXPECT_GT(gj["choices"][i]["kvscope"]["prompt_tokens_cached"].get<int>(), 0) << gj.dump();

  // Sampled: choice i is the lone request with seed + i.
  const json sampled = {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 11}, {"cache_salt", "choices"}};
  auto two = post(port(), "/v1/completions", with(sampled, "n", 2));
  ASSERT_EQ(two.status, 200) << two.body;
  auto s0 = post(port(), "/v1/completions", sampled);
  auto s1 = post(port(), "/v1/completions", with(sampled, "seed", 12));
  EXPECT_EQ(two.j()["choices"][0]["text"], s0.j()["choices"][0]["text"]);
  EXPECT_EQ(two.j()["choices"][1]["text"], s1.j()["choices"][0]["text"]);

  // Streamed: each chunk names its choice; the texts per index are the non-streamed ones; one usage, one [DONE].
  Stream st = stream("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", prompt}}}},
                                              {"max_tokens", 5}, {"temperature", 1.0}, {"seed", 5}, {"n", 2}, {"stream", true},
                                              {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(st.status, 200);
  EXPECT_TRUE(st.done);
  std::map<int, std::string> texts;
  std::map<int, int> finished;
  int usages = 0;
  for (const auto& ch : st.chunks) {
    if (!ch["usage"].is_null()) ++usages;
    for (const auto& c : ch["choices"]) {
      texts[c["index"].get<int>()] += c["delta"].value("content", std::string());
      if (!c["finish_reason"].is_null()) finished[c["index"].get<int>()]++;
    }
  }
  EXPECT_EQ(usages, 1);
  EXPECT_EQ(finished, (std::map<int, int>{{0, 1}, {1, 1}}));
  auto whole = post(port(), "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", prompt}}}},
                                                     {"max_tokens", 5}, {"temperature", 1.0}, {"seed", 5}, {"n", 2}});
  ASSERT_EQ(whole.status, 200) << whole.body;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(texts[i], whole.j()["choices"][i]["message"]["content"]) << i;
  EXPECT_EQ(metric(shared_server().metrics_text(), "kvscope_kv_blocks_used"), 0);
}

TEST(ServerApi, SeveralPromptsInOneCompletionsRequest) {
  const std::vector<std::string> texts = {"Once upon a time", "The weather today", "A third prompt, longer than the others are"};
  // Prompt-major: prompt k's n choices are k * n ... k * n + n - 1; greedy, each is its prompt's lone run.
  auto r = post(port(), "/v1/completions", {{"prompt", texts}, {"max_tokens", 5}, {"temperature", 0}, {"n", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.j();
  ASSERT_EQ(j["choices"].size(), 6u);
  size_t n_prompt = 0;
  for (size_t k = 0; k < texts.size(); ++k) {
    n_prompt += model().tokenizer().encode(texts[k], true, false).size();
    for (size_t c = 0; c < 2; ++c) {
      EXPECT_EQ(j["choices"][k * 2 + c]["index"], k * 2 + c);
      EXPECT_EQ(j["choices"][k * 2 + c]["text"], greedy_text(texts[k], 5)) << k << " " << c;
    }
  }
  EXPECT_EQ(j["usage"]["prompt_tokens"], n_prompt);
  EXPECT_EQ(j["usage"]["total_tokens"].get<int>(), j["usage"]["prompt_tokens"].get<int>() + j["usage"]["completion_tokens"].get<int>());
  // Token-id prompts, streamed: the chunks of each prompt's answer carry its index.
  const auto a = model().tokenizer().encode(texts[0], true, false), b = model().tokenizer().encode(texts[1], true, false);
  Stream st = stream("/v1/completions", {{"prompt", {a, b}}, {"max_tokens", 5}, {"temperature", 0}, {"stream", true}});
  ASSERT_EQ(st.status, 200);
  std::map<int, std::string> got;
  for (const auto& ch : st.chunks)
    for (const auto& c : ch["choices"]) got[c["index"].get<int>()] += c["text"].get<std::string>();
  EXPECT_EQ(got, (std::map<int, std::string>{{0, greedy_text(texts[0], 5)}, {1, greedy_text(texts[1], 5)}}));
  EXPECT_TRUE(eventually([&] { return metric(shared_server().metrics_text(), "kvscope_requests_in_flight") == 0; }));
}

TEST(ServerApi, HangingUpOnSeveralChoicesCancelsThemAll) {
  Engine& eng = *shared_server().engine();
  for (const bool streamed : {true, false}) {
    {
      HttpConn c(port());
      ASSERT_TRUE(c.send("POST", "/v1/completions",
                         json{{"prompt", "A long story for three"}, {"max_tokens", 400}, {"temperature", 0}, {"n", 3},
                              {"stream", streamed}}.dump()));
      EXPECT_TRUE(eventually([&] { return eng.stats().running == 3; }, 10)) << streamed;
    }  // hang up while all three run
    EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used == 0 && eng.stats().running == 0; })) << streamed;
  }
  // The handler leaves the in-flight count after the engine has let go of the sequences (a moment
  // later, longer under ASan).
  EXPECT_TRUE(eventually([&] { return metric(shared_server().metrics_text(), "kvscope_requests_in_flight") == 0; }));
}

TEST(ServerApi, JsonObjectResponseFormat) {
  // The test model writes noise; a bias towards JSON's punctuation lets most answers close quickly.
  json bias = json::object();
  const tok::Tokenizer& tk = model().tokenizer();
  for (int id = 0; id < tk.n_vocab(); ++id) {
    const std::string p = tk.token_to_piece(id);
    if (p == "{" || p == "}" || p == "\"" || p == ":") bias[std::to_string(id)] = 8;
  }
  ASSERT_FALSE(bias.empty());
  int closed = 0;
  for (int seed = 0; seed < 8; ++seed) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Answer in JSON"}}}},
                 {"max_tokens", 40},
                 {"seed", seed},
                 {"response_format", {{"type", "json_object"}}},
                 {"logit_bias", bias}};
    auto r = post(port(), "/v1/chat/completions", body);
    ASSERT_EQ(r.status, 200) << r.body;
    const json c = r.j()["choices"][0];
    const std::string text = c["message"]["content"];
    // Every answer is a JSON object or the start of one; one that stopped is whole.
    JsonPrefix prefix(true);
    EXPECT_TRUE(prefix.push(text)) << text;
    if (c["finish_reason"] == "stop") {
      ++closed;
      EXPECT_TRUE(json::parse(text).is_object()) << text;
    } else {
      EXPECT_EQ(c["finish_reason"], "length") << text;
    }
    // The stream writes the same text.
    Stream st = stream("/v1/chat/completions", with(body, "stream", true));
    EXPECT_EQ(st.text(), text) << seed;
  }
  EXPECT_GT(closed, 0);
  std::printf("json_object: %d of 8 closed\n", closed);
  // Without the constraint the same requests are not JSON.
  auto plain = post(port(), "/v1/completions", {{"prompt", "Answer in JSON"}, {"max_tokens", 8}, {"seed", 1}});
  EXPECT_FALSE(json::accept(plain.j()["choices"][0]["text"].get<std::string>()));
}

TEST(ServerApi, JsonSchemaResponseFormat) {
  // Properties in the schema's order (not sorted: "zeta" first), every one written, the types kept.
  const std::string schema_text = R"({"type":"object","properties":{"zeta":{"type":"string"},"count":{"type":"integer"},)"
                                  R"("flag":{"type":"boolean"},"kind":{"enum":["a","b"]},"list":{"type":"array","items":{"type":"null"},"maxItems":2}},)"
                                  R"("required":["zeta"]})";
  json bias = json::object();
  const tok::Tokenizer& tk = model().tokenizer();
  for (int id = 0; id < tk.n_vocab(); ++id) {  // strings and numbers close sooner on the test model
    const std::string p = tk.token_to_piece(id);
    if (p == "\"" || p == "," || p == "\",") bias[std::to_string(id)] = 8;
  }
  ASSERT_FALSE(bias.empty());
  int closed = 0;
  for (int seed = 0; seed < 8; ++seed) {
    // Sent as raw text: the server must take the property order from the body as written.
    const std::string body = R"({"messages":[{"role":"user","content":"JSON please"}],"max_tokens":160,"seed":)" +
                             std::to_string(seed) + R"(,"logit_bias":)" + bias.dump() +
                             R"(,"response_format":{"type":"json_schema","json_schema":{"name":"t","strict":true,"schema":)" +
                             schema_text + "}}}";
    HttpConn c(port());
    HttpResponse r;
    ASSERT_TRUE(c.send("POST", "/v1/chat/completions", body));
    ASSERT_TRUE(c.read_head(r));
    r.body = c.read_body();
    ASSERT_EQ(r.status, 200) << r.body;
    const json ch = r.j()["choices"][0];
    const std::string text = ch["message"]["content"];
    EXPECT_EQ(text.rfind("{\"zeta\":\"", 0), 0u) << text;
    if (ch["finish_reason"] == "stop") {
      ++closed;
      const json v = json::parse(text);
      EXPECT_TRUE(v["zeta"].is_string() && v["count"].is_number_integer() && v["flag"].is_boolean()) << text;
      EXPECT_TRUE(v["kind"] == "a" || v["kind"] == "b") << text;
      EXPECT_TRUE(v["list"].is_array() && v["list"].size() <= 2) << text;
      EXPECT_EQ(text.find("\"count\""), text.find(",\"count\"") + 1) << text;  // right after zeta's value
      EXPECT_EQ(text, nlohmann::ordered_json::parse(text).dump()) << "compact";
    }
  }
  EXPECT_GT(closed, 0);
  std::printf("json_schema: %d of 8 closed\n", closed);
}

TEST(ServerApi, PrefixCacheAndSessions) {
  std::string prompt;
  for (int i = 0; i < 12; ++i) prompt += "shared prefix words ";
  auto a = post(port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", 2}, {"temperature", 0}, {"session_id", "s1"}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.j()["kvscope"]["session_id"], "s1");
  auto b = post(port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", 2}, {"temperature", 0}});
  EXPECT_GT(b.j()["kvscope"]["prompt_tokens_cached"].get<int>(), 0);
  // Another cache salt does not see those blocks.
  auto c = post(port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", 2}, {"temperature", 0}, {"cache_salt", "tenant-b"}});
  EXPECT_EQ(c.j()["kvscope"]["prompt_tokens_cached"], 0);
  EXPECT_EQ(c.j()["choices"][0]["text"], b.j()["choices"][0]["text"]);
  shared_server().engine()->drop_session("0/s1");
}

TEST(ServerApi, HangUpCancelsTheRequestAndFreesItsBlocks) {
  Engine& eng = *shared_server().engine();
  const uint64_t cancelled0 = static_cast<uint64_t>(metric(shared_server().metrics_text(), "kvscope_requests_cancelled_total"));
  {
    HttpConn c(port());
    ASSERT_TRUE(c.send("POST", "/v1/completions",
                       json{{"prompt", "A long story"}, {"max_tokens", 480}, {"temperature", 0}, {"stream", true}}.dump()));
    HttpResponse r;
    ASSERT_TRUE(c.read_head(r));
    ASSERT_FALSE(c.next_event().empty());
    // Engine stats are published at the end of a step, after that step's tokens went out.
    EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used > 0; }, 5));
  }  // hang up mid-stream
  EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used == 0 && eng.stats().running == 0; }));
  // The same for a non-streaming request (noticed through its heartbeat).
  {
    HttpConn c(port());
    ASSERT_TRUE(c.send("POST", "/v1/completions", json{{"prompt", "Another story"}, {"max_tokens", 480}, {"temperature", 0}}.dump()));
    EXPECT_TRUE(eventually([&] { return eng.stats().running == 1; }, 5));
  }
  EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used == 0 && eng.stats().running == 0; }));
  const std::string m = shared_server().metrics_text();
  EXPECT_EQ(metric(m, "kvscope_kv_blocks_used"), 0);
  EXPECT_EQ(metric(m, "kvscope_requests_in_flight"), 0);
  EXPECT_EQ(static_cast<uint64_t>(metric(m, "kvscope_requests_cancelled_total")), cancelled0 + 2);
}

TEST(ServerApi, EmbeddingsComeFromTheKVCache) {
  auto r = post(port(), "/v1/embeddings", json{{"input", json::array({"the cat sat", "a dog ran far away"})}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][1]["index"], 1);
  // Each vector is what the library computes for the same text, and has unit length.
  signals::Embedder direct(model(), {0, 1, 512});
  const auto want = direct.embed_text("a dog ran far away", {});
  const auto got = j["data"][1]["embedding"].get<std::vector<float>>();
  ASSERT_EQ(got.size(), want.size());
  double norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5);
    norm += double(got[i]) * got[i];
  }
  EXPECT_NEAR(norm, 1.0, 1e-4);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 4);
  // dimensions truncates and renormalizes; base64 carries the same float32 values.
  r = post(port(), "/v1/embeddings", json{{"input", "the cat sat"}, {"dimensions", 8}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto small = json::parse(r.body)["data"][0]["embedding"].get<std::vector<float>>();
  ASSERT_EQ(small.size(), 8u);
  double n8 = 0;
  for (float x : small) n8 += double(x) * x;
  EXPECT_NEAR(n8, 1.0, 1e-4);
  r = post(port(), "/v1/embeddings", json{{"input", "the cat sat"}, {"encoding_format", "base64"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body)["data"][0]["embedding"].is_string());
}

TEST(ServerApi, HealthIs503WhileTheModelLoads) {
  std::promise<void> release;
  auto gate = release.get_future().share();
  auto o = test_options();
  o.before_load = [gate] { gate.wait(); };
  server::Server s(o);
  const int p = s.start();
  auto h = http(p, "GET", "/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.j()["status"], "loading");
  auto r = post(p, "/v1/completions", {{"prompt", "x"}});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.j()["error"]["code"], "model_loading");
  release.set_value();
  ASSERT_TRUE(s.wait_ready(60));
  EXPECT_EQ(http(p, "GET", "/health").status, 200);
}

TEST(ServerApi, GracefulShutdownFinishesInFlightStreams) {
  auto o = test_options();
  o.shutdown_grace_s = 30;
  server::Server s(o);
  const int p = s.start();
  ASSERT_TRUE(s.wait_ready(60));
  HttpConn c(p);
  ASSERT_TRUE(c.send("POST", "/v1/completions", json{{"prompt", "Go on"}, {"max_tokens", 64}, {"temperature", 0}, {"stream", true}}.dump()));
  HttpResponse r;
  ASSERT_TRUE(c.read_head(r));
  ASSERT_FALSE(c.next_event().empty());
  std::thread stopper([&] { s.shutdown(); });
  // While draining, new work is refused.
  EXPECT_TRUE(eventually([&] { return http(p, "GET", "/health").status == 503; }, 5));
  std::string ev, last;
  while (!(ev = c.next_event()).empty() && ev != "[DONE]") last = ev;
  EXPECT_EQ(ev, "[DONE]");
  EXPECT_NE(json::parse(last)["choices"][0]["finish_reason"], "cancelled");  // finished: length, or stop at EOS
  stopper.join();
  EXPECT_EQ(s.engine()->stats().blocks.used, 0);
}

TEST(ServerApi, ShutdownPastTheGraceCancelsInFlightWork) {
  auto o = test_options();
  o.shutdown_grace_s = 0;
  server::Server s(o);
  const int p = s.start();
  ASSERT_TRUE(s.wait_ready(60));
  HttpConn c(p);
  ASSERT_TRUE(c.send("POST", "/v1/completions", json{{"prompt", "Go on"}, {"max_tokens", 480}, {"temperature", 0}, {"stream", true}}.dump()));
  HttpResponse r;
  ASSERT_TRUE(c.read_head(r));
  ASSERT_FALSE(c.next_event().empty());
  s.shutdown();
  std::string ev, last;
  while (!(ev = c.next_event()).empty() && ev != "[DONE]") last = ev;
  EXPECT_EQ(ev, "[DONE]");
  EXPECT_EQ(json::parse(last)["choices"][0]["finish_reason"], "cancelled");
  EXPECT_EQ(s.engine()->stats().blocks.used, 0);
}

}  // namespace server_api_test
