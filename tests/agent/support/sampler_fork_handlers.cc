// Test executables that use memprof's sampler without the agent's core,
// whose fork handlers call the sampler's (module_abi.h, sampler_fork), have
// pthread_atfork call them instead: registered before main, while no other
// thread exists that could fork during the registration.
#include "agent/sampler/sampler.h"

namespace memprof::agent {
namespace {

const bool kSamplerForkHandlersRegistered = Sampler::RegisterForkHandlers().has_value();

}  // namespace
}  // namespace memprof::agent
