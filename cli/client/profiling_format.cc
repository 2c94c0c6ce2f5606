#include "cli/client/profiling_format.h"

#include <algorithm>
#include <cctype>

#include "cli/io/human_format.h"
#include "cli/launch/malloc_conf.h"

namespace memprof::cli {

std::string AllocatorName(memprof::v1::AllocatorKind kind) {
  switch (kind) {
    case memprof::v1::ALLOCATOR_KIND_JEMALLOC:
      return "jemalloc";
    case memprof::v1::ALLOCATOR_KIND_GLIBC:
      return "glibc";
    case memprof::v1::ALLOCATOR_KIND_TCMALLOC:
      return "tcmalloc";
    default:
      return "other";
  }
}

std::string AllocatorText(memprof::v1::AllocatorKind kind, const std::string& version) {
  const std::string name = AllocatorName(kind);
  if (version.empty()) return name;
  const bool named = version.size() >= name.size() &&
                     std::equal(name.begin(), name.end(), version.begin(), [](char a, char b) {
                       return std::tolower(static_cast<unsigned char>(a)) ==
                              std::tolower(static_cast<unsigned char>(b));
                     });
  if (named && (version.size() == name.size() || version[name.size()] == ' ')) return version;
  if (std::isdigit(static_cast<unsigned char>(version.front()))) return name + " " + version;
  return name + " (" + version + ")";
}

bool Profilable(memprof::v1::AllocatorKind kind) {
  return kind == memprof::v1::ALLOCATOR_KIND_JEMALLOC || kind == memprof::v1::ALLOCATOR_KIND_TCMALLOC;
}

std::string ProfilingState(const memprof::v1::StatusResponse& status) {
  if (status.sampler() == "memprof") {
    return status.profiling_active() ? "active (memprof)" : "inactive (memprof)";
  }
  if (!Profilable(status.allocator())) return "n/a";
  if (!status.profiling_supported()) return "unsupported";
  if (!status.profiling_enabled()) return "off";
  return status.profiling_active() ? "active" : "inactive";
}

namespace {

std::optional<std::string> TcmallocHint(const memprof::v1::StatusResponse& status) {
  if (!status.profiling_supported()) {
    return "this process uses libtcmalloc_minimal, which cannot sample allocations; restart it "
           "with libtcmalloc.so.4 (package libgoogle-perftools4), e.g. under `memprofctl run "
           "--allocator tcmalloc`";
  }
  if (!status.profiling_enabled()) {
    return std::string("tcmalloc was not sampling allocations when the process started; restart "
                       "it with ") +
           kTcmallocSampling + " (or use `memprofctl run --allocator tcmalloc`)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ProfilingHint(const memprof::v1::StatusResponse& status) {
  // memprof's own sampler serves: nothing to restart.
  if (status.sampler() == "memprof") return std::nullopt;
  if (status.allocator() == memprof::v1::ALLOCATOR_KIND_TCMALLOC) return TcmallocHint(status);
  if (status.allocator() != memprof::v1::ALLOCATOR_KIND_JEMALLOC) {
    return "the process does not use jemalloc (nor tcmalloc), so its heap cannot be profiled; "
           "restart it under `memprofctl run -- CMD`, which preloads jemalloc";
  }
  if (!status.profiling_supported()) {
    return "this jemalloc was built without profiling support (config.prof=false); restart the "
           "process with a jemalloc built with --enable-prof (Debian's libjemalloc2 is)";
  }
  if (!status.profiling_enabled()) {
    return std::string(
               "heap profiling was not enabled when the process started; restart it "
               "with MALLOC_CONF=") +
           kProfilingMallocConf + " (or use `memprofctl run`)";
  }
  return std::nullopt;
}

std::string DescribeWindowEnd(int64_t window_end_unix_ms,
                              std::chrono::system_clock::time_point now) {
  if (window_end_unix_ms == 0) return "until deactivated";
  return "until " + FormatLocalTime(window_end_unix_ms) + " (" +
         FormatRelative(window_end_unix_ms, now) + ")";
}

nlohmann::json ProfilingStateToJson(const memprof::v1::ProfilingState& state) {
  return {{"active", state.active()}, {"window_end_unix_ms", state.window_end_unix_ms()}};
}

}  // namespace memprof::cli
