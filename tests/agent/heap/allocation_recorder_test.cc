#include "agent/heap/allocation_recorder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "tests/agent/support/test_allocations.h"
#include "tests/support/files.h"
#include "tests/support/wait_until.h"

namespace memprof::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test_support::WaitUntil;

// Allocates and frees `count` blocks of 4 KiB: with the tests' 1 KiB sample
// interval, nearly every one is a record.
__attribute__((noinline)) void RecorderTestChurn(int count) {
  for (int i = 0; i < count; ++i) {
    void* block = HeapAllocate(4096);
    std::memset(block, 1, 4096);
    HeapFree(block);
  }
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class AllocationRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = DetectAllocator();
    ASSERT_NE(allocator_->Jemalloc(), nullptr);
    profiling_ = std::make_unique<ProfilingController>(*allocator_);
    recorder_ = std::make_unique<AllocationRecorder>(*allocator_, *profiling_, ::getpid());
  }
  void TearDown() override {
    recorder_.reset();
    (void)profiling_->Deactivate();
    (void)jemalloc().SetRecentAllocMax(0);
  }
  const JemallocControl& jemalloc() const { return *allocator_->Jemalloc(); }

  AllocationWindowInfo Open(milliseconds duration, int64_t bound = 0) {
    auto info = recorder_->Open(AllocationWindowRequest{duration, bound});
    EXPECT_TRUE(info.has_value()) << info.error().message;
    return info.value_or(AllocationWindowInfo{});
  }

  std::string Fetch(uint64_t id) {
    auto dump = recorder_->Fetch(id);
    if (!dump) {
      ADD_FAILURE() << dump.error().message;
      return {};
    }
    std::string text, part;
    while (true) {
      auto more = (*dump)->ReadNext(1 << 20, part);
      EXPECT_TRUE(more.has_value());
      if (!more || !*more) break;
      text += part;
    }
    EXPECT_EQ((*dump)->size(), text.size());
    EXPECT_TRUE(text.starts_with("\x1f\x8b")) << "written gzip'd";
    return test_support::Gunzipped(text);
  }

  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<ProfilingController> profiling_;
  std::unique_ptr<AllocationRecorder> recorder_;
};

TEST(RecordCounterTest, CountsTheKeyWhereverThePiecesAreCut) {
  const std::string json =
      R"({"recent_alloc":[{"size":1,"usize":8,"released":true},{"size":2,"usize":8}]})";
  for (size_t cut = 0; cut <= json.size(); ++cut) {
    RecordCounter counter;
    counter.Feed(json.substr(0, cut).c_str());
    counter.Feed(json.substr(cut).c_str());
    EXPECT_EQ(counter.count(), 2) << "cut at " << cut;
  }
  RecordCounter border;
  border.Feed(R"("usize""usize":)");  // the key right after a quoted "usize"
  EXPECT_EQ(border.count(), 1);
}

TEST_F(AllocationRecorderTest, RecordsTheWindowsAllocationsAndPutsEverythingBack) {
  ASSERT_FALSE(jemalloc().ProfilingActive());
  const AllocationWindowInfo info = Open(seconds(30));
  EXPECT_EQ(info.id, 1u);
  EXPECT_EQ(info.record_bound, kDefaultRecordBound);
  EXPECT_TRUE(info.profiling_activated);
  EXPECT_TRUE(jemalloc().ProfilingActive());
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), kDefaultRecordBound);
  EXPECT_EQ(recorder_->OpenWindow(), info.id);
  RecorderTestChurn(200);

  const std::string profile = Fetch(info.id);
  EXPECT_TRUE(profile.starts_with("memprof allocation profile v1\npid: ")) << profile.substr(0, 80);
  EXPECT_NE(profile.find("\nended_by: client\n"), std::string::npos);
  EXPECT_NE(profile.find("\nrecords_lost: 0\n"), std::string::npos);
  EXPECT_NE(profile.find("\nrecord_bound: 100000\n"), std::string::npos);
  EXPECT_GE(CountOf(profile, "\"usize\":"), 100) << "200 blocks of 4 KiB at a 1 KiB interval";
  EXPECT_NE(profile.find("\"released\":true"), std::string::npos);
  EXPECT_NE(profile.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  EXPECT_TRUE(profile.ends_with("\n--- end\n"));

  EXPECT_EQ(recorder_->OpenWindow(), 0u);
  EXPECT_FALSE(jemalloc().ProfilingActive()) << "the window turned profiling on, and off again";
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 0) << "jemalloc's bound as found";
  auto again = recorder_->Fetch(info.id);
  ASSERT_FALSE(again.has_value()) << "handed over once";
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
}

