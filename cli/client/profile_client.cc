#include "cli/client/profile_client.h"

namespace memprof::cli {

Result<memprof::v1::AllocationWindowResponse> ProfileClient::OpenAllocationWindow(
    const Target& target, const memprof::v1::AllocationWindowRequest&) {
  return Fail(ErrorCode::kFailedPrecondition,
              "this client cannot open allocation windows (pid " + std::to_string(target.pid) +
                  ")");
}

Result<bool> ProfileClient::Watch(const Target&, const WatchSink&, const std::stop_token&) {
  return false;
}

}  // namespace memprof::cli
