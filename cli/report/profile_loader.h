#ifndef MEMPROF_CLI_REPORT_PROFILE_LOADER_H_
#define MEMPROF_CLI_REPORT_PROFILE_LOADER_H_

#include <string>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "common/result.h"

namespace memprof::report {

// Parses and unsamples one heap profile, jemalloc's or gperftools' (errors:
// see ParseHeapDumpFile); `observer` sees each stack as it is parsed, and
// `merged` gets the records that Unsample merged into earlier ones.
[[nodiscard]] Result<report::HeapProfile> LoadProfile(
    const std::string& path, const report::parse::StackObserver& observer = {},
    std::vector<size_t>* merged = nullptr);

// Loads `paths` side by side on a few threads; the profiles come back in the
// order of `paths`. On failure, the error of the first failing path in that
// order, so the message does not depend on thread timing.
[[nodiscard]] Result<std::vector<report::HeapProfile>> LoadProfiles(
    const std::vector<std::string>& paths);

// The MAPPED_LIBRARIES: lines at the end of the dump at `path`, read from
// its last megabyte without parsing the rest, so that symbolization can
// start while the dump is parsed (an allocation profile's final "--- end"
// line is left out). Empty when there is no such section there
// (or no file). A guess: the caller compares it with what the parser found.
std::vector<std::string> PeekMappedLibraries(const std::string& path);

// At most this many threads for reading or symbolizing: a report has a few
// big inputs to read and a few big files to symbolize, so more would mostly
// wait.
unsigned ReportThreadCount();

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_PROFILE_LOADER_H_
