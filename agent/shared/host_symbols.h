#ifndef MEMPROF_AGENT_SHARED_HOST_SYMBOLS_H_
#define MEMPROF_AGENT_SHARED_HOST_SYMBOLS_H_

namespace memprof::agent {

// Looks `name` up the way the host's own code would: in the global scope
// (the program, the libraries it was linked with, LD_PRELOAD, anything
// opened RTLD_GLOBAL). Never in the server's own deep-bound scope, where
// dlsym(RTLD_DEFAULT, …) would find the server's forwarding malloc, or a
// libc function the host has replaced. nullptr if the host has no such symbol.
void* HostSymbol(const char* name);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_HOST_SYMBOLS_H_
