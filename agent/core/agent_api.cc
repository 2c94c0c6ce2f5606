// The C API and the preload entry point. Nothing here may throw or abort:
// every failure is logged (only if MEMPROF_LOG_LEVEL asks) and turned into a
// return value.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "agent/core/agent.h"
#include "agent/core/core_log.h"
#include "agent/core/env_snapshot.h"
#include "agent/shared/agent_thread.h"
#include "memprof/agent.h"

namespace memprof::agent {
namespace {

// Whether this library was loaded through LD_PRELOAD (rather than linked).
bool LoadedByPreload() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "libmemprof_agent") != nullptr;
}

// A preloaded agent whose environment names another process as the agent's
// host is in a program that process (or one of its forked children) exec()ed.
// With MEMPROF_CHILDREN=none it stays out of the way. A program exec()ed in
// place of the host (same pid: a wrapper script's `exec server`) keeps its
// agent.
bool ExecdByAgentHost(const EnvSnapshot& env, const AgentConfig& config) {
  const char* host = env.Get(kHostPidEnv);
  if (host == nullptr || std::to_string(::getpid()) == host) return false;
  return config.children == ChildrenPolicy::kNone;
}

int StartWith(EnvSnapshot env) {
  auto r = Agent::Instance().Start(std::move(env));
  if (r) return 0;
  CoreLog(LogLevel::kError, "agent not started: " + r.error().message);
  return -1;
}

int StartFromEnvironment(bool preloaded) noexcept {
  const NotSampledHere quiet;  // a host thread: what the agent allocates is not the host's
  try {
    EnvSnapshot env = EnvSnapshot::Capture();
    const AgentConfig config =
        ConfigFromEnvironment([&env](const char* name) { return env.Get(name); });
    if (!config.enabled) return 0;
    if (preloaded) {
      if (ExecdByAgentHost(env, config)) return 0;
      // Marks this process as the host for the programs it will exec.
      const std::string pid = std::to_string(::getpid());
      ::setenv(kHostPidEnv, pid.c_str(), 1);
      env.Set(kHostPidEnv, pid);
    }
    return StartWith(std::move(env));
  } catch (const std::exception& e) {
    CoreLog(LogLevel::kError, std::string("agent not started: ") + e.what());
  } catch (...) {
    CoreLog(LogLevel::kError, "agent not started: unknown error");
  }
  return -1;
}

// Runs when the library is loaded. The static constructor only reads the
// environment and starts the agent if it was preloaded.
__attribute__((constructor)) void OnLoad() {
  if (LoadedByPreload()) StartFromEnvironment(/*preloaded=*/true);
}

__attribute__((destructor)) void OnUnload() {
  const NotSampledHere quiet;
  try {
    Agent::Instance().StopAtExit();
  } catch (...) {
    // Nothing to report to at exit; the process must still exit normally.
  }
}

}  // namespace
}  // namespace memprof::agent

extern "C" int memprof_agent_start(void) noexcept {
  return memprof::agent::StartFromEnvironment(/*preloaded=*/false);
}

extern "C" void memprof_agent_stop(void) noexcept {
  const memprof::agent::NotSampledHere quiet;
  try {
    memprof::agent::Agent::Instance().Stop();
  } catch (...) {
    memprof::agent::CoreLog(memprof::agent::LogLevel::kError, "agent stop failed");
  }
}
