#include "cli/exporter/listen_address.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

TEST(ListenAddressTest, Ipv4Ipv6AndLocalhost) {
  auto v4 = ParseListenAddress("127.0.0.1:9464");
  ASSERT_TRUE(v4) << v4.error().message;
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->port(), 9464);
  EXPECT_EQ(v4->ToString(), "127.0.0.1:9464");
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->family(), AF_INET6);
  EXPECT_EQ(v6->port(), 0);
  EXPECT_EQ(v6->ToString(), "[::1]:0");
  auto local = ParseListenAddress("localhost:80");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->ToString(), "127.0.0.1:80");
}

TEST(ListenAddressTest, LoopbackOrNot) {
  for (const char* loopback : {"127.0.0.1:1", "127.1.2.3:1", "[::1]:1", "[::ffff:127.0.0.1]:1",
                               "localhost:1"}) {
    auto a = ParseListenAddress(loopback);
    ASSERT_TRUE(a) << loopback;
    EXPECT_TRUE(a->IsLoopback()) << loopback;
  }
  for (const char* remote : {"0.0.0.0:1", "10.0.0.1:1", "128.0.0.1:1", "[::]:1",
                             "[2001:db8::1]:1", "[::ffff:10.0.0.1]:1"}) {
    auto a = ParseListenAddress(remote);
    ASSERT_TRUE(a) << remote;
    EXPECT_FALSE(a->IsLoopback()) << remote;
  }
}

TEST(ListenAddressTest, BadFormsSayWhatIsValid) {
  const std::pair<const char*, const char*> cases[] = {
      {"9464", "missing ':PORT'"},
      {"127.0.0.1", "missing ':PORT'"},
      {"127.0.0.1:", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:65536", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:-1", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:http", "the port must be a number from 0 to 65535"},
      {"::1:9464", "an IPv6 address goes in brackets"},
      {"[::1]9464", "missing ']:PORT'"},
      {"example.com:9464", "'example.com' is not an IP address (host names are not resolved)"},
      {"256.1.1.1:80", "is not an IP address"},
      {":9464", "the host is missing"},
  };
  for (const auto& [text, why] : cases) {
    auto a = ParseListenAddress(text);
    ASSERT_FALSE(a) << text;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(a.error().message.find(std::string("invalid listen address '") + text + "'"),
              std::string::npos)
        << a.error().message;
    EXPECT_NE(a.error().message.find(why), std::string::npos) << a.error().message;
    EXPECT_NE(a.error().message.find("e.g. 127.0.0.1:9464, [::1]:9464"), std::string::npos)
        << a.error().message;
  }
}

}  // namespace
}  // namespace memprof::cli
