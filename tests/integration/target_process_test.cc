// Tests of the end-to-end harness's TargetProcess itself, against /bin/sh:
// they need no memprof binary, so they run even before the product is built.
#include "tests/integration/harness/target_process.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;

class TargetProcessTest : public ::testing::Test {
 protected:
  // A /bin/sh target whose agent socket would be in a directory of its own.
  TargetOptions ShellTarget(const std::string& script) const {
    TargetOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.socket_dir = dir_.path();
    return options;
  }
  // Says ready on the handshake pipe and never makes an agent socket.
  static constexpr char kReadyWithoutAgent[] = "echo ready >&3; exec sleep 1000";

  TempDir dir_{"memprof-it-self"};
};

TEST_F(TargetProcessTest, FailsWithDiagnosticsWhenTargetDiesBeforeReady) {
  auto target = TargetProcess::Start(ShellTarget("echo boom >&2; exit 9"));
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("boom"), std::string::npos) << target.error().message;
  EXPECT_NE(target.error().message.find("exited with code 9"), std::string::npos)
      << target.error().message;
}

TEST_F(TargetProcessTest, SocketWaitHasADeadline) {
  TargetOptions options = ShellTarget(kReadyWithoutAgent);
  options.socket_timeout = milliseconds(300);
  auto target = TargetProcess::Start(options);
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("did not accept connections"), std::string::npos);
}

TEST_F(TargetProcessTest, WithoutConnectingItWaitsForTheSocketFileWithADeadline) {
  TargetOptions options = ShellTarget(kReadyWithoutAgent);
  options.socket_timeout = milliseconds(300);
  options.connect_to_agent = false;
  auto target = TargetProcess::Start(options);
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("did not appear"), std::string::npos)
      << target.error().message;
}

}  // namespace
}  // namespace memprof::integration
