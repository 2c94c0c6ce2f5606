// memprof's own sampler (agent/sampler): heap profiles of processes whose
// allocator cannot sample, started plain, on glibc's malloc, jemalloc
// without prof:true, tcmalloc_minimal and mimalloc (Debian's, preloaded as
// an operator would), reached by attach and by a preloaded agent. The
// target is tests/testprogs/sampler_target.cc: a cache filled before
// activation, and a leak through operator new whose size it counts itself;
// allocation windows see its churn (malloc, realloc, free) and their lifetimes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

struct AllocatorCase {
  const char* name;     // for the test's name
  const char* library;  // what LD_PRELOAD puts first ("" = glibc's malloc)
};

// What the leak is measured against: 64 KiB between samples, 48 MiB leaked,
// some 770 samples, so the estimate's own spread (1/sqrt(n)) is under 4%.
constexpr const char* kInterval = "64KiB";
constexpr int kLeakKib = 48 * 1024;

class SamplerTest : public IntegrationTest, public ::testing::WithParamInterface<AllocatorCase> {
 protected:
  // sampler_target on the case's allocator; with the agent preloaded or not.
  TargetProcess* StartTarget(bool preload_agent) {
    TargetOptions options;
    options.argv = {kSamplerTarget};
    options.stdin_pipe = true;
    options.expect_agent = preload_agent;
    std::string preload = GetParam().library;
    if (preload_agent) preload = preload.empty() ? kAgentPreload : preload + ":" + kAgentPreload;
    if (!preload.empty()) options.env["LD_PRELOAD"] = preload;
    return Start(options);
  }

  // Sends the target one command; the number in its answer.
  static double Command(TargetProcess& target, const std::string& command) {
    const size_t before = target.process().StdoutText().size();
    EXPECT_TRUE(target.process().WriteStdin(command + "\n"));
    std::string reply;
    EXPECT_TRUE(test_support::WaitUntil(
        [&] {
          reply = target.process().StdoutText().substr(before);
          return reply.find('\n') != std::string::npos;
        },
        seconds(60)))
        << command;
    return reply.find(' ') == std::string::npos ? -1 : std::stod(reply.substr(reply.find(' ') + 1));
  }

  // Tells the target to leak `kib` KiB more; its own count of all it leaked.
  static double Leak(TargetProcess& target, int kib) {
    return Command(target, "leak " + std::to_string(kib));
  }

  // activate, leak, dump, report as JSON: the checks every case makes.
  void ProfileALeak(TargetProcess& target) {
    nlohmann::json status = StatusJson(target);
    EXPECT_EQ(status["sampler"], "memprof") << status.dump(2);
    CommandResult activate = CliFor(target, "activate", {"--sample-interval", kInterval});
    ASSERT_EQ(activate.exit_code, 0) << activate;
    const double leaked = Leak(target, kLeakKib);
    ASSERT_GT(leaked, 0);
    const std::string dump = dir().File(std::string(GetParam().name) + ".heap");
    ASSERT_EQ(CliFor(target, "dump", {"--out", dump, "--force"}).exit_code, 0);
    CommandResult text = Cli({"report", dump, "--top", "20"});
    ASSERT_EQ(text.exit_code, 0) << text;
    EXPECT_NE(text.out.find("LeakThroughNew"), std::string::npos) << text;
    EXPECT_EQ(text.out.find("FillCacheBeforeActivation"), std::string::npos)
        << "the cache was filled before activation:\n" << text;
    EXPECT_NE(text.err.find("sampled by memprof since"), std::string::npos) << text;
    EXPECT_NE(text.err.find("allocations made before are not in it"), std::string::npos) << text;
    CommandResult json = Cli({"report", dump, "--format", "json"});
    ASSERT_EQ(json.exit_code, 0) << json;
    const nlohmann::json report = ParseJsonOutput(json);
    EXPECT_EQ(report["coverage"]["sampled_by"], "memprof");
    double estimate = -1;
    for (const nlohmann::json& row : report["functions"]) {
      if (row["name"].get<std::string>().find("LeakThroughNew") != std::string::npos) {
        estimate = row["cum"].get<double>();
      }
    }
    EXPECT_LT(std::fabs(estimate - leaked) / leaked, 0.30)
        << "estimated " << estimate << " bytes, the target counts " << leaked;
  }
};

TEST_P(SamplerTest, AProcessStartedPlainIsAttachedAndItsLeakProfiled) {
  TargetProcess* target = StartTarget(/*preload_agent=*/false);
  ASSERT_NE(target, nullptr);
  CommandResult attach = CliFor(*target, "attach");
  ASSERT_EQ(attach.exit_code, 0) << attach;
  ASSERT_TRUE(test_support::WaitUntil([&] { return CliFor(*target, "status").exit_code == 0; },
                                      seconds(30)));
  ProfileALeak(*target);
  CommandResult deactivate = CliFor(*target, "deactivate");
  EXPECT_EQ(deactivate.exit_code, 0) << deactivate;
  auto status = target->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << target->process().StderrText();
}

