#ifndef MEMPROF_COMMON_SHA256_H_
#define MEMPROF_COMMON_SHA256_H_

#include <memory>
#include <string>
#include <string_view>

namespace memprof {

// Incremental SHA-256 (OpenSSL's EVP), used to verify a dump end to end: the
// agent hashes what it sends and the CLI what it receives (or, for a dump it
// copies out of the agent's file, what it copied).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // Lower-case hex digest. Call once; the object must not be updated after.
  std::string FinalHex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memprof

#endif  // MEMPROF_COMMON_SHA256_H_
