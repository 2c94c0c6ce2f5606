#ifndef MEMPROF_AGENT_CORE_UNSERVED_REASON_H_
#define MEMPROF_AGENT_CORE_UNSERVED_REASON_H_

#include <string>
#include <string_view>

namespace memprof::agent {

// What the core writes on a connection it cannot serve because its module
// could not be loaded or started: this prefix, the reason and a newline, in
// place of the gRPC a client expects. memprofctl, whose call then fails,
// connects again and reads it (docs/protocol.md, "When the agent cannot
// serve").
inline constexpr std::string_view kUnservedPrefix = "memprof-agent-unserved: ";

// Writes the line on the non-blocking connection `fd`, best effort (a peer
// that does not read it loses nothing), never blocking and never raising
// SIGPIPE. The reason is cut to one line of at most 1 KiB.
void SendUnservedReason(int fd, const std::string& reason);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_UNSERVED_REASON_H_
