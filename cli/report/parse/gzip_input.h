#ifndef MEMPROF_CLI_REPORT_PARSE_GZIP_INPUT_H_
#define MEMPROF_CLI_REPORT_PARSE_GZIP_INPUT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::report::parse {

// True when `data` starts with gzip's magic bytes (1f 8b): a dump piped
// through gzip, as the user guide shows.
bool IsGzip(std::string_view data);

// Inflates a gzip file (one member or several concatenated, as `cat a.gz
// b.gz` makes) into memory. A gzip bomb costs at most `max_bytes`: past
// that, or on corrupt or cut input, an Error "<source_name>: ..."
// (kInvalidArgument: the input is bad, not the machine).
[[nodiscard]] Result<std::string> Gunzip(std::string_view data, std::string_view source_name,
                                         size_t max_bytes);

// The first `max_bytes` (or fewer) bytes that `data`, a gzip file, inflates
// to: enough to tell a format by its first line without inflating it all.
// "" when it cannot be inflated at all.
std::string GunzipPrefix(std::string_view data, size_t max_bytes);

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_GZIP_INPUT_H_
