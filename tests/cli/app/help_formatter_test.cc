#include "cli/app/help_formatter.h"

#include <gtest/gtest.h>

#include <iostream>
#include <regex>
#include <sstream>

#include "cli/app/cli_app.h"
#include "cli/app/command_line.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

// `memprofctl ARGS` through the real command line; its stdout. RunCli points
// the logger at `err`, which dies here: it goes back to std::cerr, or the
// next test to log would write to a destroyed stream.
std::string Help(std::vector<std::string> args) {
  args.push_back("--help");
  std::ostringstream out;
  std::ostringstream err;
  CliEnvironment env;
  env.out = &out;
  env.err = &err;
  env.watch_signals = false;
  EXPECT_EQ(RunCli(args, env), 0) << err.str();
  ConfigureLogging(std::cerr, 0);
  return out.str();
}

// What CLI11 adds to the left column by itself: type names, REQUIRED,
// defaults, validator descriptions (":FILE", "[1 - 256]"), Needs/Excludes/Env.
const std::regex kClutter(
    R"(\b(TEXT|UINT|INT|FLOAT|BOOLEAN|REQUIRED|Needs|Excludes|Env)\b|:(FILE|DIR|PATH)\b|\[\d+ - \d+\])");

TEST(HelpFormatterTest, NoHelpHasCli11TypeNamesOrClutter) {
  CommandLine cl;
  std::vector<std::vector<std::string>> all = {{}};
  for (const CLI::App* sub : cl.app.get_subcommands({})) all.push_back({sub->get_name()});
  for (const auto& args : all) {
    const std::string help = Help(args);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(help, m, kClutter))
        << (args.empty() ? "memprofctl" : args[0]) << ": '" << m.str() << "' in\n" << help;
  }
}

TEST(HelpFormatterTest, OptionsReadLikeAUnixToolsHelp) {
  const std::string dump = Help({"dump"});
  for (const char* text : {"  -o, --out FILE|-", "  --pid PID", "  --out-dir DIR",
                           "  --every DURATION", "  -f, --format FORMAT", "  --target HOST:PORT",
                           "  --all ", "Usage: memprofctl dump [OPTIONS]"}) {
    EXPECT_NE(dump.find(text), std::string::npos) << text << "\n" << dump;
  }
  EXPECT_NE(Help({"exporter"}).find("  --listen HOST:PORT"), std::string::npos);
  EXPECT_NE(Help({"report"}).find("  --base DUMP"), std::string::npos);
}

TEST(HelpFormatterTest, RootHelpListsCommandsExitCodesAndEnvironment) {
  const std::string help = Help({});
  for (const char* text : {"Usage: memprofctl [OPTIONS] [COMMAND]", "\nCommands:\n",
                           "  list ", "  report ", "Exit codes:", "Environment:",
                           "MEMPROF_SOCKET_DIR", "  --timeout DURATION"}) {
    EXPECT_NE(help.find(text), std::string::npos) << text << "\n" << help;
  }
}

}  // namespace
}  // namespace memprof::cli
