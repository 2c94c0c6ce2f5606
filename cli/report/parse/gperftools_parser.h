#ifndef MEMPROF_CLI_REPORT_PARSE_GPERFTOOLS_PARSER_H_
#define MEMPROF_CLI_REPORT_PARSE_GPERFTOOLS_PARSER_H_

#include <istream>
#include <string>
#include <string_view>

#include "cli/report/parse/heap_v2_parser.h"
#include "common/result.h"

namespace memprof::report::parse {

// gperftools' (tcmalloc's) heap profiles, the two forms it writes:
//   heap profile: <objs>: <bytes> [<objs>: <bytes>] @ heapprofile
//     the heap profiler (HeapProfilerStart, GetHeapProfile, HEAPPROFILE=):
//     exact counts in use, then allocated since the start in brackets;
//     DumpFormat::kGperftoolsHeapProfile, sample_period 1 (pprof's period
//     for it), accumulated counts kept.
//   heap profile: <objs>: <bytes> [<objs>: <bytes>] @ heap_v2/<period>
//     tcmalloc's sampler (MallocExtension::GetHeapSample with
//     TCMALLOC_SAMPLE_PARAMETER=<period>): sampled counts, the brackets
//     repeat them; DumpFormat::kGperftoolsHeapSample, accumulated counts
//     left zero (there are none).
// then one "<objs>: <bytes> [<objs>: <bytes>] @ 0x<addr> ..." line per stack
// and the MAPPED_LIBRARIES section. Same limits, errors and guarantees as
// ParseHeapV2: "<source_name>:<line>: <what>", kInvalidArgument for malformed
// content and for a profile that ends early ("...: truncated at byte N
// (line L)"); never throws.
[[nodiscard]] Result<HeapDump> ParseGperftools(std::istream& in, std::string_view source_name,
                                               const ParseLimits& limits = {});

// The same over a profile already in memory, parsed in place.
[[nodiscard]] Result<HeapDump> ParseGperftoolsText(std::string_view text,
                                                   std::string_view source_name,
                                                   const ParseLimits& limits = {},
                                                   const StackObserver& observer = {});

// The same over the lines `reader` reads (line_reader.h).
[[nodiscard]] Result<HeapDump> ParseGperftoolsLines(FileLineReader& reader,
                                                    std::string_view source_name,
                                                    const ParseLimits& limits = {},
                                                    const StackObserver& observer = {});

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_GPERFTOOLS_PARSER_H_
