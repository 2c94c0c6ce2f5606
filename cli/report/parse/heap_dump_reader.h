#ifndef MEMPROF_CLI_REPORT_PARSE_HEAP_DUMP_READER_H_
#define MEMPROF_CLI_REPORT_PARSE_HEAP_DUMP_READER_H_

#include <string>
#include <string_view>

#include "cli/report/parse/heap_v2_parser.h"
#include "common/result.h"

namespace memprof::report::parse {

// Any heap profile `memprofctl report` reads, told apart by its first line:
// "heap_v2/<period>" is jemalloc's (ParseHeapV2Text), "heap profile: ..."
// gperftools' (ParseGperftoolsText). Any other first line is an Error
// "<source_name>:1: ..." (kInvalidArgument) naming both; otherwise the
// chosen parser's errors.
[[nodiscard]] Result<HeapDump> ParseHeapDumpText(std::string_view text,
                                                 std::string_view source_name,
                                                 const ParseLimits& limits = {},
                                                 const StackObserver& observer = {});

// Reads `path` through a buffer (FileLineReader) and parses it as
// ParseHeapDumpText does; the path
// names the errors. A gzip'd file (magic 1f 8b) is inflated first, up to
// limits.max_gunzipped_bytes (gzip_input.h); the line numbers and byte
// offsets of errors are then those of the inflated text. `observer` sees
// each stack as it is parsed.
[[nodiscard]] Result<HeapDump> ParseHeapDumpFile(const std::string& path,
                                                 const ParseLimits& limits = {},
                                                 const StackObserver& observer = {});

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_HEAP_DUMP_READER_H_
