#ifndef MEMPROF_CLI_IO_DUMP_FILE_NAME_H_
#define MEMPROF_CLI_IO_DUMP_FILE_NAME_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace memprof::cli {

// Names of the files `dump --out-dir DIR` writes:
// "{host}-{pid}-{timestamp}.{extension}", e.g.
// "web1-1234-20261122T211530Z.heap", with the time in UTC (ISO 8601 basic
// format), so names sort by time and never depend on the local time zone.
// `attempt` > 0 adds "-{attempt}" before the extension, for when the first
// name is already taken (an existing file is never overwritten).
std::string DumpFileName(std::string_view host, pid_t pid,
                         std::chrono::system_clock::time_point time, std::string_view extension,
                         int attempt = 0);

// Names of the files `dump --captured --out-dir DIR` writes: as DumpFileName
// with the capture's time, then the capture's sequence and the allocated
// bytes when it was taken, in whole MiB:
// "web1-1234-20261122T211530Z-capture3-312MiB.heap".
std::string CaptureFileName(std::string_view host, pid_t pid,
                            std::chrono::system_clock::time_point time, uint64_t sequence,
                            uint64_t allocated_bytes, int attempt = 0);

// "20261122T211530Z": whole seconds, UTC.
std::string UtcTimestamp(std::chrono::system_clock::time_point time);

// The host name made safe for a file name: the first label only
// ("web1.example.com" -> "web1"; an IP address whole: "10.0.0.7" ->
// "10_0_0_7"), characters other than [A-Za-z0-9_-]
// replaced by '_', "host" when empty.
std::string FileSafeHostName(std::string_view host);

// This machine's host name (gethostname), file-safe.
std::string LocalFileSafeHostName();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_DUMP_FILE_NAME_H_
