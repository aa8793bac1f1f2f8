// The web UI routes (/, /dashboard, /ui/*), the JSON stats route the dashboard reads, --no-webui and
// the key check on the pages. The pages themselves are driven in a browser by tools/webtest.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <regex>

#include "server/webui.h"
#include "server_test_util.h"

namespace server_webui_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

}  // namespace

TEST(ServerWebUi, ServesPagesFromTheBinary) {
  auto s = start_server();
  const int p = s->port();
  auto root = http(p, "GET", "/");
  ASSERT_EQ(root.status, 200) << root.body;
  EXPECT_TRUE(starts_with(root.headers["content-type"], "text/html")) << root.headers["content-type"];
  EXPECT_NE(root.body.find("<title>kvscope"), std::string::npos);
  EXPECT_NE(root.body.find("/ui/chat.js"), std::string::npos);
  // Nothing is loaded from elsewhere: the policy says so and no file names another host.
  EXPECT_NE(root.headers["content-security-policy"].find("default-src 'none'"), std::string::npos);
  auto dash = http(p, "GET", "/dashboard");
  ASSERT_EQ(dash.status, 200);
  EXPECT_TRUE(starts_with(dash.headers["content-type"], "text/html"));
  EXPECT_NE(dash.body.find("/ui/dashboard.js"), std::string::npos);
  for (const char* f : {"/ui/common.js", "/ui/chat.js", "/ui/dashboard.js", "/ui/login.js"}) {
    auto r = http(p, "GET", f);
    EXPECT_EQ(r.status, 200) << f;
    EXPECT_TRUE(starts_with(r.headers["content-type"], "text/javascript")) << f;
    EXPECT_GT(r.body.size(), 200u) << f;
  }
  EXPECT_TRUE(starts_with(http(p, "GET", "/ui/kvscope.css").headers["content-type"], "text/css"));
  EXPECT_EQ(http(p, "GET", "/ui/missing.js").status, 404);
  EXPECT_NE(http(p, "GET", "/ui/../server.h").status, 200);
  size_t total = 0;
  for (const auto& [name, data] : server::embedded_web_files()) {
    total += data.size();
    const std::string body(data);
    EXPECT_EQ(body.find("http://"), std::string::npos) << name;
    EXPECT_EQ(body.find("https://"), std::string::npos) << name;
    EXPECT_EQ(body.find("//cdn"), std::string::npos) << name;
    // Served byte for byte as embedded.
    EXPECT_EQ(http(p, "GET", "/ui/" + std::string(name)).body, body) << name;
  }
  EXPECT_GE(server::embedded_web_files().size(), 7u);
  EXPECT_GT(total, 10000u);
}

