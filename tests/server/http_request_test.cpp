// The front stage's request framing (server/http_request.h) without sockets: pipelined requests
// kept in order, chunked bodies decoded as they arrive, and each limit or malformed frame refused
// with the status and code a client sees.
#include "server/http_request.h"

#include <gtest/gtest.h>

namespace http_request_test {

using kvscope::server::FrontLimits;
using kvscope::server::RequestReader;
using Step = RequestReader::Step;

namespace {

// Reads one whole request from in: head, then body.
Step read_all(RequestReader& r, std::string& in) {
  Step s = r.read_head(in);
  return s == Step::Done ? r.read_body(in) : s;
}

}  // namespace

TEST(HttpRequestReader, PipelinedRequestsAreReadInOrderAndReframed) {
  FrontLimits lim;
  RequestReader r(lim);
  std::string in =
      "\r\nPOST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(read_all(r, in), Step::Done);
  EXPECT_EQ(r.method(), "POST");
  EXPECT_EQ(r.target(), "/v1/completions");
  EXPECT_TRUE(r.keep_alive());
  EXPECT_EQ(r.reframe(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd");
  r.reset();
  ASSERT_EQ(read_all(r, in), Step::Done);  // the second one waited in the buffer
  EXPECT_EQ(r.target(), "/health");
  EXPECT_EQ(r.body(), "");  // no length, no chunking: no body
  EXPECT_TRUE(in.empty());
}

TEST(HttpRequestReader, ChunkedBodyIsDecodedAsItArrives) {
  FrontLimits lim;
  RequestReader r(lim);
  std::string in = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n";
  ASSERT_EQ(r.read_head(in), Step::Done);
  EXPECT_TRUE(r.awaits_continue());
  const std::string body = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n";
  Step s = Step::More;
  for (size_t i = 0; i < body.size(); ++i) {  // a byte at a time
    in += body[i];
    s = r.read_body(in);
    if (i + 1 < body.size()) {
      ASSERT_EQ(s, Step::More) << "at byte " << i;
    }
  }
  ASSERT_EQ(s, Step::Done);
  EXPECT_EQ(r.body(), "hello world");
  // httplib gets an exact length instead of the chunked coding, and no Expect to answer twice.
  EXPECT_EQ(r.reframe(), "POST /x HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world");
}

TEST(HttpRequestReader, LimitsAreRefusedWithTheirStatus) {
  FrontLimits lim;
  lim.max_body_bytes = 8;
  lim.max_header_bytes = 64;
  lim.max_headers = 2;
  {
    RequestReader r(lim);
    std::string in = "POST /x HTTP/1.1\r\nContent-Length: 9\r\n\r\n123456789";
    ASSERT_EQ(read_all(r, in), Step::Refused);
    EXPECT_EQ(r.refusal().status, 413);
    EXPECT_EQ(r.refusal().code, "request_too_large");
    EXPECT_NE(r.refusal().message.find("--max-body"), std::string::npos);
  }
  {
    RequestReader r(lim);  // chunks adding up past the limit, counted decoded
    std::string in = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
    ASSERT_EQ(read_all(r, in), Step::Refused);
    EXPECT_EQ(r.refusal().status, 413);
  }
  {
    RequestReader r(lim);  // refused while the header block is still arriving
    std::string in = "GET /x HTTP/1.1\r\nX-Long: " + std::string(80, 'a');
    ASSERT_EQ(r.read_head(in), Step::Refused);
    EXPECT_EQ(r.refusal().status, 431);
    EXPECT_EQ(r.refusal().code, "request_header_too_large");
  }
  {
    RequestReader r(lim);
    std::string in = "GET /x HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    ASSERT_EQ(r.read_head(in), Step::Refused);
    EXPECT_EQ(r.refusal().status, 431);
    EXPECT_NE(r.refusal().message.find("too many header fields"), std::string::npos);
  }
}

TEST(HttpRequestReader, MalformedFramingIsRefused) {
  FrontLimits lim;
  struct Case {
    std::string in;
    int status;
    std::string says;
  };
  const Case cases[] = {
      {"GET /x HTTP/2.0\r\n\r\n", 505, "HTTP version 'HTTP/2.0'"},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "only chunked"},
      {"POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length"},
      {"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, "conflicting Content-Length"},
      {"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "invalid Content-Length"},
      {"GET /x HTTP/1.1\r\n folded\r\n\r\n", 400, "folded header"},
      {"GET /x HTTP/1.1\r\nExpect: something\r\n\r\n", 417, "unsupported Expect"},
      {"GET\r\n\r\n", 400, "malformed request line"},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "bad chunk size 'zz'"},
  };
  for (const auto& c : cases) {
    RequestReader r(lim);
    std::string in = c.in;
    ASSERT_EQ(read_all(r, in), Step::Refused) << c.in;
    EXPECT_EQ(r.refusal().status, c.status) << c.in;
    EXPECT_NE(r.refusal().message.find(c.says), std::string::npos) << c.in << " -> " << r.refusal().message;
  }
}

TEST(HttpRequestReader, ConnectionAndContentTypeRules) {
  FrontLimits lim;
  RequestReader r(lim);
  std::string in = "POST /x HTTP/1.0\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 2\r\n\r\n{}";
  ASSERT_EQ(read_all(r, in), Step::Done);
  EXPECT_TRUE(r.http10());
  EXPECT_FALSE(r.keep_alive());  // HTTP/1.0 closes after the answer
  ASSERT_EQ(r.headers().size(), 1u);
  EXPECT_EQ(r.headers()[0].second, "application/json");  // httplib must not parse it as a form
  r.reset();
  in = "GET /x HTTP/1.1\r\nConnection: Close\r\n\r\n";
  ASSERT_EQ(read_all(r, in), Step::Done);
  EXPECT_FALSE(r.keep_alive());
}

}  // namespace http_request_test
