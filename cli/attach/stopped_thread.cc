#include "cli/attach/stopped_thread.h"

#include <fcntl.h>
#include <signal.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

namespace memprof::cli {
namespace {

// Below the stack pointer: the red zone the thread's current function may
// be using (128 bytes in the System V ABI), and some margin.
constexpr uint64_t kStackGap = 512;
constexpr auto kWaitPoll = std::chrono::microseconds(100);
// Larger than any XSAVE area (AVX-512 with AMX tiles is about 11 KiB); the
// kernel says how much it filled.
constexpr size_t kXstateCapacity = 16384;

std::string Errno(int err) { return std::strerror(err); }

Error PtraceError(const char* what, pid_t tid, int err) {
  if (err == EPERM || err == EACCES) {
    return Error(ErrorCode::kPermissionDenied,
                 std::string("the kernel refused to trace thread ") + std::to_string(tid) + " (" +
                     what + ": " + Errno(err) + ")");
  }
  if (err == ESRCH) {
    return Error(ErrorCode::kNotFound, "thread " + std::to_string(tid) + " is gone");
  }
  return Error(ErrorCode::kInternal, std::string(what) + " on thread " + std::to_string(tid) +
                                         ": " + Errno(err));
}

}  // namespace

StoppedThread::StoppedThread(pid_t pid, pid_t tid, Fd mem)
    : pid_(pid), tid_(tid), mem_(std::move(mem)) {}

Result<std::unique_ptr<StoppedThread>> StoppedThread::Stop(pid_t pid, pid_t tid,
                                                           Clock::time_point deadline) {
  const std::string mem_path = "/proc/" + std::to_string(pid) + "/mem";
  Fd mem(::open(mem_path.c_str(), O_RDWR | O_CLOEXEC));
  if (!mem) return Fail(PtraceError("open /proc/PID/mem", tid, errno));
  std::unique_ptr<StoppedThread> thread(new StoppedThread(pid, tid, std::move(mem)));
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    return Fail(PtraceError("PTRACE_SEIZE", tid, errno));
  }
  thread->attached_ = true;
  if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    return Fail(PtraceError("PTRACE_INTERRUPT", tid, errno));
  }
  // The interrupt's stop; a signal that was already on its way comes first.
  for (;;) {
    auto status = thread->WaitForStop(deadline);
    if (!status) return Fail(status.error());
    if ((*status >> 16) == PTRACE_EVENT_STOP) break;
    thread->pending_signal_ = WSTOPSIG(*status);
    if (::ptrace(PTRACE_CONT, tid, nullptr, nullptr) != 0) {
      return Fail(PtraceError("PTRACE_CONT", tid, errno));
    }
  }
  thread->stopped_at_ = Clock::now();
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &thread->saved_) != 0) {
    return Fail(PtraceError("PTRACE_GETREGS", tid, errno));
  }
  std::vector<unsigned char> xstate(kXstateCapacity);
  iovec io{xstate.data(), xstate.size()};
  if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &io) != 0) {
    return Fail(PtraceError("PTRACE_GETREGSET", tid, errno));
  }
  xstate.resize(io.iov_len);
  thread->saved_xstate_ = std::move(xstate);
  thread->have_saved_ = true;
  return thread;
}

StoppedThread::~StoppedThread() {
  if (attached_) (void)Release();
}

Result<int> StoppedThread::WaitForStop(Clock::time_point deadline) {
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(tid_, &status, __WALL | WNOHANG);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Fail(PtraceError("waitpid", tid_, errno));
    }
    if (got == tid_) {
      if (WIFSTOPPED(status)) return status;
      attached_ = false;
      return Fail(ErrorCode::kNotFound,
                  "thread " + std::to_string(tid_) + " ended while it was stopped (the process "
                  "was killed)");
    }
    if (Clock::now() >= deadline) {
      return Fail(ErrorCode::kUnavailable,
                  "thread " + std::to_string(tid_) + " did not stop in time");
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
}

