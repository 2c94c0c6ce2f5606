#ifndef MEMPROF_AGENT_SERVICE_WATCH_REACTOR_H_
#define MEMPROF_AGENT_SERVICE_WATCH_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <mutex>

#include "agent/heap/state_changes.h"
#include "agent/service/call_tracker.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::agent {

// The Watch stream: the state of now at once, then the state again after
// each change that StateChanges reports, for as long as the client stays.
// One write is outstanding at a time and the reactor holds only the event
// being written: changes that come during a write go out as one event when
// it completes (each event carries the whole state), so a client that reads
// slowly costs one event's memory, never a queue.
//
// Owns itself: gRPC calls OnDone() last, which unsubscribes and deletes it.
// The call counts as in flight (CallTracker) from construction until then,
// which keeps the on-demand server up while someone follows.
class WatchReactor final : public grpc::ServerWriteReactor<v1::WatchEvent> {
 public:
  // Reads the state to send; called with no lock of the parts held.
  using Snapshot = std::function<v1::WatchEvent()>;

  // A stream that ends at once with `status` (a refused peer).
  WatchReactor(CallTracker& calls, const grpc::Status& status);
  // Subscribes to `changes` (which outlives the call) and sends the first event.
  WatchReactor(CallTracker& calls, StateChanges& changes, Snapshot snapshot);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void OnChange();
  void Write();

  CallTracker& calls_;
  StateChanges* changes_ = nullptr;
  uint64_t subscription_ = 0;
  Snapshot snapshot_;
  std::mutex mu_;
  v1::WatchEvent event_;      // the write's owner's (writing_): gRPC reads it until OnWriteDone
  bool writing_ = false;      // guarded by mu_: a write is outstanding, or being started
  bool pending_ = false;      // guarded by mu_: a change came during the write
  bool finished_ = false;     // guarded by mu_: no write starts any more
  bool finish_sent_ = false;  // guarded by mu_: Finish was called
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_WATCH_REACTOR_H_
