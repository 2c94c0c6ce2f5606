#ifndef MEMPROF_CLI_APP_HELP_FORMATTER_H_
#define MEMPROF_CLI_APP_HELP_FORMATTER_H_

#include <CLI/CLI.hpp>
#include <string>

namespace memprof::cli {

// Help that reads like a well-kept Unix tool's: "  -o, --out FILE|-" and the
// description wrapped at 80 columns beside it, one blank line between
// blocks. CLI11 would add type names (TEXT, UINT), REQUIRED, defaults,
// "Needs:"/"Excludes:"/"Env:" notes and its validators' own descriptions
// (":FILE", "[1 - 1000000]"); each option's description says in words what
// it takes, its bounds and what it excludes. The help is also the source of
// the man pages (docs/man/make-man-page.sh): help2man reads an option's
// description, and its continuation lines at the same column, as one entry.
class HelpFormatter final : public CLI::Formatter {
 public:
  // `usage`: the arguments of the usage line, instead of CLI11's
  // "[OPTIONS] ..." (Command::usage()).
  explicit HelpFormatter(std::string usage = "");

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;

 private:
  std::string usage_;
};

// Drops the descriptions CLI11's own validators (ExistingFile, Range,
// IsMember...) append to an option's value name, in `app` and all its
// subcommands. Call it once every option is registered.
void DropValidatorDescriptions(CLI::App& app);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_HELP_FORMATTER_H_
