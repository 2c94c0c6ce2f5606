// Merging dumps: one address space across processes (ASLR), sums of
// unsampled values, several --base dumps, and the pipeline end to end.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/report/merge/address_space.h"
#include "cli/report/merge/profile_merge.h"
#include "cli/report/report_pipeline.h"

namespace memprof::report::merge {
namespace {

using report::HeapProfile;
using report::Sample;

constexpr const char* kServer = "/opt/app/bin/server";

std::string MapsLine(uint64_t start, uint64_t end, uint64_t offset, const char* perms,
                     const char* path) {
  char line[256];
  std::snprintf(line, sizeof(line), "%lx-%lx %s %08lx 08:02 17 %s", static_cast<unsigned long>(start),
                static_cast<unsigned long>(end), perms, static_cast<unsigned long>(offset), path);
  return line;
}

// The server binary (two segments) loaded at `base`.
std::vector<std::string> ServerMaps(uint64_t base) {
  return {MapsLine(base, base + 0x9000, 0, "r-xp", kServer),
          MapsLine(base + 0xa000, base + 0xb000, 0x9000, "rw-p", kServer)};
}

HeapProfile Profile(uint64_t base, double bytes, std::vector<uint64_t> offsets) {
  HeapProfile profile;
  profile.sample_period = 524288;
  std::vector<uint64_t> stack;
  for (uint64_t offset : offsets) stack.push_back(base + offset);
  profile.samples.push_back(Sample{stack, {1, bytes}, {}});
  profile.mapped_libraries = ServerMaps(base);
  return profile;
}

TEST(AddressSpaceTest, FirstDumpIsNeverRewritten) {
  AddressSpace space;
  EXPECT_TRUE(space.Place(ServerMaps(0x555500000000)).empty());
  EXPECT_EQ(space.mapped_libraries(), ServerMaps(0x555500000000));
}

TEST(AddressSpaceTest, SameBinaryElsewhereMovesOntoTheFirstPlace) {
  AddressSpace space;
  (void)space.Place(ServerMaps(0x555500000000));
  const std::vector<Relocation> moves = space.Place(ServerMaps(0x563300000000));
  ASSERT_EQ(moves.size(), 2u);
  std::vector<uint64_t> stack = {0x563300000100, 0x563300009000, 0x7f0000000000};
  Relocator(moves).Relocate(stack);
  // The caller's return address at the very end of the text segment still
  // moves (it is looked up minus one); an address outside every file stays.
  EXPECT_EQ(stack, (std::vector<uint64_t>{0x555500000100, 0x555500009000, 0x7f0000000000}));
  EXPECT_EQ(space.mapped_libraries().size(), 2u);  // nothing new to describe
}

// One relocator for a whole dump (its cache shared by every stack) moves
// each address as the relocations say, looked up one by one here, also
// when addresses share a cache slot or repeat at the leaf (not looked up
// minus one) and in a caller's place.
TEST(AddressSpaceTest, ARelocatorMovesEveryAddressAsItsRelocationSays) {
  AddressSpace space;
  (void)space.Place(ServerMaps(0x555500000000));
  const std::vector<Relocation> moves = space.Place(ServerMaps(0x563300000000));
  ASSERT_FALSE(moves.empty());
  std::vector<std::vector<uint64_t>> stacks;
  for (uint64_t i = 0; i < 3000; ++i) {
    const uint64_t text = 0x563300000000 + (i * 0x2001) % 0x9001;
    stacks.push_back({text, text + 1, 0x563300009000, 0x7f0000000000 + i * (uint64_t{1} << 13)});
  }
  stacks.push_back({0x563300009000, 0x563300009000});
  auto moved = [&](uint64_t address, bool leaf) {
    const uint64_t lookup = leaf ? address : address - 1;
    for (const Relocation& r : moves) {
      if (lookup >= r.start && lookup < r.end) return address + r.delta;
    }
    return address;
  };
  Relocator relocator(moves);
  for (const std::vector<uint64_t>& stack : stacks) {
    std::vector<uint64_t> expected = stack;
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = moved(expected[i], i == 0);
    std::vector<uint64_t> cached = stack;
    relocator.Relocate(cached);
    ASSERT_EQ(cached, expected);
  }
  std::vector<uint64_t> unmoved = stacks.front();
  Relocator({}).Relocate(unmoved);
  EXPECT_EQ(unmoved, stacks.front());
}

TEST(AddressSpaceTest, NewModuleOnAClaimedRangeMovesAboveAndIsDescribed) {
  AddressSpace space;
  (void)space.Place(ServerMaps(0x555500000000));
  const std::vector<std::string> other = {
      MapsLine(0x555500000000, 0x555500004000, 0, "r-xp", "/usr/lib/libother.so")};
  const std::vector<Relocation> moves = space.Place(other);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].delta % (uint64_t{2} << 20), 0u);  // alignment kept
  ASSERT_EQ(space.mapped_libraries().size(), 3u);
  EXPECT_NE(space.mapped_libraries()[2].find("/usr/lib/libother.so"), std::string::npos);
  // And the shared space's lines parse back to a non-overlapping module.
  auto moved = symbolize::ParseMemoryMapLine(space.mapped_libraries()[2]);
  ASSERT_TRUE(moved);
  EXPECT_GE(moved->start, 0x55550000b000u);
}

