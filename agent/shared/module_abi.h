#ifndef MEMPROF_AGENT_SHARED_MODULE_ABI_H_
#define MEMPROF_AGENT_SHARED_MODULE_ABI_H_

// The boundary between the agent's two halves (docs/architecture.md, "The
// agent"). The core (libmemprof_agent.so) is always loaded: it owns the Unix
// socket, accepts connections and follows fork(). The server
// (libmemprof_agent_server.so) holds gRPC, protobuf and everything they
// bring; the core loads it on the first connection, with local and deep
// binding, and talks to it only through this C table, so no C++ type,
// allocator or symbol crosses between them.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bumped whenever a function below changes; the core refuses a server whose
// table has another version (a mix of two builds).
#define MEMPROF_SERVER_ABI_VERSION 6

// The symbol the core looks up in the server.
#define MEMPROF_SERVER_ENTRY "memprof_server_entry"

// The environment as the core read it when the agent started; the server
// reads its configuration through this, never through getenv() (the host may
// have changed its environment since).
typedef const char* (*memprof_getenv_fn)(const char* name);

typedef struct memprof_server_ops {
  uint32_t abi_version;
  // Creates the server state for process `pid` (idle: no gRPC yet, unless
  // MEMPROF_LISTEN asks for a remote listener). NULL on failure, with a
  // message in `error`.
  void* (*create)(memprof_getenv_fn getenv, pid_t pid, int64_t started_unix_ms, char* error,
                  size_t error_size);
  // Hands over an accepted connection and the SO_PEERCRED of its peer, with
  // the uid the socket belongs to now (the one that published it, or the
  // user it was handed to when the process gave up root: that uid and root
  // are served). The server owns `fd` from here on, also on failure. 0 or -1.
  int (*adopt)(void* server, int fd, pid_t peer_pid, uid_t peer_uid, uid_t owner_uid);
  // Called after every wake-up of the accept thread: shuts gRPC down once it
  // has been idle long enough. Milliseconds until it wants to be called
  // again, or -1 for "not until the next connection".
  int64_t (*tick)(void* server);
  // Whether gRPC is running now (a remote listener, or Unix connections).
  int (*live)(void* server);
  // Stops gRPC at once (calls in flight are cancelled) and keeps the state:
  // the profiling window, the dump count. Called before fork(), so that the
  // child inherits no gRPC threads or locks and can start its own. The next
  // adopt starts gRPC again; a remote listener restarts at the next tick.
  void (*stop_grpc)(void* server);
  // Stops everything and frees the state.
  void (*destroy)(void* server);
  // Whether gRPC could start in this process now: in a forked child, false
  // once the host has closed what gRPC keeps open from the parent.
  int (*grpc_can_start)(void);
  // When the timed profiling window ends (Unix ms), 0 for none. Asked before
  // fork(), so that the child can keep the same end.
  int64_t (*window_end)(void* server);
  // In a forked child, on a fresh server: profiling that its parent had on
  // until `end_unix_ms` stops then (at once if that is past).
  void (*inherit_window)(void* server, int64_t end_unix_ms);
  // memprof's own sampler, if it runs, stops sampling at once. For a child
  // no agent serves: the core calls it from its fork child handler, after
  // sampler_fork(MEMPROF_FORK_CHILD) made the sampler's locks usable.
  void (*stop_sampling)(void);
  // memprof's own sampler's fork handlers, called by the core's own, which
  // the module makes the sampler's only ones (it registers none of its
  // own): MEMPROF_FORK_PREPARE last in the core's prepare handler, once the
  // core holds its locks, MEMPROF_FORK_PARENT and MEMPROF_FORK_CHILD first
  // in its after-fork handlers. So a fork takes the agent's locks before the
  // sampler's, in the order every other thread takes them: a thread that
  // holds the profiling controller's lock while it waits for the sampler's
  // never waits on a fork that holds the sampler's and wants the agent's.
  void (*sampler_fork)(int phase);
} memprof_server_ops;

#define MEMPROF_FORK_PREPARE 0
#define MEMPROF_FORK_PARENT 1
#define MEMPROF_FORK_CHILD 2

typedef const memprof_server_ops* (*memprof_server_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif  // MEMPROF_AGENT_SHARED_MODULE_ABI_H_
