#ifndef MEMPROF_CLI_ATTACH_STOPPED_THREAD_H_
#define MEMPROF_CLI_ATTACH_STOPPED_THREAD_H_

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::cli {

// One thread of another process, held still with ptrace (PTRACE_SEIZE, then
// PTRACE_INTERRUPT) so that it can be made to run a system call or a
// function on the injector's behalf. Only this thread stops; the others run
// on. x86-64 only.
//
// Whatever happens, the thread leaves with the registers it was stopped
// with, the vector and x87 state (XSAVE area) included, since the functions
// it is made to run use them (glibc's memset keeps its fill pattern in a
// vector register): Release() (or the destructor) puts them back and detaches, and a
// system call the stop interrupted is restarted by the kernel as after any
// signal (orig_rax is restored with the rest). A signal that arrived while
// the thread ran borrowed code is delivered at the detach, not lost.
class StoppedThread {
 public:
  using Clock = std::chrono::steady_clock;

  // Seizes and stops `tid` (a thread of `pid`) within `deadline`.
  // kPermissionDenied when ptrace is refused, kNotFound when the thread is
  // gone.
  [[nodiscard]] static Result<std::unique_ptr<StoppedThread>> Stop(pid_t pid, pid_t tid,
                                                                  Clock::time_point deadline);

  ~StoppedThread();
  StoppedThread(const StoppedThread&) = delete;
  StoppedThread& operator=(const StoppedThread&) = delete;

  pid_t tid() const { return tid_; }
  // The registers the thread was stopped with.
  const user_regs_struct& saved() const { return saved_; }
  // How long the thread has been stopped.
  Clock::duration stopped_for() const { return Clock::now() - stopped_at_; }

  // Runs system call `nr` in the thread by single-stepping the `syscall`
  // instruction at `syscall_insn` (an address in the target's text).
  // Returns the raw result (a negative errno on failure).
  [[nodiscard]] Result<int64_t> Syscall(uint64_t syscall_insn, int64_t nr,
                                        std::array<uint64_t, 6> args);

  // Calls `function` (System V ABI, up to four integer arguments) on the
  // thread's own stack, below its red zone, with `return_trap` (an int3 in
  // the target) as the return address; returns rax. Waits until `deadline`:
  // the function may wait for a lock another thread holds.
  [[nodiscard]] Result<uint64_t> Call(uint64_t function, std::array<uint64_t, 4> args,
                                      uint64_t return_trap, Clock::time_point deadline);

  // Reads or writes the target's memory (through /proc/PID/mem, which the
  // ptrace attachment allows, read-only mappings included).
  [[nodiscard]] Result<void> Read(uint64_t address, void* out, size_t size) const;
  [[nodiscard]] Result<void> Write(uint64_t address, const void* data, size_t size) const;

  // Puts the saved registers back and detaches. The thread runs on as if it
  // had never stopped.
  [[nodiscard]] Result<void> Release();

 private:
  StoppedThread(pid_t pid, pid_t tid, Fd mem);

  // Sets the thread's registers to `from`, resumes it with `request` and
  // waits for its next stop; a signal other than SIGTRAP is kept to be
  // delivered at the detach and the thread resumed, until a SIGTRAP stop or
  // `deadline`. Returns the registers at that stop.
  [[nodiscard]] Result<user_regs_struct> ResumeUntilTrap(const user_regs_struct& from,
                                                        __ptrace_request request,
                                                        Clock::time_point deadline);
  [[nodiscard]] Result<int> WaitForStop(Clock::time_point deadline);

  pid_t pid_;
  pid_t tid_;
  Fd mem_;
  user_regs_struct saved_{};
  std::vector<unsigned char> saved_xstate_;  // NT_X86_XSTATE, as the kernel gave it
  Clock::time_point stopped_at_;
  int pending_signal_ = 0;
  bool attached_ = false;
  bool have_saved_ = false;  // saved_ holds the registers of the stop
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_STOPPED_THREAD_H_
