#ifndef MEMPROF_AGENT_DUMP_REACTOR_H_
#define MEMPROF_AGENT_DUMP_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "agent/call_tracker.h"
#include "agent/dump_streamer.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::agent {

// Streams one HeapDump: a metadata chunk, data chunks, then a trailer with
// the size and SHA-256. Exactly one write is outstanding at a time, so the
// agent holds at most one chunk of the dump in memory per stream; the next
// chunk is read only when gRPC has taken the previous one (flow control
// throttles a slow client without buffering the dump).
//
// Owns itself: gRPC calls OnDone() last, which deletes it. The call counts
// as in flight (CallTracker) from construction until then.
class DumpReactor final : public grpc::ServerWriteReactor<v1::DumpChunk> {
 public:
  struct Header {
    int32_t pid = 0;
    uint64_t sample_interval_bytes = 0;
  };

  static constexpr uint32_t kDefaultChunkBytes = 256 * 1024;
  static constexpr uint32_t kMinChunkBytes = 4 * 1024;
  static constexpr uint32_t kMaxChunkBytes = 1024 * 1024;

  // A stream that ends at once with `status` (the dump could not be taken).
  DumpReactor(CallTracker& calls, const grpc::Status& status);
  DumpReactor(CallTracker& calls, std::unique_ptr<HeapDump> dump, Header header,
              uint32_t chunk_bytes);

  void OnWriteDone(bool ok) override;
  void OnCancel() override {}
  void OnDone() override;

 private:
  void WriteNext();

  CallTracker& calls_;
  std::unique_ptr<HeapDump> dump_;
  size_t chunk_bytes_ = kDefaultChunkBytes;
  v1::DumpChunk chunk_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_DUMP_REACTOR_H_
