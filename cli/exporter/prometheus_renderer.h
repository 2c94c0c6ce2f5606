#ifndef MEMPROF_CLI_EXPORTER_PROMETHEUS_RENDERER_H_
#define MEMPROF_CLI_EXPORTER_PROMETHEUS_RENDERER_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client/memory_figures.h"

namespace memprof::cli {

// What one target contributes to a Prometheus exposition. Plain data, filled
// by target_metrics.h from the agent's answers.
struct TargetMetrics {
  pid_t pid = 0;
  std::string command;    // the process name (comm): short, and free of arguments
  bool up = false;        // the agent answered; the other fields are meaningless if not
  std::string allocator;  // "jemalloc", "glibc", "other"
  bool profiling_active = false;
  MemoryFigures figures;
  // Peak capture (`activate --capture-growth`); nullopt from an agent that
  // predates it.
  std::optional<uint64_t> captures_held;
  std::optional<uint64_t> captures_taken_total;
};

// The Prometheus text exposition format (version 0.0.4) for `targets`: each
// metric family once, with # HELP and # TYPE, followed by one sample per
// target. Families:
//   memprof_up{pid,command}                       1 if the agent answered
//   memprof_profiling_active{pid,command,allocator}
//   memprof_process_resident_bytes{...}
//   memprof_jemalloc_{allocated,active,resident,mapped,retained,metadata}_bytes{...}
//   memprof_captures_held{pid,command}            peak captures the agent holds
//   memprof_captures_taken_total{pid,command}     a counter: peak captures taken
// The jemalloc families only carry jemalloc targets (a glibc process's
// mallinfo2 figures do not mean jemalloc's stats.*); a family without
// samples is left out. The content type to serve it with is
// kPrometheusContentType.
std::string RenderPrometheus(const std::vector<TargetMetrics>& targets);

// The exporter's own families, to follow RenderPrometheus in its /metrics:
//   memprof_build_info{version}                  1
//   memprof_scrape_duration_seconds              how long collecting the
//                                                targets' figures took
std::string RenderExporterMetrics(std::string_view version, double scrape_seconds);

inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A label value as the format wants it: UTF-8 (invalid bytes become
// U+FFFD), with backslash, double quote and line feed escaped.
std::string EscapeLabelValue(std::string_view value);

// HELP text: UTF-8, with backslash and line feed escaped.
std::string EscapeHelpText(std::string_view text);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_PROMETHEUS_RENDERER_H_
