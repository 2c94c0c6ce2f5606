// StoppedThread against a real forked child: whatever the borrowed thread is
// made to run, it goes on with exactly the state it was stopped with, vector
// registers included (the stress target of tests/integration/attach_test.cc
// once had a block filled with the wrong byte: glibc's memset keeps its fill
// pattern in a vector register, and pthread_create had changed it).
#include "cli/attach/stopped_thread.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

// What the child is made to call, the int3 it returns to, and the loop it
// runs: xmm0 holds a pattern from `spin_loop` on, checked on every turn (ud2,
// SIGILL, at the first change) until the int that rdi points to is set.
extern "C" void memprof_test_clobber_xmm0();
extern "C" void memprof_test_return_trap();
extern "C" void memprof_test_spin(const volatile int* done);
extern "C" const char memprof_test_spin_loop[];
extern "C" const char memprof_test_spin_end[];
asm(R"(
    .text
    .globl memprof_test_clobber_xmm0
memprof_test_clobber_xmm0:
    pxor %xmm0, %xmm0
    mov $42, %eax
    ret
    .globl memprof_test_return_trap
memprof_test_return_trap:
    int3
    .globl memprof_test_spin
    .globl memprof_test_spin_loop
    .globl memprof_test_spin_end
memprof_test_spin:
    movabs $0x1122334455667788, %rdx
    movq %rdx, %xmm0
memprof_test_spin_loop:
    movq %xmm0, %rax
    cmp %rdx, %rax
    jne 1f
    cmpl $0, (%rdi)
    je memprof_test_spin_loop
    ret
1:  ud2
memprof_test_spin_end:
)");

namespace memprof::cli {
namespace {

using Clock = std::chrono::steady_clock;
// The child: tells the test it runs, then spins until `done`; exits 0.
[[noreturn]] void SpinWithPatternInXmm0(int ready_fd, const volatile int* done) {
  const char ready = 'r';
  (void)::write(ready_fd, &ready, 1);
  memprof_test_spin(done);
  ::_exit(0);
}

bool InSpinLoop(uint64_t rip) {
  return rip >= reinterpret_cast<uint64_t>(memprof_test_spin_loop) &&
         rip < reinterpret_cast<uint64_t>(memprof_test_spin_end);
}

TEST(StoppedThreadTest, TheBorrowedThreadGoesOnWithItsOwnVectorRegisters) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  void* shared = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* done = static_cast<volatile int*>(shared);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    SpinWithPatternInXmm0(pipe_fds[1], done);
  }
  ::close(pipe_fds[1]);
  char ready = 0;
  ASSERT_EQ(::read(pipe_fds[0], &ready, 1), 1);
  ::close(pipe_fds[0]);
  {
    // Stopped inside the loop, where xmm0 already holds the pattern (the
    // child may still be on its way there).
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    auto thread = StoppedThread::Stop(child, child, deadline);
    while (thread && !InSpinLoop((*thread)->saved().rip) && Clock::now() < deadline) {
      ASSERT_TRUE((*thread)->Release().has_value());
      thread = StoppedThread::Stop(child, child, deadline);
    }
    ASSERT_TRUE(thread.has_value()) << thread.error().message;
    ASSERT_TRUE(InSpinLoop((*thread)->saved().rip));
    auto result = (*thread)->Call(reinterpret_cast<uint64_t>(&memprof_test_clobber_xmm0),
                                  {0, 0, 0, 0},
                                  reinterpret_cast<uint64_t>(&memprof_test_return_trap),
                                  Clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(result.has_value()) << result.error().message;
    EXPECT_EQ(*result, 42u);
    ASSERT_TRUE((*thread)->Release().has_value());
  }
  // The child checks xmm0 at its first instruction after the release.
  *done = 1;
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::munmap(shared, 4096);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
      << ": its xmm0 was not restored";
}

}  // namespace
}  // namespace memprof::cli
