#include "cli/report/render/flame_colors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace memprof::report::render {
namespace {

constexpr std::string_view kInlineSuffix = "[inline]";

// FNV-1a of the function's name, the "[inline]" mark left out so that a
// function has one colour whether or not it was inlined.
uint32_t NameHash(std::string_view name) {
  if (name.ends_with(kInlineSuffix)) name.remove_suffix(kInlineSuffix.size());
  uint32_t hash = 2166136261u;
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return hash;
}

std::string Hsl(int hue, int saturation, int lightness) {
  char buffer[48] = {};
  std::snprintf(buffer, sizeof(buffer), "hsl(%d,%d%%,%d%%)", hue, saturation, lightness);
  return buffer;
}

}  // namespace

std::string FrameFill(std::string_view name, FrameKind kind) {
  uint32_t hash = NameHash(name);
  int a = static_cast<int>(hash % 1000);
  int b = static_cast<int>((hash / 1000) % 1000);
  switch (kind) {
    case FrameKind::kApp:  // red through orange to yellow
      return Hsl(a * 52 / 1000, 78 + b * 17 / 1000, 56 + (a + b) % 10);
    case FrameKind::kRuntime:  // cyan to blue
      return Hsl(190 + a * 30 / 1000, 52 + b * 18 / 1000, 64 + (a + b) % 8);
    case FrameKind::kUnknown:
      return Hsl(0, 0, 70 + a % 9);
    case FrameKind::kMerged:
      return "hsl(0,0%,88%)";
    case FrameKind::kRoot:
      return "hsl(35,15%,78%)";
  }
  return "hsl(0,0%,88%)";
}

ChangeFamily FamilyOf(double change) {
  if (change > 0) return ChangeFamily::kGrowth;
  if (change < 0) return ChangeFamily::kShrinkage;
  return ChangeFamily::kNone;
}

double ChangeIntensity(double change, double max_abs_change) {
  if (!(max_abs_change > 0)) return 0;
  return std::sqrt(std::clamp(std::fabs(change) / max_abs_change, 0.0, 1.0));
}

// Growth runs from a pale orange to a deep red, shrinkage from a pale sky
// blue to a deep blue: hue and lightness both move, so the two families
// stay apart even for readers who tell red from blue poorly.
std::string DiffFill(double change, double max_abs_change) {
  double t = ChangeIntensity(change, max_abs_change);
  int lightness = static_cast<int>(std::lround(86 - 36 * t));
  switch (FamilyOf(change)) {
    case ChangeFamily::kGrowth:
      return Hsl(static_cast<int>(std::lround(36 - 36 * t)), 90, lightness);
    case ChangeFamily::kShrinkage:
      return Hsl(static_cast<int>(std::lround(198 + 24 * t)), 80, lightness);
    case ChangeFamily::kNone:
      break;
  }
  return "hsl(0,0%,86%)";
}

}  // namespace memprof::report::render
