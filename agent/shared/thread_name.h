#ifndef MEMPROF_AGENT_SHARED_THREAD_NAME_H_
#define MEMPROF_AGENT_SHARED_THREAD_NAME_H_

namespace memprof::agent {

// Names the calling thread "memprof-<role>" (at most 15 characters in all:
// the kernel cuts the rest), so that a host that lists its threads sees
// which are ours. The one way the agent's own threads are named; gRPC's are
// prefixed by the module's pthread_setname_np (module/host_allocation.cc).
void NameThisThread(const char* role);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_THREAD_NAME_H_
