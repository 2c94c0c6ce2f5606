#include "cli/report/render/svg_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "cli/report/render/diff_svg.h"
#include "cli/report/render/flame_colors.h"
#include "cli/report/render/flame_graph_script.h"
#include "cli/report/render/xml_text.h"

namespace memprof::report::render {
namespace {

constexpr double kPadX = 10;
constexpr double kRowHeight = 16;
constexpr std::string_view kRectHeight = "15";  // a row less a pixel of gap
constexpr double kHeaderHeight = 62;
constexpr double kFooterHeight = 30;
// The stylesheet's 12px monospace font: 0.6 em per character.
constexpr double kCharWidth = 7.2;
// The title's font (#title in the stylesheet), and the smallest it shrinks to.
constexpr double kTitleFontPx = 17;
constexpr double kMinTitleFontPx = 11;

// Where things go, in pixels. Row 0 (the root) is the bottom row.
struct Geometry {
  double width = 0;
  double height = 0;
  double px_per_value = 0;
  double root_y = 0;  // top edge of the root's row

  double RowY(uint32_t depth) const { return root_y - depth * kRowHeight; }
};

Geometry MakeGeometry(const FlameGraph& graph, const FlameLayout& layout,
                      const SvgOptions& options) {
  Geometry geometry;
  geometry.width = std::max(options.width, 4 * kPadX);
  double header = kHeaderHeight + (graph.is_diff ? kDiffLegendHeight : 0);
  geometry.height = header + (layout.max_depth + 1) * kRowHeight + kFooterHeight;
  double total = graph.root().value;
  geometry.px_per_value = total > 0 ? (geometry.width - 2 * kPadX) / total : 0;
  geometry.root_y = geometry.height - kFooterHeight - kRowHeight;
  return geometry;
}

// `value` with `decimals` digits after the point (C locale: '.' always).
// std::to_chars with a precision is specified as printf in the C locale, at
// a fraction of its cost (thousands of frames, several numbers each); printf
// keeps the spelling of NaN and infinity. 400 bytes hold any double.
std::string Fixed(double value, int decimals) {
  char buffer[400];
  if (std::isfinite(value)) {
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed,
                                decimals);
    return std::string(buffer, result.ptr);
  }
  int length = std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return std::string(buffer, static_cast<size_t>(std::clamp(length, 0, 399)));
}

// Up to 10 significant digits (printf's %.10g): exact enough for a value
// the script shows in human units, and short.
std::string General(double value) {
  char buffer[64];
  if (std::isfinite(value)) {
    auto result =
        std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, 10);
    return std::string(buffer, result.ptr);
  }
  int length = std::snprintf(buffer, sizeof(buffer), "%.10g", value);
  return std::string(buffer, static_cast<size_t>(std::clamp(length, 0, 63)));
}

// "1,234,567": objects are counts, and counts read better grouped.
std::string GroupedInteger(double value) {
  const std::string digits = Fixed(std::fabs(value), 0);
  std::string grouped = value <= -0.5 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

// What fits in `width` pixels of monospace text; the script cuts alike.
std::string FrameLabel(std::string_view safe_name, double width) {
  double fit = std::floor((width - 6) / kCharWidth);
  if (fit >= static_cast<double>(Utf8Length(safe_name))) return std::string(safe_name);
  if (fit < 3) return "";
  return std::string(Utf8Prefix(safe_name, static_cast<size_t>(fit) - 2)) + "..";
}

std::string MetricDescription(Metric metric) {
  switch (metric) {
    case Metric::kInuseSpace:
      return "in-use space";
    case Metric::kInuseObjects:
      return "in-use objects";
    case Metric::kAllocSpace:
      return "allocated space";
    case Metric::kAllocObjects:
      return "allocated objects";
  }
  return "";
}

std::string SvgPercent(double value, double total) {
  return total > 0 ? Fixed(100 * value / total, 2) + "%" : "n/a";
}

std::string RectName(const FlameGraph& graph, const FlameRect& rect) {
  if (rect.node != FlameRect::kMergedNode) return graph.name(graph.nodes[rect.node]);
  return "[" + std::to_string(rect.merged_frames) + " small frames]";
}

void WriteOpening(const FlameGraph& graph, const FlameLayout& layout, const Geometry& geometry,
                  std::ostream& out) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""
      << " width=\"" << Fixed(geometry.width, 0) << "\" height=\"" << Fixed(geometry.height, 0)
      << "\" viewBox=\"0 0 " << Fixed(geometry.width, 0) << ' ' << Fixed(geometry.height, 0) << "\""
      << " data-total=\"" << General(graph.root().value) << "\" data-unit=\""
      << (IsObjectMetric(graph.metric) ? "objects" : "bytes") << "\" data-pad=\"" << General(kPadX)
      << "\" data-char-width=\"" << General(kCharWidth) << "\" data-frames=\""
      << layout.rects.size() << "\"" << (graph.is_diff ? " data-diff=\"1\"" : "") << ">\n"
      << "<style type=\"text/css\"><![CDATA[" << FlameGraphStyle() << "]]></style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f7f6f2\"/>\n";
}

