#include "cli/report/analysis/symbolization_summary.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace memprof::analysis {
namespace {

// At most this many files are listed on stderr; the JSON has them all.
constexpr size_t kListedModules = 8;

std::string Percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", share * 100.0);
  return buffer;
}

// The unnamed modules of one location.
void UnnamedModulesOf(const Location& location, std::set<std::string>& out) {
  for (const Frame& frame : location.frames) {
    if (IsUnnamed(frame)) out.insert(frame.module);
  }
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
  UnnamedFrameShares result;
  std::vector<std::set<std::string>> unnamed(aggregation.locations.size());
  for (size_t i = 0; i < aggregation.locations.size(); ++i) {
    UnnamedModulesOf(aggregation.locations[i], unnamed[i]);
    for (const std::string& module : unnamed[i]) ++result.by_module[module].addresses;
  }
  double total = 0;
  double named = 0;
  for (const StackSample& stack : aggregation.stacks) {
    const double value = std::fabs(stack.value);
    total += value;
    std::set<std::string> modules;
    for (uint32_t location : stack.locations) {
      modules.insert(unnamed[location].begin(), unnamed[location].end());
    }
    if (modules.empty()) named += value;
    for (const std::string& module : modules) result.by_module[module].share += value;
  }
  if (total > 0) {
    result.named_share = named / total;
    for (auto& [module, frames] : result.by_module) frames.share /= total;
  }
  return result;
}

std::string FormatSymbolizationSummary(const SymbolizationSummary& summary) {
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
