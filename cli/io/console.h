#ifndef MEMPROF_CLI_IO_CONSOLE_H_
#define MEMPROF_CLI_IO_CONSOLE_H_

#include <ostream>

namespace memprof::cli {

// What --out names for standard output.
inline constexpr char kStdoutPath[] = "-";

// Where a command prints: data on `out` (stdout), errors and warnings on
// `err` (stderr), and notes (what was written where, the symbolization
// summary, the exporter's address) on notes(): stderr, or nowhere under
// -q/--quiet. Tests pass string streams.
struct Console {
  std::ostream& out;
  std::ostream& err;
  bool quiet = false;

  std::ostream& notes() const;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_CONSOLE_H_
