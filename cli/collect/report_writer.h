#ifndef MEMPROF_CLI_COLLECT_REPORT_WRITER_H_
#define MEMPROF_CLI_COLLECT_REPORT_WRITER_H_

#include <string>

#include "cli/io/atomic_file_writer.h"
#include "cli/io/console.h"
#include "cli/report/report_pipeline.h"
#include "common/result.h"

namespace memprof::cli {

// Where a report goes: "-" is console.out, anything else a file created
// atomically, which replaces an existing one only with kReplace (--force).
struct ReportOutput {
  std::string path;
  ExistingFile existing = ExistingFile::kRefuse;
};

// Runs the report pipeline into `output`: a file is created atomically (a
// temp file beside it, renamed on success, removed on failure). The path is
// checked before the analysis, so a bad one fails fast.
// `stdout_is_terminal`: binary output (pprof) is refused on a terminal. When
// some frames have no names, a short summary of which files lack symbols and
// how to get them follows on console.err. `stderr_redraws`: a progress line
// shows while debug info downloads from a debuginfod server.
[[nodiscard]] Result<void> WriteReport(const report::ReportRequest& request,
                                       const ReportOutput& output, const Console& console,
                                       bool stdout_is_terminal, bool stderr_redraws = false);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_REPORT_WRITER_H_
