#include "agent/heap/dump_streamer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/logging/agent_logger.h"
#include "agent/shared/high_fd_floor.h"
#include "common/duration.h"

namespace memprof::agent {
namespace {

// How often a streamer that has caught up with jemalloc looks for more.
constexpr auto kGrowthPoll = std::chrono::milliseconds(2);

}  // namespace

Result<Fd> CreateDumpFile() {
  Fd fd(::memfd_create("memprof-heap-dump", MFD_CLOEXEC));
  if (!fd) {
    return Fail(ErrorCode::kInternal,
                std::string("cannot create an in-memory file for the dump: ") +
                    std::strerror(errno));
  }
  return fd;
}

namespace {

// What a dump says when its descriptor no longer refers to its file.
Error DescriptorTaken(int fd) {
  return Error(ErrorCode::kInternal,
               "the dump's in-memory file lost its descriptor (" + std::to_string(fd) +
                   " now refers to another file: something else in the process closed it and "
                   "reused the number); ask for the dump again");
}

void LogProfile(uint64_t sequence, uint64_t size, std::chrono::steady_clock::time_point start,
                const char* how) {
  Logger().info("heap profile #{}: {} bytes in {} ms{}", sequence, size,
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count(),
                how);
}

// Has jemalloc write the dump into `fd` (the writer's own descriptor of the
// streamed file) and tells `progress` how it ended.
void WriteDump(HeapProfiler* profiler, OwnedFd fd, uint64_t sequence,
               const std::shared_ptr<DumpProgress>& progress) {
  const auto start = std::chrono::steady_clock::now();
  Result<uint64_t> outcome = 0;
  try {  // the streamer waits for Finish: it must come, whatever happens
    // Never into a number someone else has taken: the profile would go there.
    if (fd.Intact()) {
      outcome = profiler->WriteInto(fd.get());
    } else {
      outcome = Fail(DescriptorTaken(fd.get()));
    }
    if (outcome) LogProfile(sequence, *outcome, start, " (streamed while written)");
  } catch (const std::exception& e) {
    outcome = Fail(ErrorCode::kInternal, std::string("writing the heap profile: ") + e.what());
  }
  fd.Reset();  // this descriptor before the slot, as in ~HeapDump
  progress->Finish(std::move(outcome));
}

// The writing half of a streamed dump. Dropped without being run (the agent
// stopping first), it ends the stream with an error rather than leave the
// streamer waiting for bytes that will never come.
class DumpWriter {
 public:
  DumpWriter(HeapProfiler* profiler, OwnedFd fd, uint64_t sequence,
             std::shared_ptr<DumpProgress> progress)
      : profiler_(profiler), fd_(std::move(fd)), sequence_(sequence), progress_(std::move(progress)) {}
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;
  ~DumpWriter() {
    if (progress_) {
      fd_.Reset();
      progress_->Finish(Fail(ErrorCode::kInternal, "the agent stopped before the dump was written"));
    }
  }

  void Run() {
    if (!progress_) return;
    WriteDump(profiler_, std::move(fd_), sequence_, progress_);
    progress_.reset();  // may free the slot
  }

 private:
  HeapProfiler* profiler_;
  OwnedFd fd_;
  uint64_t sequence_;
  std::shared_ptr<DumpProgress> progress_;
};

}  // namespace

void DumpProgress::Finish(Result<uint64_t> outcome) {
  {
    std::lock_guard lock(mu_);
    outcome_ = std::move(outcome);
  }
  finished_.notify_all();
}

Result<DumpProgress::Extent> DumpProgress::WaitFor(uint64_t size, int fd) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (outcome_) {
      if (!*outcome_) return Fail(outcome_->error());
      return Extent{**outcome_, true};
    }
    // Below the file's size every byte is written: jemalloc only appends.
    auto written = FileSize(fd);
    if (!written) return Fail(written.error());
    if (*written >= size) return Extent{*written, false};
    finished_.wait_for(lock, kGrowthPoll);
  }
}

HeapDump::HeapDump(Fd fd, uint64_t size, uint64_t sequence, DumpSlot slot)
    : fd_(std::move(fd)),
      size_(size),
      sequence_(sequence),
      created_unix_ms_(NowUnixMs()),
      slot_(std::move(slot)) {}

HeapDump::HeapDump(Fd fd, uint64_t sequence, std::shared_ptr<DumpProgress> progress)
    : fd_(std::move(fd)),
      size_(0),
      complete_(false),
      sequence_(sequence),
      created_unix_ms_(NowUnixMs()),
      progress_(std::move(progress)) {}

HeapDump::HeapDump(Fd fd, uint64_t size, uint64_t sequence, int64_t created_unix_ms)
    : fd_(std::move(fd)), size_(size), sequence_(sequence), created_unix_ms_(created_unix_ms) {}

HeapDump::~HeapDump() {
  // The file first: the next waiter's dump must not coexist with this one.
  fd_.Reset();
  progress_.reset();  // frees the slot if jemalloc is done writing
  slot_.Release();
}