TEST(AddressSpaceTest, RebuiltBinaryWithAnotherLayoutStaysApart) {
  AddressSpace space;
  (void)space.Place(ServerMaps(0x555500000000));
  const std::vector<std::string> rebuilt = {
      MapsLine(0x563300000000, 0x56330000c000, 0, "r-xp", kServer)};
  EXPECT_TRUE(space.Place(rebuilt).empty());  // its own (free) place
  EXPECT_EQ(space.mapped_libraries().size(), 3u);
}

TEST(ProfileMergeTest, DifferentMapsMergeIntoOneStackAndSum) {
  std::vector<HeapProfile> profiles = {Profile(0x555500000000, 1000, {0x100, 0x200}),
                                       Profile(0x563300000000, 3000, {0x100, 0x200})};
  SharedSpace space = IntoOneAddressSpace(std::move(profiles));
  HeapProfile sum = SumProfiles(std::move(space.profiles), space.mapped_libraries);
  ASSERT_EQ(sum.samples.size(), 1u);
  EXPECT_EQ(sum.samples[0].stack, (std::vector<uint64_t>{0x555500000100, 0x555500000200}));
  EXPECT_DOUBLE_EQ(sum.samples[0].inuse.bytes, 4000);
  EXPECT_DOUBLE_EQ(sum.samples[0].inuse.objects, 2);
  EXPECT_EQ(sum.mapped_libraries, ServerMaps(0x555500000000));
}

TEST(ProfileMergeTest, DistinctStacksKeepFirstSeenOrder) {
  std::vector<HeapProfile> profiles = {Profile(0x1000000, 1, {0x100}),
                                       Profile(0x1000000, 2, {0x200}),
                                       Profile(0x1000000, 4, {0x100})};
  HeapProfile sum = SumProfiles(std::move(profiles), {});
  ASSERT_EQ(sum.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(sum.samples[0].inuse.bytes, 5);
  EXPECT_DOUBLE_EQ(sum.samples[1].inuse.bytes, 2);
}

TEST(ProfileMergeTest, OneProfileComesBackAsItIs) {
  HeapProfile one = Profile(0x1000000, 7, {0x100, 0x100});
  std::vector<HeapProfile> profiles = {one};
  HeapProfile sum = SumProfiles(std::move(profiles), one.mapped_libraries);
  ASSERT_EQ(sum.samples.size(), 1u);
  EXPECT_EQ(sum.samples[0].stack, one.samples[0].stack);
  EXPECT_EQ(sum.sample_period, one.sample_period);
}

// The pipeline over real files: totals of merged and --base'd dumps.
class MergePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("memprof-merge-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A period-0 dump (no unsampling): the values are exact.
  std::string Write(const std::string& name, const std::string& base_hex, int bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "heap_v2/0\n  t*: 1: " << bytes << " [0: 0]\n@ 0x" << base_hex << "0100 0x" << base_hex
        << "0200\n  t*: 1: " << bytes << " [0: 0]\n\nMAPPED_LIBRARIES:\n"
        << base_hex << "0000-" << base_hex << "9000 r-xp 00000000 08:02 17 " << kServer << '\n';
    return path;
  }

  std::string Run(report::ReportRequest request) {
    request.show_bytes = true;
    std::ostringstream out;
    auto result = report::RunReportPipeline(request, out);
    EXPECT_TRUE(result) << result.error().message;
    return out.str();
  }

  std::filesystem::path dir_;
};

TEST_F(MergePipelineTest, TotalIsTheSumAndFramesMergeAcrossProcesses) {
  report::ReportRequest request;
  request.dump_path = Write("a.heap", "55550000", 1000);
  request.more_dump_paths = {Write("b.heap", "56330000", 3000)};
  const std::string text = Run(request);
  EXPECT_EQ(text.rfind("Total: 4000 B\n", 0), 0u) << text;
  EXPECT_NE(text.find("4000 100.0% 100.0%     4000 100.0% server+0x100"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("0x5633"), std::string::npos) << text;  // nothing left apart
}

TEST_F(MergePipelineTest, SeveralBasesAreSummedThenSubtracted) {
  report::ReportRequest request;
  request.dump_path = Write("new1.heap", "55550000", 5000);
  request.more_dump_paths = {Write("new2.heap", "56330000", 5000)};
  request.base_path = Write("old1.heap", "57770000", 1000);
  request.more_base_paths = {Write("old2.heap", "58880000", 2000)};
  EXPECT_EQ(Run(request).rfind("Total: 7000 B\n", 0), 0u);
}

TEST_F(MergePipelineTest, EveryFormatAcceptsSeveralDumps) {
  for (report::Format format : {report::Format::kCollapsed, report::Format::kJson,
                                report::Format::kSvg, report::Format::kPprof}) {
    report::ReportRequest request;
    request.format = format;
    request.dump_path = Write("a.heap", "55550000", 1000);
    request.more_dump_paths = {Write("b.heap", "56330000", 3000)};
    EXPECT_FALSE(Run(request).empty());
  }
}

TEST_F(MergePipelineTest, CollapsedStacksOfTwoProcessesAddUp) {
  report::ReportRequest request;
  request.format = report::Format::kCollapsed;
  request.dump_path = Write("a.heap", "55550000", 1000);
  request.more_dump_paths = {Write("b.heap", "56330000", 3000)};
  const std::string collapsed = Run(request);
  EXPECT_EQ(std::count(collapsed.begin(), collapsed.end(), '\n'), 1) << collapsed;
  EXPECT_NE(collapsed.find(" 4000"), std::string::npos) << collapsed;
}

}  // namespace
}  // namespace memprof::report::merge
