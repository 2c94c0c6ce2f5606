#include "cli/app/cli_app.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/io/logging.h"
#include "common/version.h"
#include "tests/cli/app/cli_app_fixture.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

TEST_F(CliAppTest, VersionPrintsNameAndVersion) {
  EXPECT_EQ(Run({"--version"}), 0);
  EXPECT_EQ(out_.str(), std::string("memprofctl ") + kVersion + "\n");
}

TEST_F(CliAppTest, HelpListsCommandsExitCodesAndExamples) {
  EXPECT_EQ(Run({"--help"}), 0);
  const std::string help = out_.str();
  for (const char* text : {"list", "status", "activate", "deactivate", "dump", "stats", "run",
                           "Exit codes:", "  5    precondition failed",
                           "Examples:", "memprofctl dump --pid 1234 --out profile.heap"}) {
    EXPECT_NE(help.find(text), std::string::npos) << text;
  }
}

TEST_F(CliAppTest, CommandHelpHasExamples) {
  EXPECT_EQ(Run({"activate", "--help"}), 0);
  EXPECT_NE(out_.str().find("--for DURATION"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("memprofctl activate --pid 1234 --for 5m"), std::string::npos);
}

TEST_F(CliAppTest, BadDurationIsAUsageErrorBeforeAnyContact) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"activate", "--pid", "42", "--for", "5x"}), 2);
  ExpectOneErrorLine("--for: invalid duration '5x': unknown unit 'x'");
  EXPECT_EQ(clients_made_, 0);
}

TEST_F(CliAppTest, DurationWithoutUnitIsRejected) {
  EXPECT_EQ(Run({"activate", "--for", "300"}), 2);
  ExpectOneErrorLine("missing unit");
}

TEST_F(CliAppTest, DurationOutOfBoundsIsRejected) {
  EXPECT_EQ(Run({"activate", "--for", "25h"}), 2);
  ExpectOneErrorLine("must be between 1s and 24h");
}

TEST_F(CliAppTest, BadTimeoutIsRejected) {
  EXPECT_EQ(Run({"--timeout", "soon", "list"}), 2);
  ExpectOneErrorLine("--timeout: invalid duration 'soon'");
}

TEST_F(CliAppTest, UnknownCommandListsTheValidOnes) {
  EXPECT_EQ(Run({"frobnicate"}), 2);
  ExpectOneErrorLine(
      "unknown command 'frobnicate' (valid commands: list, status, activate, deactivate, dump, "
      "profile, stats, doctor, purge, exporter, report, run, attach, help, version)");
}

TEST_F(CliAppTest, UnknownFlagListsTheValidOptions) {
  EXPECT_EQ(Run({"status", "--bogus", "42"}), 2);
  ExpectOneErrorLine(
      "unknown option '--bogus' for 'status' (valid options: -h/--help, --pid, --all, --name, "
      "--targets, --target, --tls-ca, --tls-cert, --tls-key, --parallel, --json");
}

TEST_F(CliAppTest, MissingCommandIsAUsageError) {
  EXPECT_EQ(Run({}), 2);
  ExpectOneErrorLine("missing command");
}

TEST_F(CliAppTest, BadPidIsAUsageError) {
  EXPECT_EQ(Run({"status", "--pid", "12x"}), 2);
  ExpectOneErrorLine("invalid pid '12x'");
}

TEST_F(CliAppTest, ConflictingStatsFlagsAreAUsageError) {
  EXPECT_EQ(Run({"stats", "--json", "--raw"}), 2);
  ExpectOneErrorLine("--json excludes --raw");
}

TEST_F(CliAppTest, ProfileHelpExplainsInterruptsAndRestore) {
  EXPECT_EQ(Run({"profile", "--help"}), 0);
  for (const char* text : {"--duration DURATION", "-o, --out FILE|-", "-f, --format FORMAT",
                           "Ctrl-C or SIGTERM ends the window early and still writes the profile",
                           "a second one aborts and writes nothing",
                           "memprofctl profile --pid 1234 --duration 30s --out profile.heap"}) {
    EXPECT_NE(Flat(out_.str()).find(text), std::string::npos) << text << "\n" << out_.str();
  }
}