// The second header line: what was drawn, and what the total leaves out.
std::string Subtitle(const FlameGraph& graph, const FlameLayout& layout,
                     const SvgOptions& options) {
  std::string text = GroupedInteger(static_cast<double>(layout.rects.size())) + " frames drawn";
  if (graph.is_diff) {
    // The root's width is growth plus shrinkage, not a total to compare
    // with the profile's; the two dumps' totals say more.
    text = "now " + HumanValue(graph.profile_total + graph.base_total, graph.metric) + ", base " +
           HumanValue(graph.base_total, graph.metric) + "; " + text;
  }
  if (layout.omitted_frames > 0) {
    text += ", " + GroupedInteger(static_cast<double>(layout.omitted_frames)) + " narrower than " +
            General(options.min_frame_fraction * 100) + "% merged or omitted";
  }
  if (!graph.is_diff && graph.root().value != graph.profile_total) {
    text += "; filters kept " + SvgPercent(graph.root().value, graph.profile_total) + " of " +
            HumanValue(graph.profile_total, graph.metric);
  }
  if (graph.negative_stacks > 0) {
    text += "; " + std::to_string(graph.negative_stacks) + " negative stacks not drawn";
  }
  return text;
}

// The title line, fitted to the width as laid out: centred text wider than
// the image is clipped at both ends, and a diff's ends hold the dump's name
// and the net change. A long title shrinks from 17px down to 11px, then
// loses the end of the name (marked "..."), never the figures after it.
struct FittedTitle {
  std::string text;
  double font_px = kTitleFontPx;
};

FittedTitle FitTitle(std::string_view name, const std::string& figures, double width) {
  const double room = width - 2 * kPadX;
  const double per_px = kCharWidth / 12;  // a glyph's width per pixel of font size
  const auto chars = static_cast<double>(Utf8Length(name) + Utf8Length(figures));
  const double px = std::min(kTitleFontPx, std::floor(room / (chars * per_px)));
  if (px >= kMinTitleFontPx) return {std::string(name) + figures, px};
  const double fit = std::floor(room / (kMinTitleFontPx * per_px));
  const double keep = fit - static_cast<double>(Utf8Length(figures)) - 3;
  std::string head(Utf8Prefix(name, keep > 0 ? static_cast<size_t>(keep) : 0));
  return {head + "..." + figures, kMinTitleFontPx};
}

void WriteHeader(const FlameGraph& graph, const FlameLayout& layout, const SvgOptions& options,
                 const Geometry& geometry, std::ostream& out) {
  std::string center = Fixed(geometry.width / 2, 1);
  std::string right = Fixed(geometry.width - kPadX, 1);
  const FittedTitle title =
      FitTitle(options.title,
               " \xE2\x80\x94 " + MetricDescription(graph.metric) +
                   (graph.is_diff ? " change " + DiffTitleSuffix(graph)
                                  : ", total " + HumanValue(graph.root().value, graph.metric)),
               geometry.width);
  out << "<text id=\"title\" x=\"" << center << "\" y=\"24\"";
  if (title.font_px != kTitleFontPx) out << " style=\"font-size:" << General(title.font_px) << "px\"";
  out << ">" << XmlEscape(title.text) << "</text>\n"
      << "<text id=\"subtitle\" x=\"" << center << "\" y=\"42\">"
      << XmlEscape(Subtitle(graph, layout, options)) << "</text>\n"
      << "<text id=\"reset\" class=\"btn\" x=\"" << kPadX << "\" y=\"42\">Reset zoom</text>\n"
      << "<text id=\"search\" class=\"btn\" x=\"" << right
      << "\" y=\"42\" text-anchor=\"end\">Search (Ctrl-F)</text>\n";
  if (graph.is_diff) WriteDiffLegend(kPadX, kHeaderHeight - 12, out);
}

