#include "cli/exporter/heap_query.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

namespace memprof::cli {
namespace {

constexpr char kHeapUsage[] =
    "ask /debug/pprof/pid/N/heap (or /debug/pprof/heap?pid=N), with seconds=S to profile S "
    "seconds first (the pids are listed at /debug/pprof/)";
constexpr char kAllocsUsage[] =
    "ask /debug/pprof/pid/N/allocs (or /debug/pprof/allocs?pid=N), with seconds=S for a window "
    "of S seconds (default 30) (the pids are listed at /debug/pprof/)";

// A decimal number without sign, spaces or trailing bytes.
std::optional<int64_t> WholeNumber(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

size_t Count(const HttpRequest& request, const std::string& name) {
  return static_cast<size_t>(std::count_if(request.query.begin(), request.query.end(),
                                           [&](const auto& kv) { return kv.first == name; }));
}

Result<std::optional<std::chrono::seconds>> ParseSeconds(const HttpRequest& request) {
  const std::string* text = request.Argument("seconds");
  if (text == nullptr) return std::nullopt;
  const std::string range = "a whole number of seconds from " +
                            std::to_string(kMinHeapSeconds.count()) + " to " +
                            std::to_string(kMaxHeapSeconds.count());
  if (Count(request, "seconds") > 1) {
    return Fail(ErrorCode::kInvalidArgument, "seconds given twice: give it once, " + range);
  }
  const auto seconds = WholeNumber(*text);
  if (!seconds || *seconds < kMinHeapSeconds.count() || *seconds > kMaxHeapSeconds.count()) {
    return Fail(ErrorCode::kInvalidArgument, "seconds=" + *text + ": must be " + range);
  }
  return std::chrono::seconds(*seconds);
}

Result<HeapQuery> ParseProfileQuery(const HttpRequest& request, const char* usage) {
  auto pid = ParsePidArgument(request, usage);
  if (!pid) return Fail(pid.error());
  if (!*pid) return Fail(ErrorCode::kInvalidArgument, std::string("no pid: ") + usage);
  auto seconds = ParseSeconds(request);
  if (!seconds) return Fail(seconds.error());
  return HeapQuery{**pid, *seconds};
}

}  // namespace

Result<std::optional<pid_t>> ParsePidArgument(const HttpRequest& request, std::string_view usage) {
  const std::string* text = request.Argument("pid");
  if (text == nullptr) return std::nullopt;
  if (Count(request, "pid") > 1) {
    return Fail(ErrorCode::kInvalidArgument, "pid given twice: " + std::string(usage));
  }
  const auto pid = WholeNumber(*text);
  if (!pid || *pid < 1 || *pid > INT32_MAX) {
    return Fail(
        ErrorCode::kInvalidArgument,
        "pid=" + *text + " is not a process id (a number from 1 up): " + std::string(usage));
  }
  return static_cast<pid_t>(*pid);
}

Result<HeapQuery> ParseHeapQuery(const HttpRequest& request) {
  return ParseProfileQuery(request, kHeapUsage);
}

Result<HeapQuery> ParseAllocsQuery(const HttpRequest& request) {
  auto query = ParseProfileQuery(request, kAllocsUsage);
  if (query && !query->seconds) query->seconds = kDefaultAllocsSeconds;
  return query;
}

}  // namespace memprof::cli
