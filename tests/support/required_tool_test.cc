// The shared check for outside programs (required_tool.h): fake tools in a
// private directory for each way a tool can be unusable, then the real
// jeprof without binutils on PATH, and without /usr/bin/file, which is what
// a bare Debian 12 lacked.
#include "tests/support/required_tool.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/command_runner.h"
#include "tests/support/debian_tools.h"

namespace memprof::test_support {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using std::chrono::steady_clock;

const std::string kToolCheck = MEMPROF_TOOL_CHECK;
const std::string kJeprofProbeDump = MEMPROF_TEST_DATA_DIR "/analysis/many_stacks_sampled.heap";

// A private directory, removed with everything in it; doubles as a PATH.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "memprof-tools-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

  // A /bin/sh script `name` with `body`, mode `mode`; its path.
  std::string Script(const std::string& name, const std::string& body, mode_t mode = 0755) {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    ::chmod(file.c_str(), mode);
    return file;
  }

 private:
  std::string path_;
};

// A tool named "frob" from the Debian package "frob-utils", found as a bare
// name on PATH.
RequiredTool Frob() {
  RequiredTool tool;
  tool.name = "frob";
  tool.candidates = {"frob"};
  tool.package = "frob-utils";
  tool.probe_args = {"--version"};
  return tool;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FindProgramTest, AbsoluteCandidatesAsIsBareNamesOnPath) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string frob = dir.Script("frob", "exit 0");
  dir.Script("readonly-frob", "exit 0", 0644);
  EXPECT_EQ(FindProgram({"frob"}, "/nonexistent:" + dir.path()), frob);
  EXPECT_EQ(FindProgram({"/nonexistent/frob", frob}, ""), frob);
  EXPECT_EQ(FindProgram({"frob"}, "/nonexistent"), "");
  EXPECT_EQ(FindProgram({"readonly-frob"}, dir.path()), "") << "not executable";
}

TEST(CheckToolTest, WorkingToolGivesItsPath) {
  ScratchDir dir;
  const std::string frob = dir.Script("frob", "echo 'frob 1.0'");
  RequiredTool tool = Frob();
  tool.probe_expects = "frob 1.0";
  const ToolCheck check = CheckTool(tool, dir.path());
  EXPECT_TRUE(check.ok()) << check.problem;
  EXPECT_EQ(check.path, frob);
}

TEST(CheckToolTest, MissingToolNamesWhereItLookedAndThePackage) {
  ScratchDir dir;
  const ToolCheck check = CheckTool(Frob(), dir.path());
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.path, "");
  EXPECT_TRUE(check.problem.starts_with(
      "frob is not installed: looked for frob (PATH=" + dir.path() + ")."))
      << check.problem;
  EXPECT_TRUE(Contains(check.problem,
                       "Install the Debian package frob-utils: apt-get install "
                       "frob-utils (bash dev.sh deps"))
      << check.problem;
}

TEST(CheckToolTest, ToolThatCannotRunIsReportedWithItsOutput) {
  ScratchDir dir;
  dir.Script("frob", "echo 'libfrob.so.1: cannot open shared object file' >&2; exit 127");
  const ToolCheck check = CheckTool(Frob(), dir.path());
  EXPECT_EQ(check.path, "");
  EXPECT_TRUE(check.problem.starts_with("frob is installed but cannot run: `" + dir.path() +
                                        "/frob --version` exited with status 127."))
      << check.problem;
  EXPECT_TRUE(Contains(check.problem, "libfrob.so.1: cannot open shared object file"))
      << check.problem;
  EXPECT_TRUE(Contains(check.problem, "apt-get install --reinstall frob-utils")) << check.problem;
}

TEST(CheckToolTest, ProbeMustPrintWhatIsExpected) {
  ScratchDir dir;
  dir.Script("frob", "echo 'nothing to report'");
  RequiredTool tool = Frob();
  tool.probe_expects = "Total:";
  const ToolCheck check = CheckTool(tool, dir.path());
  EXPECT_TRUE(Contains(check.problem, "did not print \"Total:\". Its output:\nnothing to report"))
      << check.problem;
}

TEST(CheckToolTest, HungProbeIsKilledWithItsChildrenAtTheDeadline) {
  ScratchDir dir;
  // Not exec'd: the shell waits for its child, which holds the output pipe.
  dir.Script("frob", "/bin/sleep 300\necho never");
  RequiredTool tool = Frob();
  tool.probe_timeout = seconds(1);
  const auto start = steady_clock::now();
  const ToolCheck check = CheckTool(tool, dir.path());
  EXPECT_LT(steady_clock::now() - start, seconds(60));
  EXPECT_TRUE(Contains(check.problem, "did not finish within 1 s")) << check.problem;
}

