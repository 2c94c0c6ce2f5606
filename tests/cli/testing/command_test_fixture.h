#ifndef MEMPROF_TESTS_CLI_TESTING_COMMAND_TEST_FIXTURE_H_
#define MEMPROF_TESTS_CLI_TESTING_COMMAND_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/targets/target_discovery.h"
#include "tests/cli/testing/cli_test_util.h"
#include "tests/cli/testing/fake_profile_client.h"

namespace memprof::cli::testing {

// A fake /proc and socket directory with one agent (pid 42, "demo"), a fake
// client and captured output, for testing Run<Command>() functions.
class CommandTest : public ::testing::Test {
 protected:
  static constexpr pid_t kPid = 42;

  TempDir tmp_;
  std::string proc_ = tmp_.File("proc");
  std::string sockets_ = tmp_.File("s");
  TargetDiscovery discovery_{proc_, sockets_};
  FakeProfileClient client_;
  std::ostringstream out_;
  std::ostringstream err_;

  void SetUp() override {
    MakeDirs(proc_);
    MakeDirs(sockets_);
    AddAgent(kPid, "demo");
  }
  void AddAgent(pid_t pid, const std::string& name) {
    MakeProcEntry(proc_, pid, name, {}, 1000, {"./" + name, "--leak"});
    MakeSocketFile(sockets_ + "/" + std::to_string(pid) + ".sock");
  }
};

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_TESTING_COMMAND_TEST_FIXTURE_H_
