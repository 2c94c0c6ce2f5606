#ifndef MEMPROF_TESTS_SUPPORT_FILES_H_
#define MEMPROF_TESTS_SUPPORT_FILES_H_

#include <string>

namespace memprof::test_support {

// The whole file at `path`, bytes as they are ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// Writes `data` to `path` (created or truncated), bytes as they are;
// whether it all got there.
bool WriteFile(const std::string& path, const std::string& data);

// What `data` inflates to if it is gzip'd, else `data` itself; "" for gzip
// data that cannot be inflated (cut or corrupt).
std::string Gunzipped(const std::string& data);

// Whether anything (file, directory, socket, dangling symlink) is at `path`.
bool FileExists(const std::string& path);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_FILES_H_
