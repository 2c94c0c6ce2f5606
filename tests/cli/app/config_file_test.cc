// memprofctl's config file (cli/app/config_file.h) and where the TLS files
// for remote agents come from (cli/app/client_settings.h): every malformed
// file is a usage error that names the file, the line and the valid keys.
#include "cli/app/config_file.h"

#include <gtest/gtest.h>

#include "cli/app/client_settings.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

const std::vector<std::string> kKeys = {"tls-ca", "tls-cert", "tls-key"};
constexpr char kValid[] = "(valid keys: tls-ca, tls-cert, tls-key)";

void ExpectUsageError(const std::string& text, const std::string& message) {
  auto file = ConfigFile::Parse("/etc/m.toml", text, kKeys);
  ASSERT_FALSE(file.has_value()) << text;
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(file.error().message, message);
}

TEST(ConfigFileTest, ReadsKeysCommentsAndQuotedPaths) {
  auto file = ConfigFile::Parse("/etc/m.toml",
                                "# remote agents\n\n"
                                "tls-ca = \"/etc/memprof/ca.crt\"\n"
                                "  tls-cert='/home/a b/alice.crt'   # mine\n"
                                "; INI comment\n"
                                "tls-key = alice.key\n",
                                kKeys);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  ASSERT_NE(file->Find("tls-ca"), nullptr);
  EXPECT_EQ(file->Find("tls-ca")->value, "/etc/memprof/ca.crt");
  EXPECT_EQ(file->Find("tls-ca")->line, 3);
  EXPECT_EQ(file->Find("tls-cert")->value, "/home/a b/alice.crt");
  EXPECT_EQ(file->Find("tls-key")->value, "alice.key");
  EXPECT_EQ(file->Origin("tls-key"), "tls-key (/etc/m.toml:6)");
  EXPECT_EQ(file->Find("socket-dir"), nullptr);
}

TEST(ConfigFileTest, UnknownKeyNamesTheLineAndTheValidKeys) {
  ExpectUsageError("tls-ca = \"a\"\ntls_cert = \"b\"\n",
                   std::string("/etc/m.toml:2: unknown key 'tls_cert' ") + kValid);
  ExpectUsageError("remote.tls-ca = \"a\"\n",
                   std::string("/etc/m.toml:1: unknown key 'remote.tls-ca' ") + kValid);
}

TEST(ConfigFileTest, MalformedLinesAreUsageErrors) {
  ExpectUsageError("tls-ca\n", std::string("/etc/m.toml:1: expected KEY = \"VALUE\", found "
                                           "'tls-ca' ") +
                                   kValid);
  ExpectUsageError("\n[remote]\ntls-ca = \"a\"\n",
                   std::string("/etc/m.toml:2: sections are not used; write the keys at the top "
                               "level ") +
                       kValid);
  ExpectUsageError("tls-ca = \n",
                   "/etc/m.toml:1: tls-ca needs one value, a path in quotes: tls-ca = \"/path\"");
  ExpectUsageError("tls-ca = [\"a\", \"b\"]\n",
                   "/etc/m.toml:1: tls-ca needs one value, a path in quotes: tls-ca = \"/path\"");
  ExpectUsageError("tls-ca = \"a\"\n# again\ntls-ca = \"b\"\n",
                   "/etc/m.toml:3: tls-ca is already set on line 1");
}

TEST(ConfigFileTest, UnreadableFileIsAUsageError) {
  auto file = ConfigFile::Load("/nonexistent/memprofctl.toml", kKeys);
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(file.error().message,
            "config file: cannot read /nonexistent/memprofctl.toml: No such file or directory");
}

TEST(ClientSettingsTest, ConfigFileIsTheFlagThenTheVariableThenTheXdgDirectory) {
  std::map<std::string, std::string> vars = {{"HOME", "/home/a"}};
  EXPECT_EQ(ConfigFilePath("", vars), "/home/a/.config/memprof/memprofctl.toml");
  vars["XDG_CONFIG_HOME"] = "relative/ignored";
  EXPECT_EQ(ConfigFilePath("", vars), "/home/a/.config/memprof/memprofctl.toml");
  vars["XDG_CONFIG_HOME"] = "/cfg";
  EXPECT_EQ(ConfigFilePath("", vars), "/cfg/memprof/memprofctl.toml");
  vars["MEMPROFCTL_CONFIG"] = "/etc/memprofctl.toml";
  EXPECT_EQ(ConfigFilePath("", vars), "/etc/memprofctl.toml");
  EXPECT_EQ(ConfigFilePath("./mine.toml", vars), "./mine.toml");
  EXPECT_EQ(ConfigFilePath("", {}), "");
}

TEST(ClientSettingsTest, EnvironmentBeatsTheConfigFileWhosePathsAreRelativeToIt) {
  testing::TempDir tmp;
  const std::string config = tmp.File("memprofctl.toml");
  testing::WriteFile(config, "tls-ca = \"ca.crt\"\ntls-cert = \"/abs/me.crt\"\n");
  auto d = LoadTlsDefaults(config, {{"MEMPROFCTL_TLS_CERT", "env.crt"}});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->ca.path, tmp.File("ca.crt"));
  EXPECT_EQ(d->ca.origin, "tls-ca (" + config + ":1)");
  EXPECT_EQ(d->cert.path, "env.crt");
  EXPECT_EQ(d->cert.origin, "$MEMPROFCTL_TLS_CERT");
  EXPECT_EQ(d->key.path, "");
}

TEST(ClientSettingsTest, MissingDefaultFileIsFineAMissingNamedOneIsNot) {
  testing::TempDir tmp;
  auto none = LoadTlsDefaults("", {{"XDG_CONFIG_HOME", tmp.path()}});
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_EQ(none->ca.path, "");
  auto named = LoadTlsDefaults("", {{"MEMPROFCTL_CONFIG", tmp.File("gone.toml")}});
  ASSERT_FALSE(named.has_value());
  EXPECT_EQ(named.error().message,
            "config file: cannot read " + tmp.File("gone.toml") + ": No such file or directory");
  testing::MakeDirs(tmp.File("memprof"));
  testing::WriteFile(tmp.File("memprof/memprofctl.toml"), "socket-dir = \"/run\"\n");
  auto bad = LoadTlsDefaults("", {{"XDG_CONFIG_HOME", tmp.path()}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            tmp.File("memprof/memprofctl.toml") + ":1: unknown key 'socket-dir' " + kValid);
}

}  // namespace
}  // namespace memprof::cli
