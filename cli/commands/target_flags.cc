#include "cli/commands/target_flags.h"

#include "cli/commands/option_validators.h"

namespace memprof::cli {
namespace {

constexpr char kTargetsGroup[] = "Targets";

// One word per occurrence (N, or N,N,...), the option repeatable: the word
// after it is an argument of its own, not one more target, so that
// `deactivate --pid 25152 1` is a usage error rather than two targets.
CLI::Option* OneWordEach(CLI::Option* option) {
  return option->type_size(1)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
}

void AddTlsOptions(CLI::App& command, TargetOptions& options) {
  const auto add = [&](const char* flag, std::string& value, const char* what) {
    command.add_option(flag, value, what)
        ->type_name("FILE")
        ->check(ExistingFileValidator())
        ->group(kTargetsGroup);
  };
  add("--tls-ca", options.tls_ca,
      "CA certificate(s) (PEM) that signed the remote agents' certificates (default: "
      "$MEMPROFCTL_TLS_CA, else tls-ca in the --config file)");
  add("--tls-cert", options.tls_cert,
      "Our client certificate (PEM), signed by the agents' CA (default: $MEMPROFCTL_TLS_CERT, "
      "else tls-cert in the --config file)");
  add("--tls-key", options.tls_key,
      "The private key (PEM) of --tls-cert (default: $MEMPROFCTL_TLS_KEY, else tls-key in the "
      "--config file)");
}

}  // namespace

CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options) {
  CLI::Option* pid = OneWordEach(command.add_option(
      "--pid", options.pids,
      "Process(es) to talk to: N, or N,N,... or repeated (default: $MEMPROF_PID, else the only "
      "process with an agent)"));
  pid->envname("MEMPROF_PID")
      ->delimiter(',')
      ->check(PidValidator())
      ->type_name("PID")
      ->group(kTargetsGroup);
  CLI::Option* all = command
                         .add_flag("--all", options.all,
                                   "Every process with an agent here (with --name: every one "
                                   "that matches)")
                         ->excludes(pid)
                         ->group(kTargetsGroup);
  CLI::Option* name =
      command
          .add_option("--name", options.name,
                      "The only process with an agent whose command name or line matches this "
                      "regular expression (ECMAScript, searched anywhere); with --all, every one")
          ->type_name("REGEX")
          ->excludes(pid)
          ->group(kTargetsGroup);
  CLI::Option* file =
      command
          .add_option("--targets", options.targets_file,
                      "Read the targets from FILE, one per line: a pid, unix:/path/to.sock or "
                      "HOST:PORT ('#' starts a comment)")
          ->type_name("FILE")
          ->excludes(pid)
          ->excludes(all)
          ->excludes(name)
          ->group(kTargetsGroup);
  OneWordEach(command.add_option("--target", options.addresses,
                                 "A remote agent HOST:PORT (mutual TLS; needs --tls-ca, "
                                 "--tls-cert, --tls-key); repeatable"))
      ->type_name("HOST:PORT")
      ->excludes(all)
      ->excludes(name)
      ->excludes(file)
      ->group(kTargetsGroup);
  AddTlsOptions(command, options);
  command
      .add_option("--parallel", options.parallel,
                  "With several targets: work on at most N at once (1 to 256, default 8)")
      ->check(CountValidator(1, kMaxParallel, "number"))
      ->type_name("N")
      ->group(kTargetsGroup);
  return pid;
}

CLI::Option* AddForceFlag(CLI::App& command, bool& force, CLI::Option* out) {
  return command
      .add_flag("--force", force,
                "Replace the --out FILE if it exists (without --force an existing file is an "
                "error and stays as it was)")
      ->needs(out);
}

CLI::Option* AddJsonFlag(CLI::App& command, bool& json) {
  return command.add_flag("--json", json, "Machine-readable output (snake_case keys, fixed types)");
}

}  // namespace memprof::cli
