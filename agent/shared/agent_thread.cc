#include "agent/shared/agent_thread.h"

#include <sys/prctl.h>

#include <cstddef>
#include <cstring>

#include "agent/shared/host_symbols.h"

namespace memprof::agent {
namespace {

using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);

// jemalloc's mallctl as the host sees it, or nullptr. Only the two switches
// below use it here; everything else the agent asks jemalloc goes through
// JemallocControl (allocators/), which also checks that this jemalloc is the
// one serving malloc().
MallctlFn HostMallctl() {
  static const auto fn = reinterpret_cast<MallctlFn>(HostSymbol("mallctl"));
  return fn;
}

// Sets the boolean `name` to `value`; true if it was true before. Without
// jemalloc or without profiling (ENOENT) nothing happens and it says false.
bool Exchange(const char* name, bool value) {
  MallctlFn mallctl = HostMallctl();
  if (mallctl == nullptr) return false;
  bool old = false;
  size_t size = sizeof(old);
  return mallctl(name, &old, &size, &value, sizeof(value)) == 0 && old;
}

}  // namespace

void BecomeAgentThread(const char* role) {
  char name[16] = "memprof-";
  std::strncat(name, role, sizeof(name) - std::strlen(name) - 1);
  prctl(PR_SET_NAME, name);
  StopSamplingThisThread();
}

void StopSamplingThisThread() { (void)Exchange("thread.prof.active", false); }

NotSampledHere::NotSampledHere() : restore_(Exchange("thread.prof.active", false)) {}

NotSampledHere::~NotSampledHere() {
  if (restore_) (void)Exchange("thread.prof.active", true);
}

void StopProfilingThisProcess() { (void)Exchange("prof.active", false); }

}  // namespace memprof::agent
