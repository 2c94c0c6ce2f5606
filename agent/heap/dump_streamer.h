#ifndef MEMPROF_AGENT_HEAP_DUMP_STREAMER_H_
#define MEMPROF_AGENT_HEAP_DUMP_STREAMER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "agent/allocators/allocator.h"
#include "agent/heap/dump_queue.h"
#include "agent/shared/owned_fd.h"
#include "common/fd.h"
#include "common/result.h"
#include "common/sha256.h"

namespace memprof::agent {

// How far jemalloc has got with one dump that is streamed while it is being
// written: shared by the thread that takes the dump and the one that streams
// it, either of which may finish first. It holds the dump's slot, so the
// slot is freed only when both are done with the dump.
class DumpProgress {
 public:
  explicit DumpProgress(DumpSlot slot) : slot_(std::move(slot)) {}

  // The taker: jemalloc is done, with the file's final size, or failed.
  void Finish(Result<uint64_t> outcome);

  // What the streamer may read: `readable` bytes exist; `final` once the
  // dump is complete and that is its size.
  struct Extent {
    uint64_t readable = 0;
    bool final = false;
  };
  // Waits until the file (`fd`) holds at least `size` bytes or the dump has
  // ended. The dump's error, if jemalloc failed.
  [[nodiscard]] Result<Extent> WaitFor(uint64_t size, int fd);

 private:
  std::mutex mu_;
  std::condition_variable finished_;
  std::optional<Result<uint64_t>> outcome_;  // guarded by mu_
  DumpSlot slot_;
};

// One heap profile, written by jemalloc into an anonymous file (a memfd: no
// path anyone could predict, race or read, and nothing left on disk), read
// back in chunks while a SHA-256 of the bytes is computed. Destroying it
// frees the file and then its slot (which may go to the next waiter).
// The file's descriptor is an OwnedFd at a high number: a host that closes
// descriptors it did not open, or a library that re-opens its own at numbers
// it remembers (libunwind's validation pipe, which tcmalloc's sampler uses),
// may take the number meanwhile; the dump then fails saying so, and never
// reads or closes what now sits there.
class HeapDump {
 public:
  HeapDump(Fd fd, uint64_t size, uint64_t sequence, DumpSlot slot);
  // A dump still being written (see DumpStreamer::Begin): its size is known
  // once ReadNext has returned false.
  HeapDump(Fd fd, uint64_t sequence, std::shared_ptr<DumpProgress> progress);
  // A profile taken earlier (a capture, capture_keeper.h): complete, with its
  // own time, and no slot (its memory is held by the capture anyway).
  HeapDump(Fd fd, uint64_t size, uint64_t sequence, int64_t created_unix_ms);
  ~HeapDump();
  HeapDump(const HeapDump&) = delete;
  HeapDump& operator=(const HeapDump&) = delete;

  // The size in bytes; for a dump still being written, 0 until it is complete.
  uint64_t size() const { return size_; }
  uint64_t sequence() const { return sequence_; }
  int64_t created_unix_ms() const { return created_unix_ms_; }

  // Replaces `out` with the next at most `max_bytes` bytes. Returns false once
  // every byte has been read. For a dump still being written it waits for
  // jemalloc to write more, and fails with jemalloc's error.
  [[nodiscard]] Result<bool> ReadNext(size_t max_bytes, std::string& out);
  // Hex SHA-256 of every byte read so far; call once, after the last chunk.
  std::string FinalSha256Hex() { return sha_.FinalHex(); }

  // For a client that copies the file itself (DumpRequest.local_file)
  // instead of having ReadNext read it: waits until `min_bytes` more bytes
  // than last time are written, or the dump is complete, and returns how many
  // are written now (final as they are); nullopt once the complete size has
  // been returned. Fails as ReadNext does.
  [[nodiscard]] Result<std::optional<uint64_t>> NextExtent(uint64_t min_bytes);
  // The file, for a client to open as /proc/<pid>/task/<tid>/fd/<descriptor>
  // (tid: a thread of the agent's descriptor table) and recognise by its
  // device and inode.
  int descriptor() const { return fd_.get(); }
  dev_t device() const { return fd_.device(); }
  ino_t inode() const { return fd_.inode(); }

