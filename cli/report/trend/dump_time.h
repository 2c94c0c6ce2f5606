#ifndef MEMPROF_CLI_REPORT_TREND_DUMP_TIME_H_
#define MEMPROF_CLI_REPORT_TREND_DUMP_TIME_H_

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::report::trend {

// When a dump was taken, and where that came from.
struct DumpTime {
  double seconds = 0;  // since the Unix epoch, UTC
  enum class Source { kFileName, kModified } source = Source::kFileName;
};

// "file name" or "mtime".
std::string_view SourceName(DumpTime::Source source);

// The time in a name `dump --out-dir` writes ("web1-1234-20261122T211530Z.heap",
// also with a "-N" attempt suffix): the last component's
// "-YYYYMMDDTHHMMSSZ" before "." or "-N.". nullopt when there is none or it
// is not a real date. Whole seconds.
std::optional<double> TimeFromDumpFileName(std::string_view path);

// A heap_v2 dump records no time of its own. The name's timestamp is
// preferred (it survives copies, which reset the mtime); otherwise the file's
// mtime. kNotFound when the file cannot be stat'ed.
[[nodiscard]] Result<DumpTime> ReadDumpTime(const std::string& path);

}  // namespace memprof::report::trend

#endif  // MEMPROF_CLI_REPORT_TREND_DUMP_TIME_H_