// The tooltip's second line: the value and share, or in a diff the signed
// change and both sides.
std::string FrameDetail(const FlameGraph& graph, const FlameRect& rect) {
  if (graph.is_diff) return DiffDetail(rect.change, rect.base, graph.metric);
  return HumanValue(rect.value, graph.metric) + " (" + SvgPercent(rect.value, graph.root().value) +
         ")";
}

std::string Fill(const FlameGraph& graph, const FlameRect& rect, const std::string& name,
                 double max_change) {
  if (rect.node == FlameRect::kMergedNode) return FrameFill(name, FrameKind::kMerged);
  if (graph.is_diff) return DiffFill(rect.change, max_change);
  return FrameFill(name, graph.nodes[rect.node].kind);
}

// In a diff the frame's family as a class too, for stylesheets and tests.
std::string_view FamilyClass(const FlameGraph& graph, const FlameRect& rect) {
  if (!graph.is_diff || rect.node == FlameRect::kMergedNode) return "";
  switch (FamilyOf(rect.change)) {
    case ChangeFamily::kGrowth:
      return " grew";
    case ChangeFamily::kShrinkage:
      return " shrank";
    case ChangeFamily::kNone:
      break;
  }
  return " same";
}

void WriteFrame(const FlameGraph& graph, const FlameRect& rect, const Geometry& geometry,
                double max_change, std::ostream& out) {
  bool merged = rect.node == FlameRect::kMergedNode;
  std::string name = XmlSafeText(RectName(graph, rect));
  double x = kPadX + rect.offset * geometry.px_per_value;
  double width = rect.value * geometry.px_per_value;
  double y = geometry.RowY(rect.depth);
  out << "<g class=\"f" << (merged ? " m" : "") << FamilyClass(graph, rect) << "\" data-v=\""
      << General(rect.value) << "\" data-d=\"" << rect.depth << "\"><title>" << XmlEscape(name)
      << "&#10;" << FrameDetail(graph, rect) << "</title><rect x=\"" << Fixed(x, 2) << "\" y=\""
      << Fixed(y, 1) << "\" width=\"" << Fixed(width, 2) << "\" height=\"" << kRectHeight
      << "\" rx=\"2\" fill=\"" << Fill(graph, rect, name, max_change) << "\"/><text x=\""
      << Fixed(x + 3, 2) << "\" y=\"" << Fixed(y + 11.5, 1) << "\">"
      << XmlEscape(FrameLabel(name, width)) << "</text></g>\n";
}

void WriteFooter(const Geometry& geometry, std::ostream& out) {
  std::string y = Fixed(geometry.height - 10, 1);
  out << "<text id=\"details\" x=\"" << kPadX << "\" y=\"" << y
      << "\">Hover: details. Click: zoom. Ctrl-F or /: search. Esc: reset.</text>\n"
      << "<text id=\"matched\" x=\"" << Fixed(geometry.width - kPadX, 1) << "\" y=\"" << y
      << "\"></text>\n";
}

}  // namespace

std::string HumanValue(double value, Metric metric) {
  if (IsObjectMetric(metric)) return GroupedInteger(value) + " objects";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (std::fabs(value) >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return Fixed(value, unit == 0 ? 0 : 1) + " " + kUnits[unit];
}

void WriteFlameGraphSvg(const FlameGraph& graph, const FlameLayout& layout,
                        const SvgOptions& options, std::ostream& out) {
  Geometry geometry = MakeGeometry(graph, layout, options);
  WriteOpening(graph, layout, geometry, out);
  WriteHeader(graph, layout, options, geometry, out);
  out << "<g id=\"frames\">\n";
  const double max_change = graph.is_diff ? MaxAbsChange(graph) : 0;
  for (const FlameRect& rect : layout.rects) WriteFrame(graph, rect, geometry, max_change, out);
  out << "</g>\n";
  WriteFooter(geometry, out);
  out << "<script type=\"text/ecmascript\"><![CDATA[" << FlameGraphScript() << "]]></script>\n";
  if (graph.is_diff) {
    out << "<script type=\"text/ecmascript\"><![CDATA[" << FlameGraphDiffScript()
        << "]]></script>\n";
  }
  out << "</svg>\n";
}

Result<void> SvgReportRenderer::Render(const aggregate::Aggregation& aggregation,
                                       std::ostream& out) const {
  FlameGraph graph = BuildFlameGraph(aggregation, options_.min_frame_fraction);
  FlameLayout layout = LayoutFlameGraph(graph, options_.min_frame_fraction);
  WriteFlameGraphSvg(graph, layout, options_, out);
  return CheckWritten(out);
}

}  // namespace memprof::report::render
