#include "tests/support/pki.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <memory>
#include <stdexcept>

namespace memprof::test_support {
namespace {

struct Free {
  void operator()(BIO* b) const { BIO_free(b); }
  void operator()(X509* x) const { X509_free(x); }
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Free>;

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what + " failed");
}

std::string Text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_ctrl(bio, BIO_CTRL_INFO, 0, static_cast<void*>(&data));
  return std::string(data, static_cast<size_t>(n));
}

Ptr<EVP_PKEY> NewKey() {
  Ptr<EVP_PKEY> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", const_cast<char*>("P-256")));
  Check(key != nullptr, "EC key generation");
  return key;
}

std::string KeyPem(EVP_PKEY* key, const EVP_CIPHER* cipher = nullptr,
                   const std::string& passphrase = "") {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  auto* pass = reinterpret_cast<unsigned char*>(const_cast<char*>(passphrase.data()));
  Check(PEM_write_bio_PrivateKey(bio.get(), key, cipher, cipher ? pass : nullptr,
                                 static_cast<int>(passphrase.size()), nullptr, nullptr) == 1,
        "writing a key");
  return Text(bio.get());
}

std::string CertPem(X509* cert) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  Check(PEM_write_bio_X509(bio.get(), cert) == 1, "writing a certificate");
  return Text(bio.get());
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  Check(ext != nullptr, "making an extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, not yet signed.
Ptr<X509> NewCert(EVP_PKEY* key, const std::string& common_name, int from_days, int to_days) {
  static std::atomic<long> serial{1};
  Ptr<X509> cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 86400L * from_days);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * to_days);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return cert;
}

Ptr<X509> ReadCert(const std::string& pem) {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Ptr<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  Check(cert != nullptr, "reading a certificate");
  return cert;
}

Ptr<EVP_PKEY> ReadKey(const std::string& pem, const std::string& passphrase = "") {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Ptr<EVP_PKEY> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, const_cast<char*>(passphrase.c_str())));
  Check(key != nullptr, "reading a key");
  return key;
}

}  // namespace

PemPair MakeTestCa(const std::string& common_name, int from_days, int to_days) {
  Ptr<EVP_PKEY> key = NewKey();
  Ptr<X509> cert = NewCert(key.get(), common_name, from_days, to_days);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  Check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signing the CA");
  return {CertPem(cert.get()), KeyPem(key.get())};
}

PemPair MakeTestLeaf(const PemPair& issuer, const std::string& common_name, CertUse use,
                     const std::string& san, int from_days, int to_days) {
  Ptr<X509> ca = ReadCert(issuer.cert);
  Ptr<EVP_PKEY> ca_key = ReadKey(issuer.key);
  Ptr<EVP_PKEY> key = NewKey();
  Ptr<X509> cert = NewCert(key.get(), common_name, from_days, to_days);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  AddExtension(cert.get(), ca.get(), NID_basic_constraints, "CA:FALSE");
  AddExtension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
  AddExtension(cert.get(), ca.get(), NID_ext_key_usage,
               use == CertUse::kServer ? "serverAuth" : "clientAuth");
  AddExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid");
  if (!san.empty()) AddExtension(cert.get(), ca.get(), NID_subject_alt_name, san);
  Check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "signing a leaf");
  return {CertPem(cert.get()), KeyPem(key.get())};
}

std::string EncryptTestKey(const std::string& key, const std::string& passphrase) {
  Ptr<EVP_PKEY> k = ReadKey(key);
  return KeyPem(k.get(), EVP_aes_256_cbc(), passphrase);
}

}  // namespace memprof::test_support
