#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace memprof::test_support {

Result<TempDir> TempDir::Create(const std::string& prefix) {
  // Short and under /tmp: a socket path must fit in sun_path (108 bytes).
  std::string templ = "/tmp/" + prefix + ".XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return Fail(ErrorCode::kInternal, "mkdtemp " + templ + ": " + std::strerror(errno));
  }
  return TempDir(templ);
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

void TempDir::Remove() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: never throw from a destructor
  path_.clear();
}

std::string TempDir::File(const std::string& name) const { return path_ + "/" + name; }

std::vector<std::string> TempDir::List() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace memprof::test_support