TEST_F(CliAppTest, ProfileOptionsAreCheckedBeforeAnyContact) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"profile", "--pid", "42", "--duration", "30", "--out", tmp_.File("p.heap")}), 2);
  ExpectOneErrorLine("profile: --duration: invalid duration '30': missing unit");
  err_.str("");
  EXPECT_EQ(Run({"profile", "--pid", "42", "--out", tmp_.File("p.heap")}), 2);
  ExpectOneErrorLine("--duration is required");
  EXPECT_EQ(clients_made_, 0);
}

TEST_F(CliAppTest, ActivateHelpSaysWhatDiscardsSamples) {
  EXPECT_EQ(Run({"activate", "--help"}), 0);
  for (const char* text : {"--sample-interval SIZE", "--reset",
                           "DISCARDS the samples collected so far",
                           "Only --reset and a new --sample-interval discard samples; deactivate "
                           "keeps them"}) {
    EXPECT_NE(Flat(out_.str()).find(text), std::string::npos) << text << "\n" << out_.str();
  }
}

TEST_F(CliAppTest, BadSampleIntervalIsAUsageErrorBeforeAnyContact) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"activate", "--pid", "42", "--sample-interval", "1.5MiB"}), 2);
  ExpectOneErrorLine("activate: --sample-interval: invalid size '1.5MiB': fractions are not "
                     "accepted");
  EXPECT_EQ(clients_made_, 0);
}

TEST_F(CliAppTest, MissingOutIsAUsageError) {
  EXPECT_EQ(Run({"dump", "--pid", "42"}), 2);
  ExpectOneErrorLine("--out is required");
}

TEST_F(CliAppTest, StatusSucceedsAndPassesTheGlobalTimeout) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"status", "--pid", "42", "--json", "--timeout", "2500ms"}), 0) << err_.str();
  EXPECT_EQ(timeout_, milliseconds(2500));
  EXPECT_EQ(nlohmann::json::parse(out_.str())["pid"], 42);
  EXPECT_TRUE(err_.str().empty());
}

TEST_F(CliAppTest, DefaultTimeoutIsTenSeconds) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"status"}), 0) << err_.str();
  EXPECT_EQ(timeout_, milliseconds(10000));
}

TEST_F(CliAppTest, MemprofPidSelectsTheTarget) {
  AddAgent(42, "demo");
  AddAgent(43, "other");
  ::setenv("MEMPROF_PID", "43", 1);
  EXPECT_EQ(Run({"status"}), 0) << err_.str();
  ASSERT_EQ(fake_.targets.size(), 1u);
  EXPECT_EQ(fake_.targets[0].pid, 43);
}

TEST_F(CliAppTest, BadMemprofPidIsAUsageError) {
  ::setenv("MEMPROF_PID", "nope", 1);
  EXPECT_EQ(Run({"status"}), 2);
  ExpectOneErrorLine("invalid pid 'nope'");
}

TEST_F(CliAppTest, SeveralAgentsWithoutPidIsAUsageErrorListingThem) {
  AddAgent(42, "demo");
  AddAgent(43, "other");
  EXPECT_EQ(Run({"status"}), 2);
  ExpectOneErrorLine("choose one with --pid, or use --all for every one: 42 (demo), 43 (other)");
  EXPECT_EQ(fake_.calls, 0);
}

TEST_F(CliAppTest, NoAgentsIsExit3) {
  EXPECT_EQ(Run({"stats"}), 3);
  ExpectOneErrorLine("no memprof agents found in " + sockets_);
}

TEST_F(CliAppTest, DeadPidIsExit3) {
  EXPECT_EQ(Run({"status", "--pid", "999999"}), 3);
  ExpectOneErrorLine("no process with pid 999999");
}

TEST_F(CliAppTest, AgentErrorsBecomeTheirExitCodes) {
  AddAgent(42, "demo");
  fake_.activate_result = Fail(ErrorCode::kFailedPrecondition, "heap profiling was not enabled");
  EXPECT_EQ(Run({"activate", "--pid", "42"}), 5);
  ExpectOneErrorLine("heap profiling was not enabled");
}

