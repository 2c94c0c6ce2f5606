#include "cli/app/command_line.h"

#include "cli/app/help_formatter.h"
#include "cli/commands/command_registry.h"
#include "cli/commands/option_validators.h"
#include "common/version.h"

namespace memprof::cli {

CommandLine::CommandLine() : commands(MakeCommands()) {
  // Before the subcommands are added: they copy the formatter.
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", std::string("memprofctl ") + kVersion);
  CLI::Option* verbose =
      app.add_flag("-v,--verbose", verbosity, "More log output on stderr (-vv for debug)");
  app.add_flag("-q,--quiet", quiet,
               "Only errors on stderr: no notes of what was written where, no symbolization "
               "summary, no warnings")
      ->excludes(verbose);
  app.add_option("--timeout", timeout,
                 "Deadline of each request to an agent (default 10s; for a dump, of the wait "
                 "until the agent starts sending it, which includes waiting for its turn when "
                 "the agent is busy); with several targets, also of all the work for each one")
      ->check(DurationValidator(kMinTimeout, kMaxTimeout))
      ->type_name("DURATION");
  app.add_option("--config", config,
                 "Settings file (default: $MEMPROFCTL_CONFIG, else "
                 "$XDG_CONFIG_HOME/memprof/memprofctl.toml or ~/.config/memprof/memprofctl.toml "
                 "if it exists); holds tls-ca, tls-cert, tls-key for remote agents")
      ->type_name("FILE");
  for (const auto& command : commands) {
    CLI::App* sub = command->Register(app);
    sub->fallthrough();  // global options may follow the command name
    sub->group("Commands");
    subcommands.push_back(sub);
  }
  // Set after the subcommands so they do not inherit these: leftovers reach
  // the top level, where RunCli reports them with the valid choices.
  app.require_subcommand(0, 1);
  app.allow_extras();
  app.footer(RootFooter());
  DropValidatorDescriptions(app);
}

Command* CommandLine::ParsedCommand() const {
  for (size_t i = 0; i < commands.size(); ++i) {
    if (subcommands[i]->parsed()) return commands[i].get();
  }
  return nullptr;
}

}  // namespace memprof::cli
