#ifndef MEMPROF_AGENT_SAMPLER_STACK_CAPTURE_H_
#define MEMPROF_AGENT_SAMPLER_STACK_CAPTURE_H_

#include <cstdint>

namespace memprof::agent {

// The calling thread's stack as return addresses, leaf first, from DWARF
// call frame information (libgcc_s's _Unwind_Backtrace), so it is right in
// Debian's binaries, which have no frame pointers. The `skip` innermost
// frames (the capture itself, the sampler's frames) are left out. With GCC
// 12 and glibc 2.35 or later the unwinder finds each frame's FDE through
// _dl_find_object, without the loader's lock and without allocating.
// Returns the number of frames written, at most `max`.
int CaptureStack(uintptr_t* frames, int max, int skip);

// Binds and warms the unwinder before the hooks go live (PLT slots resolved,
// libgcc_s loaded), so that the first sampled allocation does not enter the
// dynamic loader from inside malloc. False if the unwinder is unusable.
bool PrepareStackCapture();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_STACK_CAPTURE_H_
