#include "cli/client/grpc_profile_client.h"

#include <fcntl.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <mutex>
#include <utility>

#include "cli/client/grpc_status_mapping.h"
#include "cli/client/http2_unary_call.h"
#include "cli/client/start_deadline.h"
#include "cli/client/unreachable_agent.h"
#include "cli/io/logging.h"
#include "common/duration.h"
#include "common/proc_status.h"
#include "common/text_file.h"
#include "common/unix_socket.h"
#include "memprof/v1/memory_profile.grpc.pb.h"

namespace memprof::cli {
namespace {

using Stub = memprof::v1::MemoryProfile::Stub;

constexpr int kMaxMessageBytes = 64 * 1024 * 1024;
// Where the reasons for an unreachable agent are looked up.
constexpr char kProcRoot[] = "/proc";

// gRPC's own log lines would break the one-line error contract; they only
// show with -vv, and our status mapping reports what went wrong.
void RouteGrpcLogs() {
  static std::once_flag once;
  std::call_once(once, [] {
    gpr_set_log_function([](gpr_log_func_args* args) {
      Log().debug("grpc: {} ({}:{})", args->message, args->file, args->line);
    });
  });
}

Error ConnectError(const Error& error, const Target& target) {
  switch (error.code) {
    case ErrorCode::kNotFound:
      return Error(ErrorCode::kNotFound, DescribeTarget(target) +
                                             " has no memprof agent (its socket " +
                                             target.socket_path + " disappeared)");
    case ErrorCode::kPermissionDenied:
      return DiagnoseDeniedSocket(kProcRoot, target.pid, target.socket_path);
    case ErrorCode::kUnavailable:
      return Error(ErrorCode::kUnavailable, "stale socket " + target.socket_path +
                                                ": nobody is listening (the agent of " +
                                                DescribeTarget(target) +
                                                " stopped, or the pid now belongs to another "
                                                "process); restart the program with its agent");
    default:
      return error;
  }
}

// gRPC shuts down when its last user goes, and its event engine (the
// threads that poll and run callbacks) with the last channel: each joins
// threads, and the engine's first wait for them has abseil time the CPU's
// clock with two sleeps, some 5 ms in all at the end of a dump, before its
// file is in place. One more reference to the library, and a channel that
// is never used (it holds the engine, and connects nowhere until a call,
// which never comes), leave all of that to the process's exit, which main()
// makes without running static destructors (cli/main.cc). The sanitizer
// builds give nothing up: their memprofctl shuts gRPC down as before, so
// that LeakSanitizer still sees everything freed.
void KeepGrpcUntilExit() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  static std::once_flag once;
  std::call_once(once, [] {
    grpc_init();
    static auto* const idle = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel("unix:/nonexistent", grpc::InsecureChannelCredentials()));
    (void)idle;
  });
#endif
}

grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return args;
}

