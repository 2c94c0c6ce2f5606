#include "cli/targets/target_spec.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

TEST(TargetSpecTest, ParsesThePidSocketAndAddressForms) {
  auto pid = ParseTargetLine("  1234 ", "f:1");
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(pid->kind, TargetSpec::Kind::kPid);
  EXPECT_EQ(pid->pid, 1234);
  EXPECT_EQ(pid->ToString(), "1234");

  auto socket = ParseTargetLine("unix:/run/memprof/77.sock", "f:2");
  ASSERT_TRUE(socket) << socket.error().message;
  EXPECT_EQ(socket->kind, TargetSpec::Kind::kUnixSocket);
  EXPECT_EQ(socket->value, "/run/memprof/77.sock");
  EXPECT_EQ(socket->ToString(), "unix:/run/memprof/77.sock");

  for (const char* address :
       {"db7.example.com:7070", "10.0.0.7:1", "[2001:db8::7]:65535", "localhost:7070"}) {
    auto remote = ParseTargetLine(address, "f:3");
    ASSERT_TRUE(remote) << address << ": " << remote.error().message;
    EXPECT_EQ(remote->kind, TargetSpec::Kind::kAddress);
    EXPECT_EQ(remote->ToString(), address);
    EXPECT_EQ(remote->origin, "f:3");
  }
}

TEST(TargetSpecTest, BadLinesSayWhereAndWhy) {
  struct Case {
    const char* line;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"0", "f:9: invalid pid '0': expected a positive process id"},
           {"99999999999", "f:9: invalid pid '99999999999'"},
           {"unix:relative.sock", "f:9: 'unix:relative.sock': a Unix socket path must be absolute"},
           {"web1",
            "f:9: 'web1' is neither a pid, nor unix:/path/to/socket, nor HOST:PORT "
            "(invalid remote target 'web1': missing ':PORT'"},
           {"web1:0", "the port must be a number from 1 to 65535"},
           {"web1:65536", "the port must be a number from 1 to 65535"},
           {"web1:http", "the port must be a number from 1 to 65535"},
           {"2001:db8::7:7070", "an IPv6 address goes in brackets"},
           {"[not-v6]:7070", "'not-v6' is not a host name or IP address"},
           {"-bad:7070", "'-bad' is not a host name or IP address"},
           {"a b:7070", "'a b' is not a host name or IP address"},
       }) {
    auto spec = ParseTargetLine(c.line, "f:9");
    ASSERT_FALSE(spec) << c.line;
    EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(spec.error().message.find(c.message), std::string::npos)
        << c.line << ": " << spec.error().message;
  }
}

TEST(TargetSpecTest, FileSkipsBlankLinesAndCommentsAndCountsLines) {
  auto specs = ParseTargetsFile("# fleet\n\n12\n  # indented comment\nunix:/s/1.sock\r\nh:1", "t");
  ASSERT_TRUE(specs) << specs.error().message;
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].origin, "t:3");
  EXPECT_EQ((*specs)[1].origin, "t:5");
  EXPECT_EQ((*specs)[1].value, "/s/1.sock");
  EXPECT_EQ((*specs)[2].origin, "t:6");

  auto bad = ParseTargetsFile("12\n13\nnope\n", "t");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().message.starts_with("t:3: 'nope' is neither")) << bad.error().message;

  auto empty = ParseTargetsFile("", "t");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(TargetSpecTest, UnreadableFileIsAUsageError) {
  auto specs = ReadTargetsFile("/nonexistent/targets.txt");
  ASSERT_FALSE(specs);
  EXPECT_EQ(specs.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(specs.error().message,
            "--targets: cannot read /nonexistent/targets.txt: No such file or directory");
}

}  // namespace
}  // namespace memprof::cli
