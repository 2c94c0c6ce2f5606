// The man pages the package installs (packaging/extras.cmake): each renders
// without a groff warning, memprofctl(1) names every command and has the
// sections a reader looks for, each command's page has every option its
// --help has, and memprof-agent(7) names every variable the agent reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/docs/cli_help.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/required_tool.h"
#include "tests/support/shell.h"

namespace memprof::docs {
namespace {

namespace fs = std::filesystem;
using test_support::Quote;
using test_support::RunShellCommand;

const std::string kManDir = MEMPROF_DOCS_MAN_DIR;

// Every installed page: man1/*.1.gz and man7/*.7.gz.
std::vector<std::string> InstalledPages() {
  std::vector<std::string> pages;
  for (const char* section : {"man1", "man7"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(kManDir + "/" + section, ec)) {
      if (entry.path().extension() == ".gz") pages.push_back(entry.path());
    }
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

// The page as a reader sees it, in plain text (no warnings asked for).
std::string Rendered(const std::string& page) {
  const auto r = RunShellCommand("gzip -dc " + Quote(page) +
                                 " | groff -man -Tutf8 -P-c -P-b -P-u 2>/dev/null");
  EXPECT_TRUE(r.ok()) << page;
  // Man pages hyphenate and justify: join words broken at line ends.
  return std::regex_replace(r.text, std::regex("\u2010\n\\s*|-\n\\s+(?=[a-z])"), "");
}

std::string CommandPage(const std::string& command) {
  return kManDir + "/man1/memprofctl-" + command + ".1.gz";
}

class ManPageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(test_support::CanRun(test_support::Groff())); }
};

TEST_F(ManPageTest, EveryPageRendersWithoutAWarning) {
  const std::vector<std::string> pages = InstalledPages();
  // memprofctl(1), one page per command, memprof-agent(7).
  EXPECT_EQ(pages.size(), HelpCommands().size() + 2);
  for (const std::string& page : pages) {
    const auto r =
        RunShellCommand("gzip -dc " + Quote(page) + " | LC_ALL=C.UTF-8 groff -man -ww -z 2>&1");
    EXPECT_TRUE(r.ok()) << page;
    EXPECT_EQ(r.text, "") << page;
  }
}

TEST_F(ManPageTest, MemprofctlPageNamesEveryCommandAndHasItsOwnPage) {
  const std::string page = Rendered(kManDir + "/man1/memprofctl.1.gz");
  for (const std::string& command : HelpCommands()) {
    EXPECT_TRUE(std::regex_search(page, std::regex("\n\\s+" + command + "\\s"))) << command;
    EXPECT_NE(page.find("memprofctl-" + command + "(1)"), std::string::npos)
        << "SEE ALSO lacks memprofctl-" << command << "(1)";
    EXPECT_TRUE(test_support::FileExists(CommandPage(command))) << CommandPage(command);
  }
}

TEST_F(ManPageTest, MemprofctlPageHasTheSectionsAReaderLooksFor) {
  const std::string page = Rendered(kManDir + "/man1/memprofctl.1.gz");
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                              "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"}) {
    EXPECT_TRUE(std::regex_search(page, std::regex(std::string("\n") + section + "\n")))
        << section << "\n" << page;
  }
  // The exit codes of docs/contract.md section 2, and the variables.
  // groff justifies lines, so words may stand more than one space apart.
  for (const char* status : {"0 +success", "2 +usage +error", "3 +target +not +found",
                             "4 +permission +denied", "5 +precondition +failed",
                             "6 +partial +failure"}) {
    EXPECT_TRUE(std::regex_search(page, std::regex(std::string("\n +") + status))) << status;
  }
  for (const char* text : {"MEMPROF_SOCKET_DIR", "MEMPROF_PID", "MEMPROF_AGENT_LIB",
                           "/tmp/memprof", "memprof-agent(7)"}) {
    EXPECT_NE(page.find(text), std::string::npos) << text << "\n" << page;
  }
}

TEST_F(ManPageTest, EachCommandPageHasEveryOptionOfItsHelp) {
  for (const std::string& command : HelpCommands()) {
    const std::string page = Rendered(CommandPage(command));
    const std::set<std::string> options = OptionsIn(HelpOf({command}));
    EXPECT_FALSE(options.empty()) << command;
    for (const std::string& option : options) {
      EXPECT_TRUE(std::regex_search(page, std::regex("(^|[\\s,])" + option + "([\\s,=]|$)")))
          << option << " missing from memprofctl-" << command << "(1)\n" << page;
    }
    EXPECT_NE(page.find("memprofctl(1)"), std::string::npos) << command << ": SEE ALSO";
  }
}

// The MEMPROF_* names the agent's code spells (agent/, and common/ for the
// socket directory, at any depth), each one a variable it reads or sets.
std::set<std::string> AgentVariables() {
  std::set<std::string> names;
  const std::regex literal("\"(MEMPROF_[A-Z_]*[A-Z])\"");
  for (const char* dir : {"/agent", "/common"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(std::string(MEMPROF_DOCS_SOURCE_DIR) + dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = test_support::ReadFile(entry.path());
      for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) {
        names.insert((*it)[1]);
      }
    }
  }
  return names;
}

TEST_F(ManPageTest, AgentPageNamesEveryVariableTheAgentReads) {
  const std::set<std::string> variables = AgentVariables();
  EXPECT_GE(variables.size(), 10u);
  EXPECT_TRUE(variables.contains("MEMPROF_LISTEN"));
  const std::string page = Rendered(kManDir + "/man7/memprof-agent.7.gz");
  for (const std::string& name : variables) {
    EXPECT_TRUE(std::regex_search(page, std::regex("\n\\s+" + name + "\n")))
        << name << " is not described in memprof-agent(7)";
  }
  for (const char* text : {"memprof_agent_start", "memprof_agent_stop", "LD_PRELOAD",
                           "SO_PEERCRED", "/proc/pid/root"}) {
    EXPECT_NE(page.find(text), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace memprof::docs
