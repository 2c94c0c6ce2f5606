#include "agent/service/tls_material.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "common/fd.h"

namespace memprof::agent {
namespace {

// A PEM bundle is a few KiB; the cap keeps a mistaken path (/dev/zero, a
// huge log) from costing the host memory.
constexpr off_t kMaxPemBytes = 1024 * 1024;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// Everything OpenSSL reports while we parse stays between the mark and the
// pop: the host's view of the thread's error queue does not change.
class OpenSslErrorScope {
 public:
  OpenSslErrorScope() { ERR_set_mark(); }
  ~OpenSslErrorScope() { ERR_pop_to_mark(); }
  OpenSslErrorScope(const OpenSslErrorScope&) = delete;
  OpenSslErrorScope& operator=(const OpenSslErrorScope&) = delete;
};

std::string Named(const char* env, const std::string& path) {
  return std::string(env) + " '" + path + "'";
}

std::unexpected<Error> Invalid(std::string message) {
  return Fail(ErrorCode::kInvalidArgument, std::move(message));
}

Result<std::string> ReadAll(int fd, const char* env, const std::string& path) {
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Invalid("cannot read " + Named(env, path) + ": " + std::strerror(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > static_cast<size_t>(kMaxPemBytes)) {
      return Invalid(Named(env, path) + " is larger than 1 MiB; that is not a PEM file");
    }
  }
}

// Reads a regular file; `st` gets its stat.
Result<std::string> ReadPemFile(const char* env, const std::string& path, struct stat& st) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return Invalid("cannot read " + Named(env, path) + ": " + std::strerror(errno));
  if (::fstat(fd.get(), &st) != 0) {
    return Invalid("cannot read " + Named(env, path) + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Invalid(Named(env, path) + " is not a regular file");
  return ReadAll(fd.get(), env, path);
}

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The first certificate in `pem`, or null.
X509Ptr FirstCertificate(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  if (!bio) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

// Never prompts: a key that needs a passphrase simply fails to load.
int NoPassphrase(char*, int, int, void*) { return -1; }

PkeyPtr PrivateKey(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  if (!bio) return nullptr;
  return PkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassphrase, nullptr));
}

std::string UtcText(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "an unreadable date";
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

Result<void> CheckCertificateAndKey(const RemoteConfig& config, const TlsMaterial& material) {
  X509Ptr leaf = FirstCertificate(material.cert_chain_pem);
  if (!leaf) return Invalid(Named(kTlsCertEnv, config.cert_path) + " holds no PEM certificate");
  const ASN1_TIME* not_after = X509_get0_notAfter(leaf.get());
  if (X509_cmp_current_time(not_after) < 0) {
    return Invalid("the certificate in " + Named(kTlsCertEnv, config.cert_path) + " expired on " +
                   UtcText(not_after) + "; renew it");
  }
  const std::string& key_pem = material.private_key_pem;
  PkeyPtr key = PrivateKey(key_pem);
  if (!key) {
    const bool encrypted = key_pem.find("ENCRYPTED") != std::string::npos;
    return Invalid(Named(kTlsKeyEnv, config.key_path) +
                   (encrypted ? " is encrypted; the agent cannot ask for a passphrase: store it "
                                "unencrypted (openssl pkey -in KEY -out KEY.plain) with mode 0600"
                              : " holds no PEM private key"));
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    return Invalid("the private key in " + Named(kTlsKeyEnv, config.key_path) +
                   " does not belong to the certificate in " +
                   Named(kTlsCertEnv, config.cert_path));
  }
  return {};
}

}  // namespace

TlsMaterial::~TlsMaterial() {
  if (!private_key_pem.empty()) OPENSSL_cleanse(private_key_pem.data(), private_key_pem.size());
}

Result<TlsMaterial> LoadTlsMaterial(const RemoteConfig& config) {
  OpenSslErrorScope errors;
  TlsMaterial material;
  struct stat st {};
  auto cert = ReadPemFile(kTlsCertEnv, config.cert_path, st);
  if (!cert) return Fail(cert.error());
  material.cert_chain_pem = std::move(*cert);
  auto key = ReadPemFile(kTlsKeyEnv, config.key_path, st);
  if (!key) return Fail(key.error());
  material.private_key_pem = std::move(*key);
  if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    material.warnings.push_back(Named(kTlsKeyEnv, config.key_path) +
                                " may be read by every user (mode " + mode +
                                "); make it readable by the service's user only (chmod 600)");
  }
  auto ca = ReadPemFile(kTlsCaEnv, config.ca_path, st);
  if (!ca) return Fail(ca.error());
  material.client_ca_pem = std::move(*ca);
  if (auto ok = CheckCertificateAndKey(config, material); !ok) return Fail(ok.error());
  if (!FirstCertificate(material.client_ca_pem)) {
    return Invalid(Named(kTlsCaEnv, config.ca_path) + " holds no PEM certificate");
  }
  return material;
}

}  // namespace memprof::agent
