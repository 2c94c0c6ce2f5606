#include "agent/core/connection_acceptor.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "agent/core/core_log.h"
#include "agent/core/private_fd_table.h"
#include "agent/shared/agent_thread.h"

namespace memprof::agent {
namespace {

// After EMFILE/ENFILE the pending connection stays queued and poll() would
// report it again at once; back off instead of spinning.
constexpr int kBackoffMs = 100;
// How long Stop() waits for the thread (a publish delay is shorter).
constexpr auto kStopWait = std::chrono::seconds(1);
// How long RunOnThread() waits for its task.
constexpr auto kTaskWait = std::chrono::seconds(2);

int ToPollTimeout(std::optional<std::chrono::milliseconds> wait) {
  if (!wait) return -1;
  return static_cast<int>(std::clamp<int64_t>(wait->count(), 0, INT32_MAX));
}

void DrainPipe(int fd) {
  char buf[64];
  while (::read(fd, buf, sizeof(buf)) > 0) {
  }
}

// Starts `body` on a new thread with every signal blocked (the host's
// handlers must never run on an agent thread; threads started from it
// inherit the mask).
std::thread StartWithSignalsBlocked(std::function<void()> body) {
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread thread(std::move(body));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return thread;
}

}  // namespace

Result<void> ConnectionAcceptor::MakeWakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Fail(ErrorCode::kInternal, std::string("pipe2: ") + std::strerror(errno));
  }
  wake_read_ = OwnedFd(Fd(fds[0]));
  wake_write_ = OwnedFd(Fd(fds[1]));
  return {};
}

Result<void> ConnectionAcceptor::Publish() {
  auto socket = SocketRegistry::Listen(options_.socket_dir, options_.pid);
  if (!socket) return Fail(socket.error());
  std::lock_guard lock(mu_);
  socket_ = std::move(*socket);
  return {};
}

Result<void> ConnectionAcceptor::Start() {
  if (auto r = MakeWakePipe(); !r) return r;
  std::promise<Result<void>> started;
  auto result = started.get_future();
  thread_ = StartWithSignalsBlocked([this, &started] { Run(&started); });
  Result<void> r = result.get();
  if (!r) {
    thread_.join();
    return r;
  }
  return {};
}

Result<void> ConnectionAcceptor::Prepare() {
  if (options_.publish_delay.count() == 0) return Publish();
  return {};
}

std::string ConnectionAcceptor::socket_path() const {
  std::lock_guard lock(mu_);
  return socket_ ? socket_->path() : std::string();
}

std::optional<FsIdentity> ConnectionAcceptor::socket_identity() const {
  std::lock_guard lock(mu_);
  if (!socket_) return std::nullopt;
  return socket_->identity();
}

Result<void> ConnectionAcceptor::HandOverSocket(const FsIdentity& heir) {
  std::lock_guard lock(mu_);
  return socket_ ? socket_->HandOver(heir) : Result<void>{};
}

void ConnectionAcceptor::Wake() {
  if (!wake_write_.Intact()) return;
  const char one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_write_.get(), &one, 1);
}

bool ConnectionAcceptor::WakeThroughSocket() {
  const std::string path = socket_path();
  if (path.empty()) return false;
  self_wakes_.fetch_add(1);
  if (ConnectUnixSocket(path, std::chrono::milliseconds(200))) return true;
  self_wakes_.fetch_sub(1);
  return false;
}

void ConnectionAcceptor::Stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  if (wake_write_.Intact()) {
    Wake();
  } else if (!socket_path().empty()) {
    WakeThroughSocket();
  }
  // Bounded: when the host has closed our descriptors and reused their
  // numbers, poll() may watch the host's files and never wake. The host's
  // exit() must not hang on that; the thread is then left where it is.
  if (exited_future_.wait_for(kStopWait) != std::future_status::ready) {
    CoreLog(LogLevel::kInfo, "the accept thread did not wake up; leaving it");
    thread_.detach();
    return;
  }
  thread_.join();
}

void ConnectionAcceptor::AbandonAfterFork() {
  // The std::thread refers to a thread of the parent; destroying or
  // detaching it here would act on a thread that does not exist.
  if (thread_.joinable()) new std::thread(std::move(thread_));
  wake_read_.Reset();
  wake_write_.Reset();
  (void)children_.release();
  // mu_ is held since LockForFork(), by this thread.
  if (socket_) socket_->AbandonAfterFork();
  (void)socket_.release();  // its destructor must not run in the child
  mu_.unlock();
}

