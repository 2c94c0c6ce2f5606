#ifndef MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_
#define MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::test_support {

// A private (0700) directory made with mkdtemp() and removed recursively when
// destroyed, also when the test failed. Each test uses its own (as
// MEMPROF_SOCKET_DIR, output directory, scratch space), so tests are isolated
// and can run in parallel (ctest -j).
class TempDir {
 public:
  // Throws std::runtime_error when it cannot make one: a test fixture that
  // holds a TempDir then fails with the reason.
  explicit TempDir(const std::string& prefix = "memprof-test");
  // The same without an exception, for tests that assert on the outcome.
  [[nodiscard]] static Result<TempDir> Create(const std::string& prefix = "memprof-test");

  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  // Under /tmp, short, so that socket paths in it fit in sun_path (108
  // bytes): e.g. "/tmp/memprof-it-status.Ab12Cd" for the prefix
  // "memprof-it-status".
  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const;
  // Names of the entries directly inside, sorted (hidden ones included).
  // Throws std::runtime_error when the directory cannot be read.
  std::vector<std::string> List() const;

 private:
  struct Made {
    std::string path;
  };
  explicit TempDir(Made made) : path_(std::move(made.path)) {}
  void Remove();

  std::string path_;
};

// Names of the entries directly in `dir` (hidden ones too), sorted; none when
// it cannot be read (for instance because it does not exist).
std::vector<std::string> DirectoryEntries(const std::string& dir);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_TEMP_DIR_H_
