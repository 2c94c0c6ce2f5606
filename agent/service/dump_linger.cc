#include "agent/service/dump_linger.h"

#include <utility>

#include "agent/logging/agent_logger.h"

namespace memprof::agent {

void DumpLinger::Hold(std::unique_ptr<HeapDump> dump) {
  auto held = std::make_unique<Held>();
  held->dump = std::move(dump);
  const Held* key = held.get();
  std::lock_guard lock(state_->mu);
  if (state_->calls != nullptr) state_->calls->Begin();
  ++state_->pending;
  Held& entry = *state_->held.emplace(key, std::move(held)).first->second;
  // Set under the lock: ReleaseAll must not find an alarm that is not set.
  // The callback never runs inline here (gRPC hands it to its executor).
  entry.alarm.Set(std::chrono::system_clock::now() + grace_,
                  [state = state_, key](bool) { OnAlarm(state, key); });
}

void DumpLinger::OnAlarm(const std::shared_ptr<State>& state, const Held* key) {
  std::unique_ptr<Held> mine;
  {
    std::lock_guard lock(state->mu);
    auto it = state->held.find(key);
    if (it == state->held.end()) return;
    mine = std::move(it->second);
    state->held.erase(it);
  }
  // Fired or cancelled, the dump goes now: its file, then its slot. gRPC
  // keeps the alarm's state alive while this runs, so the alarm may go too.
  mine.reset();
  std::lock_guard lock(state->mu);
  if (state->calls != nullptr) state->calls->End();
  --state->pending;
  state->emptied.notify_all();
}

void DumpLinger::ReleaseAll() {
  std::unique_lock lock(state_->mu);
  if (state_->pending == 0) return;
  for (auto& [key, held] : state_->held) held->alarm.Cancel();
  if (!state_->emptied.wait_for(lock, std::chrono::seconds(1),
                                [&] { return state_->pending == 0; })) {
    Logger().warn("{} finished heap profile(s) still held at shutdown: gRPC ran no alarm for them",
                  state_->held.size());
    state_->calls = nullptr;  // the tracker may go before the alarms come
  }
}

size_t DumpLinger::held() const {
  std::lock_guard lock(state_->mu);
  return state_->pending;
}

}  // namespace memprof::agent
