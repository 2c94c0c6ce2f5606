#ifndef MEMPROF_TESTS_TESTPROGS_STEADY_LOAD_H_
#define MEMPROF_TESTS_TESTPROGS_STEADY_LOAD_H_

// The allocation pattern that plain_target and glibc_target share: a bounded
// ring of 64 KiB blocks (4 MiB retained, 4 blocks replaced every 10 ms tick)
// and a 4 KiB "leak" every tick that starts over at 64 MiB. The allocating
// functions stay in each program, because their names are what the tests look
// for in profiles: they call malloc themselves and hand the block over here.

#ifdef __cplusplus
extern "C" {
#endif

enum {
  kSteadyLoadBlockBytes = 64 * 1024,
  kSteadyLoadLeakBytes = 4 * 1024,
};

// For the program's allocate function: touches `block` (a fresh malloc of
// kSteadyLoadBlockBytes) and puts it in the ring in place of the oldest
// block, which is freed. -1 when `block` is NULL.
int SteadyLoadKeepBlock(char* block);

// For the program's leak function, before it allocates: lets go of
// everything "leaked" so far once that reached 64 MiB (about 160 s), so that
// a forgotten process cannot eat the machine.
void SteadyLoadBeforeLeak(void);

// For the program's leak function: touches `block` (a fresh malloc of
// kSteadyLoadLeakBytes) and keeps it, never freed until the leak starts over.
// -1 when `block` is NULL.
int SteadyLoadKeepLeak(void* block);

// The whole program: installs the stop handlers, fills the ring with
// `allocate`, leaks once with `leak`, signals readiness as `program_name`,
// then every tick calls `allocate` 4 times and `leak` once until
// SIGTERM/SIGINT. Returns main()'s exit status.
int SteadyLoadMain(const char* program_name, int (*allocate)(void), int (*leak)(void));

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MEMPROF_TESTS_TESTPROGS_STEADY_LOAD_H_
