#include "cli/report/render/lifetimes_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/report/render/allocation_header.h"
#include "cli/report/render/report_renderer.h"
#include "cli/report/render/svg_report.h"
#include "common/json_schema_versions.h"

namespace memprof::report::render {
namespace {

using Json = nlohmann::ordered_json;

std::string Column(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string SiteBytes(double bytes) { return HumanValue(bytes, Metric::kAllocSpace); }

std::string SiteObjects(double objects) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", objects);
  return text;
}

// A percentile as the table shows it: the clock cannot tell a lifetime
// below its resolution from 0.
std::string LifetimeText(const std::optional<uint64_t>& ns, uint64_t resolution_ns) {
  if (!ns) return "-";
  if (*ns < resolution_ns) return "<" + HumanDuration(resolution_ns);
  return HumanDuration(*ns);
}

size_t ShownSites(const std::vector<aggregate::LifetimeSite>& sites, std::optional<size_t> top) {
  return top ? std::min(*top, sites.size()) : sites.size();
}

void WriteHeadings(std::ostream& out) {
  out << Column("allocated", 10) << Column("freed", 11) << Column("survived", 11)
      << Column("objects", 11) << Column("rate/s", 11) << Column("life p50", 10)
      << Column("p90", 10) << Column("p99", 10) << "  function\n";
}

void WriteRow(const aggregate::LifetimeSite& site, uint64_t resolution_ns, std::ostream& out) {
  out << Column(SiteBytes(site.allocated.bytes), 10) << Column(SiteBytes(site.freed.bytes), 11)
      << Column(SiteBytes(site.survived.bytes), 11) << Column(SiteObjects(site.allocated.objects), 11)
      << Column(SiteBytes(site.allocation_rate), 11)
      << Column(LifetimeText(site.lifetime_p50_ns, resolution_ns), 10)
      << Column(LifetimeText(site.lifetime_p90_ns, resolution_ns), 10)
      << Column(LifetimeText(site.lifetime_p99_ns, resolution_ns), 10) << "  " << site.function
      << '\n';
}

Json PercentileJson(const std::optional<uint64_t>& ns) { return ns ? Json(*ns) : Json(nullptr); }

Json SiteJson(const aggregate::LifetimeSite& site) {
  return {{"function", site.function},
          {"allocated_bytes", site.allocated.bytes},
          {"freed_bytes", site.freed.bytes},
          {"survived_bytes", site.survived.bytes},
          {"allocated_objects", site.allocated.objects},
          {"freed_objects", site.freed.objects},
          {"survived_objects", site.survived.objects},
          {"allocation_rate_bytes_per_second", site.allocation_rate},
          {"lifetime_p50_ns", PercentileJson(site.lifetime_p50_ns)},
          {"lifetime_p90_ns", PercentileJson(site.lifetime_p90_ns)},
          {"lifetime_p99_ns", PercentileJson(site.lifetime_p99_ns)}};
}

}  // namespace

Result<void> WriteLifetimesText(const AllocationSummary& summary,
                                const std::vector<aggregate::LifetimeSite>& sites,
                                std::optional<size_t> top, std::ostream& out) {
  WriteAllocationHeaderText(summary, out);
  Amount allocated;
  for (const aggregate::LifetimeSite& site : sites) {
    allocated.bytes += site.allocated.bytes;
    allocated.objects += site.allocated.objects;
  }
  out << "Allocated: " << SiteBytes(allocated.bytes) << " in " << SiteObjects(allocated.objects)
      << " objects over " << HumanDuration(summary.covered_ns)
      << " (estimated from the samples); life: how long the freed objects lived\n";
  if (!sites.empty()) WriteHeadings(out);
  const size_t shown = ShownSites(sites, top);
  for (size_t i = 0; i < shown; ++i) WriteRow(sites[i], summary.header.clock_resolution_ns, out);
  return CheckWritten(out);
}

Result<void> WriteLifetimesJson(const AllocationSummary& summary,
                                const std::vector<aggregate::LifetimeSite>& sites,
                                std::optional<size_t> top, std::ostream& out) {
  Json document;
  document["schema_version"] = kLifetimesJsonVersion;
  document["allocation_profile"] = AllocationHeaderJson(summary);
  Json rows = Json::array();
  const size_t shown = ShownSites(sites, top);
  for (size_t i = 0; i < shown; ++i) rows.push_back(SiteJson(sites[i]));
  document["sites"] = std::move(rows);
  out << document.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  return CheckWritten(out);
}

}  // namespace memprof::report::render
