#ifndef MEMPROF_AGENT_SERVICE_DUMP_REACTOR_H_
#define MEMPROF_AGENT_SERVICE_DUMP_REACTOR_H_

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "agent/heap/dump_queue.h"
#include "agent/heap/dump_streamer.h"
#include "agent/service/call_tracker.h"
#include "agent/service/dump_linger.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::agent {

// Streams one HeapDump: a metadata chunk, data chunks, then a trailer with
// the size and SHA-256. Exactly one write is outstanding at a time, so the
// agent holds at most one chunk of the dump in memory per stream; the next
// chunk is read only when gRPC has taken the previous one (flow control
// throttles a slow client without buffering the dump).
//
// Busy agent: Start() asks the DumpStreamer for a slot. Without one the call
// waits in the streamer's FIFO, holding nothing and blocking no thread; the
// dump is taken only when the queue hands the reactor its slot (OnSlot, on
// the thread that freed it). A client that cancels or whose deadline passes
// meanwhile leaves the queue (OnCancel).
//
// Stalled client: when a write has not completed `stall_timeout` after it
// started (the client stopped reading and flow control holds the chunk), the
// reactor frees its dump and slot for the next waiter and cancels the call.
//
// Owns itself: gRPC calls OnDone() last, which deletes it. The call counts
// as in flight (CallTracker) from construction until then.
class DumpReactor final : public grpc::ServerWriteReactor<v1::DumpChunk>,
                          public DumpQueue::Waiter {
 public:
  struct Header {
    int32_t pid = 0;
    uint64_t sample_interval_bytes = 0;
    const char* format = "jemalloc_heap_v2";  // HeapProfiler::Format()
    // DumpRequest.local_file from a client on this host: name the file and
    // send progress instead of data, and after the stream leave the dump to
    // `linger` (which must outlive the call) rather than free it at once.
    bool local_file = false;
    DumpLinger* linger = nullptr;
  };

  static constexpr uint32_t kDefaultChunkBytes = 256 * 1024;
  static constexpr uint32_t kMinChunkBytes = 4 * 1024;
  static constexpr uint32_t kMaxChunkBytes = 1024 * 1024;

  // A stream that ends at once with `status` (the dump could not be taken).
  DumpReactor(CallTracker& calls, const grpc::Status& status);
  // A stream for the call of `context`, which must outlive it (gRPC keeps
  // the context until OnDone). Nothing happens before Start().
  DumpReactor(CallTracker& calls, grpc::CallbackServerContext* context, DumpStreamer& dumps,
              Header header, uint32_t chunk_bytes);

  // Takes the dump now if a slot is free, or queues for one.
  void Start();
  // Instead of Start(): streams `dump`, a complete profile taken earlier (a
  // peak capture), with no slot to wait for.
  void StartWith(std::unique_ptr<HeapDump> dump);

  void OnSlot(DumpSlot slot) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // What the stall alarms share with the reactor: an alarm may fire (or be
  // cancelled) after the reactor is gone.
  struct Stream;

  void TakeDump(DumpSlot slot);
  void SetMetadata(const HeapDump& dump);
  static void WriteDumpSoon(CallTracker& calls, std::function<void()> write_dump);
  void WriteNext();
  // WriteNext's step for a client that copies the file itself: how far the
  // file is written, or the trailer (without a checksum: nothing was sent).
  Result<void> SetProgress(HeapDump& dump);
  void Write();
  static void OnStallAlarm(const std::shared_ptr<Stream>& stream, uint64_t writes_done);

  CallTracker& calls_;
  grpc::CallbackServerContext* context_ = nullptr;
  DumpStreamer* dumps_ = nullptr;
  Header header_;
  size_t chunk_bytes_ = kDefaultChunkBytes;
  std::chrono::milliseconds stall_timeout_{0};
  std::shared_ptr<Stream> stream_;
  std::unique_ptr<grpc::Alarm> stall_alarm_;
  v1::DumpChunk chunk_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_DUMP_REACTOR_H_
