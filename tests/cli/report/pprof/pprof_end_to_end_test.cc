// Our whole pipeline on a real jemalloc dump, checked by the real pprof:
// tests/testprogs/many_stacks_target dumps its heap; we parse, unsample,
// symbolize with libdwfl and write pprof; pprof (built from Debian's Go
// sources) must read it and agree on totals, names and lines. Without a
// pprof that runs, the tests fail and name the packages it is built from.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/pprof/dwfl_address_symbolizer.h"
#include "cli/report/pprof/pprof_writer.h"
#include "cli/report/symbolize/symbolizer.h"
#include "tests/cli/report/pprof/test_support.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::pprof {
namespace {

namespace pb = perftools::profiles;
using test_support::Quote;
using test_support::ReadFile;
using test_support::RunShell;

const std::string kPprof = MEMPROF_PPROF_TOOL;
const std::string kTarget = MEMPROF_MANY_STACKS_TARGET;
const std::string kTargetSource = MEMPROF_MANY_STACKS_SOURCE;

// The 1-based line of the first line of `path` containing `needle`.
int LineOf(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find(needle) != std::string::npos) return number;
  }
  ADD_FAILURE() << needle << " not in " << path;
  return -1;
}

// pprof's "Showing nodes accounting for X, Y% of TOTAL total" figure.
std::string PprofTotal(const std::string& top) {
  static const std::regex kTotal(R"(of (\S+) total)");
  std::smatch match;
  if (!std::regex_search(top, match, kTotal)) {
    ADD_FAILURE() << "no total in pprof's output:\n" << top;
    return "";
  }
  return match[1];
}

int64_t SumValues(const pb::Profile& profile, int index) {
  int64_t sum = 0;
  for (const pb::Sample& sample : profile.sample()) sum += sample.value(index);
  return sum;
}

class PprofEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::Pprof(kPprof), &pprof_));
  }

  // A dump of every allocation (lg_prof_sample:0) with accumulated counts,
  // so all four sample types are present.
  std::string MakeDump(const std::string& args) {
    std::string path = dir_.File("target.heap");
    RunShell("MALLOC_CONF=prof:true,prof_active:true,prof_accum:true,lg_prof_sample:0 " +
             Quote(kTarget) + " " + args + " --once --self-dump " + Quote(path) + " 2>&1");
    return path;
  }

  // Parse, unsample, symbolize (with lines) and write; returns the path.
  std::string WriteProfile(const std::string& dump_path, report::HeapProfile& profile,
                           const std::string& drop_frames = kAllocatorDropFrames) {
    Result<parse::HeapDump> dump = parse::ParseHeapV2File(dump_path);
    EXPECT_TRUE(dump.has_value()) << dump.error().message;
    if (!dump) return "";
    profile = aggregate::Unsample(std::move(*dump));
    symbolize::ParsedMemoryMap maps = symbolize::ParseMemoryMap(profile.mapped_libraries);
    symbolize::SymbolizerOptions options;
    options.lines = true;
    Result<symbolize::Symbolizer> symbolizer =
        symbolize::Symbolizer::Create(maps.mappings, options);
    EXPECT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
    if (!symbolizer) return "";
    DwflAddressSymbolizer adapter(*symbolizer);
    std::string path = dir_.File("target.pb.gz");
    std::ofstream out(path, std::ios::binary);
    PprofOptions pprof_options;
    pprof_options.drop_frames = drop_frames;
    Result<void> written = WritePprof(profile, adapter, maps.mappings, pprof_options, out);
    EXPECT_TRUE(written.has_value()) << written.error().message;
    return path;
  }

  std::string Pprof(const std::string& flags, const std::string& profile_path) {
    // HOME: pprof may want to write ~/pprof; keep it in our temp dir.
    return RunShell("HOME=" + Quote(dir_.path()) + " " + Quote(pprof_) + " -symbolize=none " +
                    flags + " " + Quote(profile_path) + " 2>&1");
  }

  std::string pprof_;
  test_support::TempDir dir_{"memprof-pprof"};
};

