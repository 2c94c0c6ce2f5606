#include "cli/app/usage_errors.h"

#include <algorithm>

namespace memprof::cli {
namespace {

const CLI::App* ParsedCommand(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  return parsed.empty() ? nullptr : parsed.front();
}

// Whether CLI11's message is about a global option ("--timeout: ...").
bool NamesGlobalOption(const CLI::App& app, const std::string& message) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos || message.rfind("-", 0) != 0) return false;
  return app.get_option_no_throw(message.substr(0, colon)) != nullptr;
}

}  // namespace

std::string ValidCommands(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands({})) {
    out += (out.empty() ? "" : ", ") + sub->get_name();
  }
  return out;
}

std::string ValidOptions(const CLI::App& app, bool with_help) {
  std::string out;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional() || (!with_help && opt == app.get_help_ptr())) continue;
    std::string name = opt->get_name(false, true);
    std::replace(name.begin(), name.end(), ',', '/');
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::string UnexpectedArgumentMessage(const CLI::App& app, const CLI::App* command,
                                      const std::string& argument) {
  const bool is_option = argument.size() > 1 && argument[0] == '-';
  if (command == nullptr && !is_option) {
    return "unknown command '" + argument + "' (valid commands: " + ValidCommands(app) + ")";
  }
  if (command == nullptr) {
    return "unknown option '" + argument + "' (valid options: " + ValidOptions(app) + ")";
  }
  const std::string kind = is_option ? "unknown option '" : "unexpected argument '";
  return kind + argument + "' for '" + command->get_name() +
         "' (valid options: " + ValidOptions(*command) + "; global: " + ValidOptions(app, false) +
         ")";
}

std::string ParseErrorMessage(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = ParsedCommand(app);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const CLI::App& owner = command != nullptr ? *command : app;
    const std::vector<std::string> extras = owner.remaining();
    if (!extras.empty()) return UnexpectedArgumentMessage(app, command, extras.front());
  }
  std::string message = error.what();
  if (command != nullptr && !NamesGlobalOption(app, message)) {
    message = command->get_name() + ": " + message;
  }
  return message;
}

}  // namespace memprof::cli
