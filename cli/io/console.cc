#include "cli/io/console.h"

namespace memprof::cli {

std::ostream& Console::notes() const {
  // One per thread: writing to a stream without a buffer sets its badbit,
  // which is state, and multi-target runs print from several threads.
  thread_local std::ostream dropped(nullptr);
  return quiet ? dropped : err;
}

}  // namespace memprof::cli
