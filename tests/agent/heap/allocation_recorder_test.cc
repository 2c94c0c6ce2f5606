#include "agent/heap/allocation_recorder.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "tests/agent/support/test_allocations.h"
#include "tests/support/files.h"
#include "tests/support/occurrences.h"
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

// What a test sees of the windows' records: their starts, stops and dumps
// in order ("start 1", "dump 1", ...), and the thread a dump (the profile's
// write) runs on. Each dump waits until the test releases the gate: the
// test holds a window's end half way through its write.
class RecordsGate {
 public:
  void Note(std::string event) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(event));
    cv_.notify_all();
  }
  // In a dump: says which thread writes, then waits for Release().
  void HoldDump(int window) {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    std::unique_lock lock(mu_);
    events_.push_back("dump " + std::to_string(window));
    dumper_ = pthread_self();
    dumper_name_ = name;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
  }
  // Whether `event` came within `timeout` (which only tells a hang). If it
  // did not, the gate is released: nothing waits on a test that has failed.
  bool WaitFor(const std::string& event, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    const bool came = cv_.wait_for(lock, timeout, [&] {
      return std::find(events_.begin(), events_.end(), event) != events_.end();
    });
    if (!came) released_ = true;
    cv_.notify_all();
    return came;
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::optional<pthread_t> dumper() const {
    std::lock_guard lock(mu_);
    return dumper_;
  }
  std::string dumper_name() const {
    std::lock_guard lock(mu_);
    return dumper_name_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
  std::optional<pthread_t> dumper_;
  std::string dumper_name_;
  bool released_ = false;
};

// The process's real records (jemalloc's), told to the gate as they go.
class GatedRecords final : public RecentAllocations {
 public:
  GatedRecords(std::unique_ptr<RecentAllocations> records, RecordsGate& gate, int window)
      : records_(std::move(records)), gate_(gate), window_(window) {}

  Result<void> Start(int64_t bound) override {
    gate_.Note("start " + std::to_string(window_));
    return records_->Start(bound);
  }
  void Stop() override {
    records_->Stop();
    gate_.Note("stop " + std::to_string(window_));
  }
  Result<Count> Held() const override { return records_->Held(); }
  Result<void> Dump(JemallocControl::WriteCb write, void* opaque) const override {
    gate_.HoldDump(window_);
    return records_->Dump(write, opaque);
  }
  ProfClock Clock() const override { return records_->Clock(); }
  uint64_t SampleInterval() const override { return records_->SampleInterval(); }
  bool SamplingActive() const override { return records_->SamplingActive(); }

 private:
  std::unique_ptr<RecentAllocations> records_;
  RecordsGate& gate_;
  const int window_;
};

// Whether `answer` came within `timeout` (a bound that only tells a hang).
template <typename T>
bool AnsweredWithin(const std::future<T>& answer, std::chrono::milliseconds timeout) {
  return answer.wait_for(timeout) == std::future_status::ready;
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

  // Each window's records go through `gate_` from now on.
  void GateRecords() {
    recorder_.reset();
    recorder_ = std::make_unique<AllocationRecorder>(
        *profiling_, ::getpid(), [this]() -> Result<std::unique_ptr<RecentAllocations>> {
          auto records = RecentAllocationsOf(*allocator_);
          if (!records) return Fail(records.error());
          return std::make_unique<GatedRecords>(std::move(*records), gate_, ++windows_);
        });
  }

  std::string Fetch(uint64_t id) { return Read(recorder_->Fetch(id)); }

  std::string Read(Result<std::unique_ptr<HeapDump>> dump) {
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
  RecordsGate gate_;             // outlives the recorder
  std::atomic<int> windows_{0};  // windows whose records went through gate_
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
  EXPECT_GE(test_support::CountOccurrences(profile, "\"usize\":"), 100u)
      << "200 blocks of 4 KiB at a 1 KiB interval";
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
  EXPECT_LE(test_support::CountOccurrences(profile, "\"usize\":"), 500u);
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

// A Fetch asks the recorder's thread to end the window and waits for its
// profile; meanwhile the state answers at once, and shows the window open
// until its profile is held (a client polling Status never sees neither).
TEST_F(AllocationRecorderTest, AFetchedWindowIsWrittenOnTheRecordersThreadWhileTheStateAnswers) {
  GateRecords();
  const AllocationWindowInfo info = Open(seconds(30));
  RecorderTestChurn(50);
  std::promise<pthread_t> fetcher;
  std::future<pthread_t> fetcher_id = fetcher.get_future();
  auto fetched = std::async(std::launch::async, [&] {
    fetcher.set_value(pthread_self());
    return recorder_->Fetch(info.id);
  });
  ASSERT_TRUE(gate_.WaitFor("dump 1", seconds(30))) << "the profile was never written";

  // From other threads than the fetcher's: the write waits for this test.
  auto state = std::async(std::launch::async, [this] { return recorder_->CurrentState(); });
  auto open = std::async(std::launch::async, [this] { return recorder_->OpenWindow(); });
  const bool answered = AnsweredWithin(state, seconds(20)) && AnsweredWithin(open, seconds(20));
  gate_.Release();
  EXPECT_EQ(gate_.dumper_name(), "memprof-allocs");
  ASSERT_TRUE(gate_.dumper().has_value());
  EXPECT_FALSE(pthread_equal(*gate_.dumper(), fetcher_id.get()))
      << "written on the fetching thread";
  ASSERT_TRUE(answered) << "CurrentState() or OpenWindow() waited for the profile's write";
  const AllocationRecorder::State during = state.get();
  EXPECT_EQ(during.open_window, info.id);
  EXPECT_EQ(during.window_end_unix_ms, info.end_unix_ms);
  EXPECT_EQ(during.record_bound, info.record_bound);
  EXPECT_EQ(during.held_profile, 0u);
  EXPECT_EQ(open.get(), info.id);

  const std::string profile = Read(fetched.get());
  EXPECT_NE(profile.find("\nended_by: client\n"), std::string::npos) << profile.substr(0, 400);
  const AllocationRecorder::State after = recorder_->CurrentState();
  EXPECT_EQ(after.open_window, 0u);
  EXPECT_EQ(after.held_profile, 0u) << "handed over";
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 0);
  EXPECT_FALSE(jemalloc().ProfilingActive());
}

// A window that ends by itself is written on the recorder's thread too, and
// the state answers meanwhile.
TEST_F(AllocationRecorderTest, AWindowAtItsEndIsWrittenWhileTheStateAnswers) {
  GateRecords();
  const AllocationWindowInfo info = Open(seconds(1));
  ASSERT_TRUE(gate_.WaitFor("dump 1", seconds(30))) << "the window never ended";
  auto state = std::async(std::launch::async, [this] { return recorder_->CurrentState(); });
  const bool answered = AnsweredWithin(state, seconds(20));
  gate_.Release();
  ASSERT_TRUE(answered) << "CurrentState() waited for the profile's write";
  const AllocationRecorder::State during = state.get();
  EXPECT_EQ(during.open_window, info.id);
  EXPECT_EQ(during.held_profile, 0u);
  EXPECT_EQ(gate_.dumper_name(), "memprof-allocs");
  ASSERT_TRUE(WaitUntil([&] { return recorder_->CurrentState().held_profile == info.id; },
                        seconds(30), milliseconds(10)));
  EXPECT_EQ(recorder_->OpenWindow(), 0u);
  EXPECT_NE(Fetch(info.id).find("\nended_by: duration\n"), std::string::npos);
}

// An Open while the last window's profile is written waits for it (and for
// the Fetch that waits on it), then opens: the old window's records are put
// back before the new one's start, and the Fetch still gets its profile.
TEST_F(AllocationRecorderTest, AnOpenWhileTheLastWindowIsWrittenWaitsThenOpens) {
  GateRecords();
  const AllocationWindowInfo info = Open(seconds(30));
  auto fetched = std::async(std::launch::async, [&] { return recorder_->Fetch(info.id); });
  ASSERT_TRUE(gate_.WaitFor("dump 1", seconds(30)));
  auto second = std::async(std::launch::async, [&] {
    return recorder_->Open(AllocationWindowRequest{seconds(30), 0});
  });
  // Its records are made before it looks at the recorder's state.
  ASSERT_TRUE(WaitUntil([&] { return windows_.load() == 2; }, seconds(30), milliseconds(5)));
  gate_.Release();

  auto opened = second.get();
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  EXPECT_EQ(opened->id, 2u);
  EXPECT_FALSE(Read(fetched.get()).empty()) << "the new window replaced the profile being fetched";
  EXPECT_EQ(gate_.events(), (std::vector<std::string>{"start 1", "dump 1", "stop 1", "start 2"}));
  EXPECT_EQ(recorder_->OpenWindow(), 2u);
  EXPECT_FALSE(Fetch(opened->id).empty());
}

// The recorder may go while a profile is written: the write completes, and
// what the window found is put back.
TEST_F(AllocationRecorderTest, TheRecorderGoesWhileAProfileIsWritten) {
  GateRecords();
  Open(seconds(1));
  ASSERT_TRUE(gate_.WaitFor("dump 1", seconds(30))) << "the window never ended";
  auto destroyed = std::async(std::launch::async, [this] { recorder_.reset(); });
  gate_.Release();
  ASSERT_TRUE(AnsweredWithin(destroyed, seconds(30))) << "the destructor hung";
  EXPECT_EQ(gate_.events(), (std::vector<std::string>{"start 1", "dump 1", "stop 1"}));
  EXPECT_EQ(jemalloc().RecentAllocMax().value_or(-9), 0);
  EXPECT_FALSE(jemalloc().ProfilingActive());
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
