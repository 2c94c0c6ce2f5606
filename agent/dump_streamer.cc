#include "agent/dump_streamer.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/agent_logger.h"

namespace memprof::agent {
namespace {

constexpr char kHeapMagic[] = "heap_v2/";

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<Fd> CreateAnonymousFile() {
  Fd fd(::memfd_create("memprof-heap-dump", MFD_CLOEXEC));
  if (!fd) {
    return Fail(ErrorCode::kInternal,
                std::string("cannot create an in-memory file for the dump: ") +
                    std::strerror(errno));
  }
  return fd;
}

// jemalloc opens the dump path itself; /proc/thread-self/fd/N reopens our
// memfd from whichever thread's descriptor table it is in.
std::string PathOf(const Fd& fd) { return "/proc/thread-self/fd/" + std::to_string(fd.get()); }

Result<uint64_t> SizeOf(const Fd& fd) {
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(ErrorCode::kInternal, std::string("fstat on the dump: ") + std::strerror(errno));
  }
  return static_cast<uint64_t>(st.st_size);
}

// A dump that does not start with the heap_v2 header is not a profile.
Result<void> CheckMagic(const Fd& fd) {
  char head[sizeof(kHeapMagic) - 1] = {};
  ssize_t n = ::pread(fd.get(), head, sizeof(head), 0);
  if (n != static_cast<ssize_t>(sizeof(head)) || std::memcmp(head, kHeapMagic, sizeof(head)) != 0) {
    return Fail(ErrorCode::kInternal, "jemalloc wrote something that is not a heap_v2 profile");
  }
  return {};
}

}  // namespace

HeapDump::HeapDump(Fd fd, uint64_t size, uint64_t sequence, DumpSlot slot)
    : fd_(std::move(fd)),
      size_(size),
      sequence_(sequence),
      created_unix_ms_(NowUnixMs()),
      slot_(std::move(slot)) {}

HeapDump::~HeapDump() {
  // The file first: the next waiter's dump must not coexist with this one.
  fd_ = Fd();
  slot_.Release();
}

Result<bool> HeapDump::ReadNext(size_t max_bytes, std::string& out) {
  out.clear();
  if (offset_ >= size_) return false;
  size_t want = static_cast<size_t>(std::min<uint64_t>(max_bytes, size_ - offset_));
  out.resize(want);
  ssize_t n;
  do {
    n = ::pread(fd_.get(), out.data(), want, static_cast<off_t>(offset_));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    return Fail(ErrorCode::kInternal,
                std::string("reading the dump back failed: ") +
                    (n == 0 ? "unexpected end of file" : std::strerror(errno)));
  }
  out.resize(static_cast<size_t>(n));
  offset_ += static_cast<uint64_t>(n);
  sha_.Update(out);
  return true;
}

Result<std::optional<DumpSlot>> DumpStreamer::Reserve(DumpQueue::Waiter& waiter) {
  if (auto jemalloc = RequireHeapProfiling(allocator_); !jemalloc) return Fail(jemalloc.error());
  return queue_->Acquire(waiter);
}

Result<std::unique_ptr<HeapDump>> DumpStreamer::Dump() {
  if (auto jemalloc = RequireHeapProfiling(allocator_); !jemalloc) return Fail(jemalloc.error());
  std::optional<DumpSlot> slot = queue_->TryAcquire();
  if (!slot) {
    return Fail(ErrorCode::kResourceExhausted,
                "the agent is already streaming " + std::to_string(limits_.max_active) +
                    " heap profiles");
  }
  return Dump(std::move(*slot));
}

Result<std::unique_ptr<HeapDump>> DumpStreamer::Dump(DumpSlot slot) {
  auto jemalloc = RequireHeapProfiling(allocator_);
  if (!jemalloc) return Fail(jemalloc.error());
  auto fd = CreateAnonymousFile();
  if (!fd) return Fail(fd.error());
  const auto start = std::chrono::steady_clock::now();
  if (auto r = (*jemalloc)->DumpTo(PathOf(*fd)); !r) return Fail(r.error());
  auto size = SizeOf(*fd);
  if (!size) return Fail(size.error());
  if (auto r = CheckMagic(*fd); !r) return Fail(r.error());
  const uint64_t sequence = served_.fetch_add(1) + 1;
  Logger().info("heap profile #{}: {} bytes in {} ms", sequence, *size,
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count());
  return std::make_unique<HeapDump>(std::move(*fd), *size, sequence, std::move(slot));
}

}  // namespace memprof::agent
