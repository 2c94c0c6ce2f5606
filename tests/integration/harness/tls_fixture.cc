#include "tests/integration/harness/tls_fixture.h"

#include <sys/stat.h>

#include <stdexcept>
#include <utility>

#include "tests/integration/harness/support_names.h"
#include "tests/support/pki.h"

namespace memprof::integration {
namespace {

using test_support::CertUse;
using test_support::MakeTestCa;
using test_support::MakeTestLeaf;
using test_support::PemPair;

// The fixture's certificates and keys, PEM.
struct Pki {
  PemPair ca;
  PemPair wrong_ca;
  PemPair server;
  PemPair client;
  PemPair wrong_client;
};

Pki MakePki(const TlsFixtureOptions& options) {
  const int days = options.valid_days;
  std::string san = "IP:" + options.server_ip;
  if (options.server_ip != "127.0.0.1") san += ",IP:127.0.0.1";
  san += ",DNS:localhost";
  Pki pki;
  pki.ca = MakeTestCa("memprof test CA", 0, days);
  pki.wrong_ca = MakeTestCa("memprof wrong CA", 0, days);
  pki.server = MakeTestLeaf(pki.ca, "memprof-agent", CertUse::kServer, san, 0, days);
  pki.client = MakeTestLeaf(pki.ca, "memprof-client", CertUse::kClient, "", 0, days);
  pki.wrong_client = MakeTestLeaf(pki.wrong_ca, "memprof-client", CertUse::kClient, "", 0, days);
  return pki;
}

// Writes `pair` into `dir` as <name>.crt and <name>.key (mode 0600).
Result<void> WritePair(const TempDir& dir, const std::string& name, const PemPair& pair) {
  const std::string cert = dir.File(name + ".crt");
  const std::string key = dir.File(name + ".key");
  if (!WriteFile(cert, pair.cert)) return Fail(ErrorCode::kInternal, "cannot write " + cert);
  if (!WriteFile(key, pair.key) || ::chmod(key.c_str(), 0600) != 0) {
    return Fail(ErrorCode::kInternal, "cannot write " + key);
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<TlsFixture>> TlsFixture::Create(const TlsFixtureOptions& options) {
  auto dir = TempDir::Create("memprof-tls");
  if (!dir) return Fail(dir.error());
  std::unique_ptr<TlsFixture> fixture(new TlsFixture(std::move(*dir)));
  if (auto ok = fixture->MakeAll(options); !ok) return Fail(ok.error());
  return fixture;
}

std::map<std::string, std::string> TlsFixture::AgentEnv() const {
  return {{"MEMPROF_TLS_CERT", files_.server_cert},
          {"MEMPROF_TLS_KEY", files_.server_key},
          {"MEMPROF_TLS_CA", files_.ca_cert}};
}

Result<void> TlsFixture::MakeAll(const TlsFixtureOptions& options) {
  Pki pki;
  try {
    pki = MakePki(options);
  } catch (const std::runtime_error& e) {
    return Fail(ErrorCode::kInternal, e.what());
  }
  for (const auto& [name, pair] :
       {std::pair{"ca", &pki.ca}, std::pair{"wrong-ca", &pki.wrong_ca},
        std::pair{"server", &pki.server}, std::pair{"client", &pki.client},
        std::pair{"wrong-client", &pki.wrong_client}}) {
    if (auto ok = WritePair(dir_, name, *pair); !ok) return ok;
  }
  files_ =
      TlsFiles{dir_.File("ca.crt"),           dir_.File("wrong-ca.crt"),    dir_.File("server.crt"),
               dir_.File("server.key"),       dir_.File("client.crt"),      dir_.File("client.key"),
               dir_.File("wrong-client.crt"), dir_.File("wrong-client.key")};
  return {};
}

}  // namespace memprof::integration
