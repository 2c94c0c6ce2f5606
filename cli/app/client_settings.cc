#include "cli/app/client_settings.h"

#include <sys/stat.h>

#include <cerrno>
#include <optional>

#include "cli/app/config_file.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

constexpr char kConfigVariable[] = "MEMPROFCTL_CONFIG";

struct TlsKey {
  const char* variable;
  const char* key;
};
constexpr TlsKey kCa{"MEMPROFCTL_TLS_CA", "tls-ca"};
constexpr TlsKey kCert{"MEMPROFCTL_TLS_CERT", "tls-cert"};
constexpr TlsKey kKey{"MEMPROFCTL_TLS_KEY", "tls-key"};

std::string Variable(const std::map<std::string, std::string>& variables, const char* name) {
  auto it = variables.find(name);
  return it == variables.end() ? std::string() : it->second;
}

// Whether the default config file is there to read. A path we may not even
// look into (EACCES: another user's HOME, kept by `sudo -u` or setpriv) has
// no file of ours: the command goes on without one, as if none existed.
bool DefaultExists(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  const int err = errno;
  if (err == EACCES) Log().debug("config file {}: its directory is closed to us; none used", path);
  return err != ENOENT && err != ENOTDIR && err != EACCES;
}

// Anyone who may write the file may point us at their CA and key.
void WarnIfWritableByOthers(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return;
  Log().warn("config file {} is writable by group or others; chmod go-w it", path);
}

Result<std::optional<ConfigFile>> ReadConfig(const std::string& config_flag,
                                             const std::map<std::string, std::string>& variables) {
  const std::string path = ConfigFilePath(config_flag, variables);
  const bool named = !config_flag.empty() || !Variable(variables, kConfigVariable).empty();
  if (path.empty() || (!named && !DefaultExists(path))) return std::optional<ConfigFile>();
  auto file = ConfigFile::Load(path, {kCa.key, kCert.key, kKey.key});
  if (!file) return Fail(file.error());
  WarnIfWritableByOthers(path);
  return std::optional<ConfigFile>(std::move(*file));
}

// A path in the config file is relative to the file's directory.
std::string FromConfigDirectory(const std::string& config, const std::string& path) {
  if (path.starts_with('/')) return path;
  const size_t slash = config.rfind('/');
  return slash == std::string::npos ? path : config.substr(0, slash + 1) + path;
}

TlsFileSetting Pick(const TlsKey& which, const std::map<std::string, std::string>& variables,
                    const std::optional<ConfigFile>& config) {
  if (std::string value = Variable(variables, which.variable); !value.empty()) {
    return {value, std::string("$") + which.variable};
  }
  if (!config) return {};
  const ConfigFile::Setting* setting = config->Find(which.key);
  if (setting == nullptr) return {};
  return {FromConfigDirectory(config->path(), setting->value), config->Origin(which.key)};
}

}  // namespace

std::vector<std::string> SettingsVariables() {
  return {kConfigVariable, kCa.variable, kCert.variable, kKey.variable, "XDG_CONFIG_HOME", "HOME"};
}

std::string ConfigFilePath(const std::string& config_flag,
                           const std::map<std::string, std::string>& variables) {
  if (!config_flag.empty()) return config_flag;
  if (std::string named = Variable(variables, kConfigVariable); !named.empty()) return named;
  // As the XDG base directory spec says: a relative $XDG_CONFIG_HOME is ignored.
  std::string base = Variable(variables, "XDG_CONFIG_HOME");
  if (!base.starts_with('/')) {
    const std::string home = Variable(variables, "HOME");
    if (home.empty()) return "";
    base = home + "/.config";
  }
  return base + "/memprof/memprofctl.toml";
}

Result<TlsDefaults> LoadTlsDefaults(const std::string& config_flag,
                                    const std::map<std::string, std::string>& variables) {
  auto config = ReadConfig(config_flag, variables);
  if (!config) return Fail(config.error());
  return TlsDefaults{Pick(kCa, variables, *config), Pick(kCert, variables, *config),
                     Pick(kKey, variables, *config)};
}

}  // namespace memprof::cli
