#ifndef MEMPROF_CLI_ATTACH_ATTACH_CHECK_H_
#define MEMPROF_CLI_ATTACH_ATTACH_CHECK_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// What `memprofctl attach` finds out about a process before it touches it
// (and all that `attach --dry-run` does): read from /proc only.
struct AttachCheck {
  enum class Allocator { kJemalloc, kTcmalloc, kGlibc };

  pid_t pid = 0;
  std::string command;  // its comm
  Allocator allocator = Allocator::kGlibc;
  std::string allocator_file;  // the mapped library, or the program for a linked-in jemalloc
  // jemalloc: whether heap profiling was on at start, and what says so;
  // nullopt when nothing outside the process says (a malloc_conf compiled
  // into the program, for example).
  std::optional<bool> profiling_at_start;
  std::string profiling_source;
  bool agent_loaded = false;         // libmemprof_agent is mapped already
  bool agent_switched_off = false;   // MEMPROF_AGENT=off in its environment
  std::string socket_dir;            // where its agent will publish its socket
  // Why the kernel will refuse ptrace, or nullopt.
  std::optional<std::string> refusal;
  // Whether `agent_path` is the same file inside the process's root.
  bool agent_visible = false;
};

// What the process would offer once attached, one command name per entry,
// and what it would refuse with the reason.
struct AttachCapabilities {
  // Who will sample for heap profiles: "jemalloc" or "tcmalloc" (the
  // allocator's own, enabled at start-up) or "memprof" (memprof's own
  // sampler: profiles of what is allocated from activation on).
  std::string sampler;
  std::vector<std::string> works;
  std::vector<std::string> refused;
  std::string refusal_reason;
};

// The caller's side of ptrace's rules (tests fill it in).
struct TracerIdentity {
  uid_t uid = 0;
  bool cap_sys_ptrace = false;
  int yama_scope = 0;  // /proc/sys/kernel/yama/ptrace_scope; 0 without Yama
};

[[nodiscard]] TracerIdentity CurrentTracer(const std::string& proc_root);

// Reads the process's maps, status and environment. kNotFound for a process
// that does not exist; kPermissionDenied when its /proc files cannot be read
// (with the ptrace reason when one applies).
[[nodiscard]] Result<AttachCheck> CheckForAttach(const std::string& proc_root, pid_t pid,
                                                 const std::string& agent_path,
                                                 const TracerIdentity& tracer);

// Why ptrace would be refused for a process whose uids are `target_uids`
// (real, effective, saved) and that is dumpable or not; nullopt if allowed.
std::optional<std::string> PtraceRefusal(const TracerIdentity& tracer,
                                         const std::vector<uid_t>& target_uids, bool dumpable,
                                         bool is_descendant);

AttachCapabilities CapabilitiesOf(const AttachCheck& check);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_ATTACH_CHECK_H_
