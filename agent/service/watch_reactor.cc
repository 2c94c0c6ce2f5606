#include "agent/service/watch_reactor.h"

#include <utility>

namespace memprof::agent {

// gRPC's StartWrite and Finish are called with no lock of the reactor held:
// gRPC may run a reaction (OnDone, which deletes the reactor) before they
// return. Whoever sets writing_ owns the write until OnWriteDone.

WatchReactor::WatchReactor(CallTracker& calls, const grpc::Status& status) : calls_(calls) {
  calls_.Begin();
  finished_ = true;
  finish_sent_ = true;
  Finish(status);
}

WatchReactor::WatchReactor(CallTracker& calls, StateChanges& changes, Snapshot snapshot)
    : calls_(calls), changes_(&changes), snapshot_(std::move(snapshot)) {
  calls_.Begin();
  writing_ = true;  // the first event: any change from now on comes after it
  subscription_ = changes_->Subscribe([this] { OnChange(); });
  Write();
}

void WatchReactor::OnChange() {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    if (writing_) {
      pending_ = true;
      return;
    }
    writing_ = true;
  }
  Write();
}

// With the write owned (writing_): the state of now, read after the change.
void WatchReactor::Write() {
  event_ = snapshot_();
  calls_.Touch();
  StartWrite(&event_);
}

void WatchReactor::OnWriteDone(bool ok) {
  bool write = false;
  bool finish = false;
  {
    std::lock_guard lock(mu_);
    if (!ok) finished_ = true;  // the client went away
    if (finished_) {
      writing_ = false;
      finish = !std::exchange(finish_sent_, true);
    } else if (pending_) {
      pending_ = false;  // the write stays ours
      write = true;
    } else {
      writing_ = false;
    }
  }
  if (finish) Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the watch ended"));
  if (write) Write();
}

// A write outstanding (or being started) is finished by its OnWriteDone,
// which the cancellation makes come: no StartWrite ever follows Finish.
void WatchReactor::OnCancel() {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    finished_ = true;
    if (writing_) return;
    finish_sent_ = true;
  }
  Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the watch was cancelled"));
}

void WatchReactor::OnDone() {
  // No change reaches this reactor once Unsubscribe returns.
  if (changes_ != nullptr) changes_->Unsubscribe(subscription_);
  calls_.End();
  delete this;
}

}  // namespace memprof::agent