TEST_P(SamplerTest, APreloadedAgentSamplesByItselfToo) {
  TargetProcess* target = StartTarget(/*preload_agent=*/true);
  ASSERT_NE(target, nullptr);
  ProfileALeak(*target);
  auto status = target->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << target->process().StderrText();
}

// An allocation window where memprof samples: the churn (malloc, realloc
// and free of short-lived blocks) ranks first by bytes allocated, keeps
// nothing and lives for microseconds; the leak made in the window keeps all
// it allocated; the cache filled before is not in it. Then everything is
// put back: the window switched sampling on for itself, and off again.
TEST_P(SamplerTest, AnAllocationWindowRanksTheChurnFirstWithItsLifetimes) {
  TargetProcess* target = StartTarget(/*preload_agent=*/true);
  ASSERT_NE(target, nullptr);
  const std::string path = dir().File(std::string(GetParam().name) + ".allocs");
  auto running = SpawnCli({"profile", "--pid", std::to_string(target->pid()), "--duration", "4s",
                           "--allocations", "--out", path, "--json"});
  ASSERT_NE(running, nullptr);
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return StatusJson(*target)["allocation_window"]["open_window"] == 1; }, seconds(30)));
  EXPECT_EQ(StatusJson(*target)["profiling_active"], true) << "the window switched sampling on";
  EXPECT_GT(Command(*target, "churn 200000"), 0);
  EXPECT_GT(Leak(*target, 16 * 1024), 0);
  auto exited = running->Wait(seconds(60));
  ASSERT_TRUE(exited.has_value());
  ASSERT_EQ(exited->exit_code, 0) << running->StderrText();
  const nlohmann::json outcome = nlohmann::json::parse(running->StdoutText());
  EXPECT_EQ(outcome["profiling_activated"], true) << outcome.dump(2);
  EXPECT_EQ(outcome["records_lost"], false) << outcome.dump(2);
  EXPECT_EQ(StatusJson(*target)["profiling_active"], false) << "the window put sampling back off";

  CommandResult lifetimes = Cli({"report", path, "--lifetimes", "--format", "json"});
  ASSERT_EQ(lifetimes.exit_code, 0) << lifetimes;
  const nlohmann::json report = ParseJsonOutput(lifetimes);
  const nlohmann::json& sites = report["sites"];
  ASSERT_FALSE(sites.empty()) << report.dump(2);
  auto site = [&](const std::string& function) -> const nlohmann::json* {
    for (const nlohmann::json& s : sites) {
      if (s["function"].get<std::string>().find(function) != std::string::npos) return &s;
    }
    return nullptr;
  };
  const nlohmann::json* churn = site("ChurnThroughMalloc");
  const nlohmann::json* leak = site("LeakThroughNew");
  ASSERT_NE(churn, nullptr) << report.dump(2);
  ASSERT_NE(leak, nullptr) << report.dump(2);
  EXPECT_EQ(site("FillCacheBeforeActivation"), nullptr) << report.dump(2);
  double largest = 0;
  for (const nlohmann::json& s : sites) largest = std::max(largest, s["allocated_bytes"].get<double>());
  EXPECT_EQ((*churn)["allocated_bytes"].get<double>(), largest) << "the churn ranks first\n"
                                                                 << report.dump(2);
  // 200000 rounds of a block of 2.3 KiB then one of 6 KiB on average: some 1.6 GB.
  EXPECT_GT((*churn)["allocated_bytes"].get<double>(), 0.8e9) << churn->dump(2);
  EXPECT_EQ((*churn)["survived_bytes"].get<double>(), 0) << churn->dump(2);
  ASSERT_TRUE((*churn)["lifetime_p90_ns"].is_number()) << churn->dump(2);
  EXPECT_LT((*churn)["lifetime_p90_ns"].get<double>(), 10e6) << churn->dump(2);
  EXPECT_GT((*leak)["survived_bytes"].get<double>(), 0) << leak->dump(2);
  EXPECT_EQ((*leak)["freed_bytes"].get<double>(), 0) << leak->dump(2);
  auto status = target->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << target->process().StderrText();
}

