#ifndef MEMPROF_CLI_IO_CONSOLE_H_
#define MEMPROF_CLI_IO_CONSOLE_H_

#include <ostream>

namespace memprof::cli {

// Where a command prints: data on `out` (stdout), human notes on `err`
// (stderr). Tests pass string streams.
struct Console {
  std::ostream& out;
  std::ostream& err;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_CONSOLE_H_