TEST_F(CliAppTest, MultiLineErrorMessagesAreFoldedIntoOneLine) {
  AddAgent(42, "demo");
  fake_.status_result = Fail(ErrorCode::kPermissionDenied, "first line\nsecond line\n");
  EXPECT_EQ(Run({"status", "--pid", "42"}), 4);
  ExpectOneErrorLine("first line second line");
}

TEST_F(CliAppTest, VerboseFlagCountsAndMayFollowTheCommand) {
  AddAgent(42, "demo");
  EXPECT_EQ(Run({"list", "-v"}), 0) << err_.str();
  EXPECT_EQ(Run({"-vv", "list"}), 0) << err_.str();
}

TEST_F(CliAppTest, RunPassesEverythingAfterTheCommandVerbatim) {
  EXPECT_EQ(Run({"-v", "run", "--", "true", "--pid", "3", "-v", "--", "x"}), 0) << err_.str();
  ASSERT_TRUE(executed_);
  EXPECT_EQ(executed_->argv, (std::vector<std::string>{"true", "--pid", "3", "-v", "--", "x"}));
  EXPECT_NE(executed_->malloc_conf.find("prof:true"), std::string::npos);
  EXPECT_NE(err_.str().find("memprofctl: info: starting"), std::string::npos) << err_.str();
}

TEST_F(CliAppTest, RunAfterGlobalOptionsWithValues) {
  // "run" as the value of --timeout would be a bad duration, not the command.
  EXPECT_EQ(Run({"--timeout", "5s", "-v", "run", "true", "run"}), 0) << err_.str();
  ASSERT_TRUE(executed_);
  EXPECT_EQ(executed_->argv, (std::vector<std::string>{"true", "run"}));
  executed_.reset();
  EXPECT_EQ(Run({"--timeout=6s", "run", "--", "true"}), 0) << err_.str();
  ASSERT_TRUE(executed_);
  EXPECT_EQ(executed_->argv, (std::vector<std::string>{"true"}));
}

TEST_F(CliAppTest, RunWithoutDoubleDashToo) {
  EXPECT_EQ(Run({"run", "true", "--help"}), 0) << err_.str();
  ASSERT_TRUE(executed_);
  EXPECT_EQ(executed_->argv, (std::vector<std::string>{"true", "--help"}));
}

TEST_F(CliAppTest, RunHelpIsOurs) {
  EXPECT_EQ(Run({"run", "--help"}), 0);
  EXPECT_FALSE(executed_);
  EXPECT_NE(out_.str().find("memprofctl run [--allocator NAME] [--] CMD [ARGS...]"),
            std::string::npos);
}

// -h/--help among run's own words (before CMD and `--`) is run's help, with
// or after --allocator; after CMD or `--` it is CMD's.
TEST_F(CliAppTest, RunHelpAfterRunsOwnOptionsIsOursToo) {
  const std::vector<std::vector<std::string>> asks_for_help = {
      {"run", "-h"},
      {"run", "--allocator", "tcmalloc", "--help"},
      {"run", "--allocator", "jemalloc", "-h", "--", "true"},
      {"run", "--allocator=tcmalloc", "--help"},
      {"run", "--allocator=tcmalloc", "-h", "true"},
      {"run", "--help", "--allocator", "tcmalloc", "--", "true"},
      {"run", "--allocator", "--help"},
      {"run", "--allocator", "bogus", "--help"},
      {"-v", "run", "--allocator", "tcmalloc", "--help", "true", "--help"},
  };
  for (const auto& args : asks_for_help) {
    out_.str("");
    err_.str("");
    EXPECT_EQ(Run(args), 0) << ::testing::PrintToString(args) << err_.str();
    EXPECT_FALSE(executed_) << ::testing::PrintToString(args);
    EXPECT_NE(out_.str().find("memprofctl run [--allocator NAME] [--] CMD [ARGS...]"),
              std::string::npos)
        << ::testing::PrintToString(args) << out_.str();
    EXPECT_EQ(err_.str(), "") << ::testing::PrintToString(args);
  }
}

