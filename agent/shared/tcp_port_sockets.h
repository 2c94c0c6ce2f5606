#ifndef MEMPROF_AGENT_SHARED_TCP_PORT_SOCKETS_H_
#define MEMPROF_AGENT_SHARED_TCP_PORT_SOCKETS_H_

#include <cstdint>

namespace memprof::agent {

// Closes every TCP socket of this process whose local port is `port`: the
// remote listener's listening socket(s) and the connections it accepted.
// Returns how many it closed.
//
// For a forked child. gRPC owns those descriptors and offers no way to hand
// them over, and the child must not keep the parent's port: with a copy of
// the listening socket open, the port would stay taken (and connections
// would queue with nobody to answer) after the parent stopped. No other
// socket can have that local port: the listener holds it exclusively.
//
// Makes only async-signal-safe calls (open, getdents64, getsockopt,
// getsockname, close) and does not allocate, as befits a pthread_atfork
// child handler.
int CloseTcpSocketsOnPort(uint16_t port);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_TCP_PORT_SOCKETS_H_
