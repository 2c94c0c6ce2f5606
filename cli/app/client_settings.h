#ifndef MEMPROF_CLI_APP_CLIENT_SETTINGS_H_
#define MEMPROF_CLI_APP_CLIENT_SETTINGS_H_

#include <map>
#include <string>
#include <vector>

#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// The environment variables memprofctl's settings read; ProductionEnvironment
// copies these into CliEnvironment::variables.
std::vector<std::string> SettingsVariables();

// The config file to read: `config_flag` (--config FILE), else
// $MEMPROFCTL_CONFIG, else $XDG_CONFIG_HOME/memprof/memprofctl.toml or
// $HOME/.config/memprof/memprofctl.toml; "" when there is no home to look in.
std::string ConfigFilePath(const std::string& config_flag,
                           const std::map<std::string, std::string>& variables);

// The TLS files for remote agents that the command line may leave out, each
// from $MEMPROFCTL_TLS_CA/_CERT/_KEY, else from the config file's tls-ca,
// tls-cert, tls-key (a relative path there is relative to the file). The
// file named by --config or $MEMPROFCTL_CONFIG must exist; the default one
// is read only when it does. A file that cannot be read, a malformed line or
// an unknown key is a usage error with the file and line.
[[nodiscard]] Result<TlsDefaults> LoadTlsDefaults(
    const std::string& config_flag, const std::map<std::string, std::string>& variables);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_CLIENT_SETTINGS_H_
