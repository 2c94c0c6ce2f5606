#ifndef MEMPROF_CLI_COLLECT_DUMP_DELIVERY_H_
#define MEMPROF_CLI_COLLECT_DUMP_DELIVERY_H_

#include <sys/types.h>

#include <stop_token>
#include <string>

#include "cli/client/dump_receiver.h"
#include "cli/client/profile_client.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// The raw heap profile format of `dump --format` and `profile --format`;
// any other value names a report format (report::ParseFormat).
inline constexpr char kRawDumpFormat[] = "heap";

// Where one dump goes and in what form.
struct DumpDestination {
  TargetSelector target;
  std::string out;  // FILE, or "-" for console.out
  std::string format = kRawDumpFormat;
  bool json = false;  // console.out carries --json, so "-" is refused
  uint64_t capture_sequence = 0;  // non-zero: that peak capture, not a new dump
  uint64_t allocation_window = 0;  // non-zero: that window's allocation profile
  // An existing `out` is replaced only with --force (kReplace).
  ExistingFile existing = ExistingFile::kRefuse;
};

// What a dump delivered: the verified heap profile (for a report format, the
// one the report was made from) and the pid it came from.
struct DeliveredDump {
  DumpSummary summary;
  pid_t pid = 0;
  pid_t local_pid = 0;  // the pid in this host's /proc (0 for a remote target)
};

// kInvalidArgument naming the valid formats, unless `format` is "heap" or a
// report format.
[[nodiscard]] Result<void> CheckDumpFormat(const std::string& format);

// Streams one heap profile from the target into `destination.out`. A file is
// created (as a temp file beside it) before the agent is contacted, written
// chunk by chunk, verified against the trailer (size, SHA-256), then fsynced
// and renamed into place. For a report format, the raw profile goes to an
// unnamed scratch file and the report of it, analysed here (binaries read
// through /proc/<pid>), to `out`. On any failure, or when `stop` is
// requested, nothing is left behind and `out` is untouched.
[[nodiscard]] Result<DeliveredDump> DeliverDump(const DumpDestination& destination,
                                                const TargetDiscovery& discovery,
                                                ProfileClient& client, const Console& console,
                                                std::stop_token stop);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_DUMP_DELIVERY_H_
