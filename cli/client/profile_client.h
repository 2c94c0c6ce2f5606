#ifndef MEMPROF_CLI_CLIENT_PROFILE_CLIENT_H_
#define MEMPROF_CLI_CLIENT_PROFILE_CLIENT_H_

#include <functional>
#include <stop_token>

#include "cli/client/target.h"
#include "common/result.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// Receives the chunks of a Dump stream one at a time, as they arrive; an
// error return cancels the stream and becomes the result of Dump().
using DumpChunkSink = std::function<Result<void>(const memprof::v1::DumpChunk&)>;

// Receives each event of a Watch stream as it arrives: true to go on, false
// to end the watch; an error ends it too and becomes the result of Watch().
using WatchSink = std::function<Result<bool>(const memprof::v1::WatchEvent&)>;

// The CLI's view of one agent: the six RPCs of memprof.v1.MemoryProfile with
// errors already translated into memprof::Error. Commands depend on this
// interface only (tests pass a fake); GrpcProfileClient is the real one.
// Every call names its target, so one client can serve `list` over many.
class ProfileClient {
 public:
  virtual ~ProfileClient() = default;

  [[nodiscard]] virtual Result<memprof::v1::StatusResponse> Status(const Target& target) = 0;
  [[nodiscard]] virtual Result<memprof::v1::ActivateResponse> Activate(
      const Target& target, const memprof::v1::ActivateRequest& request) = 0;
  [[nodiscard]] virtual Result<memprof::v1::DeactivateResponse> Deactivate(
      const Target& target, const memprof::v1::DeactivateRequest& request) = 0;
  [[nodiscard]] virtual Result<memprof::v1::StatsResponse> Stats(
      const Target& target, const memprof::v1::StatsRequest& request) = 0;
  // Purge, from memprof 0.x on: an older agent answers kFailedPrecondition
  // with a message that says so.
  [[nodiscard]] virtual Result<memprof::v1::PurgeResponse> Purge(const Target& target) = 0;
  // Opens an allocation window (jemalloc only); its profile is fetched with
  // Dump(allocation_window). An older agent: kFailedPrecondition saying so.
  // The default (test fakes): kFailedPrecondition.
  [[nodiscard]] virtual Result<memprof::v1::AllocationWindowResponse> OpenAllocationWindow(
      const Target& target, const memprof::v1::AllocationWindowRequest& request);
  // Streams a heap profile into `sink`; returns when the stream ends, the
  // sink fails or the call is cancelled (kCancelled).
  [[nodiscard]] virtual Result<void> Dump(const Target& target,
                                          const memprof::v1::DumpRequest& request,
                                          const DumpChunkSink& sink) = 0;
  // Follows the agent's captures and allocation windows as they change (the
  // Watch RPC): `sink` gets the state of now, then the state after each
  // change, until it returns false (then true), `stop` or the client's own
  // stop is requested (kCancelled), or the stream breaks (its error). false
  // when the agent cannot push (older than Watch): the caller asks Status
  // instead. The default (test fakes): false.
  [[nodiscard]] virtual Result<bool> Watch(const Target& target, const WatchSink& sink,
                                           const std::stop_token& stop);
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_PROFILE_CLIENT_H_
