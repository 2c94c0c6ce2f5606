#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_TLS_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_TLS_FIXTURE_H_

#include <map>
#include <memory>
#include <string>

#include "common/result.h"
#include "tests/integration/harness/support_names.h"

namespace memprof::integration {

struct TlsFixtureOptions {
  // The first IP subjectAltName of the server certificate: the address the
  // agent listens on (NetnsFixture's side A by default). 127.0.0.1 and
  // DNS:localhost are always added.
  std::string server_ip = "10.77.0.1";
  int valid_days = 2;
};

// Paths of the PEM files a TlsFixture made. All keys are EC P-256, mode 0600.
struct TlsFiles {
  std::string ca_cert;        // "memprof test CA": signs the server and the client certificate
  std::string wrong_ca_cert;  // "memprof wrong CA": unrelated to the agent's CA
  std::string server_cert;    // CN=memprof-agent, SAN IP:<server_ip>, IP:127.0.0.1, DNS:localhost
  std::string server_key;
  std::string client_cert;  // CN=memprof-client, signed by the CA (extendedKeyUsage clientAuth)
  std::string client_key;
  std::string wrong_client_cert;  // CN=memprof-client, signed by the wrong CA
  std::string wrong_client_key;
};

// A small PKI for the remote-access tests, made with the `openssl` command
// line in a private TempDir that is removed with the fixture.
class TlsFixture {
 public:
  // Makes the CAs, keys and certificates. The error carries openssl's output,
  // or, when openssl cannot run, the package to install.
  [[nodiscard]] static Result<std::unique_ptr<TlsFixture>> Create(
      const TlsFixtureOptions& options = {});

  const TlsFiles& files() const { return files_; }
  const std::string& dir() const { return dir_.path(); }
  // MEMPROF_TLS_CERT, MEMPROF_TLS_KEY and MEMPROF_TLS_CA for an agent that
  // serves with the server certificate and trusts the CA for its clients.
  std::map<std::string, std::string> AgentEnv() const;

 private:
  TlsFixture(TempDir dir, std::string openssl)
      : dir_(std::move(dir)), openssl_(std::move(openssl)) {}
  Result<void> MakeAll(const TlsFixtureOptions& options);
  Result<void> MakeCa(const std::string& name, const std::string& common_name, int days);
  Result<void> MakeLeaf(const std::string& name, const std::string& ca, const std::string& cn,
                        const std::string& extensions, int days);
  Result<void> Openssl(const std::vector<std::string>& args);

  TempDir dir_;
  std::string openssl_;  // its path
  TlsFiles files_;
  int next_serial_ = 1;
};

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_TLS_FIXTURE_H_
