// The systemd examples the package installs (packaging/systemd/):
// `systemd-analyze verify` accepts the exporter unit (with the built
// memprofctl and man pages, which its ExecStart= and Documentation= name) and
// a service with the preload drop-in, without a single complaint, and the
// exporter's command line uses only options `memprofctl exporter` has.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/docs/cli_help.h"
#include "tests/support/command_runner.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/required_tool.h"
#include "tests/support/temp_dir.h"

namespace memprof::docs {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;

const std::string kSystemdDir = MEMPROF_DOCS_SOURCE_DIR "/packaging/systemd";

class SystemdExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::SystemdAnalyze(), &analyze_));
  }

  // `systemd-analyze verify UNIT` with `dir` first on the unit search path
  // (so drop-ins in it are read) and the built man pages on MANPATH.
  CommandResult Verify(const std::string& dir, const std::string& unit) {
    return RunCommand({analyze_, "verify", dir + "/" + unit},
                      {{"SYSTEMD_UNIT_PATH", dir + ":"}, {"MANPATH", MEMPROF_DOCS_MAN_DIR ":"}});
  }

  test_support::TempDir dir_{"memprof-docs-systemd"};
  std::string analyze_;
};

std::string ExporterUnit() {
  const std::string unit = test_support::ReadFile(kSystemdDir + "/memprof-exporter.service");
  EXPECT_NE(unit.find("ExecStart=/usr/bin/memprofctl exporter"), std::string::npos) << unit;
  return unit;
}

TEST_F(SystemdExampleTest, ExporterUnitVerifiesCleanly) {
  // verify checks that ExecStart='s program exists: the built one stands in.
  const std::string unit = std::regex_replace(ExporterUnit(), std::regex("/usr/bin/memprofctl"),
                                              MEMPROF_IT_MEMPROFCTL);
  ASSERT_TRUE(test_support::WriteFile(dir_.File("memprof-exporter.service"), unit));
  const CommandResult r = Verify(dir_.path(), "memprof-exporter.service");
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out + r.err, "") << r;
}

TEST_F(SystemdExampleTest, ExporterUnitUsesOnlyOptionsTheExporterHas) {
  std::smatch exec;
  const std::string unit = ExporterUnit();
  ASSERT_TRUE(std::regex_search(unit, exec, std::regex("\nExecStart=(.*)\n")));
  const std::string command = exec[1];
  const std::set<std::string> options = OptionsIn(HelpOf({"exporter"}));
  const std::regex option("--?[a-z][a-z-]*");
  int seen = 0;
  for (std::sregex_iterator it(command.begin(), command.end(), option), end; it != end; ++it) {
    EXPECT_TRUE(options.contains(it->str())) << it->str() << " in " << command;
    ++seen;
  }
  EXPECT_GT(seen, 0) << command;
}

TEST_F(SystemdExampleTest, PreloadDropInVerifiesCleanly) {
  ASSERT_TRUE(test_support::WriteFile(
      dir_.File("memprof-docs-demo.service"),
      std::string("[Service]\nExecStart=") + MEMPROF_IT_MEMPROFCTL + " list\n"));
  const std::string dropins = dir_.File("memprof-docs-demo.service.d");
  ASSERT_TRUE(std::filesystem::create_directory(dropins));
  const std::string conf = test_support::ReadFile(kSystemdDir + "/memprof-preload.conf");
  ASSERT_NE(conf.find("Environment=LD_PRELOAD="), std::string::npos);
  ASSERT_TRUE(test_support::WriteFile(dropins + "/memprof-preload.conf", conf));
  const CommandResult r = Verify(dir_.path(), "memprof-docs-demo.service");
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out + r.err, "") << r;
  // The drop-in is read: a broken copy of it is complained about.
  ASSERT_TRUE(
      test_support::WriteFile(dropins + "/memprof-preload.conf", conf + "NoSuchSetting=1\n"));
  const CommandResult broken = Verify(dir_.path(), "memprof-docs-demo.service");
  EXPECT_NE(broken.err.find("NoSuchSetting"), std::string::npos) << broken;
}

}  // namespace
}  // namespace memprof::docs