// A remote agent: TCP with mutual TLS, never anything weaker.
Result<std::unique_ptr<Stub>> ConnectRemoteStub(const Target& target) {
  if (!target.tls) {
    return Fail(ErrorCode::kInvalidArgument,
                "remote target " + target.address +
                    " needs --tls-ca, --tls-cert and --tls-key (remote agents accept only "
                    "mutual TLS)");
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = target.tls->ca_pem;
  tls.pem_cert_chain = target.tls->cert_pem;
  tls.pem_private_key = target.tls->key_pem;
  auto channel =
      grpc::CreateCustomChannel(target.address, grpc::SslCredentials(tls), ChannelArgs());
  return memprof::v1::MemoryProfile::NewStub(channel);
}

// A stub, and for a local agent a second descriptor of the same connection:
// gRPC owns the first and never says whether the agent closed it.
struct Connection {
  std::unique_ptr<Stub> stub;
  Fd watch;  // invalid for a remote agent
};

// A connection to a local agent, refused unless SO_PEERCRED says that the
// target pid serves it.
Result<Fd> ConnectLocal(const Target& target, std::chrono::milliseconds timeout) {
  auto fd = ConnectUnixSocket(target.socket_path, timeout);
  if (!fd) return Fail(ConnectError(fd.error(), target));
  auto peer = GetPeerCredentials(fd->get());
  if (!peer) return Fail(peer.error());
  if (peer->pid != target.pid) {
    return Fail(ErrorCode::kPermissionDenied,
                "socket " + target.socket_path + " is not served by pid " +
                    std::to_string(target.pid) + " (its peer is pid " + std::to_string(peer->pid) +
                    "); refusing to talk to it");
  }
  return std::move(*fd);
}

Result<Connection> Connect(const Target& target, std::chrono::milliseconds timeout) {
  RouteGrpcLogs();
  KeepGrpcUntilExit();
  if (target.remote()) {
    auto stub = ConnectRemoteStub(target);
    if (!stub) return Fail(stub.error());
    return Connection{std::move(*stub), Fd()};
  }
  auto fd = ConnectLocal(target, timeout);
  if (!fd) return Fail(fd.error());
  Fd watch(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0));
  auto channel =
      grpc::CreateCustomInsecureChannelFromFd("memprof-agent", fd->Release(), ChannelArgs());
  return Connection{memprof::v1::MemoryProfile::NewStub(channel), std::move(watch)};
}

// How long a call that failed UNAVAILABLE waits to see whether the agent
// closes the connection. An agent whose gRPC stops (around a fork(), or at
// exit) fails the calls in flight ("Cancelling all calls") a moment before it
// closes their connections; an agent that answers UNAVAILABLE itself keeps
// the connection open, and costs this wait once.
constexpr std::chrono::milliseconds kPeerCloseWait(200);

// Whether the other end closes the connection within `wait`, where an agent
// that answered would have kept it open. POLLRDHUP sees the peer's shutdown
// even behind unread bytes (a GOAWAY gRPC no longer reads).
bool PeerClosed(const Fd& watch, std::chrono::milliseconds wait) {
  if (!watch) return false;
  pollfd p{watch.get(), POLLRDHUP, 0};
  const int n = ::poll(&p, 1, static_cast<int>(wait.count()));
  return n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

std::unexpected<Error> Interrupted() { return Fail(ErrorCode::kCancelled, "interrupted"); }

// The outcome of one attempt at a call, and what RetryDelay needs to know.
template <typename T>
struct Attempt {
  Result<T> result;
  AttemptFailure failure = AttemptFailure::kOther;
  bool data_delivered = false;
};

template <typename T>
Attempt<T> FailedAttempt(Error error, AttemptFailure failure) {
  return Attempt<T>{Fail(std::move(error)), failure};
}

// Connect errors that mean "no socket" or "nobody listening" right now.
AttemptFailure ConnectFailure(const Error& error) {
  return error.code == ErrorCode::kNotFound || error.code == ErrorCode::kUnavailable
             ? AttemptFailure::kSocketGone
             : AttemptFailure::kOther;
}

// gRPC reports a connection the agent closed as UNAVAILABLE ("Transport
// closed"), a status it even presents as received from the peer; an agent
// that answers UNAVAILABLE itself ("jemalloc is busy") keeps the connection
// open. So the connection's own state tells the two apart.
// CANCELLED that we did not ask for (the caller checks the stop token
// first) is the agent cancelling the call: its gRPC stops around a fork() of
// the host while a client uses it, and a new connection is served
// (docs/user-guide.md, "Worker processes"). Dropped too, so retried.
AttemptFailure CallFailure(const grpc::Status& status, const Connection& connection) {
  if (status.error_code() == grpc::StatusCode::CANCELLED) return AttemptFailure::kDropped;
  return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
                 PeerClosed(connection.watch, kPeerCloseWait)
             ? AttemptFailure::kDropped
             : AttemptFailure::kOther;
}

// At least 1 ms: a timeout of 0 would mean "wait forever" to the connect.
std::chrono::milliseconds Remaining(std::chrono::steady_clock::time_point deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(left));
}

