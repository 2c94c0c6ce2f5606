#include "cli/report/render/diff_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "cli/report/render/flame_colors.h"
#include "cli/report/render/svg_report.h"

namespace memprof::report::render {
namespace {

constexpr double kSwatch = 11;
constexpr double kCharWidth = 7.2;  // the stylesheet's 12px monospace font
// The intensities shown per family: faint, middle, strongest.
constexpr double kSwatchShares[] = {0.05, 0.3, 1.0};

std::string Px(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", value);
  return buffer;
}

// One swatch of `fill` at x; returns the x after it.
double WriteSwatch(double x, double y, const std::string& fill, std::string_view family,
                   std::ostream& out) {
  out << "<rect class=\"swatch\" data-family=\"" << family << "\" x=\"" << Px(x) << "\" y=\""
      << Px(y + 2) << "\" width=\"" << kSwatch << "\" height=\"" << kSwatch << "\" fill=\"" << fill
      << "\"/>";
  return x + kSwatch + 1;
}

double WriteLabel(double x, double y, std::string_view text, std::ostream& out) {
  out << "<text x=\"" << Px(x + 4) << "\" y=\"" << Px(y + 12) << "\">" << text << "</text>";
  return x + 4 + kCharWidth * static_cast<double>(text.size()) + 16;
}

}  // namespace

std::string SignedHumanValue(double value, Metric metric) {
  std::string sign = value > 0 ? "+" : value < 0 ? "-" : "";
  return sign + HumanValue(std::fabs(value), metric);
}

std::string DiffDetail(double change, double base, Metric metric) {
  return SignedHumanValue(change, metric) + " (now " + HumanValue(base + change, metric) +
         ", base " + HumanValue(base, metric) + ")";
}

std::string DiffTitleSuffix(const FlameGraph& graph) {
  return "(red: grew, blue: shrank), net " + SignedHumanValue(graph.change(0).change, graph.metric);
}

double MaxAbsChange(const FlameGraph& graph) {
  double max = 0;
  for (size_t n = 1; n < graph.changes.size(); ++n) {
    max = std::max(max, std::fabs(graph.changes[n].change));
  }
  return max;
}

void WriteDiffLegend(double x, double y, std::ostream& out) {
  out << "<g id=\"legend\">";
  for (double share : kSwatchShares) x = WriteSwatch(x, y, DiffFill(share, 1), "growth", out);
  x = WriteLabel(x, y, "grew", out);
  for (double share : kSwatchShares) x = WriteSwatch(x, y, DiffFill(-share, 1), "shrinkage", out);
  x = WriteLabel(x, y, "shrank", out);
  x = WriteSwatch(x, y, DiffFill(0, 1), "none", out);
  x = WriteLabel(x, y, "no net change", out);
  WriteLabel(x, y, "darker: larger change. Width: growth + shrinkage in a frame and its callees",
             out);
  out << "</g>\n";
}

}  // namespace memprof::report::render
