#include "tests/docs/cli_help.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tests/support/command_runner.h"
#include "tests/support/temp_dir.h"

namespace memprof::docs {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;

// memprofctl ARGS with an empty socket directory of its own.
CommandResult Memprofctl(const std::vector<std::string>& args) {
  test_support::TempDir sockets("memprof-docs");
  std::vector<std::string> argv = {MEMPROF_IT_MEMPROFCTL};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {{"MEMPROF_SOCKET_DIR", sockets.path()}});
}

}  // namespace

std::string HelpOf(const std::vector<std::string>& args) {
  std::vector<std::string> argv = args;
  argv.push_back("--help");
  const CommandResult r = Memprofctl(argv);
  EXPECT_EQ(r.exit_code, 0) << r;
  return r.out;
}

std::vector<std::string> HelpCommands(const std::string& heading) {
  std::istringstream help(HelpOf({}));
  std::vector<std::string> commands;
  bool in_commands = false;
  const std::regex command_line(R"(^  ([a-z][a-z-]*)\s{2,}\S.*)");
  for (std::string line; std::getline(help, line);) {
    if (line == heading) {
      in_commands = true;
      continue;
    }
    std::smatch m;
    if (in_commands && std::regex_match(line, m, command_line)) {
      commands.push_back(m[1]);
    } else if (in_commands && !line.starts_with("   ")) {
      break;  // the end of the list (a blank line)
    }
  }
  EXPECT_GE(commands.size(), heading == "Commands:" ? 10u : 2u)
      << "no command list under " << heading << " in memprofctl --help";
  return commands;
}

std::set<std::string> OptionsIn(const std::string& help) {
  std::set<std::string> options;
  std::istringstream in(help);
  // "  -o, --out FILE|-   text" under "Options:" or another group of options
  // ("Targets:"): the names before the value. Not the option names in prose.
  const std::regex name(R"((?:^  |, )(--?[A-Za-z0-9][A-Za-z0-9-]*))");
  const std::set<std::string> groups = {"Options:", "Targets:"};
  bool in_group = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ') in_group = groups.contains(line);
    if (!in_group || !line.starts_with("  -")) continue;
    const std::string left = line.substr(0, line.find("  ", 2));
    for (std::sregex_iterator it(left.begin(), left.end(), name), end; it != end; ++it) {
      options.insert((*it)[1]);
    }
  }
  return options;
}

namespace {

// The values the usage error of `args` lists: "(valid: heap, text, ...)",
// "(valid: jemalloc, tcmalloc)".
std::set<std::string> ValidValuesOf(const std::vector<std::string>& args) {
  const CommandResult r = Memprofctl(args);
  EXPECT_EQ(r.exit_code, 2) << r;
  std::smatch m;
  std::set<std::string> values;
  if (std::regex_search(r.err, m, std::regex(R"(\(valid: ([a-z, ]+)\))"))) {
    std::string list = m[1];
    for (char& c : list) c = c == ',' ? ' ' : c;
    values = Words(list);
  }
  EXPECT_FALSE(values.empty()) << "no valid values named in: " << r;
  return values;
}

}  // namespace

std::set<std::string> FormatsOf(const std::string& command,
                                const std::vector<std::string>& required) {
  std::vector<std::string> args = {command};
  args.insert(args.end(), required.begin(), required.end());
  args.insert(args.end(), {"--format", "no-such-format"});
  return ValidValuesOf(args);
}

std::set<std::string> AllocatorsOfRun() {
  return ValidValuesOf({"run", "--allocator", "no-such-allocator", "--", "true"});
}

std::map<std::string, std::set<std::string>> FormatsOfEachCommand() {
  return {{"dump", FormatsOf("dump", {"--out", "x"})},
          {"profile", FormatsOf("profile", {"--duration", "1s", "--out", "x"})},
          {"stats", FormatsOf("stats")},
          // report checks its DUMP exists first: any existing file will do.
          {"report", FormatsOf("report", {MEMPROF_IT_MEMPROFCTL})}};
}

std::set<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> words;
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

}  // namespace memprof::docs
