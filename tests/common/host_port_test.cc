#include "common/host_port.h"

#include <netinet/in.h>

#include <gtest/gtest.h>

namespace memprof {
namespace {

TEST(HostPortTest, SplitsPlainAndBracketedForms) {
  auto plain = SplitHostPort("db-1.example.net:7070", 1);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->host, "db-1.example.net");
  EXPECT_FALSE(plain->bracketed);
  EXPECT_EQ(plain->port, 7070);

  auto v6 = SplitHostPort("[2001:db8::7]:65535", 1);
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->host, "2001:db8::7");
  EXPECT_TRUE(v6->bracketed);
  EXPECT_EQ(v6->port, 65535);

  auto any_port = SplitHostPort("127.0.0.1:0", 0);
  ASSERT_TRUE(any_port) << any_port.error().message;
  EXPECT_EQ(any_port->port, 0);
}

TEST(HostPortTest, SaysWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"10.0.0.5", "missing ':PORT'"},
      {"[::1]7070", "missing ']:PORT'"},
      {"::1:7070", "an IPv6 address goes in brackets"},
      {"10.0.0.5:0", "the port must be a number from 1 to 65535"},
      {"10.0.0.5:65536", "the port must be a number from 1 to 65535"},
      {"10.0.0.5:http", "the port must be a number from 1 to 65535"},
      {"10.0.0.5:", "the port must be a number from 1 to 65535"},
      {":7070", "the host is missing"},
      {"[]:7070", "the host is missing"},
  };
  for (const auto& [text, why] : cases) {
    auto parts = SplitHostPort(text, 1);
    ASSERT_FALSE(parts) << text;
    EXPECT_EQ(parts.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(parts.error().message, why) << text;
  }
}

TEST(HostPortTest, TellsIpLiteralsByFamily) {
  EXPECT_TRUE(IsIpLiteral(AF_INET, "10.0.0.5"));
  EXPECT_FALSE(IsIpLiteral(AF_INET, "256.0.0.1"));
  EXPECT_FALSE(IsIpLiteral(AF_INET, "db-1"));
  EXPECT_TRUE(IsIpLiteral(AF_INET6, "::1"));
  EXPECT_FALSE(IsIpLiteral(AF_INET6, "10.0.0.5"));
}

}  // namespace
}  // namespace memprof
