#ifndef MEMPROF_CLI_EXPORTER_HTML_PAGES_H_
#define MEMPROF_CLI_EXPORTER_HTML_PAGES_H_

#include <string>
#include <string_view>
#include <vector>

#include "cli/exporter/pprof_targets.h"

namespace memprof::cli {

inline constexpr char kHtmlContentType[] = "text/html; charset=utf-8";

// `text` for HTML text or a quoted attribute value: valid UTF-8 (invalid
// bytes become U+FFFD), with & < > " ' as character references.
std::string HtmlEscape(std::string_view text);

// GET /: what the exporter serves, with links.
std::string RenderLandingPage();

// GET /debug/pprof/: a table of the targets (pid, command, command line,
// profiling state) with links to their heap profiles, in the spirit of Go's
// net/http/pprof index. Everything a process controls is escaped.
std::string RenderPprofIndex(const std::vector<PprofTarget>& targets);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_HTML_PAGES_H_
