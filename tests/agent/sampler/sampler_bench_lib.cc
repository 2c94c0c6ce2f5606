// The sampler built into a dlopen'd shared object, as it is in the agent's
// module: its thread-local countdown is then reached through
// __tls_get_addr, which is what the host pays. sampler_bench drives it.
#include <cstdint>

#include "agent/sampler/sampler.h"
#include "agent/sampler/stack_capture.h"

#define BENCHLIB_EXPORT extern "C" __attribute__((visibility("default")))

BENCHLIB_EXPORT bool BenchSamplerActivate(uint64_t interval) {
  memprof::agent::SamplerOptions options;
  options.sample_interval = interval;
  return memprof::agent::Sampler::Activate(options).has_value();
}

BENCHLIB_EXPORT void BenchSamplerDeactivate() {
  memprof::agent::Sampler::Deactivate();
  memprof::agent::Sampler::Reset();
}

BENCHLIB_EXPORT uint64_t BenchSamplerSamples() {
  return memprof::agent::Sampler::Status().samples;
}

BENCHLIB_EXPORT int BenchCaptureStack(uintptr_t* frames, int max) {
  return memprof::agent::CaptureStack(frames, max, 0);
}
