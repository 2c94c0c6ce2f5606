#include "cli/report/pprof/gzip_thread.h"

#include <cstddef>
#include <span>
#include <utility>

namespace memprof::report::pprof {

GzipThread::GzipThread(std::ostream& out) : gzip_(out), thread_([this] { Run(); }) {}

GzipThread::~GzipThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void GzipThread::Write(std::string piece) {
  if (piece.empty()) return;
  {
    std::lock_guard lock(mutex_);
    pieces_.push_back(std::move(piece));
  }
  changed_.notify_all();
}

Result<void> GzipThread::Finish() {
  std::unique_lock lock(mutex_);
  finishing_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return finished_; });
  return result_;
}

// Compresses the pieces in order, after the first error only takes them;
// at the finish, writes the trailer.
void GzipThread::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !pieces_.empty() || finishing_ || stopping_; });
    if (stopping_) return;
    if (pieces_.empty()) break;  // finishing, and nothing left
    std::string piece = std::move(pieces_.front());
    pieces_.pop_front();
    if (!result_) continue;
    lock.unlock();
    Result<void> written =
        gzip_.Write(std::as_bytes(std::span(piece.data(), piece.size())));
    lock.lock();
    if (!written && result_) result_ = std::move(written);
  }
  lock.unlock();
  Result<void> trailer = gzip_.Finish();
  lock.lock();
  if (!trailer && result_) result_ = std::move(trailer);
  finished_ = true;
  changed_.notify_all();
}

}  // namespace memprof::report::pprof
