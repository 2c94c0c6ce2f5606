#ifndef MEMPROF_CLI_REPORT_RENDER_FLAME_COLORS_H_
#define MEMPROF_CLI_REPORT_RENDER_FLAME_COLORS_H_

#include <string>
#include <string_view>

#include "cli/report/render/flame_graph.h"

namespace memprof::report::render {

// The fill of a frame of an ordinary flame graph: deterministic per name,
// so the same function keeps its colour across runs and files; warm for
// the program's code, blue for the runtime, grey for unknown frames.
std::string FrameFill(std::string_view name, FrameKind kind);

// Which way a frame of a differential flame graph changed, by the sign of
// its net change.
enum class ChangeFamily { kGrowth, kShrinkage, kNone };

ChangeFamily FamilyOf(double change);

// How strongly a change is coloured, 0 (faint) to 1: the square root of its
// share of the largest change, so that a change a hundredth of the biggest
// is still visibly tinted (on a linear scale all but the top few frames
// would look white).
double ChangeIntensity(double change, double max_abs_change);

// The fill of a frame of a differential flame graph: reds and oranges for
// growth, blues for shrinkage, darker the larger the change, and a neutral
// grey for no net change. Light enough everywhere for black labels.
std::string DiffFill(double change, double max_abs_change);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_FLAME_COLORS_H_
