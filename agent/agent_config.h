#ifndef MEMPROF_AGENT_AGENT_CONFIG_H_
#define MEMPROF_AGENT_AGENT_CONFIG_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace memprof::agent {

// Everything the agent reads from its environment, read once at start.
struct AgentConfig {
  bool enabled = true;       // MEMPROF_AGENT=off|0|false|no disables the agent
  std::string socket_dir;    // MEMPROF_SOCKET_DIR, default /tmp/memprof
  std::string log_level;     // MEMPROF_LOG_LEVEL
  std::string malloc_conf;   // MALLOC_CONF as the process started with it
  // MEMPROF_IDLE_TIMEOUT: how long the gRPC server (and its threads) stays up
  // after the last call; 100ms..24h, default 30s.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
  // Problems found while reading the environment (logged at start).
  std::vector<std::string> warnings;
};

// Builds the configuration from an environment lookup (getenv in production;
// a map in tests). Pure apart from calling `getenv`.
AgentConfig ConfigFromEnvironment(const std::function<const char*(const char*)>& getenv);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_AGENT_CONFIG_H_