// doctor sets what memprof's sampler estimates beside the allocator's own
// figure: the leak made since activation is covered, the cache filled
// before is not, and the text says why the two differ. doctor has no figures
// for mimalloc and says so.
TEST_P(SamplerTest, DoctorSetsTheSamplersEstimateBesideTheAllocatorsFigure) {
  TargetProcess* target = StartTarget(/*preload_agent=*/true);
  ASSERT_NE(target, nullptr);
  CommandResult activate = CliFor(*target, "activate", {"--sample-interval", kInterval});
  ASSERT_EQ(activate.exit_code, 0) << activate;
  const double leaked = Leak(*target, kLeakKib);
  ASSERT_GT(leaked, 0);
  CommandResult doctor = CliFor(*target, "doctor", {"--json"});
  if (std::string(GetParam().name) == "mimalloc") {
    ExpectCliError(doctor, 5, "is neither jemalloc, tcmalloc nor glibc malloc");
    return;
  }
  ASSERT_EQ(doctor.exit_code, 0) << doctor;
  const nlohmann::json sampler = ParseJsonOutput(doctor)["sampler"];
  EXPECT_EQ(sampler["serves"], true) << sampler.dump(2);
  EXPECT_EQ(sampler["active"], true) << sampler.dump(2);
  EXPECT_GT(sampler["since_unix_ms"].get<int64_t>(), 0) << sampler.dump(2);
  const double live = sampler["live_estimate_bytes"].get<double>();
  const double allocated = sampler["allocated_bytes"].get<double>();
  EXPECT_LT(std::fabs(live - leaked) / leaked, 0.30)
      << "estimated " << live << " bytes, the target counts " << leaked << " leaked since";
  // The 16 MiB cache was allocated before activation: the allocator counts
  // it, the sampler cannot.
  EXPECT_GT(allocated - live, 8.0 * (1 << 20)) << sampler.dump(2);
  EXPECT_LT(sampler["covered_share"].get<double>(), 1.0) << sampler.dump(2);
  CommandResult text = CliFor(*target, "doctor");
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("memprof's sampler serves this process"), std::string::npos) << text;
  EXPECT_NE(text.out.find("the rest was allocated before it was switched on"), std::string::npos)
      << text;
}

// A process started plain (jemalloc without prof:true) whose threads use
// every call of the malloc family, dlopen and dlclose a library and fork
// children that allocate, all without pause, is attached; then memprof's
// sampler is switched on and off 50 times, at a small interval so that
// stacks are taken all the time, with dumps and resets between. The target
// checks every block it wrote and every child's exit: it must end with 0,
// and leave no socket behind. MEMPROF_FORK=off: its children get no agent
// and the sampler stops in each at once (in its fork handler), while the
// parent's gRPC keeps serving through the forks (with follow, each fork
// stops it so that the child can start its own, and a process that forks
// every few milliseconds would cancel the calls that drive this test).
class SamplerStressEndToEndTest : public IntegrationTest {};

TEST_F(SamplerStressEndToEndTest, ActivateAndDeactivate50TimesUnderEveryCallDlopenAndFork) {
  TargetOptions options;
  options.argv = {MEMPROF_IT_ATTACH_STRESS_TARGET, MEMPROF_IT_SERVICE_CACHE_LIBRARY,
                  "--every-call"};
  options.env["MEMPROF_FORK"] = "off";
  options.expect_agent = false;
  TargetProcess* target = Start(options);
  ASSERT_NE(target, nullptr);
  CommandResult attach = CliFor(*target, "attach");
  ASSERT_EQ(attach.exit_code, 0) << attach;
  ASSERT_EQ(StatusJson(*target)["sampler"], "memprof");
  const std::string dump = dir().File("stress.heap");
  for (int round = 0; round < 50; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // A new interval every round discards the samples (as jemalloc's
    // prof.reset would); every seventh round says --reset as well.
    std::vector<std::string> on_args = {"--sample-interval", round % 2 == 0 ? "4KiB" : "64KiB"};
    if (round % 7 == 0) on_args.push_back("--reset");
    CommandResult on = CliFor(*target, "activate", on_args);
    ASSERT_EQ(on.exit_code, 0) << on;
    if (round % 10 == 0) {
      ASSERT_EQ(CliFor(*target, "dump", {"--out", dump, "--force"}).exit_code, 0);
    }
    CommandResult off = CliFor(*target, "deactivate");
    ASSERT_EQ(off.exit_code, 0) << off;
  }
  CommandResult report = Cli({"report", dump, "--top", "5"});
  EXPECT_EQ(report.exit_code, 0) << report;
  auto status = target->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << target->process().StderrText();
  // The target's socket is gone, and no child ever had one.
  auto sockets = [&] {
    std::vector<std::string> left = dir().List();
    std::erase(left, "stress.heap");
    return left;
  };
  EXPECT_TRUE(test_support::WaitUntil([&] { return sockets().empty(); }, seconds(10)))
      << ::testing::PrintToString(sockets());
}

INSTANTIATE_TEST_SUITE_P(
    Allocators, SamplerTest,
    ::testing::Values(AllocatorCase{"glibc", ""},
                      AllocatorCase{"jemalloc_without_prof", MEMPROF_IT_JEMALLOC_LIBRARY},
                      AllocatorCase{"tcmalloc_minimal", MEMPROF_IT_TCMALLOC_MINIMAL_LIBRARY},
                      AllocatorCase{"mimalloc", MEMPROF_IT_MIMALLOC_LIBRARY}),
    [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace memprof::integration
