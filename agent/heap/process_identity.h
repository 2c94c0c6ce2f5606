#ifndef MEMPROF_AGENT_HEAP_PROCESS_IDENTITY_H_
#define MEMPROF_AGENT_HEAP_PROCESS_IDENTITY_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memprof::agent {

// Who the agent's process is, captured when the agent starts.
struct ProcessIdentity {
  pid_t pid = 0;
  std::string executable;
  std::vector<std::string> command_line;
  std::string malloc_conf;
  int64_t started_unix_ms = 0;
  std::string started_by;  // "preload", "linked", "attach"; "" when unknown
};

ProcessIdentity CurrentProcessIdentity(std::string malloc_conf);

// Resident set size of this process now (VmRSS), 0 if unreadable.
uint64_t CurrentRssBytes();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_PROCESS_IDENTITY_H_
