// service_target: plain_target's steady load, each block allocated through
// libservice_cache.so (service_cache.h), which sits beside it ($ORIGIN).
// Linked with jemalloc; the tests preload the agent and strip copies of both
// files: the exporter test runs the real pprof on it.

#include "tests/testprogs/service_cache.h"
#include "tests/testprogs/steady_load.h"

__attribute__((noinline)) static int ServiceTargetAllocate(void) {
  return SteadyLoadKeepBlock(ServiceCacheAllocate(kSteadyLoadBlockBytes));
}

__attribute__((noinline)) static int ServiceTargetLeak(void) {
  SteadyLoadBeforeLeak();
  return SteadyLoadKeepLeak(ServiceCacheAllocate(kSteadyLoadLeakBytes));
}

int main(void) {
  return SteadyLoadMain("service_target", ServiceTargetAllocate, ServiceTargetLeak);
}
