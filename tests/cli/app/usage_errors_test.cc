// The real command line (RunCli, fake seams) given what people type, right
// or wrong: a mistake is a usage error in memprofctl's own words, naming what
// was given and what is valid, and nothing is contacted.
#include "cli/app/usage_errors.h"

#include <gtest/gtest.h>

#include <array>
#include <regex>

#include "cli/app/command_line.h"
#include "cli/commands/report_command.h"
#include "common/version.h"
#include "tests/cli/app/cli_app_fixture.h"

namespace memprof::cli {
namespace {

// What CLI11 says in its own words; none of it may reach the user.
const std::regex kCli11Wording(
    R"(\d+ required|required but received|not in range|Value .* not in|does not exist: |)"
    R"(is actually a|Could not convert|Expected (exactly|at least)|At (least|Most) |)"
    R"(following argument|not in \{|disallowed flag override|\[Option )");

class UsageErrorsTest : public CliAppTest {
 protected:
  // Runs `args`, which must be a usage error that contacts nobody and says
  // `fragment` in our own words; returns the message.
  std::string ExpectUsageError(const std::vector<std::string>& args, const std::string& fragment) {
    out_.str("");
    err_.str("");
    clients_made_ = 0;
    SCOPED_TRACE(::testing::PrintToString(args));
    EXPECT_EQ(Run(args), 2);
    ExpectOneErrorLine(fragment);
    EXPECT_FALSE(std::regex_search(err_.str(), kCli11Wording)) << err_.str();
    EXPECT_EQ(clients_made_, 0);
    return err_.str();
  }
  // Every command (and help, version) with the options it has.
  static std::vector<const CLI::App*> Commands(const CommandLine& cl) {
    return cl.app.get_subcommands({});
  }
  std::string AnyFile() {
    testing::WriteFile(tmp_.File("p.heap"), "heap_v2/524288\n");
    return tmp_.File("p.heap");
  }
};

TEST_F(UsageErrorsTest, AMistypedCommandGetsTheNearestOne) {
  ExpectUsageError({"stat"}, "unknown command 'stat'; did you mean 'stats'?");
  ExpectUsageError({"stauts", "--pid", "1"},
                   "unknown command 'stauts'; did you mean 'status' or 'stats'?");
  ExpectUsageError({"-v", "lsit"}, "unknown command 'lsit'; did you mean 'list'?");
  ExpectUsageError({"verison"}, "unknown command 'verison'; did you mean 'version'?");
  // Nothing close: the valid commands, help and version among them.
  ExpectUsageError({"frobnicate"},
                   "unknown command 'frobnicate' (valid commands: list, status, activate, "
                   "deactivate, dump, profile, stats, doctor, purge, exporter, report, run, "
                   "attach, help, version)");
}

// Every option of every command, mistyped by swapping two of its letters,
// is suggested back.
TEST_F(UsageErrorsTest, EveryOptionOfEveryCommandIsSuggestedWhenMistyped) {
  CommandLine cl;
  for (const CLI::App* command : Commands(cl)) {
    if (command->get_name() == "run") continue;  // its words are CMD's own
    for (const CLI::Option* opt : command->get_options()) {
      for (const std::string& name : opt->get_lnames()) {
        if (name.size() < 3) continue;
        std::string typo = "--" + name;
        std::swap(typo[3], typo[4]);
        if (typo == "--" + name) continue;
        const std::string err = ExpectUsageError(
            {command->get_name(), typo},
            "unknown option '" + typo + "' for '" + command->get_name() + "'; did you mean ");
        EXPECT_NE(err.find("'--" + name + "'"), std::string::npos) << err;
      }
    }
  }
}

TEST_F(UsageErrorsTest, AMistypedOptionGetsTheNearestOne) {
  // {command line, the word as typed, the command it is for, the suggestion}
  const std::vector<std::array<std::vector<std::string>, 2>> cases = {
      {{{"status", "--jsno"}, {"--jsno", "status", "--json"}}},
      {{{"status", "--pdi", "42"}, {"--pdi", "status", "--pid"}}},
      {{{"stats", "-json"}, {"-json", "stats", "--json"}}},
      {{{"--verbsoe", "list"}, {"--verbsoe", "list", "--verbose"}}},
      {{{"--timout=5s", "list"}, {"--timout", "list", "--timeout"}}}};
  for (const auto& [args, words] : cases) {
    ExpectUsageError(args, "unknown option '" + words[0] + "' for '" + words[1] +
                               "'; did you mean '" + words[2] + "'?");
  }
  // Nothing close: every valid option, without CLI11's decorations.
  ExpectUsageError({"list", "--bogus"},
                   "unknown option '--bogus' for 'list' (valid options: -h/--help, --json, "
                   "--prune/--no-prune; global: --version, -v/--verbose, -q/--quiet, --timeout, "
                   "--config)");
}

// The word after an unknown option is not taken for something else:
// `--fromat svg` made `svg` a DUMP ("File does not exist: svg").
TEST_F(UsageErrorsTest, AnUnknownOptionIsNamedBeforeTheValueAfterIt) {
  ExpectUsageError({"report", "x.heap", "--fromat", "svg"},
                   "unknown option '--fromat' for 'report'; did you mean '--format'?");
  ExpectUsageError({"report", AnyFile(), "--fromat=svg"},
                   "unknown option '--fromat' for 'report'; did you mean '--format'?");
  ExpectUsageError({"dump", "--pid", "42", "--out-dri", tmp_.File("d"), "--every", "1s"},
                   "unknown option '--out-dri' for 'dump'; did you mean '--out-dir'?");
}

// Every option that takes a value, given none, says what it takes.
TEST_F(UsageErrorsTest, EveryOptionWithoutItsValueSaysWhatItTakes) {
  CommandLine cl;
  for (const CLI::App* command : Commands(cl)) {
    if (command->get_name() == "run") continue;
    for (const CLI::Option* opt : command->get_options()) {
      if (!opt->nonpositional() || opt->get_items_expected_min() == 0) continue;
      const std::string name = opt->get_name(false, false);
      // Our own value names, never CLI11's type names.
      for (const char* type : {"TEXT", "UINT", "INT", "FLOAT", "BOOLEAN", "ENUM", "VALUE"}) {
        EXPECT_NE(opt->get_type_name(), type) << command->get_name() << " " << name;
      }
      ExpectUsageError(
          {command->get_name(), name},
          command->get_name() + ": " + name + " needs a value (" + opt->get_type_name() + "): ");
    }
  }
  ExpectUsageError({"list", "--timeout"},
                   "memprofctl: error: --timeout needs a value (DURATION): "
                   "deadline of each request to an agent");
  ExpectUsageError({"report", "--top"},
                   "report: --top needs a value (N): show at most N functions (text, json; 1 to "
                   "1000000)");
}

TEST_F(UsageErrorsTest, BadValuesAreNamedWithWhatIsValid) {
  const std::string dump = AnyFile();
  ExpectUsageError(
      {"report", dump, "--top", "abc"},
      "report: --top: invalid number 'abc': expected a whole number from 1 to 1000000");
  ExpectUsageError({"report", dump, "--top", "0"}, "--top: invalid number '0'");
  ExpectUsageError({"report", dump, "--top", "-5"}, "--top: invalid number '-5'");
  ExpectUsageError({"status", "--parallel", "0"},
                   "status: --parallel: invalid number '0': expected a whole number from 1 to 256");
  ExpectUsageError({"report", dump, "--format", "yaml"},
                   "report: --format: unknown report format 'yaml' (valid: text, collapsed, pprof, "
                   "svg, json)");
  ExpectUsageError({"status", "--json=maybe"},
                   "status: --json is a flag: give it alone, or as --json=true or --json=false "
                   "(got 'maybe')");
  ExpectUsageError({"dump", "--pid", "42", "--out", "a", "--out", "b"},
                   "dump: --out is given more than once ('a', 'b'); give it once");
}

TEST_F(UsageErrorsTest, FilesAndDirectoriesThatAreNotThere) {
  ExpectUsageError({"report", "/nonexistent/p.heap"},
                   "report: DUMP: no such file '/nonexistent/p.heap'");
  ExpectUsageError({"report", tmp_.path()},
                   "report: DUMP: '" + tmp_.path() + "' is a directory, not a file");
  ExpectUsageError({"report", AnyFile(), "--base", "/nonexistent/old.heap"},
                   "report: --base: no such file '/nonexistent/old.heap'");
  ExpectUsageError({"report", AnyFile(), "--sysroot", "/nonexistent"},
                   "report: --sysroot: no such directory '/nonexistent'");
  ExpectUsageError({"report", AnyFile(), "--sysroot", AnyFile()},
                   "report: --sysroot: '" + AnyFile() + "' is not a directory");
  ExpectUsageError({"status", "--tls-ca", "/nonexistent/ca.pem"},
                   "status: --tls-ca: no such file '/nonexistent/ca.pem'");
}

TEST_F(UsageErrorsTest, WhatIsRequiredSaysWhatItIs) {
  ExpectUsageError({"report"},
                   "report: DUMP is required: heap profile(s) written by "
                   "`memprofctl dump`");
  ExpectUsageError({"profile", "--out", tmp_.File("p.heap")},
                   "profile: --duration is required (DURATION): how long to profile");
}

// `deactivate --pid 25152 1` made 1 a second target (and exit 6).
TEST_F(UsageErrorsTest, AStrayWordAfterPidIsNotASecondTarget) {
  AddAgent(42, "demo");
  AddAgent(1, "init");
  for (const char* command : {"deactivate", "status", "activate", "stats", "doctor", "purge"}) {
    ExpectUsageError({command, "--pid", "42", "1"},
                     std::string("unexpected argument '1' for '") + command +
                         "': a process is named with --pid (--pid 1), several with --pid A,B "
                         "or --pid A --pid B");
  }
  ExpectUsageError({"status", "42"},
                   "unexpected argument '42' for 'status': a process is named "
                   "with --pid (--pid 42)");
  ExpectUsageError({"status", "--target", "db7:7070", "db8:7070"},
                   "unexpected argument 'db8:7070' for 'status' (valid options: ");
  EXPECT_EQ(fake_.calls, 0);
}

TEST_F(UsageErrorsTest, SeveralPidsStillNameSeveralTargets) {
  AddAgent(42, "demo");
  AddAgent(43, "other");
  AddAgent(44, "third");
  EXPECT_EQ(Run({"status", "--pid", "42,43", "--pid", "44", "--json"}), 0) << err_.str();
  std::vector<pid_t> pids;
  for (const Target& target : fake_.targets) pids.push_back(target.pid);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<pid_t>{42, 43, 44}));
}

