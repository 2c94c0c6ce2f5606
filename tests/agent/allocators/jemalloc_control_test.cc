#include "agent/allocators/jemalloc_control.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/agent/support/test_allocations.h"

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
  void TearDown() override {
    (void)control_->SetActive(false);
    (void)control_->Reset(kStartupLgSample);  // other tests expect lg_prof_sample:10
  }
  // What a dump shows now.
  std::string Dump() {
    char tmpl[] = "/tmp/memprof-jemalloc-test-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) return {};
    ::close(fd);
    auto r = control_->DumpTo(tmpl);
    std::string dump = r ? ReadAll(tmpl) : std::string();
    ::unlink(tmpl);
    EXPECT_TRUE(r) << r.error().message;
    return dump;
  }
  static constexpr unsigned kStartupLgSample = 10;
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
  UseUpSampleCountdown();
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

// Samples taken while active, then profiling switched off: only a reset can
// make them go away, and no new ones can arrive meanwhile.
TEST_F(JemallocControlTest, ResetDiscardsTheSamplesCollectedSoFar) {
  ASSERT_TRUE(control_->SetActive(true));
  UseUpSampleCountdown();
  auto blocks = AllocateForProfile(256, 4096);
  ASSERT_TRUE(control_->SetActive(false));
  ASSERT_NE(Dump().find("\n@ 0x"), std::string::npos) << "no samples before the reset";

  auto r = control_->Reset(std::nullopt);
  ASSERT_TRUE(r) << r.error().message;
  const std::string after = Dump();
  FreeAll(blocks);
  EXPECT_EQ(after.rfind("heap_v2/1024\n", 0), 0u) << "the interval was kept: " << after.substr(0, 40);
  EXPECT_EQ(after.find("\n@ 0x"), std::string::npos) << "samples survived the reset:\n" << after;
  EXPECT_FALSE(control_->ProfilingActive()) << "prof.reset does not touch prof.active";
}

TEST_F(JemallocControlTest, ResetWithALgSampleChangesTheInterval) {
  auto r = control_->Reset(20);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(control_->SampleInterval(), uint64_t{1} << 20);
  EXPECT_EQ(Dump().rfind("heap_v2/1048576\n", 0), 0u);
  ASSERT_TRUE(control_->Reset(0));
  EXPECT_EQ(control_->SampleInterval(), 1u);
  ASSERT_TRUE(control_->Reset(std::nullopt));
  EXPECT_EQ(control_->SampleInterval(), 1u) << "no lg_sample keeps the current one";
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
