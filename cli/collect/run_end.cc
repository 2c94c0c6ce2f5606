#include "cli/collect/run_end.h"

namespace memprof::cli {

Error ExplainEndOfRun(Error error, const Target& target, const TargetDiscovery& discovery,
                      const std::string& progress) {
  // A remote target's pid means nothing here: its error says what happened.
  auto again = target.remote() ? Result<Target>(target) : discovery.Resolve(target.pid);
  if (!again && again.error().code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound, DescribeTarget(target) + " has gone away (" +
                                           again.error().message + "); " + progress);
  }
  error.message += "; " + progress;
  return error;
}

}  // namespace memprof::cli
