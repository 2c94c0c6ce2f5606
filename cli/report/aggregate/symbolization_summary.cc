#include "cli/report/aggregate/symbolization_summary.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace memprof::report::aggregate {
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
  line += ": hides " + Percent(module.hidden_share) + " of the profile (" +
          Percent(module.share) + " in stacks with its frames), " +
          std::to_string(module.unnamed_frames) + " unnamed frame" +
          (module.unnamed_frames == 1 ? "" : "s");
  if (!module.path.empty()) line += "; " + WhatIsMissing(module);
  return line + "\n";
}

using ModuleList = std::vector<const ModuleCoverage*>;

// The fixes for `listed`, most specific first.
std::string FixLines(const SymbolizationSummary& summary, const ModuleList& listed) {
  std::set<std::string> packages;
  bool unpackaged = false;
  for (const ModuleCoverage* module : listed) {
    if (module->path.empty()) continue;
    if (!module->debug_package.empty()) {
      packages.insert(module->debug_package);
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

// The first line of the full summary: what is hidden, in which way.
std::string HiddenHeadline(const SymbolizationSummary& summary) {
  if (summary.hidden_share <= 0) {
    return "memprofctl: no frame without a name hides anything: each stack's unnamed frames lie "
           "beyond its outermost named one (thread entry points); " +
           Percent(1 - summary.named_share) + " of the profile is in stacks with such frames:\n";
  }
  return "memprofctl: " + Percent(summary.hidden_share) +
         " of the profile is allocated at or called through frames no symbol names (" +
         Percent(summary.unnamed_site_share) + " at an unnamed allocating site, " +
         Percent(summary.cut_short_share) +
         " with an unnamed call between named ones); they are shown as module+0xOFFSET:\n";
}

// Files, shares and fixes: the files whose frames hide something, or all (-v).
std::string FullSummary(const SymbolizationSummary& summary, bool verbose) {
  ModuleList listed;
  for (const ModuleCoverage& module : summary.modules) {
    if (verbose || module.hidden_share > 0) listed.push_back(&module);
  }
  std::string text = HiddenHeadline(summary);
  for (size_t i = 0; i < listed.size() && i < kListedModules; ++i) text += ModuleLine(*listed[i]);
  if (listed.size() > kListedModules) {
    text += "  ... and " + std::to_string(listed.size() - kListedModules) +
            " more (--format json lists them all)\n";
  }
  return text + FixLines(summary, listed);
}

// Where every thread and the process begin: libc's frames at the root of
// every stack. Named or not, they say nothing of where memory goes, so the
// "outermost named location" of a stack is never one of them.
bool IsEntryPoint(const Location& location) {
  static const std::set<std::string, std::less<>> kEntryPoints = {
      "_start",       "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
      "start_thread", "clone",             "__clone",                "clone3",
      "__clone3",     "__clone_internal"};
  return std::all_of(location.frames.begin(), location.frames.end(), [](const Frame& frame) {
    return !IsUnnamed(frame) && kEntryPoints.contains(frame.function);
  });
}

// Counts, stack by stack, what the unnamed locations of an aggregation
// hide (symbolization_summary.h, UnnamedFrameShares).
class UnnamedFrameCounter {
 public:
  explicit UnnamedFrameCounter(const Aggregation& aggregation)
      : aggregation_(aggregation), unnamed_(aggregation.locations.size()),
        entry_(aggregation.locations.size(), 0), counted_(aggregation.locations.size(), 0) {
    for (size_t i = 0; i < aggregation.locations.size(); ++i) {
      unnamed_[i] = UnnamedModulesOf(aggregation.locations[i], ids_);
      entry_[i] = IsEntryPoint(aggregation.locations[i]) ? 1 : 0;
    }
    by_id_.resize(ids_.size());
    seen_.assign(ids_.size(), 0);
    hid_.assign(ids_.size(), 0);
  }

  void Add(size_t s) {
    const StackSample& stack = aggregation_.stacks[s];
    const double value = std::fabs(stack.value);
    total_ += value;
    const std::vector<uint32_t>& locations = stack.locations;
    // Beyond the outermost named location that is not an entry point
    // nothing is hidden (npos: none is named).
    size_t outermost_named = std::string::npos;
    for (size_t i = locations.size(); i-- > 0;) {
      if (unnamed_[locations[i]].empty() && entry_[locations[i]] == 0) {
        outermost_named = i;
        break;
      }
    }
    bool all_named = true, site = false, cut_short = false;
    for (size_t i = 0; i < locations.size(); ++i) {
      const bool first_sight = counted_[locations[i]] == 0;
      counted_[locations[i]] = 1;
      if (unnamed_[locations[i]].empty()) continue;
      all_named = false;
      const bool hides = i == 0 || (outermost_named != std::string::npos && i < outermost_named);
      site = site || i == 0;
      cut_short = cut_short || (i > 0 && hides);
      for (uint32_t id : unnamed_[locations[i]]) CountModule(id, s, value, hides, first_sight);
    }
    if (all_named) named_ += value;
    if (site) site_ += value;
    if (cut_short) cut_short_ += value;
    if (site || cut_short) hidden_ += value;
  }

  UnnamedFrameShares Result() const {
    UnnamedFrameShares result;
    const auto of_total = [this](double value) { return total_ > 0 ? value / total_ : 0.0; };
    for (uint32_t id = 0; id < by_id_.size(); ++id) {
      UnnamedFrames frames = by_id_[id];
      if (frames.addresses == 0) continue;
      frames.share = of_total(frames.share);
      frames.hidden_share = of_total(frames.hidden_share);
      result.by_module.emplace(ids_.NameOf(id), frames);
    }
    if (total_ > 0) result.named_share = named_ / total_;
    result.unnamed_site_share = of_total(site_);
    result.cut_short_share = of_total(cut_short_);
    result.hidden_share = of_total(hidden_);
    return result;
  }

 private:
  // Module `id` has an unnamed frame in stack `s`: counted once per stack.
  void CountModule(uint32_t id, size_t s, double value, bool hides, bool first_sight) {
    UnnamedFrames& frames = by_id_[id];
    if (first_sight) ++frames.addresses;
    if (seen_[id] != s + 1) {
      seen_[id] = s + 1;
      frames.share += value;
    }
    if (hides && hid_[id] != s + 1) {
      hid_[id] = s + 1;
      frames.hidden_share += value;
    }
  }

  const Aggregation& aggregation_;
  ModuleIds ids_;
  std::vector<std::vector<uint32_t>> unnamed_;  // per location: its unnamed modules
  std::vector<uint8_t> entry_;                  // per location: IsEntryPoint
  // Only the frames that some stack shows count: a location the report cut
  // away (tcmalloc's sampler frames, an allocator's own) is nobody's problem.
  std::vector<uint8_t> counted_;
  std::vector<UnnamedFrames> by_id_;
  // seen_[id] (hid_[id]) == stack number + 1: the module is already counted
  // (as hiding something) for it.
  std::vector<size_t> seen_;
  std::vector<size_t> hid_;
  double total_ = 0, named_ = 0, site_ = 0, cut_short_ = 0, hidden_ = 0;
};

// "sampled by memprof since ...": a profile of memprof's own sampler holds
// only what was allocated since it was switched on.
std::string CoverageLine(const SymbolizationSummary& summary) {
  if (!summary.sampler) return "";
  std::string text = "memprofctl: sampled by memprof";
  if (summary.sampler->since_unix_ms > 0) {
    const std::time_t since = static_cast<std::time_t>(summary.sampler->since_unix_ms / 1000);
    std::tm utc{};
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", ::gmtime_r(&since, &utc));
    text += std::string(" since ") + when;
  }
  text += "; allocations made before are not in it";
  if (summary.sampler->dropped > 0) {
    text += "; " + std::to_string(summary.sampler->dropped) +
            " sampled allocations did not fit the agent's tables and are left out";
  }
  return text + "\n";
}

std::string NamesSummary(const SymbolizationSummary& summary, bool verbose) {
  if (summary.empty) {
    return summary.is_diff
               ? "memprofctl: nothing to show: the profiles do not differ (in what --focus and "
                 "--ignore leave, if given)\n"
               : "memprofctl: nothing to show: the profile holds no samples (profiling was "
                 "inactive, or nothing sampled is still allocated), or --focus/--ignore left "
                 "none\n";
  }
  if (summary.complete()) return "";
  if (verbose || summary.hidden_share >= kHiddenShareHint) return FullSummary(summary, verbose);
  if (summary.hidden_share <= 0) return "";
  return "memprofctl: " + Percent(summary.hidden_share) +
         " of the profile is allocated at or called through frames no symbol names (under " +
         Percent(kHiddenShareHint) + ": -v lists the files and how to name them)\n";
}

}  // namespace

UnnamedFrameShares CountUnnamedFrames(const Aggregation& aggregation) {
  UnnamedFrameCounter counter(aggregation);
  for (size_t s = 0; s < aggregation.stacks.size(); ++s) counter.Add(s);
  return counter.Result();
}

std::string FormatSymbolizationSummary(const SymbolizationSummary& summary, bool verbose) {
  return CoverageLine(summary) + NamesSummary(summary, verbose);
}

}  // namespace memprof::report::aggregate