 private:
  // How many bytes may be read: waits until at least `size` are (or the dump
  // is complete).
  [[nodiscard]] Result<uint64_t> Readable(uint64_t size);

  OwnedFd fd_;
  uint64_t size_;
  bool complete_ = true;
  uint64_t offset_ = 0;
  uint64_t sequence_;
  int64_t created_unix_ms_;
  Sha256 sha_;
  DumpSlot slot_;
  std::shared_ptr<DumpProgress> progress_;  // null once written (or never streamed)
};

// An anonymous in-memory file (memfd, close-on-exec) for a heap profile.
[[nodiscard]] Result<Fd> CreateDumpFile();

// What DumpStreamer::Begin hands back: the dump to stream, and the task that
// has jemalloc write it (with its own descriptor of the same file).
struct StreamedDump {
  std::unique_ptr<HeapDump> dump;
  std::function<void()> write;  // run once, on a thread that may block
};

// How many dumps the agent serves at once, how many more clients may wait
// for their turn, and how long a stream may go without the client taking a
// chunk before the agent ends it (docs/protocol.md, "Dump").
struct DumpLimits {
  int max_active = 2;
  int max_waiting = 64;
  std::chrono::milliseconds stall_timeout = std::chrono::seconds(30);
};

// Takes heap profiles, one per DumpSlot: at most `limits.max_active` dumps
// exist at once, which bounds the memory the agent can be made to hold for
// clients; further callers wait their turn in a bounded FIFO (DumpQueue).
class DumpStreamer {
 public:
  DumpStreamer(const Allocator& allocator, const DumpLimits& limits)
      : allocator_(allocator),
        limits_(limits),
        queue_(DumpQueue::Create(limits.max_active, limits.max_waiting)) {}

  // Asks for a slot for `waiter` (see DumpQueue::Acquire): a slot now, or
  // nullopt with the waiter queued. Errors, with nothing queued:
  // kFailedPrecondition (no heap profiling: waiting would not help),
  // kResourceExhausted (the queue is full).
  [[nodiscard]] Result<std::optional<DumpSlot>> Reserve(DumpQueue::Waiter& waiter);
  // Takes `waiter` out of the queue; see DumpQueue::Withdraw.
  bool Withdraw(DumpQueue::Waiter& waiter) { return queue_->Withdraw(waiter); }
  // Dumps the heap profile now if a slot is free, without queueing (tests
  // and in-process callers). Errors: as Dump(slot), and kResourceExhausted
  // when every slot is taken or others wait.
  [[nodiscard]] Result<std::unique_ptr<HeapDump>> Dump();
  // Dumps the heap profile now (synchronously; jemalloc writes it in one go)
  // with `slot`, which the HeapDump keeps (a failure frees it at once).
  // Errors: kFailedPrecondition (no heap profiling), kInternal.
  [[nodiscard]] Result<std::unique_ptr<HeapDump>> Dump(DumpSlot slot);
  // Starts a dump with `slot` that can be streamed while jemalloc writes it:
  // the caller starts streaming `dump` and then runs `write` (which blocks
  // for as long as jemalloc takes). Either may end first; the slot is freed
  // when both have. Errors: as Dump(slot), before anything was written.
  [[nodiscard]] Result<StreamedDump> Begin(DumpSlot slot);
  // Begin(slot) if a slot is free now, as Dump() (tests and in-process callers).
  [[nodiscard]] Result<StreamedDump> Begin();

  uint64_t DumpsServed() const { return served_.load(); }
  const DumpLimits& limits() const { return limits_; }
  const DumpQueue& queue() const { return *queue_; }

 private:
  // A slot if one is free now; kFailedPrecondition without heap profiling,
  // kResourceExhausted when every slot is taken or others wait.
  [[nodiscard]] Result<DumpSlot> FreeSlot();

  const Allocator& allocator_;
  const DumpLimits limits_;
  std::shared_ptr<DumpQueue> queue_;
  std::atomic<uint64_t> served_{0};
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_DUMP_STREAMER_H_
