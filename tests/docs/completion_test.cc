// The bash and zsh completion the package installs
// (packaging/completion/), driven in the real shells: every command and
// every option of every command's --help is offered, the --format values
// are those the CLI accepts, and --pid offers the pid of a real agent.
#include <gtest/gtest.h>

#include "tests/docs/cli_help.h"
#include "tests/integration/harness/integration_fixture.h"
#include "tests/support/command_runner.h"
#include "tests/support/debian_tools.h"
#include "tests/support/required_tool.h"
#include "tests/support/shell.h"

namespace memprof::docs {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;

const std::string kCompletionDir = MEMPROF_DOCS_SOURCE_DIR "/packaging/completion";
const std::string kMemprofctl = MEMPROF_IT_MEMPROFCTL;

std::string Dir(const std::string& path) { return path.substr(0, path.rfind('/')); }

// What bash offers for `memprofctl WORDS...` with the cursor on the last word
// (give "" to complete a new word): sources the script and calls its
// function as `complete -F` would. memprofctl is the built one.
std::set<std::string> BashCompletes(const std::vector<std::string>& words,
                                    const std::map<std::string, std::string>& env = {}) {
  std::string array = test_support::Quote(kMemprofctl);
  for (const std::string& word : words) array += " " + test_support::Quote(word);
  const std::string script = "source " + test_support::Quote(kCompletionDir + "/memprofctl.bash") +
                             " && COMP_WORDS=(" + array + ") && COMP_CWORD=" +
                             std::to_string(words.size()) +
                             " && _memprofctl && printf '%s\\n' \"${COMPREPLY[@]}\"";
  std::string bash;
  EXPECT_TRUE(test_support::CanRun(test_support::Bash(), &bash));
  const CommandResult r = RunCommand({bash, "--norc", "-c", script}, env);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  return Words(r.out);
}

// What zsh offers for the line `memprofctl WORDS...` followed by TAB, with
// compinit and the _memprofctl function (tests/docs/zsh_complete.zsh); the
// built memprofctl is first on PATH.
std::set<std::string> ZshCompletes(const std::string& line,
                                   std::map<std::string, std::string> env = {}) {
  std::string zsh;
  EXPECT_TRUE(test_support::CanRun(test_support::Zsh(), &zsh));
  env["PATH"] = Dir(kMemprofctl) + ":" + test_support::CurrentPath();
  const CommandResult r = RunCommand(
      {zsh, "-f", MEMPROF_DOCS_SOURCE_DIR "/tests/docs/zsh_complete.zsh", kCompletionDir, line},
      env, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r;
  return Words(r.out);
}

std::set<std::string> Commands() {
  const std::vector<std::string> commands = HelpCommands();
  return {commands.begin(), commands.end()};
}

// The commands and `help` and `version`, listed apart in the help.
std::set<std::string> AllCommands() {
  std::set<std::string> all = Commands();
  for (const std::string& command : HelpCommands("Help:")) all.insert(command);
  return all;
}

TEST(BashCompletionTest, CompletesCommands) {
  EXPECT_EQ(BashCompletes({"st"}), (std::set<std::string>{"stats", "status"}));
  EXPECT_EQ(BashCompletes({""}), AllCommands());
  EXPECT_EQ(BashCompletes({"-"}), OptionsIn(HelpOf({})));
  EXPECT_EQ(BashCompletes({"help", ""}), AllCommands());
  EXPECT_EQ(BashCompletes({"help", "rep"}), std::set<std::string>{"report"});
  // A global option's value is not the command.
  EXPECT_EQ(BashCompletes({"--config", "x.toml", "st"}),
            (std::set<std::string>{"stats", "status"}));
}

// What `memprofctl COMMAND -<TAB>` should offer: the command's options and
// the global ones, which may follow a command; after `run`, whose arguments
// are the program's own, only its options.
std::set<std::string> ExpectedOptions(const std::string& command) {
  std::set<std::string> expected = OptionsIn(HelpOf({command}));
  if (command == "run") return expected;
  const std::set<std::string> globals = OptionsIn(HelpOf({}));
  expected.insert(globals.begin(), globals.end());
  return expected;
}

TEST(BashCompletionTest, OffersEveryOptionOfEveryCommandAndNoOther) {
  for (const std::string& command : Commands()) {
    EXPECT_EQ(BashCompletes({command, "-"}), ExpectedOptions(command)) << command;
  }
}

TEST(BashCompletionTest, OffersTheFormatsTheCliAccepts) {
  const auto formats = FormatsOfEachCommand();
  for (const auto& [command, accepted] : formats) {
    EXPECT_EQ(BashCompletes({command, "--format", ""}), accepted) << command;
    EXPECT_EQ(BashCompletes({command, "-f", ""}), accepted) << command;
  }
  EXPECT_EQ(BashCompletes({"report", "--format", "p"}), (std::set<std::string>{"pprof"}));
}

TEST(BashCompletionTest, OffersTheAllocatorsRunAccepts) {
  const std::set<std::string> accepted = AllocatorsOfRun();
  EXPECT_EQ(accepted, (std::set<std::string>{"jemalloc", "tcmalloc"}));
  EXPECT_EQ(BashCompletes({"run", "--allocator", ""}), accepted);
  EXPECT_EQ(BashCompletes({"run", "--allocator", "t"}), std::set<std::string>{"tcmalloc"});
  // After the allocator comes the program, not more options.
  EXPECT_EQ(BashCompletes({"run", "--allocator", "tcmalloc", "-"}), std::set<std::string>{});
}

TEST(ZshCompletionTest, CompletesCommands) {
  EXPECT_EQ(ZshCompletes("memprofctl st"), (std::set<std::string>{"stats", "status"}));
  EXPECT_EQ(ZshCompletes("memprofctl "), AllCommands());
  EXPECT_EQ(ZshCompletes("memprofctl help "), AllCommands());
}

TEST(ZshCompletionTest, OffersTheAllocatorsRunAccepts) {
  EXPECT_EQ(ZshCompletes("memprofctl run --allocator "), AllocatorsOfRun());
}

TEST(ZshCompletionTest, OffersEveryOptionOfEveryCommandAndNoOther) {
  for (const std::string& command : Commands()) {
    std::set<std::string> offered = ZshCompletes("memprofctl " + command + " -");
    // After `run` the program may be zsh's own precommand `-`, which
    // _command_names offers too.
    if (command == "run") offered.erase("-");
    EXPECT_EQ(offered, ExpectedOptions(command)) << command;
  }
}

TEST(ZshCompletionTest, OffersTheFormatsTheCliAccepts) {
  for (const auto& [command, accepted] : FormatsOfEachCommand()) {
    EXPECT_EQ(ZshCompletes("memprofctl " + command + " --format "), accepted) << command;
  }
}

// A real preloaded target with its agent in the test's socket directory.
class PidCompletionTest : public integration::IntegrationTest {
 protected:
  std::map<std::string, std::string> Env() const {
    return {{"MEMPROF_SOCKET_DIR", SocketDir()}};
  }
};

TEST_F(PidCompletionTest, BashOffersThePidOfTheAgent) {
  integration::TargetProcess* target = StartShape(integration::Shape::kPreloaded);
  ASSERT_NE(target, nullptr);
  const std::string pid = std::to_string(target->pid());
  EXPECT_EQ(BashCompletes({"dump", "--pid", ""}, Env()), (std::set<std::string>{pid}));
  EXPECT_EQ(BashCompletes({"stats", "--pid", pid.substr(0, 1)}, Env()),
            (std::set<std::string>{pid}));
}

TEST_F(PidCompletionTest, ZshOffersThePidOfTheAgent) {
  integration::TargetProcess* target = StartShape(integration::Shape::kPreloaded);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(ZshCompletes("memprofctl dump --pid ", Env()),
            (std::set<std::string>{std::to_string(target->pid())}));
}

TEST_F(PidCompletionTest, NoAgentNoPid) {
  EXPECT_EQ(BashCompletes({"dump", "--pid", ""}, Env()), std::set<std::string>{});
}

}  // namespace
}  // namespace memprof::docs
