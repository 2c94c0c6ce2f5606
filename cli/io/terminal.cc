#include "cli/io/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace memprof::cli {

bool TerminalCanRedraw(const char* term) {
  if (term == nullptr) return false;
  const std::string_view name(term);
  return !name.empty() && name != "dumb";
}

bool CanRedraw(int fd) { return ::isatty(fd) == 1 && TerminalCanRedraw(std::getenv("TERM")); }

}  // namespace memprof::cli