// A child forked during a window does not go on recording: its copy of
// jemalloc's bound is put back, while the parent's window goes on.
TEST_F(AllocationRecorderTest, AChildForkedDuringAWindowStopsRecording) {
  const AllocationWindowInfo info = Open(seconds(30));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto bound = allocator_->Jemalloc()->RecentAllocMax();
    ::_exit(bound && *bound == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child still records";
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), kDefaultRecordBound);
  EXPECT_EQ(recorder_->OpenWindow(), info.id);
  EXPECT_FALSE(Fetch(info.id).empty());
}

TEST_F(AllocationRecorderTest, ASecondWindowIsRefusedWhileOneIsOpen) {
  const AllocationWindowInfo info = Open(seconds(30));
  auto second = recorder_->Open(AllocationWindowRequest{seconds(5), 0});
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(second.error().message.find("allocation window #1 is already open"),
            std::string::npos)
      << second.error().message;
  EXPECT_FALSE(Fetch(info.id).empty());
}

TEST_F(AllocationRecorderTest, AWindowEndsByItselfAndIsKeptForItsClient) {
  const AllocationWindowInfo info = Open(seconds(1));
  ASSERT_TRUE(WaitUntil([&] { return recorder_->OpenWindow() == 0; }, seconds(10),
                        milliseconds(20)));
  EXPECT_FALSE(jemalloc().ProfilingActive());
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 0);
  EXPECT_NE(Fetch(info.id).find("\nended_by: duration\n"), std::string::npos);
}

TEST_F(AllocationRecorderTest, AWindowEndsEarlyNearItsBound) {
  const AllocationWindowInfo info = Open(seconds(60), 500);
  EXPECT_EQ(info.record_bound, 500);
  // Far more samples than the bound, spread so that the counts see them come.
  const bool ended = WaitUntil(
      [&] {
        RecorderTestChurn(50);
        return recorder_->OpenWindow() == 0;
      },
      seconds(30), milliseconds(10));
  ASSERT_TRUE(ended) << "the window ran on past its bound";
  const std::string profile = Fetch(info.id);
  EXPECT_NE(profile.find("\nended_by: bound\n"), std::string::npos) << profile.substr(0, 400);
  EXPECT_LE(CountOf(profile, "\"usize\":"), 500);
}

TEST_F(AllocationRecorderTest, ABoundOfEveryRecordIsLeftAlone) {
  ASSERT_TRUE(jemalloc().SetRecentAllocMax(-1).has_value());
  auto refused = recorder_->Open(AllocationWindowRequest{seconds(5), 0});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message.find("opt.prof_recent_alloc_max:-1"), std::string::npos);
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), -1) << "nothing was changed";
  EXPECT_FALSE(jemalloc().ProfilingActive());
}

TEST_F(AllocationRecorderTest, ABoundAlreadySetIsPutBack) {
  ASSERT_TRUE(jemalloc().SetRecentAllocMax(7).has_value());
  const AllocationWindowInfo info = Open(seconds(30));
  RecorderTestChurn(20);
  EXPECT_FALSE(Fetch(info.id).empty());
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 7);
}

TEST_F(AllocationRecorderTest, OutOfRangeRequestsChangeNothing) {
  for (const AllocationWindowRequest& bad :
       {AllocationWindowRequest{milliseconds(999), 0}, AllocationWindowRequest{std::chrono::hours(25), 0},
        AllocationWindowRequest{seconds(5), -1},
        AllocationWindowRequest{seconds(5), kMaxRecordBound + 1}}) {
    auto r = recorder_->Open(bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << r.error().message;
  }
  EXPECT_EQ(recorder_->OpenWindow(), 0u);
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 0);
  EXPECT_FALSE(jemalloc().ProfilingActive());
}

TEST_F(AllocationRecorderTest, FetchingAWindowNeverOpenedSaysSo) {
  auto r = recorder_->Fetch(42);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("allocation window #42 has no profile"), std::string::npos);
}

}  // namespace
}  // namespace memprof::agent
