#ifndef MEMPROF_CLI_REPORT_RENDER_REPORT_FORMAT_H_
#define MEMPROF_CLI_REPORT_RENDER_REPORT_FORMAT_H_

#include <cstdint>
#include <string>

#include "cli/report/model/profile.h"

namespace memprof::report::render {

// jeprof's number formatting, so our tables read like (and diff cleanly
// against) `jeprof --text`.

// Perl's sprintf("%d", $x) for a double: truncates toward zero, with Perl's
// wrap-around above 2^63.
int64_t PerlInteger(double value);

// Unparse: objects as integers; bytes as MiB with one decimal ("%.1f" of
// value / 1048576), or as integer bytes with `show_bytes` (--show_bytes).
std::string FormatValue(double value, Metric metric, bool show_bytes);

// Units: "objects", "MiB" or "B".
std::string UnitName(Metric metric, bool show_bytes);

// Percent: "%.1f%%" of value/total, or "nan" / "+inf" / "-inf" when total is 0.
std::string FormatPercent(double value, double total);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_REPORT_FORMAT_H_
