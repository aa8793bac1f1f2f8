// The one Redis URL parser, as the decision cache and the KV tier both use it: credentials, IPv6
// hosts, the database, and errors that name the user of the URL.
#include <gtest/gtest.h>

#include "redis/url.h"
#include "util/error.h"

namespace kvscope::redis {
namespace {

TEST(RedisUrl, OneParserForEveryUser) {
  const Url u = Url::parse("redis://bob:a%3Ab@[::1]:7001/2", "decision cache");
  EXPECT_EQ(u.user, "bob");
  EXPECT_EQ(u.password, "a:b");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 7001);
  EXPECT_EQ(u.db, 2);
  EXPECT_EQ(u.display(), "::1:7001/2");
  EXPECT_EQ(Url::parse("redis://h").port, 6379);
  try {
    Url::parse("redis://h:1/x", "decision cache");
    ADD_FAILURE() << "a database that is not a number was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("decision cache: bad redis URL 'redis://h:1/x'", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace kvscope::redis