TEST_F(UsageErrorsTest, HelpAndVersionAreCommandsToo) {
  EXPECT_EQ(Run({"--help"}), 0);
  const std::string help = out_.str();
  out_.str("");
  EXPECT_EQ(Run({"help"}), 0);
  EXPECT_EQ(out_.str(), help);
  EXPECT_NE(help.find("\nHelp:\n  help "), std::string::npos) << help;
  CommandLine cl;
  for (const CLI::App* command : Commands(cl)) {
    out_.str("");
    ASSERT_EQ(Run({command->get_name(), "--help"}), 0) << command->get_name();
    const std::string own = out_.str();
    out_.str("");
    EXPECT_EQ(Run({"help", command->get_name()}), 0) << err_.str();
    EXPECT_EQ(out_.str(), own) << command->get_name();
  }
  out_.str("");
  EXPECT_EQ(Run({"version"}), 0);
  EXPECT_EQ(out_.str(), std::string("memprofctl ") + kVersion + "\n");
  ExpectUsageError({"help", "stat"}, "help: unknown command 'stat'; did you mean 'stats'?");
  ExpectUsageError({"version", "extra"}, "unexpected argument 'extra' for 'version'");
}

TEST_F(UsageErrorsTest, RunHelpHasOneUsageLineAndItsOptions) {
  EXPECT_EQ(Run({"run", "--help"}), 0);
  const std::string help = out_.str();
  EXPECT_NE(help.find("Usage: memprofctl run [--allocator NAME] [--] CMD [ARGS...]\n"),
            std::string::npos)
      << help;
  EXPECT_EQ(help.find("Usage:"), help.rfind("Usage:")) << help;
  EXPECT_NE(Flat(help).find("--allocator NAME jemalloc (default) or tcmalloc"), std::string::npos)
      << help;
  ExpectUsageError({"run"},
                   "run: missing command; usage: memprofctl run [--allocator NAME] [--] "
                   "CMD [ARGS...]");
}

