#include "agent/agent_config.h"

#include <algorithm>
#include <cctype>

#include "common/duration.h"
#include "common/socket_path.h"

namespace memprof::agent {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Get(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* v = getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

AgentConfig ConfigFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  AgentConfig config;
  const std::string agent = Lower(Get(getenv, "MEMPROF_AGENT"));
  config.enabled = !(agent == "off" || agent == "0" || agent == "false" || agent == "no");
  config.socket_dir = Get(getenv, kSocketDirEnv);
  if (config.socket_dir.empty()) config.socket_dir = kDefaultSocketDir;
  while (config.socket_dir.size() > 1 && config.socket_dir.back() == '/') {
    config.socket_dir.pop_back();
  }
  config.log_level = Get(getenv, "MEMPROF_LOG_LEVEL");
  config.malloc_conf = Get(getenv, "MALLOC_CONF");
  const std::string idle = Get(getenv, "MEMPROF_IDLE_TIMEOUT");
  if (!idle.empty()) {
    auto d = ParseDuration(idle, std::chrono::milliseconds(100), std::chrono::hours(24));
    if (d) {
      config.idle_timeout = *d;
    } else {
      config.warnings.push_back("MEMPROF_IDLE_TIMEOUT ignored: " + d.error().message);
    }
  }
  return config;
}

}  // namespace memprof::agent
