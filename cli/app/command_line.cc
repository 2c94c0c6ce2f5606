#include "cli/app/command_line.h"

#include "cli/app/help_formatter.h"
#include "cli/app/usage_errors.h"
#include "cli/commands/command_registry.h"
#include "cli/commands/option_validators.h"
#include "common/version.h"

namespace memprof::cli {

namespace {

bool AsksForHelpOrVersion(const std::vector<std::string>& args) {
  for (const std::string& word : args) {
    if (word == "--") return false;
    if (word == "-h" || word == "--help" || word == "--help-all" || word == "--version")
      return true;
  }
  return false;
}

}  // namespace

CommandLine::CommandLine() : CommandLine(std::vector<std::string>{}) {}

CommandLine::CommandLine(const std::vector<std::string>& args) {
  AddGlobalOptions();
  const std::optional<std::string> word = CommandWord(app, args);
  if (word && !AsksForHelpOrVersion(args)) {
    for (const CommandEntry& entry : CommandTable()) {
      if (entry.name == *word) commands.push_back(entry.make());
    }
  }
  if (commands.empty()) commands = MakeCommands();
  AddCommands();
}

void CommandLine::AddGlobalOptions() {
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
                 "the agent is busy, and then of each wait for more of it); with several "
                 "targets, also of all the work for each one")
      ->check(DurationValidator(kMinTimeout, kMaxTimeout))
      ->type_name("DURATION");
  app.add_option("--config", config,
                 "Settings file (default: $MEMPROFCTL_CONFIG, else "
                 "$XDG_CONFIG_HOME/memprof/memprofctl.toml or ~/.config/memprof/memprofctl.toml "
                 "if it exists); holds tls-ca, tls-cert, tls-key for remote agents")
      ->type_name("FILE");
}

void CommandLine::AddCommands() {
  for (const auto& command : commands) {
    CLI::App* sub = command->Register(app);
    sub->fallthrough();  // global options may follow the command name
    sub->group("Commands");
    if (const std::string usage = command->usage(); !usage.empty()) {
      sub->formatter(std::make_shared<HelpFormatter>(usage));
    }
    subcommands.push_back(sub);
  }
  AddHelpCommands();
  // Set after the subcommands so they do not inherit these: leftovers reach
  // the top level, where RunCli reports them with the valid choices.
  app.require_subcommand(0, 1);
  app.allow_extras();
  app.footer(RootFooter());
  DropValidatorDescriptions(app);
}

void CommandLine::AddHelpCommands() {
  // A group of their own: "Commands:" lists what works on processes and
  // profiles, and each of those has a man page.
  help = app.add_subcommand("help",
                            "Show this help; `help COMMAND` shows the options of COMMAND (as "
                            "`memprofctl COMMAND --help`)");
  help->add_option("COMMAND", help_topic, "The command to show the options of");
  version = app.add_subcommand("version", "Show the version (as --version)");
  for (CLI::App* sub : {help, version}) {
    sub->fallthrough();
    sub->group("Help");
  }
}

Result<bool> CommandLine::PrintHelpOrVersion(std::ostream& out) const {
  if (version->parsed()) {
    out << app.version() << '\n';
    return true;
  }
  if (!help->parsed()) return false;
  // As CLI::App::help() would for --help, which `help` itself, being the
  // parsed command, would divert to its own help.
  if (help_topic.empty()) {
    out << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return true;
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() != help_topic) continue;
    out << sub->get_formatter()->make_help(sub, app.get_name() + " " + help_topic,
                                           CLI::AppFormatMode::Normal);
    return true;
  }
  return Fail(ErrorCode::kInvalidArgument,
              "help: " + UnexpectedArgumentMessage(app, nullptr, help_topic));
}

Command* CommandLine::ParsedCommand() const {
  for (size_t i = 0; i < commands.size(); ++i) {
    if (subcommands[i]->parsed()) return commands[i].get();
  }
  return nullptr;
}

}  // namespace memprof::cli
