#ifndef MEMPROF_CLI_TARGETS_TARGET_SELECTION_H_
#define MEMPROF_CLI_TARGETS_TARGET_SELECTION_H_

#include <memory>
#include <vector>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "cli/targets/target_spec.h"
#include "common/result.h"

namespace memprof::cli {

// Which targets a command runs on, decided from its options before any
// agent is contacted.
struct TargetSelection {
  // Empty in a single-target run that picks its target the classic way
  // (the only agent, --name's only match).
  std::vector<TargetSpec> specs;
  // A multi-target run: --all, --targets, or more than one --pid/--target.
  // Its output is one block (or JSON line) per target, a failing target
  // does not stop the others, and the exit code is 6 when any failed.
  // Decided by how the targets were named, never by how many were found, so
  // a script gets the same output shape whether one or fifty match.
  bool multi = false;
  // --tls-ca/--tls-cert/--tls-key, read when a remote target is named.
  std::shared_ptr<const TlsMaterial> tls;
};

// kInvalidArgument for a bad --targets file, remote targets without all
// three TLS files (or with unreadable ones), or --tls-* without a remote
// target; kNotFound when --all finds no agent.
[[nodiscard]] Result<TargetSelection> SelectTargets(const TargetOptions& options,
                                                    const TargetDiscovery& discovery);

// Looks one target up: a pid through the discovery (as --pid does), a Unix
// socket by its SO_PEERCRED, a remote agent by asking it (Status) for its
// pid and command.
[[nodiscard]] Result<Target> ResolveSpec(const TargetSpec& spec, const TargetSelection& selection,
                                         const TargetDiscovery& discovery, ProfileClient& client);

// The file-safe host name for a target's output files: this machine's for
// a local target, the address's host for a remote one.
std::string HostForFileNames(const Target& target);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_TARGET_SELECTION_H_
