// Which commands a command line registers: only the one it names, unless it
// asks for help or names none; and the registry's names are the names the
// commands register under.
#include "cli/app/command_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands/command_registry.h"

namespace memprof::cli {
namespace {

std::vector<std::string> RegisteredNames(const CommandLine& cl) {
  std::vector<std::string> names;
  for (const CLI::App* sub : cl.subcommands) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> TableNames() {
  std::vector<std::string> names;
  for (const CommandEntry& entry : CommandTable()) names.emplace_back(entry.name);
  return names;
}

TEST(CommandLineTest, EachCommandRegistersUnderItsNameInTheTable) {
  ASSERT_EQ(CommandTable().size(), 13u);
  for (const CommandEntry& entry : CommandTable()) {
    const CommandLine cl(std::vector<std::string>{std::string(entry.name)});
    EXPECT_EQ(RegisteredNames(cl), std::vector<std::string>{std::string(entry.name)});
    ASSERT_EQ(cl.commands.size(), 1u);
  }
  EXPECT_EQ(RegisteredNames(CommandLine()), TableNames());
}

TEST(CommandLineTest, OnlyTheNamedCommandAfterTheGlobalOptionsAndTheirValues) {
  const std::vector<std::vector<std::string>> lines = {
      {"stats", "--pid", "1"},         {"-q", "stats", "--pid", "1"},
      {"--timeout", "5s", "stats"},    {"--timeout=5s", "-v", "stats", "dump"},
      {"--config", "report", "stats"},  // "report" is the value of --config
  };
  for (const auto& line : lines) {
    EXPECT_EQ(RegisteredNames(CommandLine(line)), std::vector<std::string>{"stats"})
        << ::testing::PrintToString(line);
  }
}

TEST(CommandLineTest, EveryCommandForHelpVersionOrNoCommandWord) {
  const std::vector<std::vector<std::string>> lines = {
      {},
      {"stats", "--help"},
      {"-h", "stats"},
      {"--version"},
      {"stats", "--help-all"},
      {"help", "stats"},
      {"version"},
      {"stat", "--pid", "1"},   // mistyped: the message suggests among all
      {"--pid", "5", "stats"},  // "5" is in the command's place
      {"--", "stats"},
  };
  for (const auto& line : lines) {
    EXPECT_EQ(RegisteredNames(CommandLine(line)), TableNames()) << ::testing::PrintToString(line);
  }
}

TEST(CommandLineTest, HelpAfterTheSeparatorIsTheRunCommandsOwn) {
  EXPECT_EQ(RegisteredNames(CommandLine({"run", "--", "server", "--help"})),
            std::vector<std::string>{"run"});
}

}  // namespace
}  // namespace memprof::cli
