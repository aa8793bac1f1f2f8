// `kvscope serve` takes the engine flags of `run` (one definition: KV types incl. q8_0/q4_0 names,
// --kv-layer-types @map, llama.cpp spellings such as -ctk/-ctv/-ngl/-fa/-cb/-np), reports its KV
// types and bytes per token, and its greedy text and kvscope.signals equal `run --json`'s with the
// same flags.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmath>
#include <fstream>
#include <regex>

#include "server_test_util.h"

namespace server_flags_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

bool have_bin() {
  const std::string bin = kvscope_bin();
  return bin.find('/') != std::string::npos && std::filesystem::exists(bin);
}

std::string sh_quote(const std::string& s) { return "'" + s + "'"; }

void expect_signals_equal(const json& run_sig, const json& srv_sig) {
  ASSERT_TRUE(srv_sig.is_object()) << srv_sig.dump();
  EXPECT_EQ(run_sig["n_tokens"], srv_sig["n_tokens"]);
  EXPECT_EQ(run_sig["layers"], srv_sig["layers"]);
  for (const char* k : {"kv_coe_c", "kv_coe_r", "kv_coe_c_norm", "kv_coe_r_norm", "max_prob", "perplexity", "entropy",
                        "hidden_coe_c", "hidden_coe_r"}) {
    ASSERT_TRUE(srv_sig.contains(k)) << k;
    const double a = run_sig[k].get<double>(), b = srv_sig[k].get<double>();
    // The engine batches the prompt differently from run's Context: equal up to float rounding.
    EXPECT_NEAR(a, b, 2e-3 * std::max(1.0, std::abs(a))) << k;
  }
}

}  // namespace

TEST(ServeFlags, QuantizedKvServerMatchesRun) {
  if (!have_bin()) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const std::string model = server_model_path();
  const std::string prompt = "The quick brown fox jumps over the lazy dog because";
  const int n = 12;
  const auto map = (temp_dir() / "serve-kv-map.txt").string();
  { std::ofstream(map) << "# calibrated map\n0-1:q8_0\n2-3:f16/fp8\n"; }
  struct Case {
    std::vector<std::string> serve;  // llama.cpp spellings where they exist, to check those too
    std::string run;
    std::string types;
  };
  const std::vector<Case> cases = {
      {{"-m", model, "-ctk", "q8_0", "-ctv", "q4_0", "-ngl", "99", "-fa", "-cb", "-np", "4"},
       "--cache-type-k q8_0 --cache-type-v q4_0", "int8"},
      {{"-m", model, "--kv-layer-types", "@" + map}, "--kv-layer-types @" + sh_quote(map), "fp8"},
  };
  for (const auto& c : cases) {
    ServeProcess srv(c.serve);
    ASSERT_GT(srv.port, 0) << srv.notes;
    auto models = http(srv.port, "GET", "/v1/models");
    ASSERT_EQ(models.status, 200) << models.body;
    const json info = models.j()["data"][0]["kvscope"];
    EXPECT_NE(info["kv_types"].get<std::string>().find(c.types), std::string::npos) << info.dump();
    const double bpt = info["kv_bytes_per_token"].get<double>();
    EXPECT_GT(bpt, 0);
    const std::string m = http(srv.port, "GET", "/metrics").body;
    EXPECT_EQ(metric(m, "kvscope_kv_bytes_per_token"), bpt);
    EXPECT_NE(m.find("kvscope_kv_cache_info{types=\""), std::string::npos);

    auto r = post(srv.port, "/v1/completions", {{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}});
    ASSERT_EQ(r.status, 200) << r.body;
    int st = 0;
    const std::string out = run_capture(sh_quote(kvscope_bin()) + " run -m " + sh_quote(model) + " -p " + sh_quote(prompt) +
                                            " -n " + std::to_string(n) + " --temp 0 -t 2 --json " + c.run + " 2>/dev/null",
                                        &st);
    ASSERT_EQ(st, 0) << out;
    const json ran = json::parse(out);
    EXPECT_EQ(r.j()["choices"][0]["text"], ran["text"]) << c.run;
    expect_signals_equal(ran["signals"], r.j()["kvscope"]["signals"]);
  }
  // An int8 server uses fewer than half the bytes per token of an f32 one.
  ServeProcess f32({"-m", model, "--kv-type", "f32"});  // the default is f16
  ServeProcess q({"-m", model, "--kv-type", "int8"});
  ASSERT_GT(f32.port, 0);
  ASSERT_GT(q.port, 0);
  EXPECT_LT(http(q.port, "GET", "/v1/models").j()["data"][0]["kvscope"]["kv_bytes_per_token"].get<double>(),
            http(f32.port, "GET", "/v1/models").j()["data"][0]["kvscope"]["kv_bytes_per_token"].get<double>() / 2);
}

