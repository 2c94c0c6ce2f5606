#ifndef MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_SCRIPT_H_
#define MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_SCRIPT_H_

#include <string_view>

namespace memprof::report::render {

// The stylesheet and the script the svg flame graph embeds, so the file
// needs nothing but a browser: no external resources, no network.
//
// The script reads what svg_report.cc writes: on the root <svg>, data-total,
// data-unit ("bytes" or "objects"), data-pad and data-char-width; per frame
// a <g class="f"> (plus "m" when merged) with data-v (value) and data-d
// (depth) holding a <title> ("name\nvalue (share)"), a <rect> and a <text>;
// and the elements #details, #matched, #reset and #search. When it has
// initialized it sets data-flamegraph-ready="<frames>" on the <svg>, and
// an uncaught error sets data-flamegraph-error, which the browser test
// reads back. The URL fragment "#search=<regex>&zoom=<frame index>" applies
// a search and a zoom at load time (for links, and for that test).
std::string_view FlameGraphStyle();
std::string_view FlameGraphScript();

// The second script of a differential flame graph (data-diff="1"), after
// the first: the hover line then reads "name: +1.2 MiB (now 3.4 MiB, base
// 2.2 MiB)", the second line of the frame's <title>. A separate script
// rather than a mode of the first, so that an ordinary flame graph stays
// byte for byte what it was. It listens after the first script's handler
// and so has the last word; once set up it sets data-diff-ready="<frames>"
// with the numbers of frames that grew and shrank in data-diff-grew and
// data-diff-shrank.
std::string_view FlameGraphDiffScript();

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_SCRIPT_H_
