#include "cli/client/capture_format.h"

#include "cli/io/human_format.h"

namespace memprof::cli {

namespace {

bool NearLimit(const memprof::v1::CaptureInfo& info) {
  return info.trigger() == memprof::v1::CAPTURE_TRIGGER_NEAR_LIMIT;
}

std::string Percent(uint64_t usage, uint64_t limit) {
  return std::to_string(limit == 0 ? 0 : usage / (limit / 100 + (limit < 100 ? 1 : 0))) + "%";
}

// "92% of 64.0 MiB" for a share of a limit.
std::string ShareOf(uint64_t usage, uint64_t limit) {
  return Percent(usage, limit) + " of " + FormatBytes(limit);
}

}  // namespace

nlohmann::json CaptureInfoToJson(const memprof::v1::CaptureInfo& info) {
  return {{"sequence", info.sequence()},
          {"created_unix_ms", info.created_unix_ms()},
          {"allocated_bytes", info.allocated_bytes()},
          {"size_bytes", info.size_bytes()},
          {"trigger", NearLimit(info) ? "near_limit" : "growth"},
          {"cgroup_usage_bytes", info.cgroup_usage_bytes()},
          {"cgroup_limit_bytes", info.cgroup_limit_bytes()}};
}

nlohmann::json MemoryLimitToJson(const memprof::v1::MemoryLimit& limit) {
  return {{"cgroup_version", limit.cgroup_version()},
          {"cgroup", limit.cgroup()},
          {"source", limit.source()},
          {"limit_bytes", limit.limit_bytes()},
          {"usage_bytes", limit.usage_bytes()}};
}

std::string DescribeMemoryLimit(const memprof::v1::MemoryLimit& limit) {
  return FormatBytes(limit.usage_bytes()) + " used of " + FormatBytes(limit.limit_bytes()) + " (" +
         Percent(limit.usage_bytes(), limit.limit_bytes()) + "; cgroup v" + std::to_string(limit.cgroup_version()) + " " + limit.source() + " of " +
         limit.cgroup() + ")";
}

nlohmann::json CaptureStateToJson(const memprof::v1::CaptureState& state) {
  nlohmann::json held = nlohmann::json::array();
  for (const auto& info : state.held()) held.push_back(CaptureInfoToJson(info));
  return {{"armed", state.armed()},
          {"growth_bytes", state.growth_bytes()},
          {"keep", state.keep()},
          {"high_water_bytes", state.high_water_bytes()},
          {"taken_total", state.taken_total()},
          {"held", held},
          {"near_limit_percent", state.near_limit_percent()},
          {"next_near_limit_percent", state.next_near_limit_percent()}};
}

std::string DescribeCaptureState(const memprof::v1::CaptureState& state) {
  const std::string taken = std::to_string(state.taken_total()) + " taken, " +
                            std::to_string(state.held_size()) + " held";
  if (!state.armed()) return "not armed; " + taken;
  std::vector<std::string> triggers;
  if (state.growth_bytes() != 0) {
    triggers.push_back("each time allocated bytes grow " + FormatBytes(state.growth_bytes()) +
                       " past the high-water mark (now " + FormatBytes(state.high_water_bytes()) +
                       ")");
  }
  if (state.near_limit_percent() != 0) {
    triggers.push_back("when the memory cgroup's usage reaches " +
                       std::to_string(state.next_near_limit_percent()) +
                       "% of its limit (from " + std::to_string(state.near_limit_percent()) +
                       "%, every further 2%)");
  }
  std::string text = "armed: a heap profile ";
  for (size_t i = 0; i < triggers.size(); ++i) text += (i == 0 ? "" : ", and ") + triggers[i];
  return text + "; keeps the last " + std::to_string(state.keep()) + "; " + taken;
}

std::vector<std::string> DescribeHeldCaptures(const memprof::v1::CaptureState& state) {
  std::vector<std::string> lines;
  for (const auto& info : state.held()) {
    lines.push_back("#" + std::to_string(info.sequence()) + "  " +
                    FormatLocalTime(info.created_unix_ms()) + "  allocated " +
                    FormatBytes(info.allocated_bytes()) + "  profile " +
                    FormatBytes(info.size_bytes()) +
                    (NearLimit(info) ? "  near limit: " + ShareOf(info.cgroup_usage_bytes(),
                                                                  info.cgroup_limit_bytes())
                                     : std::string()));
  }
  return lines;
}

}  // namespace memprof::cli
