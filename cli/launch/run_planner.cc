#include "cli/launch/run_planner.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "cli/io/logging.h"
#include "cli/launch/command_path.h"
#include "cli/launch/elf_inspector.h"
#include "cli/launch/malloc_conf.h"

extern char** environ;

namespace memprof::cli {
namespace {

constexpr char kAgentLibName[] = "libmemprof_agent.so.0";

bool Exists(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

std::vector<std::string> SplitPreload(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = list.find_first_of(" :", start);
    const std::string_view item =
        list.substr(start, end == std::string_view::npos ? end : end - start);
    if (!item.empty()) out.emplace_back(item);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// The library that `variable` (MEMPROF_*_LIB) names, canonical; nullopt
// when it is unset or empty, kInvalidArgument when it is not a readable file.
Result<std::optional<std::string>> NamedLibrary(const RunEnvironment& env, const char* variable) {
  auto lib = env.Get(variable);
  if (!lib || lib->empty()) return std::optional<std::string>();
  if (Exists(std::string(*lib))) return std::optional<std::string>(Canonical(std::string(*lib)));
  return Fail(ErrorCode::kInvalidArgument,
              std::string(variable) + "=" + std::string(*lib) + ": no such readable file");
}


Result<std::string> LocateJemalloc(const RunEnvironment& env, const std::string& command) {
  auto named = NamedLibrary(env, "MEMPROF_JEMALLOC_LIB");
  if (!named) return Fail(named.error());
  if (*named) return **named;
  if (Exists(env.jemalloc_path)) return env.jemalloc_path;
  return Fail(ErrorCode::kFailedPrecondition,
              command +
                  " does not use jemalloc and no jemalloc library was found to preload; "
                  "install jemalloc (libjemalloc2) or set MEMPROF_JEMALLOC_LIB");
}

// Whether the user's LD_PRELOAD has a library whose file name starts with `prefix`.
bool PreloadHas(std::string_view user_preload, std::string_view prefix) {
  for (const std::string& item : SplitPreload(user_preload)) {
    if (std::filesystem::path(item).filename().string().starts_with(prefix)) return true;
  }
  return false;
}

// Refuses static and 32-bit programs; the ELF facts of the rest (is_elf
// false for a script, which is preloaded through its interpreter).
Result<ElfInfo> InspectLaunchable(const std::string& path, const std::string& command) {
  auto elf = InspectElf(path);
  if (!elf) return Fail(elf.error());
  if (!elf->is_elf) {
    Log().info("{} is not an ELF file (a script?); preloading into its interpreter", path);
  } else if (!elf->is_64bit) {
    return Fail(ErrorCode::kFailedPrecondition,
                command + " is a 32-bit program; the memprof agent is a 64-bit library");
  } else if (!elf->has_interp) {
    return Fail(ErrorCode::kFailedPrecondition,
                command +
                    " is statically linked, so LD_PRELOAD cannot load the memprof agent "
                    "into it; link the agent into the program instead and call "
                    "memprof_agent_start()");
  }
  return elf;
}

bool NeedsJemalloc(const ElfInfo& elf, std::string_view user_preload) {
  return !(elf.is_elf && elf.UsesJemalloc()) && !PreloadHas(user_preload, "libjemalloc");
}

// The jemalloc library to preload, or "" when CMD has jemalloc already.
Result<std::string> PlanJemalloc(const ElfInfo& elf, const std::string& command,
                                 const RunEnvironment& env) {
  if (!NeedsJemalloc(elf, env.Get("LD_PRELOAD").value_or(""))) return std::string();
  return LocateJemalloc(env, command);
}

Result<void> CheckPreloadable(const std::string& path) {
  if (path.find_first_of(" :") == std::string::npos) return {};
  return Fail(ErrorCode::kInvalidArgument,
              "cannot preload " + path + ": LD_PRELOAD paths must not contain spaces or colons");
}

Result<std::string> LocateTcmalloc(const RunEnvironment& env) {
  auto named = NamedLibrary(env, "MEMPROF_TCMALLOC_LIB");
  if (!named) return Fail(named.error());
  if (*named) return **named;
  if (Exists(env.tcmalloc_path)) return env.tcmalloc_path;
  return Fail(ErrorCode::kFailedPrecondition,
              "--allocator tcmalloc: gperftools' libtcmalloc.so.4 was not found to preload; "
              "install it (apt-get install libgoogle-perftools4) or set MEMPROF_TCMALLOC_LIB");
}

bool NeedsLib(const ElfInfo& elf, std::string_view prefix) {
  return std::any_of(elf.needed.begin(), elf.needed.end(),
                     [&](const std::string& lib) { return lib.starts_with(prefix); });
}

// The libtcmalloc to preload, or "" when CMD links it already. CMD with
// another allocator of its own cannot be given tcmalloc.
Result<std::string> PlanTcmalloc(const ElfInfo& elf, const std::string& command,
                                 const RunEnvironment& env) {
  const std::string_view user_preload = env.Get("LD_PRELOAD").value_or("");
  if ((elf.is_elf && elf.UsesJemalloc()) || PreloadHas(user_preload, "libjemalloc")) {
    return Fail(ErrorCode::kFailedPrecondition,
                command + " uses jemalloc; preloading tcmalloc would put two allocators in "
                          "one process. Leave out --allocator tcmalloc: memprof profiles "
                          "jemalloc as it is");
  }
  if (NeedsLib(elf, "libtcmalloc_minimal") || PreloadHas(user_preload, "libtcmalloc_minimal")) {
    return Fail(ErrorCode::kFailedPrecondition,
                command + " uses libtcmalloc_minimal, which cannot sample allocations; link "
                          "it with libtcmalloc (-ltcmalloc) instead to profile its heap");
  }
  if (NeedsLib(elf, "libtcmalloc") || PreloadHas(user_preload, "libtcmalloc")) {
    return std::string();
  }
  return LocateTcmalloc(env);
}

// TCMALLOC_SAMPLE_PARAMETER=<the user's, else 524288>; a warning when the
// user's turns sampling off.
std::string TcmallocSetting(const RunEnvironment& env, std::vector<std::string>& warnings) {
  const std::string prefix = std::string(kTcmallocSampleVariable) + "=";
  auto user = env.Get(kTcmallocSampleVariable);
  if (!user) return prefix + kTcmallocSamplePeriod;
  long long period = 0;
  const std::string value(*user);
  if (std::sscanf(value.c_str(), "%lld", &period) != 1 || period <= 0) {
    warnings.push_back(prefix + value +
                       " turns tcmalloc's sampling off: memprof will not be able to take "
                       "heap profiles of this process (unset it, or set e.g. " +
                       kTcmallocSampling + ")");
  }
  return prefix + value;
}

std::vector<std::string> ReplaceVariables(std::vector<std::string> vars,
                                          const std::vector<std::string>& updates) {
  for (const std::string& update : updates) {
    const std::string prefix = update.substr(0, update.find('=') + 1);
    std::erase_if(vars, [&](const std::string& v) { return v.starts_with(prefix); });
    vars.push_back(update);
  }
  return vars;
}

}  // namespace

Result<std::string> LocateAgent(const RunEnvironment& env) {
  auto named = NamedLibrary(env, "MEMPROF_AGENT_LIB");
  if (!named) return Fail(named.error());
  if (*named) return **named;
  const std::filesystem::path exe_dir = std::filesystem::path(env.self_exe).parent_path();
  std::vector<std::string> tried;
  for (const std::string& relative : env.agent_relative_paths) {
    const std::string path = (exe_dir / relative).lexically_normal().string();
    if (Exists(path)) return Canonical(path);
    tried.push_back(path);
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  return Fail(ErrorCode::kInternal, std::string("cannot find ") + kAgentLibName + " (looked at " +
                                        list + "); set MEMPROF_AGENT_LIB to its path");
}

std::optional<std::string_view> RunEnvironment::Get(std::string_view name) const {
  for (const std::string& var : variables) {
    if (var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=') {
      return std::string_view(var).substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

RunEnvironment CurrentRunEnvironment() {
  RunEnvironment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.variables.emplace_back(*e);
  std::error_code ec;
  env.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  env.agent_relative_paths = {MEMPROF_AGENT_FROM_BINDIR, MEMPROF_AGENT_FROM_BUILD_CLI};
  env.jemalloc_path = MEMPROF_JEMALLOC_PATH;
  env.tcmalloc_path = MEMPROF_TCMALLOC_PATH;
  return env;
}

std::string MergeLdPreload(const std::vector<std::string>& ours, std::string_view user) {
  std::vector<std::string> all = ours;
  for (std::string& item : SplitPreload(user)) {
    if (std::find(all.begin(), all.end(), item) == all.end()) all.push_back(std::move(item));
  }
  std::string joined;
  for (const std::string& item : all) joined += (joined.empty() ? "" : ":") + item;
  return joined;
}

Result<ExecPlan> PlanRun(const std::vector<std::string>& command, const RunEnvironment& env,
                         RunAllocator allocator) {
  if (command.empty()) return Fail(ErrorCode::kInvalidArgument, "run: missing command");
  auto path = ResolveCommandPath(command[0], env.Get("PATH"));
  if (!path) return Fail(path.error());
  auto elf = InspectLaunchable(*path, command[0]);
  if (!elf) return Fail(elf.error());
  auto allocator_lib = allocator == RunAllocator::kTcmalloc ? PlanTcmalloc(*elf, command[0], env)
                                                            : PlanJemalloc(*elf, command[0], env);
  if (!allocator_lib) return Fail(allocator_lib.error());
  std::vector<std::string> preload;
  if (!allocator_lib->empty()) preload.push_back(*allocator_lib);
  auto agent = LocateAgent(env);
  if (!agent) return Fail(agent.error());
  preload.push_back(*agent);
  for (const std::string& lib : preload) {
    if (auto ok = CheckPreloadable(lib); !ok) return Fail(ok.error());
  }
  ExecPlan plan;
  plan.path = *path;
  plan.argv = command;
  plan.ld_preload = MergeLdPreload(preload, env.Get("LD_PRELOAD").value_or(""));
  std::string setting;
  if (allocator == RunAllocator::kTcmalloc) {
    setting = TcmallocSetting(env, plan.warnings);
  } else {
    MergedMallocConf conf = MergeMallocConf(env.Get("MALLOC_CONF").value_or(""));
    plan.malloc_conf = conf.value;
    plan.warnings = std::move(conf.warnings);
    setting = "MALLOC_CONF=" + plan.malloc_conf;
  }
  plan.allocator_setting = setting;
  plan.env = ReplaceVariables(env.variables, {"LD_PRELOAD=" + plan.ld_preload, setting});
  return plan;
}

}  // namespace memprof::cli
