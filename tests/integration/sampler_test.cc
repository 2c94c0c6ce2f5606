// memprof's own sampler (agent/sampler): heap profiles of processes whose
// allocator cannot sample, started plain, on glibc's malloc, jemalloc
// without prof:true, tcmalloc_minimal and mimalloc (Debian's, preloaded as
// an operator would), reached by attach and by a preloaded agent. The
// target is tests/testprogs/sampler_target.cc: a cache filled before
// activation, and a leak through operator new whose size it counts itself.
#include <gtest/gtest.h>

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

  // Tells the target to leak `kib` KiB more; its own count of all it leaked.
  double Leak(TargetProcess& target, int kib) {
    const size_t before = target.process().StdoutText().size();
    EXPECT_TRUE(target.process().WriteStdin("leak " + std::to_string(kib) + "\n"));
    std::string reply;
    EXPECT_TRUE(test_support::WaitUntil(
        [&] {
          reply = target.process().StdoutText().substr(before);
          return reply.find('\n') != std::string::npos;
        },
        seconds(60)));
    return std::stod(reply.substr(reply.find(' ') + 1));
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

INSTANTIATE_TEST_SUITE_P(
    Allocators, SamplerTest,
    ::testing::Values(AllocatorCase{"glibc", ""},
                      AllocatorCase{"jemalloc_without_prof", MEMPROF_IT_JEMALLOC_LIBRARY},
                      AllocatorCase{"tcmalloc_minimal", MEMPROF_IT_TCMALLOC_MINIMAL_LIBRARY},
                      AllocatorCase{"mimalloc", MEMPROF_IT_MIMALLOC_LIBRARY}),
    [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace memprof::integration
