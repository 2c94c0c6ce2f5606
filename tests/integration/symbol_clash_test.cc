// A host that exports its own definitions of names the agent's dependencies
// use (tests/testprogs/symbol_clash_host.cc: grpc_init, gpr_log and protobuf's
// MessageLite::ParseFromZeroCopyStream, each aborting with a marker), as a
// service that statically links its own gRPC or protobuf does. Nothing the
// agent loads may bind to them: the host lives, and status, stats, activate
// and dump work (docs/contract.md rule 9).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

constexpr char kMarker[] = "symbol_clash_host: the host's";

class SymbolClashTest : public GuestTest {
 protected:
  void SetUp() override {
    GuestTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    TargetOptions options;
    options.argv = {kSymbolClashHost};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
    host_ = Start(options);
    ASSERT_NE(host_, nullptr);
    // The host checked that the global scope resolves each name to its own
    // copy; otherwise this test would prove nothing.
    ASSERT_EQ(AwaitStdout(*host_, std::regex("clash symbols exported\n")).size(), 1u);
  }

  std::string HostOutput() const {
    return "\n--- host stdout ---\n" + host_->process().StdoutText() + "\n--- host stderr ---\n" +
           host_->process().StderrText();
  }

  // `command` succeeds, the host is alive afterwards, and none of its
  // clashing definitions was called.
  void ExpectWorks(const std::string& command, std::vector<std::string> args = {},
                   CommandResult* result = nullptr) {
    CommandResult r = CliFor(*host_, command, std::move(args));
    // A host killed by a clash dies a moment after the call failed: let it
    // finish, so that the message shows its marker.
    if (r.exit_code != 0) (void)host_->process().Wait(std::chrono::seconds(2));
    ASSERT_EQ(r.exit_code, 0) << r << HostOutput();
    ASSERT_FALSE(host_->process().HasExited())
        << "the host died during " << command << HostOutput();
    ASSERT_EQ(host_->process().StderrText().find(kMarker), std::string::npos) << HostOutput();
    if (result != nullptr) *result = std::move(r);
  }

  TargetProcess* host_ = nullptr;
};

TEST_F(SymbolClashTest, StatusStatsActivateAndDumpWorkAndTheHostLives) {
  CommandResult status;
  ASSERT_NO_FATAL_FAILURE(ExpectWorks("status", {"--json"}, &status));
  EXPECT_EQ(ParseJsonOutput(status)["pid"], host_->pid());
  CommandResult stats;
  ASSERT_NO_FATAL_FAILURE(ExpectWorks("stats", {"--json"}, &stats));
  EXPECT_TRUE(ParseJsonOutput(stats).is_object());
  ASSERT_NO_FATAL_FAILURE(ExpectWorks("activate"));
  const std::string out = dir().File("clash.heap");
  ASSERT_NO_FATAL_FAILURE(ExpectWorks("dump", {"--out", out}));
  EXPECT_EQ(ReadFile(out).rfind("heap_v2/", 0), 0u);
  std::optional<ExitStatus> exit = host_->Terminate();
  ASSERT_TRUE(exit.has_value()) << "no exit within 20 s of SIGTERM" << HostOutput();
  EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << HostOutput();
  EXPECT_EQ(host_->process().StderrText(), "") << HostOutput();
}

}  // namespace
}  // namespace memprof::integration
