#ifndef MEMPROF_AGENT_SHARED_AGENT_CONFIG_H_
#define MEMPROF_AGENT_SHARED_AGENT_CONFIG_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/shared/tcp_address.h"
#include "common/agent_environment.h"

namespace memprof::agent {

inline constexpr char kListenEnv[] = "MEMPROF_LISTEN";
inline constexpr char kTlsCertEnv[] = "MEMPROF_TLS_CERT";
inline constexpr char kTlsKeyEnv[] = "MEMPROF_TLS_KEY";
inline constexpr char kTlsCaEnv[] = "MEMPROF_TLS_CA";
// How every warning about the remote listener starts: the agent then serves
// its Unix socket only.
inline constexpr char kNotListeningOnTcp[] = "not listening on TCP: ";

// The remote (TCP) listener: MEMPROF_LISTEN plus the mutual-TLS files. Only
// the paths are known here; the files are read and checked at start
// (tls_material.h).
struct RemoteConfig {
  TcpAddress address;
  std::string cert_path;  // MEMPROF_TLS_CERT: the agent's certificate chain, PEM
  std::string key_path;   // MEMPROF_TLS_KEY: its private key, PEM
  std::string ca_path;    // MEMPROF_TLS_CA: the CA(s) that client certificates must chain to
};

// MEMPROF_FORK: what a forked child of the host gets.
enum class ForkPolicy {
  kFollow,  // its own agent at <childpid>.sock (default)
  kOff,     // no agent (it may still call memprof_agent_start())
};

// MEMPROF_CHILDREN: what a program the host fork()s and exec()s gets when
// it inherits LD_PRELOAD (docs/architecture.md explains the default).
enum class ChildrenPolicy {
  kNone,     // no agent: a silent no-op (default)
  kInherit,  // an agent of its own, like any preloaded program
};

inline constexpr std::chrono::milliseconds kDefaultDumpStallTimeout = std::chrono::seconds(30);

// Everything the agent reads from its environment, read once at start.
// The variable, in the core's copy of the environment only, that says how
// the agent was started (AgentConfig::started_by).
inline constexpr char kStartedByVariable[] = "MEMPROF_INTERNAL_STARTED_BY";

struct AgentConfig {
  bool enabled = true;       // MEMPROF_AGENT=off|0|false|no disables the agent
  std::string socket_dir;    // MEMPROF_SOCKET_DIR, default /tmp/memprof
  std::string log_level;     // MEMPROF_LOG_LEVEL; unset: the agent writes nothing
  std::string malloc_conf;   // MALLOC_CONF as the process started with it
  // MEMPROF_IDLE_TIMEOUT: how long the gRPC server (and its threads) stays up
  // after the last call; 100ms..24h, default 30s.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
  // MEMPROF_DUMP_STALL_TIMEOUT: how long a dump stream may go without the
  // client taking a chunk before the agent ends it and gives its slot to the
  // next waiter; 100ms..1h, default 30s.
  std::chrono::milliseconds dump_stall_timeout = kDefaultDumpStallTimeout;
  // Set when MEMPROF_LISTEN is set, valid, and all three MEMPROF_TLS_* are
  // set: over TCP there is no SO_PEERCRED, so the listener always requires
  // mutual TLS, on loopback too. Otherwise nullopt, with a warning saying why.
  std::optional<RemoteConfig> remote;
  ForkPolicy fork = ForkPolicy::kFollow;              // MEMPROF_FORK=follow|off
  ChildrenPolicy children = ChildrenPolicy::kNone;    // MEMPROF_CHILDREN=none|inherit
  std::string server_library;  // MEMPROF_SERVER_LIBRARY: where the server part is
  // How the agent came into the process: "preload", "linked" (the program
  // called memprof_agent_start) or "attach". Set by the core in its own copy
  // of the environment (kStartedByVariable), never read from the real one.
  std::string started_by;
  // Problems found while reading the environment (logged at start).
  std::vector<std::string> warnings;
};

// Builds the configuration from an environment lookup (getenv in production;
// a map in tests). Pure apart from calling `getenv`.
AgentConfig ConfigFromEnvironment(const std::function<const char*(const char*)>& getenv);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_AGENT_CONFIG_H_
