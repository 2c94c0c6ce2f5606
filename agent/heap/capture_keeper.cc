#include "agent/heap/capture_keeper.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace memprof::agent {
namespace {

// The keepers of this process, for the atfork child handler: a fixed table of
// atomics, so that the handler needs no lock.
constexpr size_t kMaxKeepers = 8;
std::array<std::atomic<CaptureKeeper*>, kMaxKeepers> g_keepers{};

void CloseCapturesInChild() {
  for (auto& keeper : g_keepers) {
    if (CaptureKeeper* k = keeper.exchange(nullptr)) k->CloseCopiesAfterFork();
  }
}

}  // namespace

CaptureKeeper::CaptureKeeper(uint32_t keep) : keep_(keep) {
  static const int registered = pthread_atfork(nullptr, nullptr, &CloseCapturesInChild);
  (void)registered;
  for (auto& slot : g_keepers) {
    CaptureKeeper* empty = nullptr;
    if (slot.compare_exchange_strong(empty, this)) return;
  }
  // More keepers than slots (tests only): this one's files stay open in
  // children, close-on-exec as always.
}

CaptureKeeper::~CaptureKeeper() {
  for (auto& slot : g_keepers) {
    CaptureKeeper* self = this;
    if (slot.compare_exchange_strong(self, nullptr)) return;
  }
}

bool CaptureDue(uint64_t allocated, uint64_t high_water, uint64_t growth) {
  if (allocated <= high_water) return false;
  return allocated - high_water >= growth;
}

void CaptureKeeper::SetKeep(uint32_t keep) {
  std::lock_guard lock(mu_);
  keep_ = std::clamp(keep, kMinCaptureKeep, kMaxCaptureKeep);
  TrimLocked();
  PublishLocked();
}

uint32_t CaptureKeeper::keep() const {
  std::lock_guard lock(mu_);
  return keep_;
}

int CaptureKeeper::BeginCapture(OwnedFd fd) {
  std::lock_guard lock(mu_);
  const int number = fd.get();
  writing_.push_back(std::move(fd));
  PublishLocked();
  return number;
}

CaptureInfo CaptureKeeper::Add(int fd_number, CaptureInfo info) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(writing_.begin(), writing_.end(),
                         [fd_number](const OwnedFd& fd) { return fd.get() == fd_number; });
  info.sequence = ++taken_;
  if (it == writing_.end()) return info;  // lost to a fork in between: nothing to keep
  held_.push_back(Entry{info, std::move(*it)});
  writing_.erase(it);
  TrimLocked();
  PublishLocked();
  return info;
}

void CaptureKeeper::Abandon(int fd_number) {
  std::lock_guard lock(mu_);
  std::erase_if(writing_, [fd_number](const OwnedFd& fd) { return fd.get() == fd_number; });
  PublishLocked();
}

std::vector<CaptureInfo> CaptureKeeper::Held() {
  std::lock_guard lock(mu_);
  ForgetLostLocked();
  std::vector<CaptureInfo> out;
  out.reserve(held_.size());
  for (const auto& held : held_) out.push_back(held.info);
  return out;
}

uint64_t CaptureKeeper::TakenTotal() const {
  std::lock_guard lock(mu_);
  return taken_;
}

Result<CaptureKeeper::Opened> CaptureKeeper::Open(uint64_t sequence) {
  std::lock_guard lock(mu_);
  ForgetLostLocked();
  auto it = std::find_if(held_.begin(), held_.end(),
                         [sequence](const Entry& h) { return h.info.sequence == sequence; });
  if (it == held_.end()) {
    std::string held;
    for (const auto& h : held_) {
      held += (held.empty() ? "#" : ", #") + std::to_string(h.info.sequence);
    }
    return Fail(ErrorCode::kNotFound,
                "capture #" + std::to_string(sequence) + " is not held by the agent (" +
                    (held.empty() ? std::string("it holds none") : "it holds " + held) +
                    "; older captures are dropped for newer ones)");
  }
  Fd copy(::fcntl(it->fd.get(), F_DUPFD_CLOEXEC, HighFdFloor()));
  if (!copy) {
    return Fail(ErrorCode::kInternal,
                std::string("cannot duplicate the capture's descriptor: ") + std::strerror(errno));
  }
  return Opened{std::move(copy), it->info};
}

void CaptureKeeper::Remove(uint64_t sequence) {
  std::lock_guard lock(mu_);
  std::erase_if(held_, [sequence](const Entry& h) { return h.info.sequence == sequence; });
  PublishLocked();
}

void CaptureKeeper::CloseCopiesAfterFork() {
  for (ForkSlot& slot : fork_slots_) {
    const int fd = slot.fd.load();
    struct stat st{};
    if (fd < 0 || ::fstat(fd, &st) != 0) continue;
    if (st.st_dev == slot.dev.load() && st.st_ino == slot.ino.load()) ::close(fd);
  }
}

// After every change of the files held or being written. A child forked in
// the middle of it sees some slots old and some new: an old slot whose number
// is now another file fails the identity check and closes nothing.
void CaptureKeeper::PublishLocked() {
  size_t i = 0;
  auto publish = [&](const OwnedFd& fd) {
    struct stat st{};
    if (i >= fork_slots_.size() || ::fstat(fd.get(), &st) != 0) return;
    fork_slots_[i].fd.store(-1);  // never a number with another file's identity
    fork_slots_[i].dev.store(st.st_dev);
    fork_slots_[i].ino.store(st.st_ino);
    fork_slots_[i].fd.store(fd.get());
    ++i;
  };
  for (const auto& held : held_) publish(held.fd);
  for (const auto& fd : writing_) publish(fd);
  for (; i < fork_slots_.size(); ++i) fork_slots_[i].fd.store(-1);
}

void CaptureKeeper::TrimLocked() {
  while (held_.size() > keep_) held_.pop_front();  // OwnedFd closes it if still ours
}

// A capture whose descriptor the host closed (close_range) is gone: forget it
// without closing a number that may now be the host's.
void CaptureKeeper::ForgetLostLocked() {
  std::erase_if(held_, [](Entry& h) {
    if (h.fd.Intact()) return false;
    h.fd.Forget();
    return true;
  });
  PublishLocked();
}

}  // namespace memprof::agent
