#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_BINARIES_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_BINARIES_H_

// Absolute paths of the binaries the end-to-end tests drive, compiled in by
// tests/integration/CMakeLists.txt ($<TARGET_FILE:...>, find_library).
// Outside programs such as jeprof come from the shared tool check
// (tests/support/debian_tools.h), which fails a test that cannot run them.
#include <string>

namespace memprof::integration {

inline constexpr const char* kMemprofctl = MEMPROF_IT_MEMPROFCTL;
inline constexpr const char* kAgentLibrary = MEMPROF_IT_AGENT_LIBRARY;
// What LD_PRELOAD names to load the agent into a target: kAgentLibrary, after
// the sanitizer runtime in a MEMPROF_SANITIZE build (an instrumented agent
// needs it first in an uninstrumented host).
inline constexpr const char* kAgentPreload = MEMPROF_IT_AGENT_PRELOAD;
// The sanitizer runtime of a MEMPROF_SANITIZE build, or "".
inline constexpr const char* kSanitizerRuntime = MEMPROF_IT_SANITIZER_RUNTIME;

// What LD_PRELOAD names to load the agent at `agent` (a copy of
// kAgentLibrary) into a target, as kAgentPreload does kAgentLibrary.
inline std::string AgentPreloadOf(const std::string& agent) {
  return *kSanitizerRuntime != '\0' ? std::string(kSanitizerRuntime) + ":" + agent : agent;
}
inline constexpr const char* kLinkedTarget = MEMPROF_IT_LINKED_TARGET;
inline constexpr const char* kPlainTarget = MEMPROF_IT_PLAIN_TARGET;
inline constexpr const char* kGlibcTarget = MEMPROF_IT_GLIBC_TARGET;
inline constexpr const char* kManyStacksTarget = MEMPROF_IT_MANY_STACKS_TARGET;
inline constexpr const char* kForkingTarget = MEMPROF_IT_FORKING_TARGET;
inline constexpr const char* kLifecycleTarget = MEMPROF_IT_LIFECYCLE_TARGET;
inline constexpr const char* kRemoteStatusClient = MEMPROF_IT_REMOTE_STATUS_CLIENT;
inline constexpr const char* kCloseRangeHost = MEMPROF_IT_CLOSE_RANGE_HOST;
inline constexpr const char* kPreforkServer = MEMPROF_IT_PREFORK_SERVER;
inline constexpr const char* kExecHost = MEMPROF_IT_EXEC_HOST;
inline constexpr const char* kExecHelper = MEMPROF_IT_EXEC_HELPER;
inline constexpr const char* kExecHelperScript = MEMPROF_IT_EXEC_HELPER_SCRIPT;
inline constexpr const char* kSymbolClashHost = MEMPROF_IT_SYMBOL_CLASH_HOST;
// The bundled demo service (`bash dev.sh demo`): threads, no jemalloc, no agent.
inline constexpr const char* kDemoTarget = MEMPROF_IT_DEMO_TARGET;
// Links no allocator: memprof's own sampler's target (sampler_test.cc).
inline constexpr const char* kSamplerTarget = MEMPROF_IT_SAMPLER_TARGET;
inline constexpr const char* kJemallocLibrary = MEMPROF_IT_JEMALLOC_LIBRARY;

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_BINARIES_H_
