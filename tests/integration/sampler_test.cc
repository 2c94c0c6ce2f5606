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

INSTANTIATE_TEST_SUITE_P(
    Allocators, SamplerTest,
    ::testing::Values(AllocatorCase{"glibc", ""},
                      AllocatorCase{"jemalloc_without_prof", MEMPROF_IT_JEMALLOC_LIBRARY},
                      AllocatorCase{"tcmalloc_minimal", MEMPROF_IT_TCMALLOC_MINIMAL_LIBRARY},
                      AllocatorCase{"mimalloc", MEMPROF_IT_MIMALLOC_LIBRARY}),
    [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace memprof::integration
