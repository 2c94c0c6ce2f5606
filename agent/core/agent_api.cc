// The C API and the preload entry point. Nothing here may throw or abort:
// every failure is logged (only if MEMPROF_LOG_LEVEL asks) and turned into a
// return value.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "agent/core/agent.h"
#include "agent/core/module_loader.h"
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
  return ExecdByAnotherHost(env.Get(kHostPidEnv), ::getpid()) &&
         config.children == ChildrenPolicy::kNone;
}

// Why the agent did not start, for whoever asked (`attach`), as well as the log.
struct StartFailure {
  std::string* why = nullptr;
  void Say(const std::string& text) const {
    CoreLog(LogLevel::kError, "agent not started: " + text);
    if (why != nullptr) *why = text;
  }
};

int StartWith(EnvSnapshot env, const StartFailure& failure) {
  auto r = Agent::Instance().Start(std::move(env));
  if (r) return 0;
  failure.Say(r.error().message);
  return -1;
}

// How the agent is being started (AgentConfig::started_by).
enum class StartedBy { kPreload, kLinked, kAttach };

const char* Name(StartedBy how) {
  switch (how) {
    case StartedBy::kPreload: return "preload";
    case StartedBy::kLinked: return "linked";
    case StartedBy::kAttach: return "attach";
  }
  return "";
}

// `server_library`: where the server part is, when not beside this library
// (an attach through memfds; empty otherwise).
int StartFromEnvironment(StartedBy how, const char* server_library = nullptr,
                         const StartFailure& failure = {}) noexcept {
  const NotSampledHere quiet;  // a host thread: what the agent allocates is not the host's
  const bool preloaded = how == StartedBy::kPreload;
  try {
    EnvSnapshot env = EnvSnapshot::Capture();
    env.Set(kStartedByVariable, Name(how));
    if (server_library != nullptr && *server_library != '\0') {
      env.Set("MEMPROF_SERVER_LIBRARY", server_library);
    }
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
    return StartWith(std::move(env), failure);
  } catch (const std::exception& e) {
    failure.Say(e.what());
  } catch (...) {
    failure.Say("unknown error");
  }
  return -1;
}

// Runs when the library is loaded. The static constructor only reads the
// environment and starts the agent if it was preloaded.
__attribute__((constructor)) void OnLoad() {
  if (LoadedByPreload()) StartFromEnvironment(StartedBy::kPreload);
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
  return memprof::agent::StartFromEnvironment(memprof::agent::StartedBy::kLinked);
}

// What `memprofctl attach`'s load thread calls (cli/attach/load_thread.S):
// not in the public header, since only the attach calls it. Exported as
// memprof_agent_start is. Through memfds, the server part is loaded now, on
// the attach's own thread: its memfd is closed once the attach is over,
// before any client connects. Why it did not start goes into `error` (at
// most `error_size` bytes with the NUL), for the attach to show.
extern "C" __attribute__((visibility("default"))) int memprof_agent_attach(
    const char* server_library, char* error, size_t error_size) noexcept {
  using namespace memprof::agent;
  const NotSampledHere quiet;
  try {
    std::string why;
    const StartFailure failure{&why};
    int result = 0;
    if (server_library != nullptr && *server_library != '\0') {
      if (auto ops = LoadServer(server_library); !ops) {
        failure.Say(ops.error().message);
        result = -1;
      }
    }
    if (result == 0) result = StartFromEnvironment(StartedBy::kAttach, server_library, failure);
    if (result != 0 && error != nullptr && error_size > 0) {
      std::strncpy(error, why.c_str(), error_size - 1);
      error[error_size - 1] = '\0';
    }
    return result;
  } catch (...) {
    return -1;
  }
}

extern "C" void memprof_agent_stop(void) noexcept {
  const memprof::agent::NotSampledHere quiet;
  try {
    memprof::agent::Agent::Instance().Stop();
  } catch (...) {
    memprof::agent::CoreLog(memprof::agent::LogLevel::kError, "agent stop failed");
  }
}
