// activate --sample-interval and --reset: jemalloc's prof.reset, driven from
// memprofctl, seen in `status` and in the dumps.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/occurrences.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr uint64_t kDefaultInterval = 512 * 1024;  // jemalloc's lg_prof_sample:19

class SampleIntervalTest : public IntegrationTest {
 protected:
  TargetProcess* StartTarget() {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
    return Start(options);
  }

  // many_stacks_target samples every allocation it makes at start-up (64
  // stacks through ManyStacksAllocate), then allocates nothing: samples of
  // ManyStacksAllocate in a dump are exactly those not reset since.
  TargetProcess* StartManyStacks() {
    TargetOptions options;
    options.argv = {kManyStacksTarget, "--stacks", "64"};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:0"}};
    options.ready_timeout = seconds(60);
    return Start(options);
  }

  // Stacks through ManyStacksAllocate in a dump taken now.
  int ManyStacksInDump(const TargetProcess& target) {
    const std::string path = dir().File("now.heap");
    CommandResult dump = CliFor(target, "dump", {"--out", path});
    EXPECT_EQ(dump.exit_code, 0) << dump;
    CommandResult report = Cli({"report", path, "--format", "collapsed"});
    EXPECT_EQ(report.exit_code, 0) << report;
    ::unlink(path.c_str());
    // The frame itself, not a name that contains it: the program's static
    // initializer is called _GLOBAL__sub_I__Z18ManyStacksAllocatev, and
    // its atexit registration may allocate.
    return static_cast<int>(test_support::CountOccurrences(report.out, ";ManyStacksAllocate("));
  }
};

TEST_F(SampleIntervalTest, NewIntervalShowsInStatusAndInTheDumps) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(StatusJson(*t)["sample_interval_bytes"], kDefaultInterval);
  CommandResult r = CliFor(*t, "activate", {"--sample-interval", "1MiB"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string who = "pid " + std::to_string(t->pid()) + ": ";
  EXPECT_NE(r.out.find(who + "profiling activated (was inactive)"), std::string::npos) << r;
  EXPECT_NE(r.out.find(who + "sample interval now 1.0 MiB (1048576 bytes), was 512.0 KiB; the "
                             "samples collected so far were discarded (prof.reset)"),
            std::string::npos)
      << r;
  json status = StatusJson(*t);
  EXPECT_EQ(status["sample_interval_bytes"], 1048576) << status.dump(2);
  EXPECT_EQ(status["profiling_active"], true);
  CommandResult text = CliFor(*t, "status");
  EXPECT_NE(text.out.find("sample interval:    1.0 MiB"), std::string::npos) << text;
  const std::string path = dir().File("p.heap");
  ASSERT_EQ(CliFor(*t, "dump", {"--out", path}).exit_code, 0);
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/1048576\n")) << ReadFile(path).substr(0, 40);
}

TEST_F(SampleIntervalTest, IntervalIsRoundedToAPowerOfTwoAndSaysSo) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "activate", {"--sample-interval", "1000"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("--sample-interval 1000 bytes rounded to 1024 bytes (jemalloc samples at "
                       "powers of two)"),
            std::string::npos)
      << r;
  EXPECT_EQ(StatusJson(*t)["sample_interval_bytes"], 1024);

  CommandResult j = CliFor(*t, "activate", {"--sample-interval", "100000", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j;
  json parsed = ParseJsonOutput(j);
  EXPECT_EQ(parsed["requested_sample_interval_bytes"], 100000);
  EXPECT_EQ(parsed["sample_interval_bytes"], 131072);
  EXPECT_EQ(parsed["previous_sample_interval_bytes"], 1024);
  EXPECT_EQ(parsed["samples_reset"], true);
  EXPECT_EQ(StatusJson(*t)["sample_interval_bytes"], 131072);
}

TEST_F(SampleIntervalTest, BadSizesAreUsageErrorsListingTheValidForms) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string forms =
      "valid forms: a whole number of bytes, optionally with a binary unit: 4096, 64KiB, 512KiB, "
      "1MiB (units B, KiB, MiB, GiB)";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"abc", "invalid size 'abc': expected a number"},
      {"0", "invalid size '0': a sample interval must be between 1 B and 1 GiB"},
      {"-5", "invalid size '-5': a size cannot be negative or signed"},
      {"2GiB", "invalid size '2GiB': a sample interval must be between 1 B and 1 GiB"},
      {"1.5MiB", "invalid size '1.5MiB': fractions are not accepted"},
      {"64KB", "invalid size '64KB': unit 'KB' is ambiguous (1000 or 1024?); write KiB"},
  };
  for (const auto& [size, message] : bad) {
    SCOPED_TRACE(size);
    CommandResult r = CliFor(*t, "activate", {"--sample-interval=" + size});
    ExpectCliError(r, 2, "activate: --sample-interval: " + message);
    EXPECT_NE(r.err.find(forms), std::string::npos) << r;
  }
  json status = StatusJson(*t);
  EXPECT_EQ(status["sample_interval_bytes"], kDefaultInterval) << "nothing changed";
  EXPECT_EQ(status["profiling_active"], false) << "nothing changed";
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{});
}

TEST_F(SampleIntervalTest, ResetDiscardsTheSamplesCollectedSoFar) {
  TargetProcess* t = StartManyStacks();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(ManyStacksInDump(*t), 64) << "every start-up allocation is sampled";
  CommandResult r = CliFor(*t, "activate", {"--reset"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("sample interval unchanged, 1 B; the samples collected so far "
                       "were discarded (prof.reset)"),
            std::string::npos)
      << r;
  EXPECT_EQ(ManyStacksInDump(*t), 0) << "the samples from before the reset are gone";
  EXPECT_EQ(StatusJson(*t)["sample_interval_bytes"], 1) << "--reset keeps the interval";
}

// Nothing but a reset discards samples: not deactivate, not activate, not an
// interval that is already in force.
TEST_F(SampleIntervalTest, NothingElseDiscardsSamples) {
  TargetProcess* t = StartManyStacks();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(CliFor(*t, "deactivate").exit_code, 0);
  ASSERT_EQ(CliFor(*t, "activate").exit_code, 0);
  CommandResult same = CliFor(*t, "activate", {"--sample-interval", "1"});
  ASSERT_EQ(same.exit_code, 0) << same;
  EXPECT_NE(same.out.find("sample interval already 1 B; samples collected so far are "
                          "kept"),
            std::string::npos)
      << same;
  EXPECT_EQ(ManyStacksInDump(*t), 64);
}

}  // namespace
}  // namespace memprof::integration