TEST_F(CliAppTest, RunHelpAfterTheCommandOrDoubleDashIsTheCommands) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> runs = {
      {{"run", "--allocator", "tcmalloc", "--", "--help"}, {"--help"}},
      {{"run", "--allocator=jemalloc", "--", "-h"}, {"-h"}},
      {{"run", "--", "true", "--help"}, {"true", "--help"}},
      {{"run", "--allocator", "jemalloc", "true", "-h"}, {"true", "-h"}},
  };
  for (const auto& [args, argv] : runs) {
    executed_.reset();
    out_.str("");
    // A program called --help is not found: exit 2, and no help printed.
    const int code = Run(args);
    EXPECT_EQ(out_.str().find("Usage:"), std::string::npos) << ::testing::PrintToString(args);
    if (argv.front() == "true") {
      EXPECT_EQ(code, 0) << ::testing::PrintToString(args) << err_.str();
      ASSERT_TRUE(executed_) << ::testing::PrintToString(args);
      EXPECT_EQ(executed_->argv, argv);
    } else {
      EXPECT_EQ(code, 2) << ::testing::PrintToString(args) << err_.str();
      EXPECT_FALSE(executed_);
    }
  }
}

TEST_F(CliAppTest, RunUnknownCommandIsExit2) {
  EXPECT_EQ(Run({"run", "--", "no-such-command-xyz"}), 2);
  ExpectOneErrorLine("command not found: no-such-command-xyz");
  EXPECT_FALSE(executed_);
}

TEST_F(CliAppTest, RunStaticProgramIsExit5) {
  EXPECT_EQ(Run({"run", MEMPROF_TEST_STATIC_PROBE}), 5);
  ExpectOneErrorLine("statically linked");
}

// TLS files for remote agents from the environment and the config file
// (cli/app/client_settings.h): command line > environment > config file.
class CliTlsSettingsTest : public CliAppTest {
 protected:
  void SetUp() override {
    CliAppTest::SetUp();
    for (const char* name : {"ca", "cert", "key", "env-ca", "env-cert", "flag-ca"}) {
      testing::WriteFile(tmp_.File(std::string(name) + ".pem"),
                         std::string("-----BEGIN ") + name + "-----\n");
      ::chmod(tmp_.File(std::string(name) + ".pem").c_str(), 0600);
    }
    fake_.status_result->set_pid(4242);
  }
  // The PEM texts the remote target was called with.
  std::string Used(const std::string& which) const {
    if (fake_.targets.empty() || !fake_.targets.front().tls) return "no TLS";
    const TlsMaterial& tls = *fake_.targets.front().tls;
    return which == "ca" ? tls.ca_pem : which == "cert" ? tls.cert_pem : tls.key_pem;
  }
  static std::string Pem(const std::string& name) { return "-----BEGIN " + name + "-----\n"; }
  std::string Config(const std::string& text) {
    testing::WriteFile(tmp_.File("memprofctl.toml"), text);
    return tmp_.File("memprofctl.toml");
  }
};

TEST_F(CliTlsSettingsTest, RemoteTargetTakesTheTlsFilesFromTheEnvironment) {
  variables_ = {{"MEMPROFCTL_TLS_CA", tmp_.File("env-ca.pem")},
                {"MEMPROFCTL_TLS_CERT", tmp_.File("env-cert.pem")},
                {"MEMPROFCTL_TLS_KEY", tmp_.File("key.pem")}};
  EXPECT_EQ(Run({"status", "--target", "db7:7070", "--json"}), 0) << err_.str();
  EXPECT_EQ(Used("ca"), Pem("env-ca"));
  EXPECT_EQ(Used("cert"), Pem("env-cert"));
  EXPECT_EQ(Used("key"), Pem("key"));
}

