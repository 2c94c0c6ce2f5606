// --pid must name the process a dump came from, and --alloc-* needs a dump
// with allocation counts: each mistake is refused with what to do instead.
#include "cli/report/dump_process_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace memprof::report {
namespace {

const std::vector<std::string> kDumpMaps = {
    "55d000000000-55d000001000 r--p 00000000 08:02 4242 /usr/bin/app",
    "55d000001000-55d000002000 r-xp 00001000 08:02 4242 /usr/bin/app",
    "7f0000000000-7f0000100000 r-xp 00000000 08:02 77 /usr/lib/libc.so.6"};

std::vector<report::symbolize::MemoryMapping> Parse(const std::vector<std::string>& lines) {
  return report::symbolize::ParseMemoryMap(lines).mappings;
}

TEST(DumpProcessCheckTest, TheDumpsOwnProcessPasses) {
  std::vector<std::string> live = kDumpMaps;
  live[0] += " (deleted)";  // replaced on disk since: still the same process
  EXPECT_TRUE(CompareDumpWithProcess(42, Parse(kDumpMaps), Parse(live)).has_value());
}

TEST(DumpProcessCheckTest, AnotherProcessIsAUsageErrorNamingTheMapping) {
  const std::vector<std::string> live = {
      "560000000000-560000001000 r--p 00000000 08:02 4242 /usr/bin/app",  // ASLR elsewhere
      "7f0000000000-7f0000100000 r-xp 00000000 08:02 77 /usr/lib/libc.so.6"};
  auto ok = CompareDumpWithProcess(42, Parse(kDumpMaps), Parse(live));
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ok.error().message,
            "--pid 42: process 42 is not the one the dump came from: the dump maps /usr/bin/app "
            "at 0x55d000000000, process 42 does not (another program, or a restart); leave --pid "
            "out, or give the pid of the process that wrote the dump");
}

TEST(DumpProcessCheckTest, AnExitedProcessIsNotFound) {
  auto dir = test_support::TempDir::Create("memprof-proc");
  ASSERT_TRUE(dir.has_value());
  auto ok = CheckDumpProcess(4242, kDumpMaps, dir->path());
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ok.error().message,
            "--pid 4242: no process with pid 4242 (it has exited?); leave --pid out to read the "
            "dump's binaries by path");
}

TEST(DumpProcessCheckTest, ReadsTheLiveMapsUnderTheProcRoot) {
  auto dir = test_support::TempDir::Create("memprof-proc");
  ASSERT_TRUE(dir.has_value());
  ASSERT_EQ(::mkdir(dir->File("7").c_str(), 0700), 0);
  std::string maps;
  for (const std::string& line : kDumpMaps) maps += line + "\n";
  ASSERT_TRUE(test_support::WriteFile(dir->File("7/maps"), maps));
  EXPECT_TRUE(CheckDumpProcess(7, kDumpMaps, dir->path()).has_value());
  // This test's own process maps other files elsewhere.
  auto self = CheckDumpProcess(getpid(), kDumpMaps);
  ASSERT_FALSE(self.has_value());
  EXPECT_EQ(self.error().code, ErrorCode::kInvalidArgument);
}

TEST(DumpProcessCheckTest, AllocMetricsNeedAllocationCounts) {
  report::HeapProfile profile;
  EXPECT_TRUE(CheckMetricHasData(profile, report::Metric::kInuseSpace, "d.heap").has_value());
  auto ok = CheckMetricHasData(profile, report::Metric::kAllocSpace, "d.heap");
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(ok.error().message,
            "--alloc-space: d.heap has no allocation counts (they are all zero): jemalloc keeps "
            "them only when started with prof_accum:true, e.g. MALLOC_CONF=prof_accum:true "
            "memprofctl run -- CMD; its in-use figures (the default, or --inuse-objects) are "
            "there");
  profile.has_alloc = true;
  EXPECT_TRUE(CheckMetricHasData(profile, report::Metric::kAllocObjects, "d.heap").has_value());
}

}  // namespace
}  // namespace memprof::report
