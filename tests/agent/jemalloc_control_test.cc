#include "agent/jemalloc_control.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/agent/test_allocations.h"

namespace memprof::agent {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class JemallocControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto detected = JemallocControl::Detect();
    ASSERT_TRUE(detected.has_value()) << "this test binary must run on jemalloc";
    control_.emplace(*detected);
  }
  void TearDown() override { (void)control_->SetActive(false); }
  std::optional<JemallocControl> control_;
};

TEST_F(JemallocControlTest, ReportsBuildAndStartupConfiguration) {
  EXPECT_TRUE(control_->ProfilingSupported());
  EXPECT_TRUE(control_->ProfilingEnabled());
  EXPECT_EQ(control_->Version().rfind("5.", 0), 0u) << control_->Version();
  EXPECT_EQ(control_->SampleInterval(), 1024u);  // lg_prof_sample:10
}

TEST_F(JemallocControlTest, SetActiveReturnsPreviousValue) {
  ASSERT_FALSE(control_->ProfilingActive());
  EXPECT_EQ(control_->SetActive(true).value(), false);
  EXPECT_TRUE(control_->ProfilingActive());
  EXPECT_EQ(control_->SetActive(true).value(), true);
  EXPECT_EQ(control_->SetActive(false).value(), true);
  EXPECT_FALSE(control_->ProfilingActive());
}

TEST_F(JemallocControlTest, DumpWritesHeapV2NamingTheAllocatingFunction) {
  ASSERT_TRUE(control_->SetActive(true));
  auto blocks = AllocateForProfile(256, 4096);
  char tmpl[] = "/tmp/memprof-jemalloc-test-XXXXXX";
  int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto r = control_->DumpTo(tmpl);
  ASSERT_TRUE(r) << r.error().message;
  std::string dump = ReadAll(tmpl);
  ::unlink(tmpl);
  FreeAll(blocks);
  EXPECT_EQ(dump.rfind("heap_v2/1024\n", 0), 0u) << dump.substr(0, 40);
  EXPECT_NE(dump.find("MAPPED_LIBRARIES:"), std::string::npos);
  EXPECT_NE(dump.find("\n@ 0x"), std::string::npos) << "no stack samples in the dump";
}

TEST_F(JemallocControlTest, DumpToUnwritablePathFailsCleanly) {
  auto r = control_->DumpTo("/nonexistent-dir/memprof/heap");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_NE(r.error().message.find("prof.dump"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find("No such file"), std::string::npos) << "no strerror text";
}

TEST_F(JemallocControlTest, SummaryReflectsAllocations) {
  auto before = control_->ReadSummary();
  ASSERT_TRUE(before) << before.error().message;
  auto blocks = AllocateForProfile(64, 1 << 20);
  auto after = control_->ReadSummary();
  ASSERT_TRUE(after);
  EXPECT_GE(after->allocated, before->allocated + 60u * (1 << 20));
  EXPECT_GE(after->active, after->allocated);
  EXPECT_GE(after->mapped, after->active);
  EXPECT_GT(after->metadata, 0u);
  EXPECT_GT(after->resident, 0u);
  FreeAll(blocks);
}

TEST_F(JemallocControlTest, StatsReportInBothFormats) {
  auto json = control_->StatsReport(true);
  ASSERT_TRUE(json);
  EXPECT_EQ(json->front(), '{');
  EXPECT_NE(json->find("\"jemalloc\""), std::string::npos);
  auto text = control_->StatsReport(false);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("Allocated:"), std::string::npos);
}

}  // namespace
}  // namespace memprof::agent
