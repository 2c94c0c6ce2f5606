#ifndef MEMPROF_AGENT_CORE_PRIVATE_FD_TABLE_H_
#define MEMPROF_AGENT_CORE_PRIVATE_FD_TABLE_H_

#include <vector>

namespace memprof::agent {

// Gives the calling thread a descriptor table of its own
// (unshare(CLONE_FILES)) and closes its copies of every descriptor except
// 0, 1, 2 and `keep`. Every thread it starts from then on (gRPC's) shares
// the new table.
//
// Why: the host may close every descriptor at any moment (close_range,
// closefrom). The agent's own descriptors survive that (OwnedFd checks each
// one), but gRPC's epoll sets and eventfds do not, and gRPC aborts the
// process when they vanish under it. In a table of the agent's own, nothing
// the host closes is ours and nothing we open or close is the host's. The
// copies of the host's descriptors are closed at once: a copy would keep the
// host's sockets and pipes open after the host closed them. (Closing a copy
// releases no POSIX lock of the host's: those belong to the host's table.)
//
// False (errno set) when the kernel refuses: the thread then keeps sharing
// the host's table, as before.
bool EnterPrivateDescriptorTable(std::vector<int> keep);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_PRIVATE_FD_TABLE_H_
