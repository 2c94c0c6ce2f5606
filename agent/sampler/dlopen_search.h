#ifndef MEMPROF_AGENT_SAMPLER_DLOPEN_SEARCH_H_
#define MEMPROF_AGENT_SAMPLER_DLOPEN_SEARCH_H_

namespace memprof::agent {

using DlopenFn = void* (*)(const char*, int);

// glibc's dlopen searches a bare name ("libfoo.so", no '/') in its caller's
// DT_RUNPATH (or DT_RPATH), with $ORIGIN the caller's directory. Through
// the sampler's hook the caller is the hook, so a host library that opens
// its plugins by their RUNPATH would fail to while the sampler is active.
// This retries such a name in the search path of the object that contains
// `caller` (the hook's return address), in order; the handle, or nullptr
// when the name has a '/', the caller has no such path, or nothing there
// opens. Allocates nothing; calls `real_dlopen` with the loader's locks free.
void* DlopenInCallersPath(DlopenFn real_dlopen, const char* file, int flags, const void* caller);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_DLOPEN_SEARCH_H_
