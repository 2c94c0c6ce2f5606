#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace memprof::test_support {
namespace {

// mkdtemp under /tmp; "" and `error` when it fails.
std::string MakeDirectory(const std::string& prefix, std::string& error) {
  // Short and under /tmp: a socket path must fit in sun_path (108 bytes).
  std::string templ = "/tmp/" + prefix + ".XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    error = "mkdtemp " + templ + ": " + std::strerror(errno);
    return "";
  }
  return templ;
}

std::vector<std::string> Entries(const std::string& dir, std::error_code& ec) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  std::string error;
  path_ = MakeDirectory(prefix, error);
  if (path_.empty()) throw std::runtime_error(error);
}

Result<TempDir> TempDir::Create(const std::string& prefix) {
  std::string error;
  std::string path = MakeDirectory(prefix, error);
  if (path.empty()) return Fail(ErrorCode::kInternal, error);
  return TempDir(Made{std::move(path)});
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
  std::error_code ec;
  std::vector<std::string> names = Entries(path_, ec);
  if (ec) throw std::runtime_error("cannot list " + path_ + ": " + ec.message());
  return names;
}

std::vector<std::string> DirectoryEntries(const std::string& dir) {
  std::error_code ec;
  return Entries(dir, ec);
}

}  // namespace memprof::test_support
