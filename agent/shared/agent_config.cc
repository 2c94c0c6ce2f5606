#include "agent/shared/agent_config.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <utility>

#include "common/agent_environment.h"
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

// "A", "A and B", "A, B and C".
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

const char* IsOrAre(const std::vector<std::string>& names) {
  return names.size() == 1 ? " is" : " are";
}

// The three MEMPROF_TLS_* paths, and which of them are set.
struct TlsVariables {
  RemoteConfig paths;
  std::vector<std::string> set;
  std::vector<std::string> unset;
};

TlsVariables ReadTlsVariables(const std::function<const char*(const char*)>& getenv) {
  TlsVariables tls;
  for (auto [name, path] :
       {std::pair{kTlsCertEnv, &tls.paths.cert_path}, std::pair{kTlsKeyEnv, &tls.paths.key_path},
        std::pair{kTlsCaEnv, &tls.paths.ca_path}}) {
    *path = Get(getenv, name);
    (path->empty() ? tls.unset : tls.set).emplace_back(name);
  }
  return tls;
}

// MEMPROF_LISTEN and MEMPROF_TLS_*: the remote listener, or a warning
// saying why there is none.
std::optional<RemoteConfig> ReadRemote(const std::function<const char*(const char*)>& getenv,
                                       std::vector<std::string>& warnings) {
  TlsVariables tls = ReadTlsVariables(getenv);
  const std::string listen = Get(getenv, kListenEnv);
  if (listen.empty()) {
    if (!tls.set.empty()) {
      warnings.push_back(std::string(kNotListeningOnTcp) + JoinNames(tls.set) + IsOrAre(tls.set) +
                         " set but MEMPROF_LISTEN is not; set MEMPROF_LISTEN=HOST:PORT to serve "
                         "remote clients");
    }
    return std::nullopt;
  }
  auto address = ParseTcpAddress(listen);
  if (!address) {
    warnings.push_back(std::string(kNotListeningOnTcp) + "MEMPROF_LISTEN: " +
                       address.error().message);
    return std::nullopt;
  }
  if (!tls.unset.empty()) {
    warnings.push_back(std::string(kNotListeningOnTcp) + "MEMPROF_LISTEN=" + listen +
                       " requires mutual TLS, but " + JoinNames(tls.unset) + IsOrAre(tls.unset) +
                       " not set; set MEMPROF_TLS_CERT (the agent's certificate chain, PEM), "
                       "MEMPROF_TLS_KEY (its private key, PEM) and MEMPROF_TLS_CA (the CA "
                       "certificates that client certificates must chain to, PEM)");
    return std::nullopt;
  }
  tls.paths.address = *address;
  return tls.paths;
}

template <typename Policy>
Policy ReadChoice(const std::function<const char*(const char*)>& getenv, const char* name,
                  std::initializer_list<std::pair<const char*, Policy>> choices, Policy fallback,
                  std::vector<std::string>& warnings) {
  const std::string value = Lower(Get(getenv, name));
  if (value.empty()) return fallback;
  std::string valid;
  for (const auto& [text, policy] : choices) {
    if (value == text) return policy;
    valid += std::string(valid.empty() ? "" : ", ") + text;
  }
  warnings.push_back(std::string(name) + "=" + value + " ignored: expected one of " + valid);
  return fallback;
}

// A duration variable from 100 ms to `max`; unset or invalid (with a
// warning) leaves `value` as it is.
void ReadDuration(const std::function<const char*(const char*)>& getenv, const char* name,
                  std::chrono::milliseconds max, std::chrono::milliseconds& value,
                  std::vector<std::string>& warnings) {
  const std::string text = Get(getenv, name);
  if (text.empty()) return;
  auto d = ParseDuration(text, std::chrono::milliseconds(100), max);
  if (d) {
    value = *d;
  } else {
    warnings.push_back(std::string(name) + " ignored: " + d.error().message);
  }
}

}  // namespace

AgentConfig ConfigFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  AgentConfig config;
  config.enabled = !AgentSwitchedOff(Get(getenv, kAgentSwitchEnv));
  config.socket_dir = SocketDirectoryFrom(Get(getenv, kSocketDirEnv));
  config.log_level = Get(getenv, "MEMPROF_LOG_LEVEL");
  config.malloc_conf = Get(getenv, "MALLOC_CONF");
  ReadDuration(getenv, "MEMPROF_IDLE_TIMEOUT", std::chrono::hours(24), config.idle_timeout,
               config.warnings);
  ReadDuration(getenv, "MEMPROF_DUMP_STALL_TIMEOUT", std::chrono::hours(1),
               config.dump_stall_timeout, config.warnings);
  config.remote = ReadRemote(getenv, config.warnings);
  config.fork = ReadChoice(getenv, kForkEnv,
                           {{"follow", ForkPolicy::kFollow}, {"off", ForkPolicy::kOff}},
                           ForkPolicy::kFollow, config.warnings);
  config.children = ReadChoice(
      getenv, kChildrenEnv,
      {{"none", ChildrenPolicy::kNone}, {"inherit", ChildrenPolicy::kInherit}},
      ChildrenPolicy::kNone, config.warnings);
  config.server_library = Get(getenv, "MEMPROF_SERVER_LIBRARY");
  config.started_by = Get(getenv, kStartedByVariable);
  return config;
}

}  // namespace memprof::agent
