#include "cli/report/parse/heap_dump_reader.h"

#include <cstring>

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

enum class DumpKind { kJemalloc, kGperftools };

// Which parser reads a dump that starts with `head`, or why none does.
Result<DumpKind> KindOfDump(std::string_view head, std::string_view source_name) {
  std::string_view first = FirstLine(head);
  if (first.starts_with("heap_v2/")) return DumpKind::kJemalloc;
  if (first.starts_with("heap profile:")) return DumpKind::kGperftools;
  std::string where = std::string(source_name) + ":1: ";
  if (LooksLikeAllocationProfile(first)) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "an allocation profile, not a heap profile: report it alone (it cannot "
                        "be merged with heap dumps, used as --base or in --trend)");
  }
  if (head.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "empty input: expected a heap profile, " + std::string(kFormats));
  }
  return Fail(ErrorCode::kInvalidArgument, where + "not a heap profile: expected " +
                                               std::string(kFormats) + " header, got " +
                                               Excerpt(first));
}

// A dump that is not gzip'd, read through a buffer.
Result<HeapDump> ParseHeapDumpLines(int fd, const std::string& path, const ParseLimits& limits,
                                    const StackObserver& observer) {
  FileLineReader reader(fd, limits.max_line_bytes);
  const std::string_view head = reader.Peek();
  if (reader.read_error() != 0) {
    return Fail(ErrorCode::kDataLoss,
                path + ": cannot read the heap profile: " + std::strerror(reader.read_error()));
  }
  Result<DumpKind> kind = KindOfDump(head, path);
  if (!kind) return Fail(kind.error());
  if (*kind == DumpKind::kJemalloc) return ParseHeapV2Lines(reader, path, limits, observer);
  return ParseGperftoolsLines(reader, path, limits, observer);
}

}  // namespace

Result<HeapDump> ParseHeapDumpText(std::string_view text, std::string_view source_name,
                                   const ParseLimits& limits, const StackObserver& observer) {
  Result<DumpKind> kind = KindOfDump(text, source_name);
  if (!kind) return Fail(kind.error());
  if (*kind == DumpKind::kJemalloc) {
    return ParseHeapV2Text(text, source_name, limits, observer);
  }
  return ParseGperftoolsText(text, source_name, limits, observer);
}

Result<HeapDump> ParseHeapDumpFile(const std::string& path, const ParseLimits& limits,
                                   const StackObserver& observer) {
  Result<Fd> fd = OpenProfileFile(path);
  if (!fd) return Fail(fd.error());
  if (!IsGzip(ReadHead(fd->get(), 2))) {
    return ParseHeapDumpLines(fd->get(), path, limits, observer);
  }
  Result<MappedFile> file = MappedFile::Map(*fd, path);
  if (!file) return Fail(file.error());
  Result<std::string> text = Gunzip(file->text(), path, limits.max_gunzipped_bytes);
  if (!text) return Fail(text.error());
  return ParseHeapDumpText(*text, path, limits, observer);
}

}  // namespace memprof::report::parse
