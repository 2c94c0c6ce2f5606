#include "cli/app/usage_errors.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "cli/app/did_you_mean.h"

namespace memprof::cli {
namespace {

const CLI::App* ParsedCommand(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  return parsed.empty() ? nullptr : parsed.front();
}

bool IsOptionWord(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

// "--fromat=svg" -> "--fromat"; a cluster of short options stays whole.
std::string OptionWordName(const std::string& word) {
  return word.starts_with("--") ? word.substr(0, word.find('=')) : word;
}

const CLI::App* FindCommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// The option (or positional) called `name` of `command`, else a global one.
const CLI::Option* FindOption(const CLI::App& app, const CLI::App* command,
                              const std::string& name) {
  if (command != nullptr) {
    if (const CLI::Option* opt = command->get_option_no_throw(name)) return opt;
  }
  return app.get_option_no_throw(name);
}

bool TakesValue(const CLI::Option& opt) { return opt.get_items_expected_min() > 0; }

// An option word ("--out", "--out=F", "-o", "-oF", "-vv"): the option it
// names (the first of a cluster), or null when a name in it is unknown.
// `value_follows`: its value is the next word.
const CLI::Option* ReadOptionWord(const CLI::App& app, const CLI::App* command,
                                  const std::string& word, bool& value_follows) {
  value_follows = false;
  if (word.starts_with("--")) {
    const size_t equals = word.find('=');
    const CLI::Option* opt = FindOption(app, command, word.substr(0, equals));
    value_follows = opt != nullptr && equals == std::string::npos && TakesValue(*opt);
    return opt;
  }
  const CLI::Option* first = nullptr;
  for (size_t i = 1; i < word.size(); ++i) {
    const CLI::Option* opt = FindOption(app, command, std::string{'-', word[i]});
    if (opt == nullptr) return nullptr;
    if (first == nullptr) first = opt;
    if (TakesValue(*opt)) {  // the rest of the word, or the next word, is its value
      value_follows = i + 1 == word.size();
      break;
    }
  }
  return first;
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// Every name of the options of `command` (if any) and of the global ones.
std::vector<std::string> OptionNames(const CLI::App& app, const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* owner : {command, &app}) {
    if (owner == nullptr) continue;
    for (const CLI::Option* opt : owner->get_options()) {
      if (!opt->nonpositional()) continue;
      for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
      for (const std::string& name : opt->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

std::string UnknownCommand(const CLI::App& app, const std::string& word) {
  const std::string hint = DidYouMean(word, CommandNames(app));
  if (!hint.empty()) return "unknown command '" + word + "'" + hint;
  return "unknown command '" + word + "' (valid commands: " + ValidCommands(app) + ")";
}

std::string UnknownOption(const CLI::App& app, const CLI::App* command, const std::string& word) {
  const std::string quoted = "unknown option '" + word + "'";
  const std::string where = command != nullptr ? " for '" + command->get_name() + "'" : "";
  const std::string hint = DidYouMean(word, OptionNames(app, command));
  if (!hint.empty()) return quoted + where + hint;
  if (command == nullptr) return quoted + " (valid options: " + ValidOptions(app) + ")";
  return quoted + where + " (valid options: " + ValidOptions(*command) +
         "; global: " + ValidOptions(app, false) + ")";
}

bool IsWholeNumber(const std::string& word) {
  return !word.empty() &&
         std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string ValidCommands(const CLI::App& app) {
  std::string out;
  for (const std::string& name : CommandNames(app)) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string ValidOptions(const CLI::App& app, bool with_help) {
  std::string out;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional() || (!with_help && opt == app.get_help_ptr())) continue;
    std::string name;  // "-o/--out", "--prune/--no-prune"
    for (const std::string& s : opt->get_snames()) name += (name.empty() ? "-" : "/-") + s;
    for (const std::string& l : opt->get_lnames()) name += (name.empty() ? "--" : "/--") + l;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::optional<std::string> FindUnknownWord(const CLI::App& app,
                                           const std::vector<std::string>& args) {
  const CLI::App* command = nullptr;
  std::optional<std::string> unknown_option;  // the first, named once the command is known
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;  // the rest are arguments, whatever they look like
    if (IsOptionWord(word)) {
      bool value_follows = false;
      if (ReadOptionWord(app, command, word, value_follows) == nullptr && !unknown_option) {
        unknown_option = OptionWordName(word);
      }
      if (value_follows) ++i;
      continue;
    }
    if (command != nullptr) continue;  // an argument of the command: CLI11 takes it or not
    command = FindCommand(app, word);
    if (command == nullptr) {
      return unknown_option ? UnknownOption(app, nullptr, *unknown_option)
                            : UnknownCommand(app, word);
    }
  }
  if (unknown_option) return UnknownOption(app, command, *unknown_option);
  return std::nullopt;
}

std::optional<std::string> CommandWord(const CLI::App& app, const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (!IsOptionWord(word)) return word;
    bool value_follows = false;
    ReadOptionWord(app, nullptr, word, value_follows);
    if (value_follows) ++i;
  }
  return std::nullopt;
}

std::string UnexpectedArgumentMessage(const CLI::App& app, const CLI::App* command,
                                      const std::string& argument) {
  if (IsOptionWord(argument)) return UnknownOption(app, command, OptionWordName(argument));
  if (command == nullptr) return UnknownCommand(app, argument);
  const std::string unexpected =
      "unexpected argument '" + argument + "' for '" + command->get_name() + "'";
  // `deactivate --pid 25152 1`, `status 1234`: a pid where none is taken.
  if (IsWholeNumber(argument) && command->get_option_no_throw("--pid") != nullptr) {
    return unexpected + ": a process is named with --pid (--pid " + argument +
           "), several with --pid A,B or --pid A --pid B";
  }
  return unexpected + " (valid options: " + ValidOptions(*command) +
         "; global: " + ValidOptions(app, false) + ")";
}

namespace {

// Whether `message` is about a global option ("--timeout needs a value ...").
bool NamesGlobalOption(const CLI::App& app, const std::string& message) {
  const size_t end = message.find_first_of(": ");
  if (!message.starts_with("-")) return false;
  return app.get_option_no_throw(message.substr(0, end)) != nullptr;
}

// The option CLI11's `message` is about: the first word of it that names an
// option of `command`, a global one or a positional ("DUMP").
const CLI::Option* OptionIn(const CLI::App& app, const CLI::App* command,
                            const std::string& message) {
  std::istringstream words(message);
  for (std::string word; words >> word;) {
    while (!word.empty() && (word.back() == ':' || word.back() == ',')) word.pop_back();
    if (word.empty()) continue;
    if (const CLI::Option* opt = FindOption(app, command, word)) return opt;
  }
  return nullptr;
}

// "--top" or "DUMP".
std::string NameOf(const CLI::Option& opt) { return opt.get_name(false, false); }

// What an option takes, from its help: " (N): show at most N functions (text, json)".
std::string WhatItTakes(const CLI::Option& opt) {
  std::string description = opt.get_description();
  if (!description.empty()) {
    description[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(description[0])));
  }
  const std::string type = opt.get_positional() ? "" : opt.get_type_name();
  std::string out = type.empty() ? "" : " (" + type + ")";
  return description.empty() ? out : out + ": " + description;
}

std::string Quoted(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& value : values) out += (out.empty() ? "'" : ", '") + value + "'";
  return out;
}

// A value missing ("--top" last) or one too many ("--out a --out b").
std::string CountMismatch(const CLI::Option& opt) {
  const std::vector<std::string>& given = opt.results();
  if (opt.get_items_expected_max() > 0 &&
      given.size() > static_cast<size_t>(opt.get_items_expected_max())) {
    return NameOf(opt) + " is given more than once (" + Quoted(given) + "); give it once";
  }
  return NameOf(opt) + " needs a value" + WhatItTakes(opt);
}

// A flag given a value it cannot read ("--json=maybe"), or an option whose
// value could not be read as its type.
std::string Unreadable(const CLI::Option& opt) {
  const std::vector<std::string>& given = opt.results();
  const std::string value = given.empty() ? std::string() : given.back();
  if (!TakesValue(opt)) {
    return NameOf(opt) + " is a flag: give it alone, or as " + NameOf(opt) + "=true or " +
           NameOf(opt) + "=false (got '" + value + "')";
  }
  return NameOf(opt) + ": invalid value '" + value + "'" + WhatItTakes(opt);
}

// The message of a CLI11 error in our own words, when CLI11's would reach the
// user ("--top: 1 required N missing", "Could not convert: --json = maybe").
std::optional<std::string> OwnWords(const CLI::App& app, const CLI::App* command,
                                    const CLI::ParseError& error) {
  const CLI::Option* opt = OptionIn(app, command, error.what());
  if (opt == nullptr) return std::nullopt;
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) return CountMismatch(*opt);
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return NameOf(*opt) + " is required" + WhatItTakes(*opt);
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) return Unreadable(*opt);
  return std::nullopt;
}

}  // namespace

std::string ParseErrorMessage(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = ParsedCommand(app);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const CLI::App& owner = command != nullptr ? *command : app;
    const std::vector<std::string> extras = owner.remaining();
    if (!extras.empty()) return UnexpectedArgumentMessage(app, command, extras.front());
  }
  std::string message = OwnWords(app, command, error).value_or(error.what());
  if (command != nullptr && !NamesGlobalOption(app, message)) {
    message = command->get_name() + ": " + message;
  }
  return message;
}

}  // namespace memprof::cli