TEST(ServerWebUi, StatsJsonCountsWhatMetricsCounts) {
  auto s = start_server();
  const int p = s->port();
  auto st0 = http(p, "GET", "/v1/stats");
  ASSERT_EQ(st0.status, 200) << st0.body;
  EXPECT_TRUE(starts_with(st0.headers["content-type"], "application/json"));
  json j0 = st0.j();
  EXPECT_EQ(j0["model_loaded"], true);
  EXPECT_EQ(j0["requests"]["total"], 0);
  EXPECT_GT(j0["kv"]["blocks_total"].get<int>(), 0);
  EXPECT_EQ(j0["answer_confidence"]["count"], 0);
  EXPECT_EQ(j0["answer_confidence"]["le"].size(), 10u);

  // A plain request with logprobs (confidence from its top-token probabilities) and one streamed
  // in the fast reasoning mode.
  auto a = post(p, "/v1/completions", json{{"prompt", "Hello there"}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 1}});
  ASSERT_EQ(a.status, 200) << a.body;
  HttpConn c(p);
  ASSERT_TRUE(c.send("POST", "/v1/completions",
                     json{{"prompt", "Question: Tom has 3 apples. How many?"}, {"reasoning", "fast"}, {"max_tokens", 6},
                          {"temperature", 0}, {"stream", true}}
                         .dump()));
  HttpResponse head;
  ASSERT_TRUE(c.read_head(head));
  ASSERT_EQ(head.status, 200);
  std::string ev;
  double stream_max_prob = -1;  // the stream's final chunk carries the answer's signals
  while (!(ev = c.next_event()).empty() && ev != "[DONE]") {
    const json e = json::parse(ev);
    if (e.contains("kvscope") && e["kvscope"].contains("signals"))
      stream_max_prob = e["kvscope"]["signals"]["max_prob"].get<double>();
  }
  auto b = post(p, "/v1/chat/completions", json{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}, {"max_tokens", 4}});
  ASSERT_EQ(b.status, 200) << b.body;

  json j = http(p, "GET", "/v1/stats").j();
  EXPECT_EQ(j["requests"]["total"], 3);
  EXPECT_EQ(j["requests"]["in_flight"], 0);
  EXPECT_EQ(j["requests_by_mode"]["none"], 2);
  EXPECT_EQ(j["requests_by_mode"]["fast"], 1);
  EXPECT_EQ(j["requests_by_requested_reasoning"]["fast"], 1);
  // Every answer carries kvscope.signals, so each one's confidence is its signals' max_prob.
  const json& h = j["answer_confidence"];
  EXPECT_EQ(h["count"], 3);
  ASSERT_GE(stream_max_prob, 0);
  const double expect_sum = a.j()["kvscope"]["signals"]["max_prob"].get<double>() +
                            b.j()["kvscope"]["signals"]["max_prob"].get<double>() + stream_max_prob;
  EXPECT_NEAR(h["sum"].get<double>(), expect_sum, 1e-4);
  EXPECT_EQ(j["ttft_seconds"]["count"], 3);
  const std::string m = http(p, "GET", "/metrics").body;
  EXPECT_EQ(metric(m, "kvscope_generation_tokens_total"), j["tokens"]["generated"].get<double>());
  EXPECT_EQ(metric(m, "kvscope_requests_by_mode_total{mode=\"fast\"}"), 1);
  EXPECT_EQ(metric(m, "kvscope_answer_confidence_count"), 3);
  EXPECT_EQ(metric(m, "kvscope_kv_blocks_total"), j["kv"]["blocks_total"].get<double>());
}

TEST(ServerWebUi, NoWebUiAnswers404) {
  auto o = test_options();
  o.webui = false;
  auto s = start_server(o);
  const int p = s->port();
  for (const char* path : {"/", "/dashboard", "/ui/chat.js", "/ui/login.js"}) {
    auto r = http(p, "GET", path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.j()["error"]["code"], "unknown_url") << path;
  }
  EXPECT_EQ(http(p, "GET", "/v1/stats").status, 200);  // the API stays
}

TEST(ServerWebUi, ApiKeyProtectsThePages) {
  auto o = test_options();
  o.api_keys = {"sk-web;1"};
  auto s = start_server(o);
  const std::string cookie = "736b2d7765623b31";  // "sk-web;1"
  const int p = s->port();
  for (const char* path : {"/", "/dashboard"}) {
    auto r = http(p, "GET", path);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_TRUE(starts_with(r.headers["content-type"], "text/html")) << path;
    EXPECT_NE(r.body.find("API key required"), std::string::npos);  // the key form, not the app
    EXPECT_EQ(r.body.find("chat.js"), std::string::npos);
    EXPECT_EQ(r.body.find("dashboard.js"), std::string::npos);
    EXPECT_EQ(http(p, "GET", path, "", {{"Authorization", "Bearer wrong"}}).status, 401);
    EXPECT_EQ(http(p, "GET", path, "", {{"Cookie", "kvscope_key=wrong"}}).status, 401);
    auto ok = http(p, "GET", path, "", {{"Authorization", "Bearer sk-web;1"}});
    EXPECT_EQ(ok.status, 200) << path;
    EXPECT_TRUE(starts_with(ok.headers["content-type"], "text/html"));
    // The cookie the key form sets (hex of the key's bytes), among others.
    EXPECT_EQ(http(p, "GET", path, "", {{"Cookie", "theme=dark; kvscope_key=" + cookie}}).status, 200) << path;
    EXPECT_EQ(http(p, "GET", path, "", {{"Cookie", "kvscope_key=" + cookie.substr(1)}}).status, 401) << path;
  }
  EXPECT_EQ(http(p, "GET", "/ui/chat.js").status, 401);
  EXPECT_EQ(http(p, "GET", "/ui/chat.js", "", {{"Cookie", "kvscope_key=" + cookie}}).status, 200);
  EXPECT_EQ(http(p, "GET", "/ui/login.js").status, 200);  // the key form's own files
  EXPECT_EQ(http(p, "GET", "/ui/kvscope.css").status, 200);
  // The cookie opens the pages only, never the API (a cross-site form could send it).
  EXPECT_EQ(http(p, "GET", "/v1/stats", "", {{"Cookie", "kvscope_key=" + cookie}}).status, 401);
  EXPECT_EQ(post(p, "/v1/completions", json{{"prompt", "x"}, {"max_tokens", 1}}, {{"Cookie", "kvscope_key=" + cookie}}).status, 401);
  EXPECT_EQ(http(p, "GET", "/v1/stats", "", {{"Authorization", "Bearer sk-web;1"}}).status, 200);
}

