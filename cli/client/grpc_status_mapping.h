#ifndef MEMPROF_CLI_CLIENT_GRPC_STATUS_MAPPING_H_
#define MEMPROF_CLI_CLIENT_GRPC_STATUS_MAPPING_H_

#include <grpcpp/support/status.h>

#include "cli/client/target.h"
#include "common/error.h"

namespace memprof::cli {

// The one place where a failed RPC becomes a memprof::Error. The agent writes
// its messages for the user, so they are kept as they are; transport-level
// failures (UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED) get a message that
// names the target. Must not be called with an OK status.
Error ErrorFromGrpcStatus(const grpc::Status& status, const Target& target);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_GRPC_STATUS_MAPPING_H_