// Runs `once(time_left)` until it succeeds or RetryDelay says to give up,
// within `window`; the last attempt's error says how often it was tried.
template <typename T, typename Once>
Result<T> WithRetries(const Target& target, std::chrono::milliseconds window,
                      const std::stop_token& stop, Once once) {
  const auto deadline = std::chrono::steady_clock::now() + window;
  for (int attempt = 1;; ++attempt) {
    if (stop.stop_requested()) return Interrupted();
    Attempt<T> outcome = once(Remaining(deadline));
    if (outcome.result || stop.stop_requested()) return std::move(outcome.result);
    const auto delay = RetryDelay({.unix_target = !target.remote(),
                                   .attempt = attempt,
                                   .failure = outcome.failure,
                                   .data_delivered = outcome.data_delivered,
                                   .time_left = Remaining(deadline)});
    Error& error = outcome.result.error();
    if (!delay) {
      if (attempt > 1) error.message += " (tried " + std::to_string(attempt) + " times)";
      // Every connection closed unanswered: the agent may lack its module.
      if (outcome.failure == AttemptFailure::kDropped && !target.remote()) {
        error = DiagnoseDroppedConnections(kProcRoot, target.pid, error);
      }
      return std::move(outcome.result);
    }
    Log().debug("{}: {}; trying again in {} ms", DescribeTarget(target), error.message,
                delay->count());
    if (!SleepUnlessStopped(*delay, stop)) return Interrupted();
  }
}

// One unary method of MemoryProfile: its name, the stub's blocking call (for
// a remote agent), and, for a method newer than the first agents, what an
// agent without it lacks ("has no purge").
template <typename Request, typename Response>
struct UnaryMethod {
  const char* name;
  grpc::Status (Stub::*remote)(grpc::ClientContext*, const Request&, Response*);
  const char* missing = nullptr;
};

// UNIMPLEMENTED from an agent older than the method, said as what to do.
grpc::Status Refined(grpc::Status status, const char* missing, const Target& target) {
  if (missing == nullptr || status.error_code() != grpc::StatusCode::UNIMPLEMENTED) return status;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "the agent in " + DescribeTarget(target) +
                          " is older than this memprofctl and " + missing +
                          "; restart it with the current agent");
}

// One unary call on a local agent's socket, on this thread alone
// (http2_unary_call.h): no gRPC channel, so none of its threads.
template <typename Request, typename Response>
Attempt<Response> CallLocalOnce(const Target& target, const UnaryMethod<Request, Response>& method,
                                const Request& request, std::chrono::milliseconds timeout,
                                const std::stop_token& stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto socket = ConnectLocal(target, timeout);
  if (!socket) return FailedAttempt<Response>(socket.error(), ConnectFailure(socket.error()));
  const std::string path =
      std::string("/") + memprof::v1::MemoryProfile::service_full_name() + "/" + method.name;
  const UnaryCallOutcome call =
      CallUnaryOverHttp2(socket->get(), path, request.SerializeAsString(), deadline, stop);
  if (stop.stop_requested()) return {Interrupted()};
  if (!call.status.ok()) {
    // CANCELLED that we did not ask for: the agent's gRPC stopped around a
    // fork() of its host (CallFailure says more).
    const bool dropped = call.unanswered || call.status.error_code() == grpc::StatusCode::CANCELLED;
    return FailedAttempt<Response>(
        ErrorFromGrpcStatus(Refined(call.status, method.missing, target), target),
        dropped ? AttemptFailure::kDropped : AttemptFailure::kOther);
  }
  Response response;
  if (!response.ParseFromString(call.response)) {
    return FailedAttempt<Response>(
        Error(ErrorCode::kInternal, "the memprof agent of " + DescribeTarget(target) +
                                        " sent a reply to " + method.name +
                                        " that memprofctl cannot read"),
        AttemptFailure::kOther);
  }
  return {std::move(response)};
}