Result<uint64_t> HeapDump::Readable(uint64_t size) {
  if (complete_) return size_;
  if (!fd_.Intact()) return Fail(DescriptorTaken(fd_.get()));
  auto extent = progress_->WaitFor(size, fd_.get());
  if (!extent) return Fail(extent.error());
  if (extent->final) {
    size_ = extent->readable;
    complete_ = true;
  }
  return extent->readable;
}

Result<bool> HeapDump::ReadNext(size_t max_bytes, std::string& out) {
  out.clear();
  auto readable = Readable(offset_ + 1);
  if (!readable) return Fail(readable.error());
  if (offset_ >= *readable) return false;
  size_t want = static_cast<size_t>(std::min<uint64_t>(max_bytes, *readable - offset_));
  out.resize(want);
  ssize_t n;
  do {
    n = ::pread(fd_.get(), out.data(), want, static_cast<off_t>(offset_));
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  // Checked after the read: a file that is still ours now was ours during
  // it (nothing else holds this memfd to put it back), so the bytes are the
  // dump's. Otherwise (ESPIPE from a pipe, or someone's bytes) they are not.
  if (!fd_.Intact()) return Fail(DescriptorTaken(fd_.get()));
  if (n <= 0) {
    return Fail(ErrorCode::kInternal,
                std::string("reading the dump back failed: ") +
                    (n == 0 ? "unexpected end of file" : std::strerror(err)));
  }
  out.resize(static_cast<size_t>(n));
  offset_ += static_cast<uint64_t>(n);
  sha_.Update(out);
  return true;
}

Result<std::optional<uint64_t>> HeapDump::NextExtent(uint64_t min_bytes) {
  if (complete_ && offset_ >= size_) return std::nullopt;
  auto readable = Readable(offset_ + std::max<uint64_t>(min_bytes, 1));
  if (!readable) return Fail(readable.error());
  if (!fd_.Intact()) return Fail(DescriptorTaken(fd_.get()));
  if (*readable <= offset_ && complete_) return std::nullopt;
  offset_ = *readable;
  return offset_;
}

Result<std::optional<DumpSlot>> DumpStreamer::Reserve(DumpQueue::Waiter& waiter) {
  if (auto profiler = allocator_.ReadyProfiler(); !profiler) return Fail(profiler.error());
  return queue_->Acquire(waiter);
}

Result<DumpSlot> DumpStreamer::FreeSlot() {
  if (auto profiler = allocator_.ReadyProfiler(); !profiler) return Fail(profiler.error());
  std::optional<DumpSlot> slot = queue_->TryAcquire();
  if (!slot) {
    return Fail(ErrorCode::kResourceExhausted,
                "the agent is already streaming " + std::to_string(limits_.max_active) +
                    " heap profiles");
  }
  return std::move(*slot);
}

Result<std::unique_ptr<HeapDump>> DumpStreamer::Dump() {
  auto slot = FreeSlot();
  if (!slot) return Fail(slot.error());
  return Dump(std::move(*slot));
}

Result<std::unique_ptr<HeapDump>> DumpStreamer::Dump(DumpSlot slot) {
  auto profiler = allocator_.ReadyProfiler();
  if (!profiler) return Fail(profiler.error());
  auto fd = CreateDumpFile();
  if (!fd) return Fail(fd.error());
  const auto start = std::chrono::steady_clock::now();
  auto size = (*profiler)->WriteInto(fd->get());
  if (!size) return Fail(size.error());
  const uint64_t sequence = served_.fetch_add(1) + 1;
  LogProfile(sequence, *size, start, "");
  return std::make_unique<HeapDump>(std::move(*fd), *size, sequence, std::move(slot));
}

Result<StreamedDump> DumpStreamer::Begin() {
  auto slot = FreeSlot();
  if (!slot) return Fail(slot.error());
  return Begin(std::move(*slot));
}

Result<StreamedDump> DumpStreamer::Begin(DumpSlot slot) {
  auto profiler = allocator_.ReadyProfiler();
  if (!profiler) return Fail(profiler.error());
  auto fd = CreateDumpFile();
  if (!fd) return Fail(fd.error());
  Fd duplicate(::fcntl(fd->get(), F_DUPFD_CLOEXEC, HighFdFloor()));
  if (!duplicate) {
    return Fail(ErrorCode::kInternal,
                std::string("cannot duplicate the dump's descriptor: ") + std::strerror(errno));
  }
  OwnedFd writer(std::move(duplicate));
  const uint64_t sequence = served_.fetch_add(1) + 1;
  auto progress = std::make_shared<DumpProgress>(std::move(slot));
  StreamedDump started;
  started.dump = std::make_unique<HeapDump>(std::move(*fd), sequence, progress);
  auto task = std::make_shared<DumpWriter>(*profiler, std::move(writer), sequence, std::move(progress));
  started.write = [task]() { task->Run(); };
  return started;
}

}  // namespace memprof::agent
