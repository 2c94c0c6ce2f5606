#include "common/agent_environment.h"

#include <strings.h>

#include <string>

namespace memprof {
namespace {

bool EqualsIgnoringCase(std::string_view value, const char* word) {
  return ::strcasecmp(std::string(value).c_str(), word) == 0;
}

}  // namespace

bool AgentSwitchedOff(std::string_view value) {
  for (const char* word : {"off", "0", "false", "no"}) {
    if (EqualsIgnoringCase(value, word)) return true;
  }
  return false;
}

bool ForkSwitchedOff(std::string_view value) { return EqualsIgnoringCase(value, "off"); }

bool ChildrenInherit(std::string_view value) { return EqualsIgnoringCase(value, "inherit"); }

bool ExecdByAnotherHost(const char* host_pid, pid_t self) {
  return host_pid != nullptr && std::to_string(self) != host_pid;
}

}  // namespace memprof
