// `kvscope serve` as a process: it listens before the model is ready, serves, and exits 0 on SIGTERM
// after finishing the stream in flight.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <regex>

#include "server_test_util.h"

namespace server_cli_test {

using namespace kvscope;
using namespace kvscope::test;

TEST(ServerCli, ServesAndShutsDownGracefullyOnSigterm) {
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const std::string model = server_model_path();  // no allocation between fork and exec
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(err[1], 2);
    ::close(err[0]);
    ::close(err[1]);
    ::execl(bin.c_str(), bin.c_str(), "serve", "-m", model.c_str(), "--port", "0", "-t", "2", "--kv-mem", "32", nullptr);
    ::_exit(127);
  }
  ::close(err[1]);
  // The first line names the port it listens on.
  std::string line;
  char c;
  while (::read(err[0], &c, 1) == 1 && c != '\n') line += c;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/v1)"))) << line;
  const int port = std::stoi(m[1]);
  EXPECT_TRUE(eventually([&] { return http(port, "GET", "/health").status == 200; }, 60));
  auto r = post(port, "/v1/completions", json{{"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(r.status, 200) << r.body;

  HttpConn s(port);
  ASSERT_TRUE(s.send("POST", "/v1/completions", json{{"prompt", "Go on"}, {"max_tokens", 64}, {"temperature", 0}, {"stream", true}}.dump()));
  HttpResponse head;
  ASSERT_TRUE(s.read_head(head));
  ASSERT_FALSE(s.next_event().empty());
  ::kill(pid, SIGTERM);
  std::string ev, last;
  while (!(ev = s.next_event()).empty() && ev != "[DONE]") last = ev;
  EXPECT_EQ(ev, "[DONE]");
  EXPECT_NE(json::parse(last)["choices"][0]["finish_reason"], "cancelled");
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::string rest;
  while (::read(err[0], &c, 1) == 1) rest += c;
  ::close(err[0]);
  EXPECT_NE(rest.find("SIGTERM"), std::string::npos) << rest;
}

TEST(ServerCli, BadModelExitsWithAnError) {
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";
  const auto bad = (temp_dir() / "not-a-model.gguf").string();
  { std::ofstream(bad) << "nope"; }
  int st = -1;
  const std::string out = run_capture("'" + bin + "' serve -m '" + bad + "' --port 0 2>&1", &st);
  EXPECT_EQ(st, 1) << out;
  EXPECT_NE(out.find("error:"), std::string::npos) << out;
}

}  // namespace server_cli_test
