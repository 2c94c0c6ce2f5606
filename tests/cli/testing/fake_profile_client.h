#ifndef MEMPROF_TESTS_CLI_TESTING_FAKE_PROFILE_CLIENT_H_
#define MEMPROF_TESTS_CLI_TESTING_FAKE_PROFILE_CLIENT_H_

#include <functional>
#include <string>
#include <vector>

#include "cli/client/profile_client.h"

namespace memprof::cli::testing {

// A scripted ProfileClient: each RPC returns the configured result and
// records what it was asked.
class FakeProfileClient : public ProfileClient {
 public:
  Result<memprof::v1::StatusResponse> status_result = memprof::v1::StatusResponse();
  // When set, Status answers with this instead of status_result, per target.
  std::function<Result<memprof::v1::StatusResponse>(const Target&)> status_for;
  Result<memprof::v1::ActivateResponse> activate_result = memprof::v1::ActivateResponse();
  Result<memprof::v1::DeactivateResponse> deactivate_result = memprof::v1::DeactivateResponse();
  Result<memprof::v1::StatsResponse> stats_result = memprof::v1::StatsResponse();
  Result<memprof::v1::PurgeResponse> purge_result = memprof::v1::PurgeResponse();
  std::vector<memprof::v1::DumpChunk> dump_chunks;
  // When set, Dump streams this instead of dump_chunks, per request.
  std::function<std::vector<memprof::v1::DumpChunk>(const memprof::v1::DumpRequest&)>
      dump_chunks_for;
  std::vector<memprof::v1::DumpRequest> dump_requests;
  Result<void> dump_result;  // returned after all chunks were sunk
  // Called before chunk `index` is handed to the sink; a failure ends Dump with it.
  std::function<Result<void>(size_t index)> before_chunk;
  // When set, Stats answers with this instead of stats_result (n counts the
  // Stats calls from 1), so readings can change from call to call.
  std::function<Result<memprof::v1::StatsResponse>(int n)> stats_sequence;
  int stats_calls = 0;

  int calls = 0;
  std::vector<Target> targets;
  // The RPCs in the order they were called: "Status", "Activate", ...
  std::vector<std::string> rpcs;
  // Called at the start of every RPC with its name.
  std::function<void(const std::string& rpc)> on_call;
  memprof::v1::ActivateRequest last_activate;
  memprof::v1::DeactivateRequest last_deactivate;
  memprof::v1::StatsRequest last_stats;

  Result<memprof::v1::StatusResponse> Status(const Target& target) override {
    Record(target, "Status");
    return status_for ? status_for(target) : status_result;
  }
  Result<memprof::v1::ActivateResponse> Activate(
      const Target& target, const memprof::v1::ActivateRequest& request) override {
    Record(target, "Activate");
    last_activate = request;
    return activate_result;
  }
  Result<memprof::v1::DeactivateResponse> Deactivate(
      const Target& target, const memprof::v1::DeactivateRequest& request) override {
    Record(target, "Deactivate");
    last_deactivate = request;
    return deactivate_result;
  }
  Result<memprof::v1::StatsResponse> Stats(const Target& target,
                                           const memprof::v1::StatsRequest& request) override {
    Record(target, "Stats");
    last_stats = request;
    ++stats_calls;
    return stats_sequence ? stats_sequence(stats_calls) : stats_result;
  }
  Result<memprof::v1::PurgeResponse> Purge(const Target& target) override {
    Record(target, "Purge");
    return purge_result;
  }
  Result<void> Dump(const Target& target, const memprof::v1::DumpRequest& request,
                    const DumpChunkSink& sink) override {
    Record(target, "Dump");
    dump_requests.push_back(request);
    const std::vector<memprof::v1::DumpChunk> chunks =
        dump_chunks_for ? dump_chunks_for(request) : dump_chunks;
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (before_chunk) {
        if (auto ok = before_chunk(i); !ok) return ok;
      }
      if (auto ok = sink(chunks[i]); !ok) return ok;
    }
    return dump_result;
  }

 private:
  void Record(const Target& target, const std::string& rpc) {
    ++calls;
    targets.push_back(target);
    rpcs.push_back(rpc);
    if (on_call) on_call(rpc);
  }
};

// A well-formed Dump stream of `data` split into `chunk_size` pieces.
std::vector<memprof::v1::DumpChunk> MakeDumpStream(const std::string& data, size_t chunk_size,
                                                   int32_t pid = 42);

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_TESTING_FAKE_PROFILE_CLIENT_H_
