// The C API and the preload entry point. Nothing here may throw or abort:
// every failure is logged and turned into a return value.
#include <cstdlib>
#include <cstring>
#include <exception>

#include "agent/agent.h"
#include "agent/agent_logger.h"
#include "memprof/agent.h"

namespace memprof::agent {
namespace {

const char* Getenv(const char* name) { return std::getenv(name); }

// Whether this library was loaded through LD_PRELOAD (rather than linked).
bool LoadedByPreload() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "libmemprof_agent") != nullptr;
}

int StartFromEnvironment() noexcept {
  try {
    AgentConfig config = ConfigFromEnvironment(&Getenv);
    if (!config.enabled) return 0;
    auto r = Agent::Instance().Start(config);
    if (r) return 0;
    Logger().error("agent not started: {}", r.error().message);
    return -1;
  } catch (const std::exception& e) {
    Logger().error("agent not started: {}", e.what());
  } catch (...) {
    Logger().error("agent not started: unknown error");
  }
  return -1;
}

// Runs when the library is loaded. The static constructor only reads the
// environment and starts the agent if it was preloaded.
__attribute__((constructor)) void OnLoad() {
  if (LoadedByPreload()) StartFromEnvironment();
}

__attribute__((destructor)) void OnUnload() {
  try {
    Agent::Instance().StopAtExit();
  } catch (...) {
    // Nothing to report to at exit; the process must still exit normally.
  }
}

}  // namespace
}  // namespace memprof::agent

extern "C" int memprof_agent_start(void) noexcept {
  return memprof::agent::StartFromEnvironment();
}

extern "C" void memprof_agent_stop(void) noexcept {
  try {
    memprof::agent::Agent::Instance().Stop();
  } catch (...) {
    memprof::agent::Logger().error("agent stop failed");
  }
}
