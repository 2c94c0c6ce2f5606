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
  // Every certificate is valid from now for this many days.
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

// A small PKI for the remote-access tests: certificates made in memory by
// tests/support/pki.h, written as PEM files into a private TempDir that is
// removed with the fixture.
class TlsFixture {
 public:
  // Makes the CAs, keys and certificates and writes their files. The error
  // says what could not be made or written.
  [[nodiscard]] static Result<std::unique_ptr<TlsFixture>> Create(
      const TlsFixtureOptions& options = {});

  const TlsFiles& files() const { return files_; }
  const std::string& dir() const { return dir_.path(); }
  // MEMPROF_TLS_CERT, MEMPROF_TLS_KEY and MEMPROF_TLS_CA for an agent that
  // serves with the server certificate and trusts the CA for its clients.
  std::map<std::string, std::string> AgentEnv() const;

 private:
  explicit TlsFixture(TempDir dir) : dir_(std::move(dir)) {}
  Result<void> MakeAll(const TlsFixtureOptions& options);

  TempDir dir_;
  TlsFiles files_;
};

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_TLS_FIXTURE_H_
