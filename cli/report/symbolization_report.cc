#include "cli/report/symbolization_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "cli/report/debian_packages.h"
#include "common/path.h"

namespace memprof::report {
namespace {

// A file's facts by the name frames carry (MemoryMapping::Basename).
const report::symbolize::ModuleReport* FindModule(
    const std::vector<report::symbolize::ModuleReport>& modules, const std::string& name) {
  for (const report::symbolize::ModuleReport& module : modules) {
    if (PathBasename(module.path) == name) return &module;
  }
  return nullptr;
}

report::aggregate::ModuleCoverage CoverageOf(const std::string& name,
                                             const report::aggregate::UnnamedFrames& frames,
                                             const report::symbolize::ModuleReport* module) {
  report::aggregate::ModuleCoverage coverage;
  coverage.path = module != nullptr ? module->path : name;
  coverage.share = frames.share;
  coverage.hidden_share = frames.hidden_share;
  coverage.unnamed_frames = frames.addresses;
  if (module != nullptr) {
    coverage.build_id = module->build_id;
    coverage.problem = module->problem;
    coverage.full_symtab = module->full_symtab;
    coverage.debug_info = module->debug_info;
  }
  return coverage;
}

// The owners of `paths`: what the prefetch found, and the paths it was
// not asked about looked up now.
PackageOwners OwnersOf(const std::vector<std::string>& paths, const SummaryContext& context) {
  if (!context.owners.valid()) return PackagesOwning(paths, context.dpkg_info_dir);
  PackageOwners owners = context.owners.get();
  std::vector<std::string> missing;
  for (const std::string& path : paths) {
    if (!owners.contains(path)) missing.push_back(path);
  }
  if (!missing.empty()) owners.merge(PackagesOwning(missing, context.dpkg_info_dir));
  return owners;
}

void AddPackages(std::vector<report::aggregate::ModuleCoverage>& modules,
                 const SummaryContext& context) {
  std::vector<std::string> paths;
  for (const report::aggregate::ModuleCoverage& module : modules) {
    if (module.path.starts_with("/")) paths.push_back(module.path);
  }
  if (paths.empty()) return;
  const PackageOwners owners = OwnersOf(paths, context);
  for (report::aggregate::ModuleCoverage& module : modules) {
    auto it = owners.find(module.path);
    if (it == owners.end() || it->second.empty()) continue;
    module.package = it->second;
    module.debug_package = DebugPackageOf(it->second);
  }
}

}  // namespace

report::aggregate::SymbolizationSummary SummarizeSymbolization(
    const report::aggregate::Aggregation& aggregation,
    const std::function<std::vector<report::symbolize::ModuleReport>()>& modules,
    const SummaryContext& context) {
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(aggregation);
  report::aggregate::SymbolizationSummary summary;
  summary.named_share = shares.named_share;
  summary.unnamed_site_share = shares.unnamed_site_share;
  summary.cut_short_share = shares.cut_short_share;
  summary.hidden_share = shares.hidden_share;
  summary.debuginfod = context.debuginfod;
  summary.sysroot = !context.sysroot.empty();
  if (shares.by_module.empty()) return summary;
  const std::vector<report::symbolize::ModuleReport> reports = modules();
  for (const auto& [name, frames] : shares.by_module) {
    summary.modules.push_back(CoverageOf(name, frames, FindModule(reports, name)));
  }
  std::stable_sort(summary.modules.begin(), summary.modules.end(), [](const auto& a, const auto& b) {
    return a.hidden_share != b.hidden_share ? a.hidden_share > b.hidden_share : a.share > b.share;
  });
  // dpkg on this host says nothing about another root's files.
  if (context.sysroot.empty()) AddPackages(summary.modules, context);
  return summary;
}

std::shared_future<PackageOwners> PrefetchPackageOwners(
    const std::vector<report::symbolize::ModuleReport>& modules, const std::string& dpkg_info_dir) {
  std::vector<std::string> paths;
  for (const report::symbolize::ModuleReport& module : modules) {
    if (module.path.starts_with("/")) paths.push_back(module.path);
  }
  try {
    return std::async(std::launch::async, [paths = std::move(paths), dpkg_info_dir] {
      PackageOwners owners = PackagesOwning(paths, dpkg_info_dir);
      for (const std::string& path : paths) owners.try_emplace(path);  // asked, not owned
      return owners;
    });
  } catch (const std::system_error&) {
    return {};  // no thread to spare after all: the summary looks them up itself
  }
}

std::vector<report::symbolize::ModuleReport> ModulesWithUnnamedFrames(
    const std::vector<report::symbolize::ModuleReport>& modules,
    std::span<const uint64_t> addresses, report::aggregate::AddressSymbolizer& symbolizer) {
  std::set<std::string> unnamed;  // module names, as frames carry them
  for (uint64_t address : addresses) {
    for (const report::aggregate::Frame& frame : symbolizer.Resolve(address)) {
      if (report::aggregate::IsUnnamed(frame)) unnamed.insert(frame.module);
    }
  }
  std::vector<report::symbolize::ModuleReport> out;
  for (const report::symbolize::ModuleReport& module : modules) {
    if (unnamed.contains(std::string(PathBasename(module.path)))) out.push_back(module);
  }
  return out;
}

}  // namespace memprof::report
