#include "cli/report/aggregate/symbolization_summary.h"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace memprof::analysis {
namespace {

// At most this many files are listed on stderr; the JSON has them all.
constexpr size_t kListedModules = 8;

std::string Percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", share * 100.0);
  return buffer;
}

// Module names as small numbers, so that counting a stack's unnamed
// modules allocates nothing.
class ModuleIds {
 public:
  uint32_t IdOf(const std::string& name) {
    auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(&it->first);
    return it->second;
  }
  size_t size() const { return names_.size(); }
  const std::string& NameOf(uint32_t id) const { return *names_[id]; }

 private:
  std::map<std::string, uint32_t> ids_;
  std::vector<const std::string*> names_;
};

// The unnamed modules of one location, each once.
std::vector<uint32_t> UnnamedModulesOf(const Location& location, ModuleIds& ids) {
  std::vector<uint32_t> out;
  for (const Frame& frame : location.frames) {
    if (!IsUnnamed(frame)) continue;
    const uint32_t id = ids.IdOf(frame.module);
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

std::string WhatIsMissing(const ModuleCoverage& module) {
  if (!module.problem.empty()) return module.problem;
  if (module.full_symtab) return "a symbol table but no debug info";
  return "exported symbols only, no debug info";
}

std::string ModuleLine(const ModuleCoverage& module) {
  std::string line = "  " + (module.path.empty() ? std::string("(no file)") : module.path);
  if (!module.build_id.empty()) line += " (build ID " + module.build_id + ")";
  line += ": " + Percent(module.share) + " of the profile, " +
          std::to_string(module.unnamed_frames) + " unnamed frame" +
          (module.unnamed_frames == 1 ? "" : "s");
  if (!module.path.empty()) line += "; " + WhatIsMissing(module);
  return line + "\n";
}

// The fixes, most specific first.
std::string FixLines(const SymbolizationSummary& summary) {
  std::set<std::string> packages;
  bool unpackaged = false;
  for (const ModuleCoverage& module : summary.modules) {
    if (module.path.empty()) continue;
    if (!module.debug_package.empty()) {
      packages.insert(module.debug_package);
    } else {
      unpackaged = true;
    }
  }
  std::string text;
  if (!packages.empty()) {
    text += "  fix: apt-get install";
    for (const std::string& package : packages) text += " " + package;
    text += "   (Debian's debug archive: deb http://deb.debian.org/debian-debug/ bookworm-debug main)\n";
  }
  if (!summary.debuginfod) {
    text += "  or:  DEBUGINFOD_URLS=https://debuginfod.debian.net memprofctl report ...\n";
  }
  if (unpackaged) {
    text += "  or:  a debug file by build ID under /usr/lib/debug/.build-id/, or next to the binary "
            "by its .gnu_debuglink\n";
  }
  if (!summary.sysroot) {
    text += "  if the dump comes from another machine or a container: --sysroot DIR (its root "
            "file system)\n";
  }
  return text;
}

}  // namespace

UnnamedFrameShares CountUnnamedFrames(const Aggregation& aggregation) {
  ModuleIds ids;
  std::vector<std::vector<uint32_t>> unnamed(aggregation.locations.size());
  for (size_t i = 0; i < aggregation.locations.size(); ++i) {
    unnamed[i] = UnnamedModulesOf(aggregation.locations[i], ids);
  }
  std::vector<UnnamedFrames> by_id(ids.size());
  // seen[id] == stack number + 1: the module is already counted for it.
  std::vector<size_t> seen(ids.size(), 0);
  // Only the frames that some stack shows count: a location the report cut
  // away (tcmalloc's sampler frames, an allocator's own) is nobody's problem.
  std::vector<uint8_t> counted(aggregation.locations.size(), 0);
  double total = 0;
  double named = 0;
  for (size_t s = 0; s < aggregation.stacks.size(); ++s) {
    const StackSample& stack = aggregation.stacks[s];
    const double value = std::fabs(stack.value);
    total += value;
    bool all_named = true;
    for (uint32_t location : stack.locations) {
      const bool first_sight = counted[location] == 0;
      counted[location] = 1;
      for (uint32_t id : unnamed[location]) {
        all_named = false;
        if (first_sight) ++by_id[id].addresses;
        if (seen[id] == s + 1) continue;
        seen[id] = s + 1;
        by_id[id].share += value;
      }
    }
    if (all_named) named += value;
  }
  UnnamedFrameShares result;
  for (uint32_t id = 0; id < by_id.size(); ++id) {
    UnnamedFrames frames = by_id[id];
    if (frames.addresses == 0) continue;
    if (total > 0) frames.share /= total;
    result.by_module.emplace(ids.NameOf(id), frames);
  }
  if (total > 0) result.named_share = named / total;
  return result;
}

std::string FormatSymbolizationSummary(const SymbolizationSummary& summary) {
  if (summary.empty) {
    return summary.is_diff
               ? "memprofctl: nothing to show: the profiles do not differ (in what --focus and "
                 "--ignore leave, if given)\n"
               : "memprofctl: nothing to show: the profile holds no samples (profiling was "
                 "inactive, or nothing sampled is still allocated), or --focus/--ignore left "
                 "none\n";
  }
  if (summary.complete()) return "";
  std::string text = "memprofctl: " + Percent(1 - summary.named_share) +
                     " of the profile is in stacks with frames no symbol names; they are shown "
                     "as module+0xOFFSET:\n";
  for (size_t i = 0; i < summary.modules.size() && i < kListedModules; ++i) {
    text += ModuleLine(summary.modules[i]);
  }
  if (summary.modules.size() > kListedModules) {
    text += "  ... and " + std::to_string(summary.modules.size() - kListedModules) +
            " more (--format json lists them all)\n";
  }
  return text + FixLines(summary);
}

}  // namespace memprof::analysis
