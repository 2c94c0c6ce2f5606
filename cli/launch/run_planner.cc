#include "cli/launch/run_planner.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
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

Result<std::string> LocateAgent(const RunEnvironment& env) {
  if (auto lib = env.Get("MEMPROF_AGENT_LIB"); lib && !lib->empty()) {
    if (Exists(std::string(*lib))) return Canonical(std::string(*lib));
    return Fail(ErrorCode::kInvalidArgument,
                "MEMPROF_AGENT_LIB=" + std::string(*lib) + ": no such readable file");
  }
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

Result<std::string> LocateJemalloc(const RunEnvironment& env, const std::string& command) {
  if (auto lib = env.Get("MEMPROF_JEMALLOC_LIB"); lib && !lib->empty()) {
    if (Exists(std::string(*lib))) return Canonical(std::string(*lib));
    return Fail(ErrorCode::kInvalidArgument,
                "MEMPROF_JEMALLOC_LIB=" + std::string(*lib) + ": no such readable file");
  }
  if (Exists(env.jemalloc_path)) return env.jemalloc_path;
  return Fail(ErrorCode::kFailedPrecondition,
              command +
                  " does not use jemalloc and no jemalloc library was found to preload; "
                  "install jemalloc (libjemalloc2) or set MEMPROF_JEMALLOC_LIB");
}

bool PreloadHasJemalloc(std::string_view user_preload) {
  for (const std::string& item : SplitPreload(user_preload)) {
    if (std::filesystem::path(item).filename().string().starts_with("libjemalloc")) return true;
  }
  return false;
}

// Static, 32-bit and non-ELF programs; whether jemalloc must be preloaded.
Result<bool> NeedsJemalloc(const std::string& path, const std::string& command,
                           std::string_view user_preload) {
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
  return !(elf->is_elf && elf->UsesJemalloc()) && !PreloadHasJemalloc(user_preload);
}

Result<void> CheckPreloadable(const std::string& path) {
  if (path.find_first_of(" :") == std::string::npos) return {};
  return Fail(ErrorCode::kInvalidArgument,
              "cannot preload " + path + ": LD_PRELOAD paths must not contain spaces or colons");
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

Result<ExecPlan> PlanRun(const std::vector<std::string>& command, const RunEnvironment& env) {
  if (command.empty()) return Fail(ErrorCode::kInvalidArgument, "run: missing command");
  ExecPlan plan;
  auto path = ResolveCommandPath(command[0], env.Get("PATH"));
  if (!path) return Fail(path.error());
  const std::string_view user_preload = env.Get("LD_PRELOAD").value_or("");
  auto needs_jemalloc = NeedsJemalloc(*path, command[0], user_preload);
  if (!needs_jemalloc) return Fail(needs_jemalloc.error());
  std::vector<std::string> preload;
  if (*needs_jemalloc) {
    auto jemalloc = LocateJemalloc(env, command[0]);
    if (!jemalloc) return Fail(jemalloc.error());
    preload.push_back(*jemalloc);
  }
  auto agent = LocateAgent(env);
  if (!agent) return Fail(agent.error());
  preload.push_back(*agent);
  for (const std::string& lib : preload) {
    if (auto ok = CheckPreloadable(lib); !ok) return Fail(ok.error());
  }
  MergedMallocConf conf = MergeMallocConf(env.Get("MALLOC_CONF").value_or(""));
  plan.path = *path;
  plan.argv = command;
  plan.ld_preload = MergeLdPreload(preload, user_preload);
  plan.malloc_conf = conf.value;
  plan.warnings = std::move(conf.warnings);
  plan.env = ReplaceVariables(env.variables,
                              {"LD_PRELOAD=" + plan.ld_preload, "MALLOC_CONF=" + plan.malloc_conf});
  return plan;
}

}  // namespace memprof::cli
