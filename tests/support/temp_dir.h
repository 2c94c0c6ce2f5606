#ifndef MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_
#define MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::test_support {

// A private (0700) directory made with mkdtemp() and removed recursively when
// destroyed. Each test uses its own as MEMPROF_SOCKET_DIR and output
// directory, so tests are isolated and can run in parallel (ctest -j).
class TempDir {
 public:
  // `prefix` ends up in the name, e.g. "/tmp/memprof-it-status.Ab12Cd".
  [[nodiscard]] static Result<TempDir> Create(const std::string& prefix = "memprof-it");

  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const;
  // Names of the entries directly inside, sorted (hidden ones included).
  std::vector<std::string> List() const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void Remove();

  std::string path_;
};

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_