void ConnectionAcceptor::Run(std::promise<Result<void>>* started) {
  BecomeAgentThread("accept");
  // First of all, before this thread opens anything: the wake-up pipe is
  // the only thing of ours so far, and it stays in the host's table too
  // (host threads write to it).
  if (!EnterPrivateDescriptorTable({wake_read_.get(), wake_write_.get()})) {
    CoreLog(LogLevel::kInfo, std::string("the agent shares the host's descriptor table: unshare: ") +
                                 std::strerror(errno));
  }
  struct Exit {
    std::promise<void>& exited;
    ~Exit() { exited.set_value(); }
  } on_exit{exited_};
  Result<void> prepared = Prepare();
  const bool ok = prepared.has_value();
  if (ok) SetRunning(true);
  started->set_value(std::move(prepared));  // `started` is gone after this
  if (!ok) return;
  if (options_.first_task) options_.first_task();
  if (options_.publish_delay.count() > 0 && !PublishAfterDelay()) {
    SetRunning(false);
    return;
  }
  LoopUntilStopped();
  SetRunning(false);
}

void ConnectionAcceptor::SetRunning(bool running) {
  std::lock_guard lock(task_mu_);
  running_ = running;
  task_cv_.notify_all();
}

bool ConnectionAcceptor::PublishAfterDelay() {
  const auto deadline = std::chrono::steady_clock::now() + options_.publish_delay;
  while (!stopping_.load()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd wake{wake_read_.get(), POLLIN, 0};
    ::poll(&wake, 1, static_cast<int>(left.count()));
    DrainPipe(wake_read_.get());
    RunPendingTask();
  }
  if (stopping_.load()) return false;
  if (options_.may_publish && !options_.may_publish()) return false;
  if (auto r = Publish(); !r) {
    CoreLog(LogLevel::kWarn, "agent not started: " + r.error().message);
    return false;
  }
  CoreLog(LogLevel::kInfo, "agent listening on " + socket_path());
  return true;
}

bool ConnectionAcceptor::RunOnThread(std::function<void()> task) {
  std::unique_lock lock(task_mu_);
  if (!running_ || task_) return false;
  task_ = std::move(task);
  // Numbered: a task that overran its own caller's bound must not be taken
  // for this one when it ends.
  const uint64_t seq = ++task_seq_;
  lock.unlock();
  if (wake_write_.Intact()) {
    Wake();
  } else {
    WakeThroughSocket();
  }
  lock.lock();
  // Bounded: a host must never hang in fork() or exit() because of us.
  task_cv_.wait_for(lock, kTaskWait, [&] { return done_seq_ >= seq || !running_; });
  const bool done = done_seq_ >= seq;
  // Not begun yet: withdrawn. Begun: it still runs to its end.
  if (!done && task_seq_ == seq) task_ = nullptr;
  return done;
}

void ConnectionAcceptor::RunPendingTask() {
  std::unique_lock lock(task_mu_);
  if (!task_) return;
  auto task = std::move(task_);
  task_ = nullptr;
  const uint64_t seq = task_seq_;
  lock.unlock();
  task();
  lock.lock();
  done_seq_ = seq;
  task_cv_.notify_all();
}

void ConnectionAcceptor::NoteFork(pid_t tid) {
  {
    std::lock_guard lock(fork_mu_);
    forked_by_.push_back(tid);
  }
  Wake();
}

void ConnectionAcceptor::WatchNewChildren() {
  std::vector<pid_t> tids;
  {
    std::lock_guard lock(fork_mu_);
    tids.swap(forked_by_);
  }
  for (pid_t tid : tids) children_->AddChildrenOf(tid);
}

