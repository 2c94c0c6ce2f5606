#include "agent/core/env_snapshot.h"

#include <unistd.h>

#include <string_view>

namespace memprof::agent {

EnvSnapshot EnvSnapshot::Capture() {
  EnvSnapshot snapshot;
  for (char** var = environ; var != nullptr && *var != nullptr; ++var) {
    std::string_view entry(*var);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    if (name.starts_with("MEMPROF_") || name == "MALLOC_CONF") {
      snapshot.vars_.emplace(name, entry.substr(eq + 1));
    }
  }
  return snapshot;
}

const char* EnvSnapshot::Get(const char* name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.c_str();
}

}  // namespace memprof::agent
