#include "agent/shared/tcp_address.h"

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

TEST(TcpAddressTest, ParsesIpv4AndBracketedIpv6) {
  auto v4 = ParseTcpAddress("10.77.0.1:7070");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->host, "10.77.0.1");
  EXPECT_FALSE(v4->ipv6);
  EXPECT_EQ(v4->port, 7070);
  auto v6 = ParseTcpAddress("[fe80::1]:1");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "fe80::1");
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(v6->ToString(), "[fe80::1]:1");
}

TEST(TcpAddressTest, LocalhostMeansIpv4Loopback) {
  auto a = ParseTcpAddress("localhost:7070");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ToString(), "127.0.0.1:7070");
}

TEST(TcpAddressTest, ErrorsAreUsageErrors) {
  auto a = ParseTcpAddress("7070");
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace memprof::agent