TEST_F(PprofEndToEndTest, PprofTotalsEqualOursForEverySampleType) {
  report::HeapProfile heap;
  std::string path = WriteProfile(MakeDump("--stacks 500 --bytes 100"), heap);
  ASSERT_FALSE(path.empty());
  pb::Profile ours = testing::DecodeProfile(ReadFile(path));
  ASSERT_EQ(ours.sample_type_size(), 4);
  ASSERT_TRUE(heap.has_alloc);

  double inuse_bytes = 0;
  for (const report::Sample& sample : heap.samples) inuse_bytes += sample.inuse.bytes;
  // Rounding each sample moves the total by at most half a byte per sample.
  EXPECT_NEAR(static_cast<double>(SumValues(ours, 1)), inuse_bytes,
              0.5 * static_cast<double>(heap.samples.size()));
  EXPECT_GE(SumValues(ours, 1), 500 * 100);  // every stack's block is live

  const char* kIndexes[] = {"inuse_objects", "inuse_space", "alloc_objects", "alloc_space"};
  for (int i = 0; i < 4; ++i) {
    // -unit=B keeps bytes unscaled; counts are printed unscaled anyway.
    bool bytes = i % 2 == 1;
    std::string top =
        Pprof(std::string(bytes ? "-top -unit=B" : "-top") + " -sample_index=" + kIndexes[i], path);
    std::string expected = std::to_string(SumValues(ours, i)) + (bytes ? "B" : "");
    EXPECT_EQ(PprofTotal(top), expected) << kIndexes[i] << ":\n" << top;
  }
}

// The flat column of pprof's -top row for `name` ("" if there is none).
std::string FlatOf(const std::string& top, const std::string& name) {
  std::istringstream lines(top);
  for (std::string line; std::getline(lines, line);) {
    if (!line.ends_with("  " + name)) continue;
    std::istringstream fields(line);
    std::string flat;
    fields >> flat;
    return flat;
  }
  return "";
}

TEST_F(PprofEndToEndTest, PprofShowsOurFunctionNames) {
  report::HeapProfile heap;
  std::string path = WriteProfile(MakeDump("--stacks 500"), heap);
  ASSERT_FALSE(path.empty());
  std::string top = Pprof("-top -nodecount=40 -sample_index=inuse_space", path);
  for (const char* name :
       {"ManyStacksAllocate()", "ManyStacksBranch0(unsigned long, int)",
        "ManyStacksBranch1(unsigned long, int)", "Descend (inline)", " main\n"}) {
    EXPECT_NE(top.find(name), std::string::npos) << name << " not in:\n" << top;
  }
}

TEST_F(PprofEndToEndTest, PprofAppliesOurDropFrames) {
  // Cutting at the allocating function leaves its caller as the leaf: the
  // code inlined into the branch functions (Descend) that called it.
  // (Debian's libjemalloc.so.2 is stripped, so the default regex finds no
  // named allocator frame to cut in this dump; this checks the mechanism.)
  report::HeapProfile heap;
  std::string dump = MakeDump("--stacks 500");
  std::string path = WriteProfile(dump, heap, "ManyStacksAllocate");
  ASSERT_FALSE(path.empty());
  std::string top = Pprof("-top -nodecount=40 -sample_index=inuse_space", path);
  EXPECT_EQ(FlatOf(top, "ManyStacksAllocate()"), "");
  std::string flat = FlatOf(top, "Descend (inline)");
  EXPECT_NE(flat, "") << top;
  EXPECT_NE(flat, "0") << top;
  EXPECT_EQ(top.find("ManyStacksAllocate"), std::string::npos) << top;
}

TEST_F(PprofEndToEndTest, PprofPlacesTheCallOnItsOwnLine) {
  // A caller's Location.address is its return address minus one, inside the
  // call instruction, so the allocating frame's line is the malloc call's,
  // not the line after it.
  report::HeapProfile heap;
  std::string path = WriteProfile(MakeDump("--stacks 64"), heap);
  ASSERT_FALSE(path.empty());
  std::string top = Pprof("-top -lines -nodecount=100 -sample_index=inuse_space", path);
  int malloc_line = LineOf(kTargetSource, "std::malloc(g_workload.bytes)");
  std::string expected = "many_stacks_target.cc:" + std::to_string(malloc_line);
  EXPECT_NE(top.find(expected), std::string::npos) << "want " << expected << " in:\n" << top;
}

}  // namespace
}  // namespace memprof::report::pprof
