#include "agent/service/tls_material.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/pki.h"
#include "tests/support/temp_dir.h"

namespace memprof::agent {
namespace {

using test_support::CertUse;
using test_support::EncryptTestKey;
using test_support::MakeTestCa;
using test_support::MakeTestLeaf;
using test_support::PemPair;

class TlsMaterialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = MakeTestCa("test CA");
    server_ = MakeTestLeaf(ca_, "agent", CertUse::kServer, "IP:127.0.0.1");
    config_.cert_path = Write("agent.crt", server_.cert);
    config_.key_path = Write("agent.key", server_.key, 0600);
    config_.ca_path = Write("ca.crt", ca_.cert);
  }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::trunc) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  // The error LoadTlsMaterial gives for config_; "" if it succeeds.
  std::string LoadError() {
    auto material = LoadTlsMaterial(config_);
    return material ? "" : material.error().message;
  }

  test_support::TempDir tmp_{"memprof-tls-test"};
  std::string dir_ = tmp_.path();
  PemPair ca_;
  PemPair server_;
  RemoteConfig config_;
};

TEST_F(TlsMaterialTest, LoadsMatchingFiles) {
  auto material = LoadTlsMaterial(config_);
  ASSERT_TRUE(material.has_value()) << material.error().message;
  EXPECT_EQ(material->cert_chain_pem, server_.cert);
  EXPECT_EQ(material->private_key_pem, server_.key);
  EXPECT_EQ(material->client_ca_pem, ca_.cert);
  EXPECT_TRUE(material->warnings.empty());
}

TEST_F(TlsMaterialTest, MissingOrUnreadableFilesAreNamed) {
  config_.key_path = dir_ + "/missing.key";
  EXPECT_EQ(LoadError(),
            "cannot read MEMPROF_TLS_KEY '" + dir_ + "/missing.key': No such file or directory");
  config_.key_path = dir_;
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_KEY '" + dir_ + "' is not a regular file");
  config_.key_path = "/dev/zero";
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_KEY '/dev/zero' is not a regular file");
}

TEST_F(TlsMaterialTest, FilesWithoutPemAreNamed) {
  config_.cert_path = Write("empty.crt", "");
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_CERT '" + config_.cert_path + "' holds no PEM certificate");
  config_.cert_path = Write("agent.crt", server_.cert);
  config_.key_path = Write("cert-as-key.pem", server_.cert, 0600);
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_KEY '" + config_.key_path + "' holds no PEM private key");
  config_.key_path = Write("agent.key", server_.key, 0600);
  config_.ca_path = Write("key-as-ca.pem", ca_.key);
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_CA '" + config_.ca_path + "' holds no PEM certificate");
}

TEST_F(TlsMaterialTest, KeyOfAnotherCertificateIsRefused) {
  config_.key_path = Write("other.key", MakeTestLeaf(ca_, "x", CertUse::kServer, "").key, 0600);
  EXPECT_EQ(LoadError(), "the private key in MEMPROF_TLS_KEY '" + config_.key_path +
                             "' does not belong to the certificate in MEMPROF_TLS_CERT '" +
                             config_.cert_path + "'");
}

TEST_F(TlsMaterialTest, EncryptedKeyIsRefusedWithoutPrompting) {
  config_.key_path = Write("encrypted.key", EncryptTestKey(server_.key, "secret"), 0600);
  EXPECT_EQ(LoadError(), "MEMPROF_TLS_KEY '" + config_.key_path +
                             "' is encrypted; the agent cannot ask for a passphrase: store it "
                             "unencrypted (openssl pkey -in KEY -out KEY.plain) with mode 0600");
}

TEST_F(TlsMaterialTest, ExpiredCertificateIsRefused) {
  PemPair expired = MakeTestLeaf(ca_, "agent", CertUse::kServer, "", -10, -1);
  config_.cert_path = Write("expired.crt", expired.cert);
  config_.key_path = Write("expired.key", expired.key, 0600);
  const std::string error = LoadError();
  EXPECT_TRUE(error.starts_with("the certificate in MEMPROF_TLS_CERT '" + config_.cert_path +
                                "' expired on 20"))
      << error;
  EXPECT_TRUE(error.ends_with(" UTC; renew it")) << error;
}

TEST_F(TlsMaterialTest, WorldReadableKeyLoadsWithAWarning) {
  config_.key_path = Write("agent.key", server_.key, 0644);
  auto material = LoadTlsMaterial(config_);
  ASSERT_TRUE(material.has_value()) << material.error().message;
  ASSERT_EQ(material->warnings.size(), 1u);
  EXPECT_EQ(material->warnings[0],
            "MEMPROF_TLS_KEY '" + config_.key_path +
                "' may be read by every user (mode 0644); make it readable by the service's "
                "user only (chmod 600)");
}

// The host may use OpenSSL too: a failed load leaves nothing in its queue.
TEST_F(TlsMaterialTest, LeavesOpenSslErrorQueueAlone) {
  ERR_clear_error();
  config_.key_path = Write("cert-as-key.pem", server_.cert, 0600);
  EXPECT_FALSE(LoadError().empty());
  EXPECT_EQ(ERR_peek_error(), 0u);
}

}  // namespace
}  // namespace memprof::agent
