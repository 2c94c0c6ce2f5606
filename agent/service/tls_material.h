#ifndef MEMPROF_AGENT_SERVICE_TLS_MATERIAL_H_
#define MEMPROF_AGENT_SERVICE_TLS_MATERIAL_H_

#include <string>
#include <vector>

#include "agent/shared/agent_config.h"
#include "common/result.h"

namespace memprof::agent {

// The PEM texts the remote listener's mutual TLS is built from, read from
// the files MEMPROF_TLS_CERT, MEMPROF_TLS_KEY and MEMPROF_TLS_CA name.
struct TlsMaterial {
  std::string cert_chain_pem;
  std::string private_key_pem;  // wiped by the destructor
  std::string client_ca_pem;
  // Problems that do not stop the listener (a key file others may read).
  std::vector<std::string> warnings;

  TlsMaterial() = default;
  TlsMaterial(TlsMaterial&&) = default;
  TlsMaterial& operator=(TlsMaterial&&) = default;
  ~TlsMaterial();
};

// Reads and checks the three files, so that a mistake is reported in words
// at start-up instead of as a TLS handshake failure on every connection:
// each must be a readable regular file of at most 1 MiB; the certificate file
// must hold at least one PEM certificate, whose private key must be the key
// file's (PEM, unencrypted: there is nobody to ask for a passphrase); the
// certificate must not have expired; the CA file must hold at least one PEM
// certificate. Errors name the variable, the path and what to do. OpenSSL's
// error queue is left as it was (the host may use OpenSSL itself).
[[nodiscard]] Result<TlsMaterial> LoadTlsMaterial(const RemoteConfig& config);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_TLS_MATERIAL_H_
