#include "cli/report/render/allocation_header.h"

#include <cstdio>

namespace memprof::report::render {

std::string HumanDuration(uint64_t ns) {
  char text[32];
  const auto value = static_cast<double>(ns);
  if (ns < 1000) {
    std::snprintf(text, sizeof text, "%llu ns", static_cast<unsigned long long>(ns));
  } else if (ns < 1000000) {
    std::snprintf(text, sizeof text, "%.1f us", value / 1e3);
  } else if (ns < 1000000000) {
    std::snprintf(text, sizeof text, "%.1f ms", value / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.2f s", value / 1e9);
  }
  return text;
}

void WriteAllocationHeaderText(const AllocationSummary& summary, std::ostream& out) {
  const AllocationProfileHeader& header = summary.header;
  out << "Allocation profile of pid " << header.pid << ": window "
      << HumanDuration(header.window_ns()) << " (requested "
      << HumanDuration(header.window_requested_ms * 1000000) << ", ended by "
      << WindowEndName(header.ended_by) << ")\n";
  out << "Records: " << summary.records_in_window << " sampled allocations in the window";
  if (summary.records != summary.records_in_window) {
    out << " (" << summary.records - summary.records_in_window << " after it ignored)";
  }
  out << "; sample interval " << header.sample_interval << " B; clock " << header.clock
      << " (resolution " << HumanDuration(header.clock_resolution_ns) << ")\n";
  if (header.records_lost) {
    out << "Warning: records_lost: jemalloc's record ring (record_bound " << header.record_bound
        << ") filled and dropped the oldest records: the profile covers only the last "
        << HumanDuration(summary.covered_ns) << " of the window, from its first record on\n";
  }
}

nlohmann::ordered_json AllocationHeaderJson(const AllocationSummary& summary) {
  const AllocationProfileHeader& header = summary.header;
  nlohmann::ordered_json json;
  json["pid"] = header.pid;
  json["window_start_unix_ms"] = header.window_start_unix_ms;
  json["window_ns"] = header.window_ns();
  json["window_requested_ms"] = header.window_requested_ms;
  json["ended_by"] = WindowEndName(header.ended_by);
  json["records"] = summary.records;
  json["records_in_window"] = summary.records_in_window;
  json["records_lost"] = header.records_lost;
  json["covered_ns"] = summary.covered_ns;
  json["sample_interval"] = header.sample_interval;
  json["record_bound"] = header.record_bound;
  json["clock"] = header.clock;
  json["clock_resolution_ns"] = header.clock_resolution_ns;
  return json;
}

}  // namespace memprof::report::render
