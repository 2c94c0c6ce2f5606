#ifndef MEMPROF_CLI_LAUNCH_RUN_PLANNER_H_
#define MEMPROF_CLI_LAUNCH_RUN_PLANNER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// Everything `memprofctl run` looks at besides the command line, so that the
// plan can be computed (and tested) without touching the real process.
struct RunEnvironment {
  std::vector<std::string> variables;  // "KEY=VALUE", like environ
  std::string self_exe;                // memprofctl's own path (/proc/self/exe)
  // Where the agent may be, relative to self_exe's directory: installed
  // (../lib/<multiarch>/libmemprof_agent.so.0), then in the build tree
  // (../agent/libmemprof_agent.so.0). Compiled in by CMake.
  std::vector<std::string> agent_relative_paths;
  std::string jemalloc_path;           // compiled in by CMake (find_library)
  std::string tcmalloc_path;           // libtcmalloc.so.4, compiled in by CMake

  std::optional<std::string_view> Get(std::string_view name) const;
};

// The environment of this process and the paths compiled into memprofctl.
RunEnvironment CurrentRunEnvironment();

// What to execve().
struct ExecPlan {
  std::string path;               // resolved like execvp
  std::vector<std::string> argv;  // argv[0] as the user typed it
  std::vector<std::string> env;   // with LD_PRELOAD and MALLOC_CONF set
  std::vector<std::string> warnings;
  std::string ld_preload;
  std::string malloc_conf;  // jemalloc: the MALLOC_CONF set; "" for tcmalloc
  // What makes the allocator ready to profile, for the log:
  // "MALLOC_CONF=..." or "TCMALLOC_SAMPLE_PARAMETER=...".
  std::string allocator_setting;
};

// The agent library: $MEMPROF_AGENT_LIB, else the first of
// agent_relative_paths (from memprofctl's directory) that exists; canonical.
// `run` preloads it and `attach` loads it.
[[nodiscard]] Result<std::string> LocateAgent(const RunEnvironment& env);

// Which allocator `memprofctl run` readies CMD with (`--allocator`).
enum class RunAllocator { kJemalloc, kTcmalloc };

// Decides how to start `command` (CMD ARGS...) with the agent preloaded:
// resolves CMD via PATH, inspects its ELF file, locates the agent library
// ($MEMPROF_AGENT_LIB, else agent_relative_paths from memprofctl's directory) and, if
// CMD does not use jemalloc yet, jemalloc ($MEMPROF_JEMALLOC_LIB, then the
// compiled-in path); builds LD_PRELOAD and MALLOC_CONF. Errors: command not
// found (kInvalidArgument), static or 32-bit program (kFailedPrecondition),
// missing libraries.
//
// With kTcmalloc: gperftools' libtcmalloc ($MEMPROF_TCMALLOC_LIB, then the
// compiled-in path) instead of jemalloc, unless CMD links it already, and
// TCMALLOC_SAMPLE_PARAMETER=524288 unless the user set it; MALLOC_CONF is
// left alone. A CMD that links jemalloc or libtcmalloc_minimal, or a missing
// libtcmalloc, is kFailedPrecondition.
[[nodiscard]] Result<ExecPlan> PlanRun(const std::vector<std::string>& command,
                                       const RunEnvironment& env,
                                       RunAllocator allocator = RunAllocator::kJemalloc);

// Joins LD_PRELOAD: `ours` first, then the user's entries (space or colon
// separated) that are not already among ours. Pure function.
std::string MergeLdPreload(const std::vector<std::string>& ours, std::string_view user);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_LAUNCH_RUN_PLANNER_H_