Result<user_regs_struct> StoppedThread::ResumeUntilTrap(const user_regs_struct& from,
                                                         __ptrace_request request,
                                                         Clock::time_point deadline) {
  if (::ptrace(PTRACE_SETREGS, tid_, nullptr, &from) != 0) {
    return Fail(PtraceError("PTRACE_SETREGS", tid_, errno));
  }
  if (::ptrace(request, tid_, nullptr, nullptr) != 0) {
    return Fail(PtraceError("resume", tid_, errno));
  }
  for (;;) {
    auto status = WaitForStop(deadline);
    if (!status) return Fail(status.error());
    const int signal = WSTOPSIG(*status);
    if (signal == SIGTRAP && (*status >> 16) == 0) break;
    if ((*status >> 16) == 0) pending_signal_ = signal;  // delivered at the detach
    if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
      return Fail(PtraceError("PTRACE_CONT", tid_, errno));
    }
  }
  user_regs_struct regs{};
  if (::ptrace(PTRACE_GETREGS, tid_, nullptr, &regs) != 0) {
    return Fail(PtraceError("PTRACE_GETREGS", tid_, errno));
  }
  return regs;
}

Result<int64_t> StoppedThread::Syscall(uint64_t syscall_insn, int64_t nr,
                                       std::array<uint64_t, 6> args) {
  user_regs_struct regs = saved_;
  regs.rip = syscall_insn;
  regs.rax = static_cast<uint64_t>(nr);
  regs.orig_rax = static_cast<uint64_t>(-1);  // no restart of the interrupted call here
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.r10 = args[3];
  regs.r8 = args[4];
  regs.r9 = args[5];
  auto after = ResumeUntilTrap(regs, PTRACE_SINGLESTEP, Clock::now() + std::chrono::seconds(5));
  if (!after) return Fail(after.error());
  if (after->rip != syscall_insn + 2) {
    return Fail(ErrorCode::kInternal, "the injected system call stopped at an unexpected address");
  }
  return static_cast<int64_t>(after->rax);
}

Result<uint64_t> StoppedThread::Call(uint64_t function, std::array<uint64_t, 4> args,
                                     uint64_t return_trap, Clock::time_point deadline) {
  // At the function's first instruction rsp + 8 is 16-byte aligned.
  uint64_t sp = ((saved_.rsp - kStackGap) & ~uint64_t{15}) - 8;
  if (auto w = Write(sp, &return_trap, sizeof return_trap); !w) return Fail(w.error());
  user_regs_struct regs = saved_;
  regs.rip = function;
  regs.rsp = sp;
  regs.rax = 0;
  regs.orig_rax = static_cast<uint64_t>(-1);
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.rcx = args[3];
  auto after = ResumeUntilTrap(regs, PTRACE_CONT, deadline);
  if (!after) return Fail(after.error());
  if (after->rip != return_trap + 1) {
    return Fail(ErrorCode::kInternal, "the injected call stopped at an unexpected address");
  }
  return after->rax;
}

Result<void> StoppedThread::Read(uint64_t address, void* out, size_t size) const {
  const ssize_t n = ::pread(mem_.get(), out, size, static_cast<off_t>(address));
  if (n == static_cast<ssize_t>(size)) return {};
  return Fail(ErrorCode::kInternal, "cannot read the target's memory: " +
                                        (n < 0 ? Errno(errno) : std::string("short read")));
}

Result<void> StoppedThread::Write(uint64_t address, const void* data, size_t size) const {
  const ssize_t n = ::pwrite(mem_.get(), data, size, static_cast<off_t>(address));
  if (n == static_cast<ssize_t>(size)) return {};
  return Fail(ErrorCode::kInternal, "cannot write the target's memory: " +
                                        (n < 0 ? Errno(errno) : std::string("short write")));
}

Result<void> StoppedThread::Release() {
  if (!attached_) return {};
  attached_ = false;
  bool restored = true;
  int restore_err = 0;
  if (have_saved_) {
    iovec io{saved_xstate_.data(), saved_xstate_.size()};
    restored = ::ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &io) == 0 &&
               ::ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_) == 0;
    restore_err = errno;
  }
  const bool detached =
      ::ptrace(PTRACE_DETACH, tid_, nullptr, reinterpret_cast<void*>(intptr_t{pending_signal_})) == 0;
  if (!restored) return Fail(PtraceError("PTRACE_SETREGS", tid_, restore_err));
  if (!detached) return Fail(PtraceError("PTRACE_DETACH", tid_, errno));
  return {};
}

}  // namespace memprof::cli