TEST(ServeFlags, StreamFinalChunkCarriesSignalsAndOffRemovesThem) {
  auto srv = start_server();
  HttpConn s(srv->port());
  ASSERT_TRUE(s.send("POST", "/v1/chat/completions",
                     json{{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 6}, {"temperature", 0}, {"stream", true}}.dump()));
  HttpResponse head;
  ASSERT_TRUE(s.read_head(head));
  std::string ev, last;
  while (!(ev = s.next_event()).empty() && ev != "[DONE]") last = ev;
  const json fin = json::parse(last);
  ASSERT_TRUE(fin.contains("kvscope")) << last;
  EXPECT_GT(fin["kvscope"]["signals"]["max_prob"].get<double>(), 0);
  EXPECT_GT(fin["kvscope"]["signals"]["perplexity"].get<double>(), 0);
  srv.reset();

  auto o = test_options();
  o.signals = false;
  o.default_max_tokens = 3;  // serve -n 3
  srv = start_server(o);
  auto r = post(srv->port(), "/v1/completions", {{"prompt", "Hi"}, {"temperature", 0}});
  ASSERT_EQ(r.status, 200);
  EXPECT_FALSE(r.j()["kvscope"].contains("signals")) << r.body;
  EXPECT_LE(r.j()["usage"]["completion_tokens"].get<int>(), 3);  // no max_tokens: serve's -n
}

TEST(ServeFlags, LlamaCppSpellings) {
  if (!have_bin()) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const std::string model = server_model_path();
  const auto pf = (temp_dir() / "llama-flags-prompt.txt").string();
  { std::ofstream(pf) << "Once upon a time"; }
  // -ngl 0 is a no-op with a note (not "-n gl"); -fa with and without a value; -c/-t/-n/-f.
  auto r = run_cli("run -m " + sh_quote(model) + " -f " + sh_quote(pf) + " -n 5 -c 256 -t 1 -ngl 0 -fa on -ctk q8_0 --temp 0 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("CPU only"), std::string::npos) << r.out;
  auto p = run_cli("run -m " + sh_quote(model) + " -p 'Once upon a time' -n 5 -c 256 -t 1 -fa --cache-type-k int8 --temp 0 --json");
  ASSERT_EQ(p.status, 0) << p.out;
  // Same prompt from -f and -p, same KV type under both names: same text.
  auto text = [](const std::string& out) {
    const auto b = out.find('{');
    return b == std::string::npos ? json() : json::parse(out.substr(b))["text"];
  };
  EXPECT_EQ(text(r.out), text(p.out));
  auto bad = run_cli("serve -m " + sh_quote(model) + " --port 0 --kv-type bogus");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("unknown KV cache type 'bogus'"), std::string::npos) << bad.out;
}

// run --session-file: the second run of a longer prompt reuses the saved KV and writes the same
// text as a run without the file; a damaged file is one clear error.
TEST(ServeFlags, RunSessionFile) {
  if (!have_bin()) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const std::string model = server_model_path();
  const auto f = (temp_dir() / ("run-session-" + std::to_string(::getpid()) + ".bin")).string();
  std::filesystem::remove(f);
  auto json_of = [](const CliResult& r) {
    const auto b = r.out.find('{');
    return b == std::string::npos ? json::object() : json::parse(r.out.substr(b));
  };
  const std::string base = "run -m " + sh_quote(model) + " -n 8 --temp 0 -t 2 --json ";
  const std::string p1 = "In the morning the market opens and the traders";
  auto first = run_cli(base + "-p " + sh_quote(p1) + " --session-file " + sh_quote(f));
  ASSERT_EQ(first.status, 0) << first.out;
  ASSERT_TRUE(std::filesystem::exists(f));
  EXPECT_EQ(json_of(first)["prompt_tokens_cached"], 0);
  const std::string p2 = p1 + json_of(first)["text"].get<std::string>() + " After that,";
  auto second = run_cli(base + "-p " + sh_quote(p2) + " --session-file " + sh_quote(f));
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_GT(json_of(second)["prompt_tokens_cached"].get<int>(), 0) << second.out;
  auto plain = run_cli(base + "--no-signals -p " + sh_quote(p2));
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_EQ(json_of(second)["text"], json_of(plain)["text"]);
  { std::ofstream(f, std::ios::trunc) << "garbage"; }
  auto bad = run_cli(base + "-p " + sh_quote(p2) + " --session-file " + sh_quote(f));
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("error: --session-file"), std::string::npos) << bad.out;
}

}  // namespace server_flags_test
