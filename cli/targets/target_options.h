#ifndef MEMPROF_CLI_TARGETS_TARGET_OPTIONS_H_
#define MEMPROF_CLI_TARGETS_TARGET_OPTIONS_H_

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/client/target.h"
#include "cli/targets/target_discovery.h"

namespace memprof::cli {

// How many targets a multi-target run works on at once, by default and at most.
inline constexpr size_t kDefaultParallel = 8;
inline constexpr size_t kMaxParallel = 256;

// A TLS file named outside the command line: its path and where it came from
// ("$MEMPROFCTL_TLS_CA", "tls-ca (FILE:LINE)"), for messages.
struct TlsFileSetting {
  std::string path;
  std::string origin;
};

// The TLS files for remote agents from the environment or the config file
// (cli/app/client_settings.h), each used only when its --tls-* flag is not
// given and only when a remote target is named.
struct TlsDefaults {
  TlsFileSetting ca;
  TlsFileSetting cert;
  TlsFileSetting key;
};

// Options shared by the commands that talk to agents: which targets
// (--pid, --name, --all, --targets, --target), how (TLS material for remote
// agents, --parallel) and --json.
struct TargetOptions {
  std::vector<pid_t> pids;             // --pid N[,N...] (repeatable) or $MEMPROF_PID
  std::string name;                    // --name REGEX
  bool all = false;                    // --all
  std::string targets_file;            // --targets FILE
  std::vector<std::string> addresses;  // --target HOST:PORT (repeatable)
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  TlsDefaults tls_defaults;  // for the --tls-* flags not given
  size_t parallel = kDefaultParallel;
  bool json = false;

  // The target of a single-target run: set by the target selection (or a
  // test). 0 with no `resolved`: the only agent, or --name's only match.
  pid_t pid = 0;
  // A target already looked up (each target of a multi-target run, a remote
  // one): the command talks to it without consulting the discovery.
  std::optional<Target> resolved;

  TargetSelector selector() const { return TargetSelector{pid, name, resolved}; }
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_TARGET_OPTIONS_H_
