#include "agent/core/agent.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "agent/core/connection_acceptor.h"
#include "agent/core/core_log.h"
#include "agent/core/module_loader.h"
#include "agent/shared/agent_thread.h"
#include "agent/shared/tcp_port_sockets.h"
#include "common/duration.h"

namespace memprof::agent {
namespace {

// How long a forked child must live before it publishes its socket.
constexpr auto kForkPublishDelay = std::chrono::milliseconds(200);
constexpr size_t kErrorSize = 512;

}  // namespace

// Why a child gets no agent when gRPC could not be stopped before fork().
std::string Agent::ForkedChildRefusal() const {
  return std::string(
             "not starting the agent in this forked child: gRPC was still running in its "
             "parent at fork() time and cannot be used after fork") +
         (remote_at_fork_ ? " (the parent's agent serves MEMPROF_LISTEN)" : "");
}

Agent& Agent::Instance() {
  static Agent* agent = [] {
    auto* a = new Agent();
    // Fork handlers run on host threads: what they allocate is not the host's.
    pthread_atfork(
        [] {
          const NotSampledHere quiet;
          Instance().OnForkPrepare();
        },
        [] {
          const NotSampledHere quiet;
          Instance().OnForkParent();
        },
        [] {
          const NotSampledHere quiet;
          Instance().OnForkChild();
        });
    return a;
  }();
  return *agent;
}

const char* Agent::ServerGetenv(const char* name) { return Instance().env_.Get(name); }

Result<void> Agent::Start(EnvSnapshot env) {
  std::lock_guard lock(mu_);
  if (owner_pid_ == ::getpid()) return {};  // already running
  if (server_unusable_) return Fail(ErrorCode::kFailedPrecondition, ForkedChildRefusal());
  env_ = std::move(env);
  config_ = ConfigFromEnvironment([this](const char* name) { return env_.Get(name); });
  SetCoreLogLevel(ParseLogLevel(config_.log_level));
  for (const auto& warning : config_.warnings) CoreLog(LogLevel::kWarn, warning);
  started_unix_ms_ = NowUnixMs();
  auto r = StartLocked(std::chrono::milliseconds(0));
  if (!r) StopLocked();
  return r;
}

Result<void> Agent::StartLocked(std::chrono::milliseconds publish_delay) {
  ConnectionAcceptor::Options options{config_.socket_dir, ::getpid(), publish_delay, nullptr,
                                      nullptr};
  if (const int64_t window_end = window_end_at_fork_; window_end != 0) {
    options.first_task = [this, window_end] { InheritWindowOnAcceptThread(window_end); };
  }
  if (publish_delay.count() > 0) {
    // A forked child: its server could not start if the host has closed
    // what gRPC keeps open from the parent (agent/service/grpc_fork_repair.h).
    options.may_publish = [this] {
      if (ops_ == nullptr || ops_->grpc_can_start() != 0) return true;
      CoreLog(LogLevel::kInfo,
              "no agent in this forked child: the host closed descriptors that gRPC keeps "
              "open from the parent");
      return false;
    };
  }
  acceptor_ = std::make_unique<ConnectionAcceptor>(
      options, [this](Fd fd, const PeerCredentials& peer) { OnConnection(std::move(fd), peer); },
      [this] { return OnTick(); });
  // Set before the accept thread starts, which orders it before everything
  // that thread reads: a connection accepted at once creates the server with
  // this pid (ThreadSanitizer caught the thread reading it before it was set).
  owner_pid_ = ::getpid();
  if (auto r = acceptor_->Start(); !r) {
    owner_pid_ = 0;
    return r;
  }
  if (publish_delay.count() == 0) {
    CoreLog(LogLevel::kInfo, "agent listening on " + acceptor_->socket_path());
  }
  if (config_.remote) {
    // The remote listener must answer without a local connection first; it
    // is started on the accept thread, whose descriptor table it must use.
    acceptor_->RunOnThread([this] {
      std::lock_guard server_lock(server_mu_);
      if (auto r = EnsureServerLocked(); !r) CoreLog(LogLevel::kWarn, r.error().message);
    });
  }
  return {};
}

Result<void> Agent::EnsureServerLocked() {
  if (server_ != nullptr) return {};
  if (ops_ == nullptr) {
    auto ops = LoadServer(config_.server_library);
    if (!ops) return Fail(ops.error());
    ops_ = *ops;
  }
  char error[kErrorSize] = "";
  server_ = ops_->create(&ServerGetenv, owner_pid_, started_unix_ms_, error, sizeof(error));
  if (server_ == nullptr) return Fail(ErrorCode::kInternal, error);
  return {};
}

void Agent::OnConnection(Fd connection, const PeerCredentials& peer) {
  std::lock_guard lock(server_mu_);
  if (auto r = EnsureServerLocked(); !r) {
    // The client sees the connection closed; the log (if enabled) says why.
    CoreLog(LogLevel::kError, r.error().message);
    return;
  }
  // Whose socket it is now: the publisher's, or the user it was handed to.
  const std::optional<FsIdentity> owner = acceptor_->socket_identity();
  ops_->adopt(server_, connection.Release(), peer.pid, peer.uid,
              owner ? owner->uid : ::geteuid());
}

std::optional<std::chrono::milliseconds> Agent::OnTick() {
  std::lock_guard lock(server_mu_);
  // A tick would start the remote listener again before fork(); the parent
  // wakes this thread after it.
  if (server_ == nullptr || forking_) return std::nullopt;
  const int64_t next = ops_->tick(server_);
  if (next < 0) return std::nullopt;
  return std::chrono::milliseconds(next);
}

void Agent::Stop() {
  std::lock_guard lock(mu_);
  if (owner_pid_ != ::getpid()) return;
  StopLocked();
}

void Agent::StopAtExit() { Stop(); }

void Agent::StopLocked() {
  if (acceptor_) {
    // The server's descriptors live in the accept thread's table: only a
    // thread of that table may close them.
    acceptor_->RunOnThread([this] {
      std::lock_guard lock(server_mu_);
      if (server_ != nullptr) ops_->destroy(server_);
      server_ = nullptr;
    });
    acceptor_->Stop();  // no new connections
    acceptor_.reset();  // unlinks the socket path
  }
  std::lock_guard lock(server_mu_);
  // Not destroyed above only if the accept thread was gone: leave it.
  server_ = nullptr;
  owner_pid_ = 0;
}

bool Agent::running() const {
  std::lock_guard lock(mu_);
  return owner_pid_ != 0 && owner_pid_ == ::getpid();
}

std::string Agent::socket_path() const {
  std::lock_guard lock(mu_);
  return acceptor_ ? acceptor_->socket_path() : std::string();
}

std::optional<FsIdentity> Agent::PrepareUserChange(const UserIds& now, const UserIds& after) {
  std::lock_guard lock(mu_);
  if (owner_pid_ != ::getpid() || !acceptor_) return std::nullopt;
  const std::optional<FsIdentity> owner = acceptor_->socket_identity();
  if (!owner) return std::nullopt;
  const std::optional<uid_t> heir = SocketHeirOf(now, after, owner->uid);
  if (!heir) return std::nullopt;
  if (auto r = acceptor_->HandOverSocket(FsIdentity{*heir, ::getegid()}); !r) {
    CoreLog(LogLevel::kWarn, r.error().message + "; the socket will outlive the process");
    return std::nullopt;
  }
  CoreLog(LogLevel::kInfo, "the process gives up uid " + std::to_string(owner->uid) +
                               " for good: its socket now belongs to uid " +
                               std::to_string(*heir));
  return owner;
}

void Agent::UndoUserChange(const FsIdentity& previous) {
  std::lock_guard lock(mu_);
  if (owner_pid_ != ::getpid() || !acceptor_) return;
  if (auto r = acceptor_->HandOverSocket(previous); !r) CoreLog(LogLevel::kWarn, r.error().message);
}

// fork() must not happen while Start/Stop rearrange the state or while the
// accept thread is inside the server: both locks are held across it.
void Agent::OnForkPrepare() {
  mu_.lock();
  // gRPC's threads and locks do not survive fork(): when the child is to
  // get an agent, a running gRPC is stopped first (calls in flight are
  // cancelled; clients retry) so that the child can start its own. The
  // parent starts gRPC again at its next connection, its remote listener
  // at once.
  if (owner_pid_ == ::getpid() && config_.fork == ForkPolicy::kFollow && MarkForking()) {
    StopGrpcOnAcceptThread();
  }
  server_mu_.lock();
  const bool ours = owner_pid_ == ::getpid() && server_ != nullptr;
  // The accept thread takes the acceptor's own lock too (publishing or
  // re-creating the socket); a child forked while it held it would wait
  // for it forever.
  if (acceptor_) acceptor_->LockForFork();
  // Live here only if a client started it again since: the child gets no agent.
  server_live_at_fork_ = ours && ops_->live(server_) != 0;
  remote_at_fork_ = ours && config_.remote.has_value();
  window_end_at_fork_ = ours ? ops_->window_end(server_) : 0;
  // Last: the sampler's locks after the agent's (module_abi.h, sampler_fork).
  if (ops_ != nullptr) ops_->sampler_fork(MEMPROF_FORK_PREPARE);
}

// Whether gRPC runs, and if so holds the accept thread's timer until the
// parent's handler (forking_): one look under server_mu_.
bool Agent::MarkForking() {
  std::lock_guard lock(server_mu_);
  forking_ = server_ != nullptr && ops_->live(server_) != 0;
  return forking_;
}

// gRPC's descriptors are in the accept thread's table (private_fd_table.h):
// only a thread of that table may stop it. Needs mu_.
// Bounded (RunOnThread): if it overran, the child finds gRPC live and gets
// no agent, which it says.
void Agent::StopGrpcOnAcceptThread() {
  if (!acceptor_) return;
  acceptor_->RunOnThread([this] {
    std::lock_guard lock(server_mu_);
    if (server_ != nullptr && ops_->live(server_) != 0) ops_->stop_grpc(server_);
  });
}

void Agent::OnForkParent() {
  if (ops_ != nullptr) ops_->sampler_fork(MEMPROF_FORK_PARENT);
  if (acceptor_) acceptor_->UnlockAfterForkInParent();
  forking_ = false;
  server_mu_.unlock();
  // The accept thread watches the new child, and its next tick restarts the
  // remote listener.
  if (acceptor_ && owner_pid_ == ::getpid()) {
    acceptor_->NoteFork(static_cast<pid_t>(::syscall(SYS_gettid)));
  }
  mu_.unlock();
}

void Agent::OnForkChild() {
  // Only the forking thread exists in the child. The parent's state is
  // abandoned, never destroyed (that would join threads that do not exist,
  // and remove the parent's socket). The sampler's locks first, so that it
  // can be stopped below.
  if (ops_ != nullptr) ops_->sampler_fork(MEMPROF_FORK_CHILD);
  if (acceptor_) acceptor_->AbandonAfterFork();
  (void)acceptor_.release();
  server_ = nullptr;
  forking_ = false;
  server_unusable_ = server_unusable_ || server_live_at_fork_;
  const bool follow = owner_pid_ != 0 && config_.fork == ForkPolicy::kFollow;
  owner_pid_ = 0;
  const int64_t window_end = std::exchange(window_end_at_fork_, 0);
  server_mu_.unlock();
  // gRPC may close the remote listener's descriptors only later, on a thread
  // the child does not have: the port must stay the parent's alone.
  if (config_.remote) CloseTcpSocketsOnPort(config_.remote->address.port);
  bool served = false;
  if (follow && server_unusable_) {
    CoreLog(LogLevel::kInfo, "no agent in this forked child: " + ForkedChildRefusal());
  } else if (follow) {
    // The parent keeps its TCP port; the child serves its Unix socket only.
    env_.Erase(kListenEnv);
    config_.remote.reset();
    started_unix_ms_ = NowUnixMs();
    window_end_at_fork_ = window_end;  // for StartLocked's first task
    served = StartLocked(kForkPublishDelay).has_value();
    window_end_at_fork_ = 0;
    if (!served) acceptor_.reset();
  }
  // A window the parent's agent opened must end in the child too: with no
  // agent here to end it, it ends now (jemalloc's fork handlers have run
  // before this one, so its locks are usable).
  if (!served && window_end != 0) StopAllProfiling();
  mu_.unlock();
}

void Agent::StopAllProfiling() {
  // jemalloc's (in a child its fork handlers have run before this one).
  StopProfilingThisProcess();
  // memprof's own sampler, where the module had been loaded (in a child the
  // sampler's child handler has run: its locks are usable).
  if (ops_ != nullptr) ops_->stop_sampling();
}

void Agent::InheritWindowOnAcceptThread(int64_t end_unix_ms) {
  std::lock_guard lock(server_mu_);
  if (auto r = EnsureServerLocked(); !r) {
    CoreLog(LogLevel::kWarn, "ending the parent's profiling window now: " + r.error().message);
    StopAllProfiling();
    return;
  }
  ops_->inherit_window(server_, end_unix_ms);
}

}  // namespace memprof::agent
