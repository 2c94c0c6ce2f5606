#ifndef MEMPROF_AGENT_CORE_ENV_SNAPSHOT_H_
#define MEMPROF_AGENT_CORE_ENV_SNAPSHOT_H_

#include <map>
#include <string>

namespace memprof::agent {

// The agent's share of the environment (every MEMPROF_* variable and
// MALLOC_CONF), copied once when it starts. The host may change its
// environment later, and getenv() is not safe against a concurrent setenv();
// the agent reads only this copy.
class EnvSnapshot {
 public:
  static EnvSnapshot Capture();

  // nullptr when unset; valid until the snapshot changes.
  const char* Get(const char* name) const;
  void Set(const std::string& name, const std::string& value) { vars_[name] = value; }
  void Erase(const std::string& name) { vars_.erase(name); }

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_ENV_SNAPSHOT_H_
