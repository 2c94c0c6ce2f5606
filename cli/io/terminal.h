#ifndef MEMPROF_CLI_IO_TERMINAL_H_
#define MEMPROF_CLI_IO_TERMINAL_H_

namespace memprof::cli {

// Whether a terminal of type `term` (the TERM variable; null when unset)
// takes the escape sequences memprofctl draws with: carriage return plus
// "erase line" for progress lines, "cursor up" plus "erase below" for
// `stats --watch`'s live table. Not when TERM is unset, empty or "dumb"
// (Emacs' shell buffers, some CI consoles), where they would show up as
// "^[[K" litter; memprofctl then prints plain lines instead.
bool TerminalCanRedraw(const char* term);

// TerminalCanRedraw(getenv("TERM")) for a descriptor that is a terminal;
// false for a file or a pipe.
bool CanRedraw(int fd);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_TERMINAL_H_
