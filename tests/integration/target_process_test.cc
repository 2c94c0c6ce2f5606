// Tests of the end-to-end harness's TargetProcess itself, against /bin/sh:
// they need no memprof binary, so they run even before the product is built.
#include "tests/integration/harness/target_process.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;

TEST(TargetProcessTest, FailsWithDiagnosticsWhenTargetDiesBeforeReady) {
  auto dir = TempDir::Create("memprof-it-self");
  ASSERT_TRUE(dir.has_value());
  TargetOptions options;
  options.argv = {"/bin/sh", "-c", "echo boom >&2; exit 9"};
  options.socket_dir = dir->path();
  auto target = TargetProcess::Start(options);
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("boom"), std::string::npos) << target.error().message;
  EXPECT_NE(target.error().message.find("exited with code 9"), std::string::npos)
      << target.error().message;
}

TEST(TargetProcessTest, SocketWaitHasADeadline) {
  auto dir = TempDir::Create("memprof-it-self");
  ASSERT_TRUE(dir.has_value());
  TargetOptions options;
  options.argv = {"/bin/sh", "-c", "echo ready >&3; exec sleep 1000"};
  options.socket_dir = dir->path();
  options.socket_timeout = milliseconds(300);
  auto target = TargetProcess::Start(options);
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("did not accept connections"), std::string::npos);
}

TEST(TargetProcessTest, WithoutConnectingItWaitsForTheSocketFileWithADeadline) {
  auto dir = TempDir::Create("memprof-it-self");
  ASSERT_TRUE(dir.has_value());
  TargetOptions options;
  options.argv = {"/bin/sh", "-c", "echo ready >&3; exec sleep 1000"};
  options.socket_dir = dir->path();
  options.socket_timeout = milliseconds(300);
  options.connect_to_agent = false;
  auto target = TargetProcess::Start(options);
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().message.find("did not appear"), std::string::npos)
      << target.error().message;
}

}  // namespace
}  // namespace memprof::integration