TEST_F(CliTlsSettingsTest, RemoteTargetTakesTheTlsFilesFromTheConfigFile) {
  const std::string config = Config("tls-ca = \"ca.pem\"\ntls-cert = \"" + tmp_.File("cert.pem") +
                                    "\"\ntls-key = \"key.pem\"\n");
  EXPECT_EQ(Run({"--config", config, "status", "--target", "db7:7070"}), 0) << err_.str();
  EXPECT_EQ(Used("ca"), Pem("ca"));
  EXPECT_EQ(Used("cert"), Pem("cert"));
  EXPECT_EQ(Used("key"), Pem("key"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CliTlsSettingsTest, CommandLineBeatsEnvironmentBeatsConfigFile) {
  variables_ = {{"MEMPROFCTL_CONFIG",
                 Config("tls-ca = \"ca.pem\"\ntls-cert = \"cert.pem\"\ntls-key = \"key.pem\"\n")},
                {"MEMPROFCTL_TLS_CA", tmp_.File("env-ca.pem")},
                {"MEMPROFCTL_TLS_CERT", tmp_.File("env-cert.pem")}};
  EXPECT_EQ(Run({"status", "--target", "db7:7070", "--tls-ca", tmp_.File("flag-ca.pem")}), 0)
      << err_.str();
  EXPECT_EQ(Used("ca"), Pem("flag-ca"));
  EXPECT_EQ(Used("cert"), Pem("env-cert"));
  EXPECT_EQ(Used("key"), Pem("key"));
}

TEST_F(CliTlsSettingsTest, LocalTargetsIgnoreTheEnvironmentsTlsFiles) {
  AddAgent(42, "demo");
  variables_ = {{"MEMPROFCTL_TLS_CA", tmp_.File("env-ca.pem")}};
  EXPECT_EQ(Run({"status", "--pid", "42", "--json"}), 0) << err_.str();
  EXPECT_EQ(Used("ca"), "no TLS");
}

TEST_F(CliTlsSettingsTest, UnknownConfigKeyIsAUsageErrorWithFileLineAndValidKeys) {
  AddAgent(42, "demo");
  const std::string config = Config("# remote\ntls-ca = \"ca.pem\"\nsocket-dir = \"/run\"\n");
  EXPECT_EQ(Run({"--config", config, "status", "--pid", "42"}), 2);
  ExpectOneErrorLine(config +
                     ":3: unknown key 'socket-dir' (valid keys: tls-ca, tls-cert, tls-key)");
  EXPECT_EQ(fake_.calls, 0);
}

TEST_F(CliTlsSettingsTest, MalformedAndUnreadableConfigFilesAreUsageErrors) {
  variables_ = {{"MEMPROFCTL_CONFIG", Config("tls-ca \"ca.pem\"\n")}};
  EXPECT_EQ(Run({"status", "--target", "db7:7070"}), 2);
  ExpectOneErrorLine(tmp_.File("memprofctl.toml") +
                     ":1: expected KEY = \"VALUE\", found 'tls-ca \"ca.pem\"'");
  err_.str("");
  EXPECT_EQ(Run({"--config", tmp_.File("none.toml"), "status", "--target", "db7:7070"}), 2);
  ExpectOneErrorLine("config file: cannot read " + tmp_.File("none.toml") +
                     ": No such file or directory");
  EXPECT_EQ(fake_.calls, 0);
}

TEST_F(CliTlsSettingsTest, ATlsFileFromTheEnvironmentThatCannotBeReadNamesTheVariable) {
  variables_ = {{"MEMPROFCTL_TLS_CA", tmp_.File("gone.pem")},
                {"MEMPROFCTL_TLS_CERT", tmp_.File("cert.pem")},
                {"MEMPROFCTL_TLS_KEY", tmp_.File("key.pem")}};
  EXPECT_EQ(Run({"status", "--target", "db7:7070"}), 2);
  ExpectOneErrorLine("$MEMPROFCTL_TLS_CA: cannot read " + tmp_.File("gone.pem") +
                     ": No such file or directory");
}

TEST_F(CliTlsSettingsTest, AKeyOthersCanReadIsWarnedAbout) {
  ::chmod(tmp_.File("key.pem").c_str(), 0644);
  variables_ = {{"MEMPROFCTL_TLS_CA", tmp_.File("ca.pem")},
                {"MEMPROFCTL_TLS_CERT", tmp_.File("cert.pem")},
                {"MEMPROFCTL_TLS_KEY", tmp_.File("key.pem")}};
  EXPECT_EQ(Run({"status", "--target", "db7:7070"}), 0);
  EXPECT_EQ(err_.str(), "memprofctl: warning: $MEMPROFCTL_TLS_KEY: " + tmp_.File("key.pem") +
                            " is readable by group or others (mode 0644); chmod 600 it\n");
}

}  // namespace
}  // namespace memprof::cli