void ConnectionAcceptor::LoopUntilStopped() {
  int timeout = -1;
  bool backoff = false;
  std::vector<pollfd> fds;
  while (true) {
    // The wake-up pipe, the socket, then a pidfd per watched child. While
    // backing off, the socket is not watched (its events are ignored).
    fds.assign({{wake_read_.get(), POLLIN, 0}, {backoff ? -1 : socket_->listen_fd(), POLLIN, 0}});
    children_->AppendPollFds(fds);
    int wait = backoff ? (timeout < 0 ? kBackoffMs : std::min(timeout, kBackoffMs)) : timeout;
    int n = ::poll(fds.data(), fds.size(), wait);
    if (n < 0 && errno != EINTR) {
      CoreLog(LogLevel::kError, std::string("accept loop stopped: poll: ") + std::strerror(errno));
      return;
    }
    if (stopping_.load()) return;
    const Repair repair = RepairDescriptors();
    if (repair == Repair::kFailed) return;
    // After a repair the events are those of the old files: ignore them.
    // The pipe is drained before the task is looked at, so that the wake-up
    // of a task handed over meanwhile is not lost.
    if (repair == Repair::kNone && n > 0 && fds[0].revents != 0) DrainPipe(wake_read_.get());
    RunPendingTask();
    if (n > 0) children_->Reap(fds.data() + 2, fds.size() - 2, socket_->identity());
    WatchNewChildren();
    if (repair == Repair::kNone) backoff = n > 0 && fds[1].revents != 0 && !AcceptOne();
    timeout = ToPollTimeout(tick_());
  }
}

ConnectionAcceptor::Repair ConnectionAcceptor::RepairDescriptors() {
  Repair repair = Repair::kNone;
  if (!wake_read_.Intact() || !wake_write_.Intact()) {
    // Closes the end that is still ours, forgets the one the host took.
    wake_read_.Reset();
    wake_write_.Reset();
    CoreLog(LogLevel::kInfo, "the host closed the agent's wake-up pipe; made a new one");
    if (auto r = MakeWakePipe(); !r) CoreLog(LogLevel::kWarn, r.error().message);
    repair = Repair::kRepaired;
  }
  if (socket_->Intact()) return RepublishIfRemoved(repair);
  std::lock_guard lock(mu_);
  if (auto r = socket_->Renew(); !r) {
    CoreLog(LogLevel::kWarn, "the host closed the agent's socket and it could not be re-created: " +
                                 r.error().message);
    return Repair::kFailed;
  }
  CoreLog(LogLevel::kInfo, "the host closed the agent's socket; listening again on " +
                               socket_->path());
  return Repair::kRepaired;
}

// A socket file removed under the agent (its directory cleaned up, by hand
// or by a tmp cleaner) makes it unreachable although it listens on: checked
// at each wake-up (a connection, a fork, a tick while a client session is
// open, the session's end), it is published again at the same path. While
// the agent sleeps it cannot notice; memprofctl then says what happened.
ConnectionAcceptor::Repair ConnectionAcceptor::RepublishIfRemoved(Repair repair) {
  if (!socket_->FileMissing()) {
    republish_failed_ = false;
    return repair;
  }
  std::lock_guard lock(mu_);
  if (auto r = socket_->Republish(); !r) {
    // Tried again at the next wake-up; said once.
    if (!republish_failed_) {
      CoreLog(LogLevel::kWarn, "the agent's socket " + socket_->path() +
                                   " was removed and could not be published again: " +
                                   r.error().message);
    }
    republish_failed_ = true;
    return repair;
  }
  republish_failed_ = false;
  CoreLog(LogLevel::kInfo, "the agent's socket file was removed; published it again at " +
                               socket_->path());
  return Repair::kRepaired;
}

bool ConnectionAcceptor::AcceptOne() {
  // gRPC adopts the descriptor as is and expects it non-blocking.
  Fd conn(::accept4(socket_->listen_fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!conn) {
    const int err = errno;
    if (err == EAGAIN || err == EINTR || err == ECONNABORTED) return true;
    CoreLog(LogLevel::kWarn, std::string("accept: ") + std::strerror(err));
    return !(err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM);
  }
  conn = MoveToHighNumber(std::move(conn));
  auto peer = GetPeerCredentials(conn.get());
  if (!peer) {
    CoreLog(LogLevel::kWarn, "closed a connection: " + peer.error().message);
    return true;
  }
  if (peer->pid == ::getpid() && self_wakes_.load() > 0) {
    self_wakes_.fetch_sub(1);  // only a wake-up: Loop() runs pending tasks
    return true;
  }
  handler_(std::move(conn), *peer);
  return true;
}

}  // namespace memprof::agent
