#ifndef MEMPROF_AGENT_CORE_UNSERVED_REASON_H_
#define MEMPROF_AGENT_CORE_UNSERVED_REASON_H_

#include <string>

#include "common/unserved.h"

namespace memprof::agent {

// Writes common/unserved.h's line on the non-blocking connection `fd`, best effort (a peer
// that does not read it loses nothing), never blocking and never raising
// SIGPIPE. The reason is cut to one line of at most 1 KiB.
void SendUnservedReason(int fd, const std::string& reason);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_UNSERVED_REASON_H_
