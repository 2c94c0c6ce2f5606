#ifndef MEMPROF_TESTS_SUPPORT_PKI_H_
#define MEMPROF_TESTS_SUPPORT_PKI_H_

#include <string>

namespace memprof::test_support {

// A certificate and its private key, both PEM.
struct PemPair {
  std::string cert;
  std::string key;
};

// What a test certificate is for.
enum class CertUse { kServer, kClient };

// Test certificates made in memory with OpenSSL (EC P-256, SHA-256, keys in
// unencrypted PKCS#8), so that no test needs the `openssl` binary. Tests
// that need files write the PEM text into them (TlsFixture in
// tests/integration/harness). Each function throws std::runtime_error when
// OpenSSL fails.
//
// Validity is from `from_days` to `to_days`, relative to now (negative is
// the past): an expired or a not yet valid certificate is a matter of these.
//
// A self-signed CA certificate: basicConstraints critical CA:TRUE, keyUsage
// critical keyCertSign and cRLSign, a subjectKeyIdentifier.
PemPair MakeTestCa(const std::string& common_name, int from_days = -1, int to_days = 30);
// A leaf certificate signed by `issuer`: CA:FALSE, keyUsage critical
// digitalSignature, extendedKeyUsage serverAuth or clientAuth (`use`), an
// authorityKeyIdentifier. `san` is a subjectAltName value such as
// "IP:127.0.0.1,DNS:localhost" (empty: none).
PemPair MakeTestLeaf(const PemPair& issuer, const std::string& common_name, CertUse use,
                     const std::string& san, int from_days = -1, int to_days = 30);
// `key` (PEM) encrypted with AES-256 under `passphrase`.
std::string EncryptTestKey(const std::string& key, const std::string& passphrase);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_PKI_H_
