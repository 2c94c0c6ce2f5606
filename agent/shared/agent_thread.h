#ifndef MEMPROF_AGENT_SHARED_AGENT_THREAD_H_
#define MEMPROF_AGENT_SHARED_AGENT_THREAD_H_

namespace memprof::agent {

// What every thread of the agent does first: names itself "memprof-<role>"
// (at most 15 characters in all: the kernel cuts the rest), so that a host
// that lists its threads sees which are ours, and stops jemalloc from
// sampling its allocations (StopSamplingThisThread), so that nothing the
// agent allocates shows in the host's heap profile. gRPC's threads are
// named, and stopped, by the module's pthread_setname_np
// (module/host_allocation.cc).
void BecomeAgentThread(const char* role);

// jemalloc's thread.prof.active=false for the calling thread: its
// allocations are never sampled (jemalloc draws a thread's setting from
// prof.thread_active_init when the thread starts, so each thread must say so
// itself). Nothing happens without jemalloc or without profiling; gperftools'
// tcmalloc has no such switch.
void StopSamplingThisThread();

// For agent code that runs on a host thread (the preload constructor, the C
// API, fork handlers): the thread's allocations are not sampled while it
// lives, and the thread's own setting is restored when it goes.
class NotSampledHere {
 public:
  NotSampledHere();
  ~NotSampledHere();
  NotSampledHere(const NotSampledHere&) = delete;
  NotSampledHere& operator=(const NotSampledHere&) = delete;

 private:
  bool restore_ = false;  // the thread was sampled before
};

// prof.active=false for the whole process: for a forked child that nobody
// will profile (no agent in it), so that it never samples without an owner.
// Nothing happens without jemalloc or without profiling.
void StopProfilingThisProcess();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_AGENT_THREAD_H_
