#include "cli/exporter/prometheus_renderer.h"

#include <cstdio>
#include <functional>
#include <optional>

namespace memprof::cli {
namespace {

constexpr char kReplacementCharacter[] = "\xEF\xBF\xBD";  // U+FFFD

// A metric family: its name, its HELP, whether it carries the allocator
// label, its value for a target (nullopt: no sample for that target), and
// its type (a gauge unless it says otherwise).
struct Family {
  const char* name;
  const char* help;
  bool with_allocator;
  std::function<std::optional<uint64_t>(const TargetMetrics&)> value;
  const char* type = "gauge";
};

std::optional<uint64_t> WhenUp(const TargetMetrics& t, uint64_t value) {
  if (!t.up) return std::nullopt;
  return value;
}

std::function<std::optional<uint64_t>(const TargetMetrics&)> JemallocFigure(
    uint64_t MemoryFigures::*figure) {
  return [figure](const TargetMetrics& t) -> std::optional<uint64_t> {
    if (!t.up || t.allocator != "jemalloc") return std::nullopt;
    return t.figures.*figure;
  };
}

const std::vector<Family>& Families() {
  static const std::vector<Family> kFamilies = {
      {"memprof_up", "1 if the memprof agent of the process answered this scrape, 0 if not.",
       false, [](const TargetMetrics& t) -> std::optional<uint64_t> { return t.up ? 1 : 0; }},
      {"memprof_profiling_active",
       "1 while heap profiling samples allocations in the process (jemalloc prof.active).", true,
       [](const TargetMetrics& t) { return WhenUp(t, t.profiling_active ? 1 : 0); }},
      {"memprof_process_resident_bytes", "Resident set size of the whole process (VmRSS).", true,
       [](const TargetMetrics& t) { return WhenUp(t, t.figures.rss_bytes); }},
      {"memprof_jemalloc_allocated_bytes",
       "Bytes in live allocations (jemalloc stats.allocated).", true,
       JemallocFigure(&MemoryFigures::allocated)},
      {"memprof_jemalloc_active_bytes",
       "Bytes in active pages holding live allocations (jemalloc stats.active).", true,
       JemallocFigure(&MemoryFigures::active)},
      {"memprof_jemalloc_resident_bytes",
       "Bytes of allocator memory resident in RAM (jemalloc stats.resident).", true,
       JemallocFigure(&MemoryFigures::resident)},
      {"memprof_jemalloc_mapped_bytes",
       "Bytes in extents mapped by the allocator (jemalloc stats.mapped).", true,
       JemallocFigure(&MemoryFigures::mapped)},
      {"memprof_jemalloc_retained_bytes",
       "Bytes of virtual memory kept for reuse, not returned to the OS (jemalloc stats.retained).",
       true, JemallocFigure(&MemoryFigures::retained)},
      {"memprof_jemalloc_metadata_bytes",
       "Bytes of the allocator's own bookkeeping (jemalloc stats.metadata).", true,
       JemallocFigure(&MemoryFigures::metadata)},
      {"memprof_captures_held",
       "Peak captures (heap profiles taken at new high-water marks) the agent holds now.", false,
       [](const TargetMetrics& t) { return t.up ? t.captures_held : std::nullopt; }},
      {"memprof_captures_taken_total",
       "Peak captures the agent has taken since the process started.", false,
       [](const TargetMetrics& t) { return t.up ? t.captures_taken_total : std::nullopt; },
       "counter"},
  };
  return kFamilies;
}

std::string Labels(const TargetMetrics& t, bool with_allocator) {
  std::string out = "{pid=\"" + std::to_string(t.pid) + "\",command=\"" +
                    EscapeLabelValue(t.command) + "\"";
  if (with_allocator) out += ",allocator=\"" + EscapeLabelValue(t.allocator) + "\"";
  return out + "}";
}

void RenderFamily(const Family& family, const std::vector<TargetMetrics>& targets,
                  std::string& out) {
  std::string samples;
  for (const TargetMetrics& t : targets) {
    const std::optional<uint64_t> value = family.value(t);
    if (!value) continue;
    samples += family.name + Labels(t, family.with_allocator) + " " + std::to_string(*value) +
               "\n";
  }
  if (samples.empty()) return;
  out += std::string("# HELP ") + family.name + " " + EscapeHelpText(family.help) + "\n";
  out += std::string("# TYPE ") + family.name + " " + family.type + "\n";
  out += samples;
}

// Length of the valid UTF-8 sequence at the start of `s`, 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    if (length == 0) {
      out += kReplacementCharacter;
      text.remove_prefix(1);
      continue;
    }
    out.append(text.substr(0, length));
    text.remove_prefix(length);
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : ValidUtf8(value)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelpText(std::string_view text) {
  std::string out;
  for (char c : ValidUtf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderPrometheus(const std::vector<TargetMetrics>& targets) {
  std::string out;
  for (const Family& family : Families()) RenderFamily(family, targets, out);
  return out;
}

std::string RenderExporterMetrics(std::string_view version, double scrape_seconds) {
  char duration[32];
  std::snprintf(duration, sizeof(duration), "%.6f", scrape_seconds);
  return "# HELP memprof_build_info The memprofctl serving this exporter; always 1.\n"
         "# TYPE memprof_build_info gauge\n"
         "memprof_build_info{version=\"" +
         EscapeLabelValue(version) +
         "\"} 1\n"
         "# HELP memprof_scrape_duration_seconds How long this scrape took to ask every "
         "target.\n"
         "# TYPE memprof_scrape_duration_seconds gauge\n"
         "memprof_scrape_duration_seconds " +
         duration + "\n";
}

}  // namespace memprof::cli
