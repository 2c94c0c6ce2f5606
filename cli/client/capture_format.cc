#include "cli/client/capture_format.h"

#include "cli/io/human_format.h"

namespace memprof::cli {

nlohmann::json CaptureInfoToJson(const memprof::v1::CaptureInfo& info) {
  return {{"sequence", info.sequence()},
          {"created_unix_ms", info.created_unix_ms()},
          {"allocated_bytes", info.allocated_bytes()},
          {"size_bytes", info.size_bytes()}};
}

nlohmann::json CaptureStateToJson(const memprof::v1::CaptureState& state) {
  nlohmann::json held = nlohmann::json::array();
  for (const auto& info : state.held()) held.push_back(CaptureInfoToJson(info));
  return {{"armed", state.armed()},
          {"growth_bytes", state.growth_bytes()},
          {"keep", state.keep()},
          {"high_water_bytes", state.high_water_bytes()},
          {"taken_total", state.taken_total()},
          {"held", held}};
}

std::string DescribeCaptureState(const memprof::v1::CaptureState& state) {
  const std::string taken = std::to_string(state.taken_total()) + " taken, " +
                            std::to_string(state.held_size()) + " held";
  if (!state.armed()) return "not armed; " + taken;
  return "armed: a heap profile each time allocated bytes grow " +
         FormatBytes(state.growth_bytes()) + " past the high-water mark (now " +
         FormatBytes(state.high_water_bytes()) + "); keeps the last " +
         std::to_string(state.keep()) + "; " + taken;
}

std::vector<std::string> DescribeHeldCaptures(const memprof::v1::CaptureState& state) {
  std::vector<std::string> lines;
  for (const auto& info : state.held()) {
    lines.push_back("#" + std::to_string(info.sequence()) + "  " +
                    FormatLocalTime(info.created_unix_ms()) + "  allocated " +
                    FormatBytes(info.allocated_bytes()) + "  profile " +
                    FormatBytes(info.size_bytes()));
  }
  return lines;
}

}  // namespace memprof::cli
