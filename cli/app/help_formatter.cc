#include "cli/app/help_formatter.h"

#include <regex>
#include <sstream>
#include <utility>

namespace memprof::cli {
namespace {

// Where descriptions start, and where every line ends.
constexpr size_t kDescriptionColumn = 30;
constexpr size_t kLineWidth = 80;

// Appends `line`'s words to `out`, whose last line is `column` wide, wrapped
// at kLineWidth with continuation lines at the description column.
void AppendWrapped(const std::string& line, std::string& out, size_t& column) {
  std::istringstream words(line);
  bool first = true;
  for (std::string word; words >> word; first = false) {
    if (!first && column + 1 + word.size() > kLineWidth) {
      out += "\n" + std::string(kDescriptionColumn, ' ');
      column = kDescriptionColumn;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
}

// "  NAME" padded to the description column (or alone on its line when it
// is too wide), then `description` wrapped; a '\n' in it starts a new line.
std::string Entry(const std::string& name, const std::string& description) {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  const std::string indent(kDescriptionColumn, ' ');
  out += out.size() + 2 > kDescriptionColumn ? "\n" + indent
                                             : std::string(kDescriptionColumn - out.size(), ' ');
  std::istringstream lines(description);
  bool first = true;
  for (std::string line; std::getline(lines, line); first = false) {
    if (!first) out += "\n" + indent;
    size_t column = kDescriptionColumn;
    AppendWrapped(line, out, column);
  }
  return out + "\n";
}

// CLI11 2.1 keeps an option's validators protected and has no count of them:
// get_validator(index) throws past the end, so dropping their descriptions
// threw once per option at every start. A derived class may name the
// protected member, and its pointer to member reads it from any CLI::Option.
struct ValidatorsOf : CLI::Option {
  static std::vector<CLI::Validator>& Get(CLI::Option& opt) {
    return opt.*(&ValidatorsOf::validators_);
  }
};

void DropDescriptions(CLI::Option& opt) {
  for (CLI::Validator& validator : ValidatorsOf::Get(opt)) validator.description("");
}

}  // namespace

HelpFormatter::HelpFormatter(std::string usage) : usage_(std::move(usage)) {
  column_width(kDescriptionColumn);
  label("SUBCOMMAND", "COMMAND");
  label("SUBCOMMANDS", "COMMANDS");
  label("Positionals", "Arguments");
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string name,
                                     CLI::AppFormatMode mode) const {
  std::string help = CLI::Formatter::make_help(app, std::move(name), mode);
  // A blank line between the description and "Usage:", and never two.
  help = std::regex_replace(help, std::regex("([^\n])\nUsage: "), "$1\n\nUsage: ");
  return std::regex_replace(help, std::regex("\n\n\n+"), "\n\n");
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  // A positional's name is its value's name: "DUMP...", as the usage line has it.
  const bool many = opt->get_expected_max() > 1;
  const std::string value = is_positional ? (many ? "..." : "") : make_option_opts(opt);
  return Entry(make_option_name(opt, is_positional) + value, make_option_desc(opt));
}

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  if (is_positional) return opt->get_name(true, false);
  std::string names;
  for (const std::string& name : opt->get_snames()) names += (names.empty() ? "-" : ", -") + name;
  for (const std::string& name : opt->get_lnames()) {
    names += (names.empty() ? "--" : ", --") + name;
  }
  return names;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";
  return " " + opt->get_type_name();
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  if (usage_.empty()) return CLI::Formatter::make_usage(app, std::move(name));
  return get_label("Usage") + ": " + name + " " + usage_ + "\n";
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  return Entry(sub->get_name(), sub->get_description());
}

void DropValidatorDescriptions(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) DropDescriptions(*opt);
  for (CLI::App* sub : app.get_subcommands({})) DropValidatorDescriptions(*sub);
}

}  // namespace memprof::cli
