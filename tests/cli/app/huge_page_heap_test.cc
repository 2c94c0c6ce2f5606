#include "cli/app/huge_page_heap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace memprof::cli {
namespace {

TEST(HugePageHeapTest, AddsTheTunablesToWhatIsSet) {
  EXPECT_EQ(TunablesWithHugePages(nullptr), "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432");
  EXPECT_EQ(TunablesWithHugePages(""), "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432");
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.arena_max=2"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432");
}

// The user's own top_pad stays; huge pages are still added.
TEST(HugePageHeapTest, KeepsTheUsersTopPad) {
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.top_pad=0"),
            "glibc.malloc.top_pad=0:glibc.malloc.hugetlb=1");
}

// Our own second run, or the user's explicit choice (hugetlb=0 too).
TEST(HugePageHeapTest, LeavesAnyHugetlbSettingAlone) {
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.hugetlb=1"), std::nullopt);
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2"),
            std::nullopt);
}

TEST(HugePageHeapTest, OnlyReportsOfBigInputs) {
  test_support::TempDir dir;
  const std::string small = dir.File("small.heap");
  const std::string big = dir.File("big.heap");
  std::ofstream(small) << "heap_v2/524288\n";
  {
    std::ofstream out(big);
    out << std::string(kHugePageInputBytes, 'x');
  }
  EXPECT_TRUE(WantsHugePageHeap({"report", big}));
  EXPECT_TRUE(WantsHugePageHeap({"-v", "report", big, "--format", "svg"}));
  EXPECT_FALSE(WantsHugePageHeap({"report", small}));
  EXPECT_FALSE(WantsHugePageHeap({"dump", "--pid", "1", "--out", big}));
  EXPECT_FALSE(WantsHugePageHeap({"run", "--", "report", big}));
  EXPECT_FALSE(WantsHugePageHeap({"report", dir.path()})) << "a directory counts nothing";
}

TEST(HugePageHeapTest, NotWhereTheKernelHasThemOff) {
  EXPECT_TRUE(HugePagesAvailable("always [madvise] never\n"));
  EXPECT_TRUE(HugePagesAvailable("[always] madvise never\n"));
  EXPECT_FALSE(HugePagesAvailable("always madvise [never]\n"));
  EXPECT_FALSE(HugePagesAvailable(""));
}

}  // namespace
}  // namespace memprof::cli
