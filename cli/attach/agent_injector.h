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
  // namespace).
  std::string agent_path;
  std::string proc_root = "/proc";
  std::chrono::steady_clock::time_point deadline;
};

struct InjectOutcome {
  // The thread borrowed to create the load thread, and for how long it was
  // stopped, each time (the second stop unmaps the load thread's pages).
  pid_t borrowed_tid = 0;
  std::chrono::microseconds first_pause{0};
  std::chrono::microseconds second_pause{0};
  // memprof_agent_start()'s return value in the target (0: running).
  int start_result = 0;
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
// Any failure before the load thread exists leaves the target as it was
// (the pages unmapped, the thread's registers restored). The load thread's
// own failure (dlopen's error) is returned with its text.
[[nodiscard]] Result<InjectOutcome> InjectAgent(const InjectRequest& request);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_AGENT_INJECTOR_H_
