#ifndef MEMPROF_AGENT_SERVICE_STATUS_MAPPING_H_
#define MEMPROF_AGENT_SERVICE_STATUS_MAPPING_H_

#include <grpcpp/support/status.h>

#include "common/error.h"

namespace memprof::agent {

// The one place where an agent Error becomes a gRPC status.
grpc::Status ToGrpcStatus(const Error& error);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_STATUS_MAPPING_H_
