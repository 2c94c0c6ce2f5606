#ifndef MEMPROF_AGENT_CORE_MODULE_LOADER_H_
#define MEMPROF_AGENT_CORE_MODULE_LOADER_H_

#include <string>

#include "agent/shared/module_abi.h"
#include "common/result.h"

namespace memprof::agent {

// Finds libmemprof_agent_server.so and loads it, once per process; it stays
// loaded (a forked child inherits it).
//
// It is loaded with RTLD_LOCAL, so nothing in it joins the host's global
// symbol scope, and RTLD_DEEPBIND, so that it and the libraries it brings
// (gRPC, protobuf, abseil, OpenSSL, …) resolve their symbols among
// themselves first: a host that exports its own grpc_init or protobuf
// symbols can neither capture our calls nor be captured by them. The server
// forwards every allocation function to the host's allocator (see
// host_allocation.cc), which deep binding would otherwise bypass. Under
// AddressSanitizer or ThreadSanitizer, which refuse deep binding, it is
// loaded without it (docs/reliability.md).
//
// Where it looks: $MEMPROF_SERVER_LIBRARY if set, else next to the object
// that holds the core (libmemprof_agent.so, or the program that links the
// core statically), which is where both the build tree and the packages put
// it. No path is compiled in.
[[nodiscard]] Result<const memprof_server_ops*> LoadServer(const std::string& override_path);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_MODULE_LOADER_H_
