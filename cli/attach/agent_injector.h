#ifndef MEMPROF_CLI_ATTACH_AGENT_INJECTOR_H_
#define MEMPROF_CLI_ATTACH_AGENT_INJECTOR_H_

#include <sys/types.h>

#include <chrono>
#include <string>

#include "common/result.h"

namespace memprof::cli {

struct InjectRequest {
  pid_t pid = 0;
  // The agent library, as a path the target can open (in its own mount
  // namespace), or with `server_path` as this process sees it.
  std::string agent_path;
  // Not empty: the target cannot see the installed files (another mount
  // namespace, a container), so the agent and its server part (this file)
  // are copied into two memfds of the target, which it loads them from.
  std::string server_path;
  std::string proc_root = "/proc";
  std::chrono::steady_clock::time_point deadline;
};

struct InjectOutcome {
  // The thread borrowed to create the load thread, and for how long it was
  // stopped, each time (the second stop unmaps the load thread's pages).
  pid_t borrowed_tid = 0;
  std::chrono::microseconds first_pause{0};
  std::chrono::microseconds second_pause{0};
  // Through memfds: one more stop, before the first, to create them.
  std::chrono::microseconds files_pause{0};
  // memprof_agent_attach()'s return value in the target (0: running), and
  // why it did not start.
  int start_result = 0;
  std::string start_error;
};

// Loads the agent into a running process that was started without it
// (`memprofctl attach`), x86-64 only:
//
//  1. one thread of the target is stopped with ptrace, chosen among those
//     that are not inside the allocator, the loader or fork (ThreadFrames);
//  2. it runs mmap (two pages: a data block, and the load thread's code,
//     load_thread.S) and then the target's own pthread_create, and is put
//     back exactly as it was;
//  3. the new thread, an ordinary thread of the target, dlopen()s the agent
//     and calls memprof_agent_start(), then ends;
//  4. one thread is stopped again to munmap the two pages.
//
// Through memfds (`server_path`), a stop before 1. maps the pages and
// creates two memfds in the target; this process writes the two libraries
// into them (through /proc/<pid>/fd, with the target running), the load
// thread dlopen()s /proc/self/fd/N and passes the server's to the agent, and
// the load thread closes them before it ends (the mappings keep the code).
//
// Any failure before the load thread exists leaves the target as it was
// (the pages unmapped, the thread's registers restored). The load thread's
// own failure (dlopen's error) is returned with its text.
[[nodiscard]] Result<InjectOutcome> InjectAgent(const InjectRequest& request);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_AGENT_INJECTOR_H_