// One unary call through a gRPC channel: a remote agent, over TLS.
template <typename Request, typename Response>
Attempt<Response> CallRemoteOnce(const Target& target, const UnaryMethod<Request, Response>& method,
                                 const Request& request, std::chrono::milliseconds timeout,
                                 const std::stop_token& stop) {
  auto connection = Connect(target, timeout);
  if (!connection) {
    return FailedAttempt<Response>(connection.error(), ConnectFailure(connection.error()));
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
  Response response;
  const grpc::Status status = Refined(
      ((*connection->stub).*method.remote)(&context, request, &response), method.missing, target);
  if (stop.stop_requested()) return {Interrupted()};
  if (!status.ok()) {
    return FailedAttempt<Response>(ErrorFromGrpcStatus(status, target),
                                   CallFailure(status, *connection));
  }
  return {std::move(response)};
}

template <typename Request, typename Response>
Result<Response> CallUnary(const Target& target, std::chrono::milliseconds timeout,
                           const std::stop_token& stop,
                           const UnaryMethod<Request, Response>& method, const Request& request) {
  return WithRetries<Response>(target, timeout, stop, [&](std::chrono::milliseconds left) {
    return target.remote() ? CallRemoteOnce(target, method, request, left, stop)
                           : CallLocalOnce(target, method, request, left, stop);
  });
}

// The agent did not send the first chunk in time: it queued us behind other
// dumps (or taking the profile took that long). Busy, as a full queue is:
// the agent is there and answering.
Error StartTimeout(const Target& target, std::chrono::milliseconds timeout) {
  return Error(ErrorCode::kResourceExhausted,
               "the memprof agent of " + DescribeTarget(target) +
                   " did not start sending the heap profile within " + FormatDuration(timeout) +
                   ": it is busy with other clients' dumps (raise the limit with --timeout)");
}

// CANCELLED that we did not ask for: the agent ended the stream, because it
// shut down or because we had not read from it for its stall deadline.
Error CancelledByAgent(const Target& target) {
  return Error(ErrorCode::kCancelled,
               "the memprof agent of " + DescribeTarget(target) +
                   " ended the dump stream (it does so when shutting down, and when its client "
                   "has read nothing for the agent's stall deadline, MEMPROF_DUMP_STALL_TIMEOUT, "
                   "30s by default)");
}

// What a process's state letter (/proc/<pid>/stat) says about why its agent
// went quiet; "" when it explains nothing.
std::string StateNote(const Target& target) {
  if (target.remote()) return "";
  auto text = ReadTextFile("/proc/" + std::to_string(target.pid) + "/stat");
  if (!text) return "";
  auto stat = ParseProcStat(*text);
  if (!stat) return "";
  switch (stat->state) {
    case 'T':
      return ": the process is stopped (SIGSTOP, or job control); `kill -CONT " +
             std::to_string(target.pid) + "` resumes it";
    case 't':
      return ": the process is stopped by a debugger (being traced)";
    case 'Z':
    case 'X':
      return ": the process has exited";
    default:
      return "";
  }
}

// The agent went quiet in the middle of a dump: nothing for `stall`.
Error Stalled(const Target& target, std::chrono::milliseconds stall, uint64_t received) {
  return Error(ErrorCode::kUnavailable,
               "the memprof agent of " + DescribeTarget(target) + " sent nothing for " +
                   FormatDuration(stall) + " in the middle of the heap profile (after " +
                   std::to_string(received) + " bytes)" + StateNote(target) +
                   "; if it is only slow, raise the limit with --timeout");
}

// One Dump stream into `sink`. The agent must start it (send the first
// chunk) within `timeout`, which covers waiting for a turn in its queue,
// and then send each next chunk (and the end) within `whole_timeout`, the
// --timeout this attempt's `timeout` is left of: a target that is stopped
// or hung mid-dump is given up on, while the whole transfer, however long a
// large dump takes, has no deadline.
Attempt<void> DumpOnce(const Target& target, const memprof::v1::DumpRequest& request,
                       const DumpChunkSink& sink, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds whole_timeout, const std::stop_token& stop) {
  auto connection = Connect(target, timeout);
  if (!connection) {
    return FailedAttempt<void>(connection.error(), ConnectFailure(connection.error()));
  }
  grpc::ClientContext context;
  std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
  // Leaving the agent's queue is cancelling the call: the agent drops us
  // from it at once, holding nothing for us.
  StartDeadline progress(timeout, [&context] { context.TryCancel(); });
  auto reader = connection->stub->Dump(&context, request);
  memprof::v1::DumpChunk chunk;
  Attempt<void> outcome;
  uint64_t received = 0;
  while (reader->Read(&chunk)) {
    if (!progress.Postpone(whole_timeout)) break;  // too late
    outcome.data_delivered = true;
    received += chunk.data().size();
    outcome.result = sink(chunk);
    if (!outcome.result) {
      context.TryCancel();
      while (reader->Read(&chunk)) {
      }
      break;
    }
    if (!progress.Postpone(whole_timeout)) break;  // the sink took all the time
  }
  const grpc::Status status = reader->Finish();
  progress.Disarm();
  if (!outcome.result) return outcome;
  if (stop.stop_requested()) return {Interrupted(), AttemptFailure::kOther, true};
  if (progress.expired()) {
    if (outcome.data_delivered) {
      return {Fail(Stalled(target, whole_timeout, received)), AttemptFailure::kOther, true};
    }
    return {Fail(StartTimeout(target, whole_timeout)), AttemptFailure::kOther, false};
  }
  if (status.error_code() == grpc::StatusCode::CANCELLED) {
    outcome.result = Fail(CancelledByAgent(target));
    // Before any data: the agent's gRPC stopped around a fork(); retried.
    outcome.failure = CallFailure(status, *connection);
  } else if (!status.ok()) {
    outcome.result = Fail(ErrorFromGrpcStatus(status, target));
    outcome.failure = CallFailure(status, *connection);
  }
  return outcome;
}

// One Watch stream into `sink`: true once the sink ended it, false when the
// agent has no Watch. The first event must come within `timeout`; after it,
// the stream has no deadline (it lasts as long as the caller follows).
Attempt<bool> WatchOnce(const Target& target, const WatchSink& sink,
                        std::chrono::milliseconds timeout, const std::stop_token& stop,
                        const std::stop_token& stop_watch) {
  auto connection = Connect(target, timeout);
  if (!connection) {
    return FailedAttempt<bool>(connection.error(), ConnectFailure(connection.error()));
  }
  grpc::ClientContext context;
  std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
  std::stop_callback cancel_watch(stop_watch, [&context] { context.TryCancel(); });
  StartDeadline first_event(timeout, [&context] { context.TryCancel(); });
  auto reader = connection->stub->Watch(&context, memprof::v1::WatchRequest());
  memprof::v1::WatchEvent event;
  Attempt<bool> outcome{false};
  bool ended_by_sink = false;
  while (reader->Read(&event)) {
    if (!outcome.data_delivered) first_event.Disarm();  // the first event came in time
    outcome.data_delivered = true;
    outcome.result = sink(event);
    if (!outcome.result || !*outcome.result) {
      ended_by_sink = outcome.result.has_value();
      context.TryCancel();
      while (reader->Read(&event)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  first_event.Disarm();
  if (!outcome.result) return outcome;
  if (ended_by_sink) return {true};
  if (stop.stop_requested() || stop_watch.stop_requested()) {
    return {Interrupted(), AttemptFailure::kOther, outcome.data_delivered};
  }
  if (first_event.expired()) {
    return {Fail(ErrorCode::kUnavailable, "the memprof agent of " + DescribeTarget(target) +
                                              " did not answer a watch within " +
                                              FormatDuration(timeout) + StateNote(target)),
            AttemptFailure::kOther, false};
  }
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) return {false};
  outcome.result = Fail(ErrorFromGrpcStatus(status, target));
  outcome.failure = CallFailure(status, *connection);
  return outcome;
}

}  // namespace

GrpcProfileClient::GrpcProfileClient(std::chrono::milliseconds rpc_timeout, std::stop_token stop)
    : rpc_timeout_(rpc_timeout), stop_(std::move(stop)) {}

Result<memprof::v1::StatusResponse> GrpcProfileClient::Status(const Target& target) {
  return CallUnary(target, rpc_timeout_, stop_, UnaryMethod{"Status", &Stub::Status},
                   memprof::v1::StatusRequest());
}

Result<memprof::v1::ActivateResponse> GrpcProfileClient::Activate(
    const Target& target, const memprof::v1::ActivateRequest& request) {
  return CallUnary(target, rpc_timeout_, stop_, UnaryMethod{"Activate", &Stub::Activate}, request);
}

Result<memprof::v1::DeactivateResponse> GrpcProfileClient::Deactivate(
    const Target& target, const memprof::v1::DeactivateRequest& request) {
  return CallUnary(target, rpc_timeout_, stop_, UnaryMethod{"Deactivate", &Stub::Deactivate},
                   request);
}

Result<memprof::v1::StatsResponse> GrpcProfileClient::Stats(
    const Target& target, const memprof::v1::StatsRequest& request) {
  return CallUnary(target, rpc_timeout_, stop_, UnaryMethod{"Stats", &Stub::Stats}, request);
}

Result<memprof::v1::PurgeResponse> GrpcProfileClient::Purge(const Target& target) {
  return CallUnary(target, rpc_timeout_, stop_, UnaryMethod{"Purge", &Stub::Purge, "has no purge"},
                   memprof::v1::PurgeRequest());
}

Result<memprof::v1::AllocationWindowResponse> GrpcProfileClient::OpenAllocationWindow(
    const Target& target, const memprof::v1::AllocationWindowRequest& request) {
  return CallUnary(target, rpc_timeout_, stop_,
                   UnaryMethod{"OpenAllocationWindow", &Stub::OpenAllocationWindow,
                               "records no allocation windows"},
                   request);
}

Result<void> GrpcProfileClient::Dump(const Target& target, const memprof::v1::DumpRequest& request,
                                     const DumpChunkSink& sink) {
  // Retries (only before any chunk arrived), and the wait for the agent to
  // start the dump, must fit in one RPC timeout.
  return WithRetries<void>(target, rpc_timeout_, stop_, [&](std::chrono::milliseconds left) {
    return DumpOnce(target, request, sink, left, rpc_timeout_, stop_);
  });
}

Result<bool> GrpcProfileClient::Watch(const Target& target, const WatchSink& sink,
                                      const std::stop_token& stop) {
  return WithRetries<bool>(target, rpc_timeout_, stop_, [&](std::chrono::milliseconds left) {
    return WatchOnce(target, sink, left, stop_, stop);
  });
}

std::optional<std::chrono::milliseconds> RetryDelay(const RetryContext& context) {
  if (!context.unix_target || context.data_delivered || context.attempt >= kMaxCallAttempts) {
    return std::nullopt;
  }
  const bool dropped = context.failure == AttemptFailure::kDropped;
  // A socket that is gone right after the agent dropped us is being re-created.
  const bool recreating = context.failure == AttemptFailure::kSocketGone && context.attempt > 1;
  if (!dropped && !recreating) return std::nullopt;
  const std::chrono::milliseconds delay(50 << (context.attempt - 1));
  if (delay >= context.time_left) return std::nullopt;
  return delay;
}

}  // namespace memprof::cli
