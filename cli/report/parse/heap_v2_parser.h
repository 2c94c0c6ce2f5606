#ifndef MEMPROF_CLI_REPORT_PARSE_HEAP_V2_PARSER_H_
#define MEMPROF_CLI_REPORT_PARSE_HEAP_V2_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/parse/line_reader.h"
#include "common/result.h"

namespace memprof::report::parse {

// One "<objects>: <bytes>" pair of a dump, as sampled (not yet unsampled).
struct RawCounts {
  uint64_t objects = 0;
  uint64_t bytes = 0;
};

// What a `t*:` / `t<N>:` line carries: objects and bytes in use now, and the
// accumulated allocations in brackets (all zero unless opt.prof_accum is on).
struct CountLine {
  RawCounts inuse;
  RawCounts alloc;
};

// A per-thread summary line of the dump's header ("  t3: 1: 64 [0: 0] name").
struct ThreadSummary {
  uint64_t thread_id = 0;
  CountLine counts;
  std::string name;  // jemalloc's thread.prof.name, empty when unset
};

// One `@` stack of the dump and its `t*:` line. Per-thread lines of a stack
// are validated but not kept: no report needs them, and they multiply the
// memory of a dump by its number of threads.
struct StackRecord {
  std::vector<uint64_t> stack;  // raw return addresses, leaf first, as dumped
  CountLine counts;
};

// A parsed jemalloc heap_v2 dump, exactly as sampled. Records appear in
// file order and are not merged (unsampling merges, as jeprof does).
// gperftools' profiles (gperftools_parser.h) fill the same: no threads, and
// for its sampled form no accumulated counts.
struct HeapDump {
  DumpFormat format = DumpFormat::kJemalloc;
  uint64_t sample_period = 0;  // bytes; 2^lg_prof_sample (0 and 1 are legal)
  CountLine totals;            // the header's `t*:` line
  std::vector<ThreadSummary> threads;
  std::vector<StackRecord> records;
  std::vector<std::string> mapped_libraries;  // raw /proc/<pid>/maps lines
  std::optional<SamplerCoverage> sampler;     // "# memprof_sampler ..." after the header
};

// Bounds that keep a hostile or corrupt input from costing unbounded memory.
// The defaults are far above anything jemalloc writes (it keeps at most 128
// frames per stack; a maps line is at most a few KiB).
struct ParseLimits {
  size_t max_line_bytes = 64 * 1024;
  size_t max_frames = 1024;
  size_t max_records = size_t{1} << 26;
  size_t max_threads = size_t{1} << 20;
  size_t max_mapped_lines = size_t{1} << 20;
  // A gzip'd dump is inflated into memory before it is parsed (a plain one
  // is mapped); 4 GiB holds ten million stacks, and stops a gzip bomb.
  size_t max_gunzipped_bytes = size_t{4} << 30;
};

// Called with each stack as the parser meets it, before the rest of the
// dump is read (the report starts symbolizing its addresses meanwhile). A
// dump that turns out malformed later has had some of its stacks observed.
// The span is the record's own stack: it stays valid, unchanged, while the
// parse goes on (another thread may read it until the parse returns).
using StackObserver = std::function<void(std::span<const uint64_t> stack)>;

// Parses a heap_v2 dump from `in`, streaming: memory beyond the result is
// one line. Every problem is an Error "<source_name>:<line>: <what>", with
// kInvalidArgument for malformed content and for a dump that ends early
// (no MAPPED_LIBRARIES section, a stack without counts, a last line without
// '\n', a stack address above the last mapping listed): "<what>: truncated
// at byte N (line L)", N being where the input ends. kDataLoss only for a
// stream that fails. Never throws on bad input.
[[nodiscard]] Result<HeapDump> ParseHeapV2(std::istream& in, std::string_view source_name,
                                           const ParseLimits& limits = {});

// The same over a dump already in memory, parsed in place (the lines are
// not copied); same errors as ParseHeapV2.
[[nodiscard]] Result<HeapDump> ParseHeapV2Text(std::string_view text, std::string_view source_name,
                                               const ParseLimits& limits = {},
                                               const StackObserver& observer = {});

// The lines `reader` reads (line_reader.h), `source_name` in the errors.
[[nodiscard]] Result<HeapDump> ParseHeapV2Lines(FileLineReader& reader,
                                                std::string_view source_name,
                                                const ParseLimits& limits = {},
                                                const StackObserver& observer = {});

// Reads `path` through a FileLineReader; the path names the errors.
[[nodiscard]] Result<HeapDump> ParseHeapV2File(const std::string& path,
                                               const ParseLimits& limits = {});

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_HEAP_V2_PARSER_H_
