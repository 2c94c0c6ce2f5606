#ifndef MEMPROF_AGENT_DUMP_STREAMER_H_
#define MEMPROF_AGENT_DUMP_STREAMER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "agent/allocator.h"
#include "common/fd.h"
#include "common/result.h"
#include "common/sha256.h"

namespace memprof::agent {

// One heap profile, written by jemalloc into an anonymous file (a memfd: no
// path anyone could predict, race or read, and nothing left on disk), read
// back in chunks while a SHA-256 of the bytes is computed. Destroying it
// frees the file and the streamer's slot.
class HeapDump {
 public:
  HeapDump(Fd fd, uint64_t size, uint64_t sequence, std::shared_ptr<std::atomic<int>> slots);
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
  std::shared_ptr<std::atomic<int>> slots_;
};

// Takes heap profiles. At most `max_concurrent` dumps exist at once, which
// bounds the memory the agent can be made to hold for clients.
class DumpStreamer {
 public:
  DumpStreamer(const Allocator& allocator, int max_concurrent)
      : allocator_(allocator), max_concurrent_(max_concurrent) {}

  // Dumps the heap profile now (synchronously; jemalloc writes it in one go).
  // Errors: kFailedPrecondition (no heap profiling), kResourceExhausted (too
  // many dumps in flight), kInternal.
  [[nodiscard]] Result<std::unique_ptr<HeapDump>> Dump();
  uint64_t DumpsServed() const { return served_.load(); }

 private:
  [[nodiscard]] Result<std::unique_ptr<HeapDump>> DumpWithSlot(const JemallocControl& jemalloc);

  const Allocator& allocator_;
  const int max_concurrent_;
  std::shared_ptr<std::atomic<int>> slots_ = std::make_shared<std::atomic<int>>(0);
  std::atomic<uint64_t> served_{0};
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_DUMP_STREAMER_H_
