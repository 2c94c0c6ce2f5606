#include "cli/targets/target_selection.h"

#include <sys/stat.h>

#include <algorithm>

#include "cli/io/dump_file_name.h"
#include "cli/io/logging.h"
#include "common/path.h"
#include "common/text_file.h"

namespace memprof::cli {
namespace {

bool Contains(const std::vector<TargetSpec>& specs, const TargetSpec& spec) {
  return std::find(specs.begin(), specs.end(), spec) != specs.end();
}

void AddUnique(std::vector<TargetSpec>& specs, TargetSpec spec) {
  if (!Contains(specs, spec)) specs.push_back(std::move(spec));
}

bool NamesRemoteTarget(const std::vector<TargetSpec>& specs) {
  return std::any_of(specs.begin(), specs.end(),
                     [](const TargetSpec& s) { return s.kind == TargetSpec::Kind::kAddress; });
}

Result<std::string> ReadPem(const std::string& flag, const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text) return Fail(ErrorCode::kInvalidArgument, flag + ": " + text.error().message);
  if (text->find("-----BEGIN ") == std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, flag + ": " + path + " is not a PEM file");
  }
  return std::move(*text);
}

// A private key others can read is no longer private: said, not refused.
void WarnIfReadableByOthers(const TlsFileSetting& key) {
  struct stat st {};
  if (::stat(key.path.c_str(), &st) != 0 || (st.st_mode & (S_IRGRP | S_IROTH)) == 0) return;
  Log().warn("{}: {} is readable by group or others (mode {:04o}); chmod 600 it", key.origin,
             key.path, st.st_mode & 07777);
}

// The flag's value, else the one from the environment or the config file.
TlsFileSetting Pick(const std::string& flag_value, const char* flag,
                    const TlsFileSetting& fallback) {
  if (!flag_value.empty()) return {flag_value, flag};
  return fallback;
}

// The TLS material for remote targets: all three files or none. Only the
// flags make a local run an error; the environment and the config file are
// there for the runs that name a remote target.
Result<std::shared_ptr<const TlsMaterial>> LoadTls(const TargetOptions& options, bool remote) {
  const bool any = !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty();
  if (!remote) {
    if (!any) return std::shared_ptr<const TlsMaterial>();
    return Fail(ErrorCode::kInvalidArgument,
                "--tls-ca, --tls-cert and --tls-key are for remote targets (--target HOST:PORT, "
                "or HOST:PORT lines in --targets); local agents are reached through their Unix "
                "socket");
  }
  const TlsFileSetting ca = Pick(options.tls_ca, "--tls-ca", options.tls_defaults.ca);
  const TlsFileSetting cert = Pick(options.tls_cert, "--tls-cert", options.tls_defaults.cert);
  const TlsFileSetting key = Pick(options.tls_key, "--tls-key", options.tls_defaults.key);
  if (ca.path.empty() || cert.path.empty() || key.path.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "remote targets need --tls-ca, --tls-cert and --tls-key: a remote agent accepts "
                "only mutual TLS (each may also come from $MEMPROFCTL_TLS_CA, _CERT, _KEY or "
                "from tls-ca, tls-cert, tls-key in the config file)");
  }
  auto tls = std::make_shared<TlsMaterial>();
  auto ca_pem = ReadPem(ca.origin, ca.path);
  if (!ca_pem) return Fail(ca_pem.error());
  auto cert_pem = ReadPem(cert.origin, cert.path);
  if (!cert_pem) return Fail(cert_pem.error());
  auto key_pem = ReadPem(key.origin, key.path);
  if (!key_pem) return Fail(key_pem.error());
  WarnIfReadableByOthers(key);
  tls->ca_pem = std::move(*ca_pem);
  tls->cert_pem = std::move(*cert_pem);
  tls->key_pem = std::move(*key_pem);
  return std::shared_ptr<const TlsMaterial>(std::move(tls));
}

Result<std::vector<TargetSpec>> AllLive(const TargetOptions& options,
                                        const TargetDiscovery& discovery) {
  auto pids = discovery.LivePids(options.name);
  if (!pids) return Fail(pids.error());
  if (pids->empty()) {
    std::string msg = "--all: no process with a memprof agent";
    if (!options.name.empty()) msg += " matches --name '" + options.name + "'";
    return Fail(ErrorCode::kNotFound,
                msg + " (searched " + discovery.socket_dir() + "; `memprofctl list` shows them)");
  }
  std::vector<TargetSpec> specs;
  for (pid_t pid : *pids) specs.push_back(TargetSpec::Pid(pid, "--all"));
  return specs;
}

Result<std::vector<TargetSpec>> NamedSpecs(const TargetOptions& options,
                                           const TargetDiscovery& discovery) {
  if (options.all) return AllLive(options, discovery);
  std::vector<TargetSpec> specs;
  if (!options.targets_file.empty()) {
    auto listed = ReadTargetsFile(options.targets_file);
    if (!listed) return Fail(listed.error());
    if (listed->empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "--targets: " + options.targets_file + " lists no targets");
    }
    for (TargetSpec& spec : *listed) AddUnique(specs, std::move(spec));
  }
  for (pid_t pid : options.pids) AddUnique(specs, TargetSpec::Pid(pid));
  for (const std::string& text : options.addresses) {
    auto address = ParseRemoteAddress(text);
    if (!address) return Fail(ErrorCode::kInvalidArgument, "--target: " + address.error().message);
    AddUnique(specs, TargetSpec::Address(*address));
  }
  return specs;
}

}  // namespace

Result<TargetSelection> SelectTargets(const TargetOptions& options,
                                      const TargetDiscovery& discovery) {
  TargetSelection selection;
  selection.multi = options.all || !options.targets_file.empty() ||
                    options.pids.size() + options.addresses.size() > 1;
  auto specs = NamedSpecs(options, discovery);
  if (!specs) return Fail(specs.error());
  selection.specs = std::move(*specs);
  auto tls = LoadTls(options, NamesRemoteTarget(selection.specs));
  if (!tls) return Fail(tls.error());
  selection.tls = std::move(*tls);
  return selection;
}

Result<Target> ResolveSpec(const TargetSpec& spec, const TargetSelection& selection,
                           const TargetDiscovery& discovery, ProfileClient& client) {
  switch (spec.kind) {
    case TargetSpec::Kind::kPid:
      return discovery.Resolve(spec.pid);
    case TargetSpec::Kind::kUnixSocket:
      return discovery.ResolveSocketPath(spec.value);
    case TargetSpec::Kind::kAddress:
      break;
  }
  Target target;
  target.address = spec.value;
  target.tls = selection.tls;
  auto status = client.Status(target);
  if (!status) return Fail(status.error());
  target.pid = status->pid();
  const std::string& exe = status->executable();
  target.command = std::string(PathBasename(exe));
  return target;
}

std::string HostForFileNames(const Target& target) {
  return target.remote() ? FileSafeHostName(AddressHost(target.address)) : LocalFileSafeHostName();
}

}  // namespace memprof::cli
