#ifndef MEMPROF_COMMON_UNSERVED_H_
#define MEMPROF_COMMON_UNSERVED_H_

#include <string_view>

namespace memprof {

// The line an agent writes, instead of gRPC, on a connection it cannot serve
// (its module could not be loaded or started): this prefix, the reason, a
// newline; then it closes the connection (docs/protocol.md, "When the agent
// cannot serve"). The agent's core writes it, memprofctl reads it.
inline constexpr std::string_view kUnservedPrefix = "memprof-agent-unserved: ";

}  // namespace memprof

#endif  // MEMPROF_COMMON_UNSERVED_H_
