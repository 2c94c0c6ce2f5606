#include "cli/report/parse/heap_dump_reader.h"

#include "cli/report/parse/allocation_profile_parser.h"
#include "cli/report/parse/dump_scanner.h"
#include "cli/report/parse/gperftools_parser.h"
#include "cli/report/parse/gzip_input.h"
#include "cli/report/parse/mapped_file.h"

namespace memprof::report::parse {
namespace {

constexpr std::string_view kFormats =
    "jemalloc's 'heap_v2/<sample period>' or gperftools' 'heap profile: ...'";

// The first line as the parsers see it: no '\r', no blanks around it.
std::string_view FirstLine(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  return Trim(line);
}

}  // namespace

Result<HeapDump> ParseHeapDumpText(std::string_view text, std::string_view source_name,
                                   const ParseLimits& limits, ReadProgress progress) {
  std::string_view first = FirstLine(text);
  if (first.starts_with("heap_v2/")) {
    return ParseHeapV2Text(text, source_name, limits, std::move(progress));
  }
  if (first.starts_with("heap profile:")) {
    return ParseGperftoolsText(text, source_name, limits, std::move(progress));
  }
  std::string where = std::string(source_name) + ":1: ";
  if (LooksLikeAllocationProfile(first)) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "an allocation profile, not a heap profile: report it alone (it cannot "
                        "be merged with heap dumps, used as --base or in --trend)");
  }
  if (text.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "empty input: expected a heap profile, " + std::string(kFormats));
  }
  return Fail(ErrorCode::kInvalidArgument, where + "not a heap profile: expected " +
                                               std::string(kFormats) + " header, got " +
                                               Excerpt(first));
}

Result<HeapDump> ParseHeapDumpFile(const std::string& path, const ParseLimits& limits) {
  Result<MappedFile> file = MappedFile::Open(path);
  if (!file) return Fail(file.error());
  if (!IsGzip(file->text())) {
    return ParseHeapDumpText(file->text(), path, limits,
                             [&file](size_t offset) { file->ReadingAt(offset); });
  }
  Result<std::string> text = Gunzip(file->text(), path, limits.max_gunzipped_bytes);
  if (!text) return Fail(text.error());
  return ParseHeapDumpText(*text, path, limits);
}

}  // namespace memprof::report::parse
