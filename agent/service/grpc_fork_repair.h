#ifndef MEMPROF_AGENT_SERVICE_GRPC_FORK_REPAIR_H_
#define MEMPROF_AGENT_SERVICE_GRPC_FORK_REPAIR_H_

namespace memprof::agent {

// gRPC 1.51 keeps its default EventEngine for the life of the process, past
// grpc_shutdown(), with an epoll instance and a wake-up eventfd open. A
// forked child inherits both as the *same* kernel objects as its parent's:
// with several children, each one's EventEngine takes the others' wake-ups
// and some never serve. These functions give a forked child private copies
// before it starts gRPC (docs/architecture.md, "Fork"). Where the agent's
// thread has a descriptor table of its own (private_fd_table.h), a child's
// table holds none of them at all (they were in the parent's agent table),
// and they are made anew at their numbers from what the parent noted.
//
// Not thread-safe: called from the accept thread only, around gRPC's start
// and shutdown.

// Before gRPC first starts in this process: notes the epoll descriptors the
// host already has (they are never touched).
void NoteEpollDescriptorsBeforeGrpc();
// After gRPC has shut down: notes the epoll descriptors gRPC left open, and
// what is registered in them.
void NoteEpollDescriptorsGrpcKeeps();
// In a forked child, before gRPC starts: replaces each epoll descriptor gRPC
// kept, and the eventfds registered in it, by fresh ones at the same numbers,
// with the same registrations. False when one of them is no longer gRPC's
// (the host closed it, and may have reused the number): gRPC would then use
// the host's descriptors as its own, and must not start in this process.
// Does nothing (true) in the process that noted them.
[[nodiscard]] bool PrivatizeInheritedGrpcDescriptors();
// Whether PrivatizeInheritedGrpcDescriptors() would succeed now.
bool InheritedGrpcDescriptorsIntact();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_GRPC_FORK_REPAIR_H_