// A duration's unit in any letter case, and a fraction.
TEST_F(UsageErrorsTest, DurationsTakeAnyUnitCaseAndFractions) {
  AddAgent(42, "demo");
  for (const auto& [text, millis] : std::vector<std::pair<std::string, uint64_t>>{
           {"1H", 3600000}, {"10M", 600000}, {"1.5s", 1500}, {"0.5h", 1800000}}) {
    EXPECT_EQ(Run({"activate", "--pid", "42", "--for", text}), 0) << text << err_.str();
    EXPECT_EQ(fake_.last_activate.duration_ms(), millis) << text;
  }
  ExpectUsageError({"activate", "--for", "1.5"},
                   "activate: --for: invalid duration '1.5': "
                   "missing unit");
}

TEST_F(UsageErrorsTest, ReportJsonIsFormatJson) {
  ReportOptions options;
  options.dumps = {"p.heap"};
  options.json = true;
  EXPECT_EQ(MakeReportRequest(options).value().format, report::Format::kJson);
  options.format = "json";
  EXPECT_EQ(MakeReportRequest(options).value().format, report::Format::kJson);
  options.json = false;
  options.format = "";
  EXPECT_EQ(MakeReportRequest(options).value().format, report::Format::kText);
  EXPECT_EQ(Run({"report", AnyFile(), "--json", "--format", "svg"}), 2);
  ExpectOneErrorLine("report: --json is --format json; it cannot be combined with --format svg");
}

}  // namespace
}  // namespace memprof::cli
