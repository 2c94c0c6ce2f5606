#ifndef MEMPROF_CLI_ATTACH_THREAD_FRAMES_H_
#define MEMPROF_CLI_ATTACH_THREAD_FRAMES_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

struct Dwfl;

namespace memprof::cli {

// Decides whether a thread that is stopped under ptrace may be borrowed to
// call pthread_create in its process: not when any of its frames is inside
// the allocator (malloc and its kin in libc, jemalloc, tcmalloc), the
// dynamic loader (ld.so, dl_iterate_phdr, dlopen), fork or pthread_create
// itself, whose locks it may hold and the borrowed call would take again.
// Unwinds with elfutils' libdwfl from the process's own CFI.
class ThreadFrames {
 public:
  // Reads the process's modules; done before any thread is stopped, so the
  // stop does not pay for it.
  [[nodiscard]] static Result<std::unique_ptr<ThreadFrames>> ForProcess(pid_t pid);
  ~ThreadFrames();
  ThreadFrames(const ThreadFrames&) = delete;
  ThreadFrames& operator=(const ThreadFrames&) = delete;

  // nullopt when `tid` (stopped by the caller) may be borrowed; otherwise
  // why not ("inside malloc", "the stack could not be unwound").
  std::optional<std::string> WhyNotBorrow(pid_t tid);

 private:
  explicit ThreadFrames(Dwfl* dwfl) : dwfl_(dwfl) {}
  Dwfl* dwfl_;
};

// Whether a frame in `module` (a file name) at `function` (its symbol,
// possibly empty) may hold the allocator's or the loader's locks. Exposed
// for tests.
bool IsLockHoldingFrame(const std::string& module, const std::string& function);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_THREAD_FRAMES_H_
