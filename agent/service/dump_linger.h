#ifndef MEMPROF_AGENT_SERVICE_DUMP_LINGER_H_
#define MEMPROF_AGENT_SERVICE_DUMP_LINGER_H_

#include <grpcpp/alarm.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "agent/heap/dump_streamer.h"
#include "agent/service/call_tracker.h"

namespace memprof::agent {

// Keeps dumps a moment after their stream ended, then frees them.
//
// A client that copies a dump out of the agent's file itself (local_file)
// closes its own descriptor of the file as soon as it has the last byte.
// Whoever lets go of the file last has the kernel free all its pages (8 ms
// for a 134 MiB profile): better here, off the client's path, than in the
// client before it can finish. The dump keeps its slot meanwhile, so the
// bound on the memory dumps hold stays as it is.
//
// Each dump waits on a gRPC alarm, and counts as a call in flight (`calls`)
// so that the server does not stop for idleness meanwhile. Destroying the
// linger, or ReleaseAll(), frees every dump still held and waits for the
// alarms' callbacks, so that none runs later: the server calls ReleaseAll()
// once its calls are over and before it shuts gRPC down.
class DumpLinger {
 public:
  DumpLinger(CallTracker& calls, std::chrono::milliseconds grace)
      : grace_(grace), state_(std::make_shared<State>(&calls)) {}
  ~DumpLinger() { ReleaseAll(); }
  DumpLinger(const DumpLinger&) = delete;
  DumpLinger& operator=(const DumpLinger&) = delete;

  // Frees `dump` after the grace period (on one of gRPC's threads).
  void Hold(std::unique_ptr<HeapDump> dump);
  // Frees every dump held now, and returns once their alarms are done (or
  // after a second, should gRPC no longer run them: their callbacks then
  // touch nothing of this object).
  void ReleaseAll();

  size_t held() const;

 private:
  struct Held {
    grpc::Alarm alarm;
    std::unique_ptr<HeapDump> dump;
  };
  // Shared with the alarms' callbacks, which may outlive the linger.
  struct State {
    explicit State(CallTracker* c) : calls(c) {}
    mutable std::mutex mu;
    std::condition_variable emptied;
    std::unordered_map<const Held*, std::unique_ptr<Held>> held;  // guarded by mu
    size_t pending = 0;  // guarded by mu: held, or being freed by a callback
    CallTracker* calls;  // guarded by mu; null once the linger gave up waiting
  };

  static void OnAlarm(const std::shared_ptr<State>& state, const Held* key);

  const std::chrono::milliseconds grace_;
  std::shared_ptr<State> state_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_DUMP_LINGER_H_