TEST(ServerWebUi, CliFlagTurnsItOff) {
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const std::string model = server_model_path();
  for (const bool off : {false, true}) {
    int err[2];
    ASSERT_EQ(::pipe(err), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(err[1], 2);
      ::close(err[0]);
      ::close(err[1]);
      if (off)
        ::execl(bin.c_str(), bin.c_str(), "serve", "-m", model.c_str(), "--port", "0", "-t", "1", "--kv-mem", "16", "--no-webui", nullptr);
      else
        ::execl(bin.c_str(), bin.c_str(), "serve", "-m", model.c_str(), "--port", "0", "-t", "1", "--kv-mem", "16", nullptr);
      ::_exit(127);
    }
    ::close(err[1]);
    std::string lines;
    char ch;
    while (::read(err[0], &ch, 1) == 1 && std::count(lines.begin(), lines.end(), '\n') < (off ? 1 : 2)) lines += ch;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(lines, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/v1)"))) << lines;
    EXPECT_EQ(lines.find("web UI on") != std::string::npos, !off) << lines;
    const int port = std::stoi(m[1]);
    EXPECT_TRUE(eventually([&] { return http(port, "GET", "/health").status == 200; }, 60));
    EXPECT_EQ(http(port, "GET", "/").status, off ? 404 : 200);
    EXPECT_EQ(http(port, "GET", "/dashboard").status, off ? 404 : 200);
    ::kill(pid, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ::close(err[0]);
  }
}

// The pages in a real browser: tools/webtest/webui_test.mjs (Debian's Chromium driven by
// playwright-core from tools/webtest/setup.sh). Skipped without them unless KVSCOPE_WEBTEST_REQUIRED
// is set (scripts/test.sh sets it, so CI cannot skip it silently).
TEST(ServerWebUiBrowser, ChatAndDashboardInChromium) {
  const bool required = std::getenv("KVSCOPE_WEBTEST_REQUIRED") != nullptr;
  auto skip_or_fail = [&](const std::string& why) {
    if (required) FAIL() << why;
    GTEST_SKIP() << why;
  };
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) return skip_or_fail("KVSCOPE_BIN not set to the built binary");
  const char* env = std::getenv("KVSCOPE_WEBTEST_DIR");
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/build/npm-webtest";
  if (!std::filesystem::exists(dir + "/node_modules/playwright-core/package.json"))
    return skip_or_fail("playwright-core is not installed in " + dir + " (run tools/webtest/setup.sh, or scripts/test.sh)");
  const char* chromium = std::getenv("KVSCOPE_CHROMIUM");
  if (!std::filesystem::exists(chromium ? chromium : "/usr/bin/chromium"))
    return skip_or_fail("Chromium not found (apt-get install chromium)");
  int st = -1;
  const std::string cmd = "KVSCOPE_BIN='" + bin + "' KVSCOPE_WEBTEST_DIR='" + dir + "' timeout 300 node '" + KVSCOPE_SOURCE_DIR +
                          "/tools/webtest/webui_test.mjs' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("checks passed"), std::string::npos) << out;
}

}  // namespace server_webui_test
