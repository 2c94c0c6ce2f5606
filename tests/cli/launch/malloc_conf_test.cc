#include "cli/launch/malloc_conf.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

TEST(MallocConfTest, EmptyUserConfGivesTheProfilingDefaults) {
  const MergedMallocConf merged = MergeMallocConf("");
  EXPECT_EQ(merged.value, "prof:true,prof_active:false");
  EXPECT_TRUE(merged.warnings.empty());
}

TEST(MallocConfTest, UserKeysAreAppendedInOrder) {
  EXPECT_EQ(MergeMallocConf("narenas:2,lg_prof_sample:17").value,
            "prof:true,prof_active:false,narenas:2,lg_prof_sample:17");
}

TEST(MallocConfTest, UserKeysWinOverOurs) {
  const MergedMallocConf merged = MergeMallocConf("prof_active:true,narenas:4");
  EXPECT_EQ(merged.value, "prof:true,prof_active:true,narenas:4");
  EXPECT_TRUE(merged.warnings.empty());
}

TEST(MallocConfTest, ProfStaysTrueWithAWarning) {
  const MergedMallocConf merged = MergeMallocConf("prof:false,narenas:1");
  EXPECT_EQ(merged.value, "prof:true,prof_active:false,narenas:1");
  ASSERT_EQ(merged.warnings.size(), 1u);
  EXPECT_NE(merged.warnings[0].find("prof:false"), std::string::npos);
}

TEST(MallocConfTest, ProfTrueFromTheUserIsNotAWarning) {
  const MergedMallocConf merged = MergeMallocConf("prof:true");
  EXPECT_EQ(merged.value, "prof:true,prof_active:false");
  EXPECT_TRUE(merged.warnings.empty());
}

TEST(MallocConfTest, LastDuplicateWinsAndEmptyEntriesAreDropped) {
  EXPECT_EQ(MergeMallocConf(",narenas:2,,narenas:8,").value,
            "prof:true,prof_active:false,narenas:8");
}

TEST(MallocConfTest, MalformedEntriesPassThroughForJemallocToReport) {
  EXPECT_EQ(MergeMallocConf("garbage,narenas:2").value,
            "prof:true,prof_active:false,garbage,narenas:2");
}

}  // namespace
}  // namespace memprof::cli
