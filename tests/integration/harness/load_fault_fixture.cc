#include "tests/integration/harness/load_fault_fixture.h"

#include <iostream>

#include "tests/integration/harness/support_names.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The server stops kShortIdleTimeout after the last call; allow for a slow,
// loaded machine on top.
constexpr auto kServerStopTimeout = seconds(30);
// gRPC's threads end shortly after the server is destroyed, not with it.
constexpr auto kThreadSettleTimeout = seconds(10);
constexpr auto kThreadSettlePeriod = milliseconds(500);
// After a scenario: the server stop, then dirty pages returned to the kernel
// (jemalloc's decay purges them within ~10 s by default).
constexpr auto kBackToRestTimeout = seconds(45);

std::map<std::string, std::string> AgentEnv(const std::string& malloc_conf) {
  return {{"LD_PRELOAD", kAgentPreload},
          {"MALLOC_CONF", malloc_conf},
          {"MEMPROF_IDLE_TIMEOUT", kShortIdleTimeout},
          {"MEMPROF_LOG_LEVEL", "debug"}};
}

// Polls until the thread count has not changed for kThreadSettlePeriod.
std::optional<ProcessGauges> AwaitSettledThreads(pid_t pid) {
  std::optional<ProcessGauges> last = ReadGauges(pid);
  auto since = std::chrono::steady_clock::now();
  bool settled = WaitUntil(
      [&] {
        std::optional<ProcessGauges> now = ReadGauges(pid);
        if (!now || !last) return false;
        if (now->threads != last->threads) since = std::chrono::steady_clock::now();
        last = now;
        return std::chrono::steady_clock::now() - since >= kThreadSettlePeriod;
      },
      kThreadSettleTimeout, milliseconds(50));
  return settled ? last : std::nullopt;
}

}  // namespace

void LoadFaultTest::SetUp() {
  IntegrationTest::SetUp();
  ASSERT_FALSE(HasFatalFailure());
  std::optional<LoadSettings> settings = LoadSettingsFromEnvironment();
  ASSERT_TRUE(settings.has_value()) << "MEMPROF_LOAD_SECONDS must be a number of seconds, 1..3600";
  settings_ = *settings;
}

TargetProcess* LoadFaultTest::StartBusyTarget() {
  TargetOptions options;
  options.argv = {kPlainTarget};
  options.env = AgentEnv("prof:true,prof_active:true");
  return Start(options);
}

TargetProcess* LoadFaultTest::StartBigProfileTarget(
    int stacks, const std::map<std::string, std::string>& extra_env) {
  TargetOptions options;
  options.argv = {kManyStacksTarget, "--stacks", std::to_string(stacks), "--pad-frames", "32"};
  options.env = AgentEnv("prof:true,prof_active:true,lg_prof_sample:0");
  options.env.insert(extra_env.begin(), extra_env.end());
  options.ready_timeout = seconds(180);
  return Start(options);
}

void LoadFaultTest::ExpectStatusServed(const TargetProcess& target,
                                       std::chrono::milliseconds timeout) {
  const std::string seconds_arg =
      std::to_string(std::chrono::duration_cast<seconds>(timeout).count()) + "s";
  CommandResult r = Cli({"--timeout", seconds_arg, "status", "--pid", std::to_string(target.pid())},
                        {}, timeout + seconds(10));
  EXPECT_EQ(r.exit_code, 0) << r;
}

bool LoadFaultTest::AwaitServerStop(TargetProcess& target, int stops_before) {
  bool stopped = WaitUntil(
      [&] { return CountServerStops(target.process().StderrText()) > stops_before; },
      kServerStopTimeout, milliseconds(50));
  if (!stopped) {
    ADD_FAILURE() << "the agent's gRPC server did not stop within "
                  << kServerStopTimeout.count() << " s of idleness\n"
                  << target.process().StderrText().substr(0, 4000);
  }
  return stopped;
}

std::optional<ProcessGauges> LoadFaultTest::GaugesAtRest(TargetProcess& target) {
  // The server is up right after this call; the next stop is its idle stop.
  ExpectStatusServed(target);
  const int stops = CountServerStops(target.process().StderrText());
  if (!AwaitServerStop(target, stops)) return std::nullopt;
  std::optional<ProcessGauges> g = AwaitSettledThreads(target.pid());
  if (!g) ADD_FAILURE() << "the target's thread count never settled";
  return g;
}

ProcessGauges LoadFaultTest::ExpectBackToRest(TargetProcess& target,
                                              const ProcessGauges& baseline,
                                              const RssBound& max_rss_kb) {
  // A call first, so that the next logged stop is certainly one that follows
  // everything the scenario did.
  ExpectStatusServed(target);
  const int stops = CountServerStops(target.process().StderrText());
  if (!AwaitServerStop(target, stops)) return {};
  ProcessGauges after =
      WaitForGaugesAtMost(target.pid(), baseline, max_rss_kb, kBackToRestTimeout);
  std::cout << "[rest] at rest before: " << baseline << "; after: " << after << "\n";
  EXPECT_LE(after.threads, baseline.threads) << "threads left behind: " << after << " vs " << baseline;
  EXPECT_LE(after.fds, baseline.fds) << "descriptors left behind: " << after << " vs " << baseline;
  EXPECT_EQ(after.dump_memfds, 0) << "dump memfds left behind: " << after;
  EXPECT_LE(after.rss_kb, max_rss_kb()) << "RSS not back within the bound: " << after << " vs "
                                        << baseline << ", bound " << max_rss_kb() << " kB";
  return after;
}

}  // namespace memprof::integration