TEST(CheckToolTest, MissingHelperIsNamedBeforeTheTool) {
  ScratchDir dir;
  dir.Script("frob", "exit 0");
  RequiredTool tool = Frob();
  RequiredTool helper;
  helper.name = "frobhelper";
  helper.candidates = {"/nonexistent/frobhelper"};
  helper.package = "frobhelper-bin";
  helper.why = "frob runs it to frobnicate";
  tool.helpers = {helper};
  const ToolCheck check = CheckTool(tool, dir.path());
  EXPECT_EQ(check.path, "");
  EXPECT_TRUE(check.problem.starts_with(
      "frob cannot run: it needs frobhelper (frob runs it to frobnicate), and frobhelper is "
      "not installed: looked for /nonexistent/frobhelper"))
      << check.problem;
  EXPECT_TRUE(Contains(check.problem, "apt-get install frobhelper-bin")) << check.problem;
}

TEST(CheckToolTest, CanRunFailsWithTheProblem) {
  RequiredTool tool = Frob();
  tool.candidates = {"/nonexistent/frob"};
  const ::testing::AssertionResult result = CanRun(tool);
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "frob is not installed")) << result.message();
}

// The tools our tests run can run here: `bash dev.sh deps` installed them.
// (Each test that runs one checks it again, so that it fails by itself.)
TEST(DebianToolsTest, EveryToolTheTestsRunCanRunHere) {
  for (const RequiredTool& tool : ToolsTheTestsRun()) {
    std::string path;
    EXPECT_TRUE(CanRun(tool, &path));
    EXPECT_TRUE(path.starts_with("/")) << tool.name << ": " << path;
  }
}

// jeprof looks its object tools up on PATH: one missing is named, with
// binutils as the package.
TEST(JeprofCheckTest, NamesBinutilsWhenNmIsNotOnPath) {
  std::string jeprof;
  ASSERT_TRUE(CanRun(Jeprof(), &jeprof));
  ScratchDir dir;
  fs::create_symlink(jeprof, dir.path() + "/jeprof");
  for (const char* tool : {"addr2line", "objdump", "c++filt"}) {
    const std::string path = FindProgram({tool}, CurrentPath());
    ASSERT_FALSE(path.empty()) << tool;
    fs::create_symlink(path, dir.path() + "/" + tool);
  }
  const ToolCheck check = CheckTool(Jeprof(), dir.path());
  EXPECT_TRUE(
      check.problem.starts_with("jeprof cannot run: it needs nm (jeprof runs it to read "
                                "symbols), and nm is not installed"))
      << check.problem;
  EXPECT_TRUE(Contains(check.problem, "apt-get install binutils")) << check.problem;
}

// In a private mount namespace: a tmpfs over /usr/bin, linking back to
// everything in it but `file`. Then jeprof as JeprofComparisonTest runs it,
// and the check. Exit 99: the namespace could not be made.
constexpr char kWithoutUsrBinFile[] = R"(real=$1 dump=$2 check=$3
mount --bind /usr/bin "$real" && mount -t tmpfs memprof-no-file /usr/bin || exit 99
"$real/ln" -s "$real"/* /usr/bin/ && "$real/rm" -f /usr/bin/file || exit 98
jeprof --text --tools=nm:/bin/false,addr2line:/bin/false,objdump:/bin/false,c++filt:/bin/false \
  "$check" "$dump" 2>&1
echo "jeprof exit status: $?"
exec "$check" jeprof)";

// What a bare Debian 12 lacked. jeprof runs /usr/bin/file by that path, not
// from PATH, so the file itself is hidden, in a mount namespace of the
// test's own. There jeprof fails as it did on the bare root, and the check
// names `file` and its package.
TEST(JeprofCheckTest, NamesFileWhenUsrBinFileIsMissing) {
  std::string unshare;
  ASSERT_TRUE(CanRun(Unshare(), &unshare));
  ASSERT_TRUE(CanRun(Jeprof())) << "jeprof must work here for this test to show anything";
  ScratchDir dir;
  std::vector<std::string> argv = {unshare, "--mount"};
  if (::geteuid() != 0) argv.insert(argv.begin() + 1, {"--user", "--map-root-user"});
  argv.insert(argv.end(), {"/bin/sh", "-c", kWithoutUsrBinFile, "sh", dir.path(), kJeprofProbeDump,
                           kToolCheck});
  const CommandResult run = RunCommand(argv, {}, seconds(120));
  if (run.exit_code == 99) GTEST_SKIP() << "no private mount namespace here: " << run;
  // jeprof's own failure, as on the bare root (which tool it misses first
  // depends on Perl's hash order).
  EXPECT_TRUE(Contains(run.out, "-pdb' found with prefix specified by --tools")) << run;
  EXPECT_TRUE(Contains(run.out, "jeprof exit status: 1\n")) << run;
  // The check's.
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_TRUE(Contains(run.out,
                       "jeprof cannot run: it needs file (jeprof runs /usr/bin/file to learn a "
                       "binary's type, and without it takes every binary for a Windows one), and "
                       "file is not installed: looked for /usr/bin/file"))
      << run;
  EXPECT_TRUE(Contains(run.out, "Install the Debian package file: apt-get install file ")) << run;
}

}  // namespace
}  // namespace memprof::test_support
