#ifndef MEMPROF_AGENT_DUMP_STREAMER_H_
#define MEMPROF_AGENT_DUMP_STREAMER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/allocator.h"
#include "agent/dump_queue.h"
#include "common/fd.h"
#include "common/result.h"
#include "common/sha256.h"

namespace memprof::agent {

// One heap profile, written by jemalloc into an anonymous file (a memfd: no
// path anyone could predict, race or read, and nothing left on disk), read
// back in chunks while a SHA-256 of the bytes is computed. Destroying it
// frees the file and then its slot (which may go to the next waiter).
class HeapDump {
 public:
  HeapDump(Fd fd, uint64_t size, uint64_t sequence, DumpSlot slot);
  ~HeapDump();
  HeapDump(const HeapDump&) = delete;
  HeapDump& operator=(const HeapDump&) = delete;

  uint64_t size() const { return size_; }
  uint64_t sequence() const { return sequence_; }
  int64_t created_unix_ms() const { return created_unix_ms_; }

  // Replaces `out` with the next at most `max_bytes` bytes. Returns false once
  // every byte has been read.
  [[nodiscard]] Result<bool> ReadNext(size_t max_bytes, std::string& out);
  // Hex SHA-256 of every byte read so far; call once, after the last chunk.
  std::string FinalSha256Hex() { return sha_.FinalHex(); }

 private:
  Fd fd_;
  uint64_t size_;
  uint64_t offset_ = 0;
  uint64_t sequence_;
  int64_t created_unix_ms_;
  Sha256 sha_;
  DumpSlot slot_;
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

  uint64_t DumpsServed() const { return served_.load(); }
  const DumpLimits& limits() const { return limits_; }
  const DumpQueue& queue() const { return *queue_; }

 private:
  const Allocator& allocator_;
  const DumpLimits limits_;
  std::shared_ptr<DumpQueue> queue_;
  std::atomic<uint64_t> served_{0};
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_DUMP_STREAMER_H_
