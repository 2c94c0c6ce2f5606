#include "agent/core/module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <string_view>
#include <vector>

#include "common/path.h"

namespace memprof::agent {
namespace {

constexpr char kServerFile[] = "libmemprof_agent_server.so";

std::string DirectoryOfThisObject() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LoadServer), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  const std::string_view path = info.dli_fname;
  return path.find('/') == std::string_view::npos ? std::string() : PathDirname(path);
}

std::vector<std::string> Candidates(const std::string& override_path) {
  if (!override_path.empty()) return {override_path};
  // Beside the core, in the build tree (build/agent/) as installed (libdir).
  // No directory is compiled in: an installed agent names no build path.
  if (auto dir = DirectoryOfThisObject(); !dir.empty()) return {dir + "/" + kServerFile};
  return {};
}

int OpenFlags() {
  // The sanitizers' dlopen (AddressSanitizer's and ThreadSanitizer's alike:
  // sanitizer_common's CheckNoDeepBind) abort the process on RTLD_DEEPBIND,
  // google/sanitizers#611.
  const bool sanitized = dlsym(RTLD_DEFAULT, "__asan_init") != nullptr ||
                         dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr;
  return RTLD_NOW | RTLD_LOCAL | (sanitized ? 0 : RTLD_DEEPBIND);
}

Result<const memprof_server_ops*> Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), OpenFlags());
  if (handle == nullptr) {
    const char* why = dlerror();
    return Fail(ErrorCode::kFailedPrecondition,
                "cannot load the agent's server " + path + ": " + (why ? why : "unknown error"));
  }
  auto entry = reinterpret_cast<memprof_server_entry_fn>(dlsym(handle, MEMPROF_SERVER_ENTRY));
  const memprof_server_ops* ops = entry != nullptr ? entry() : nullptr;
  if (ops == nullptr || ops->abi_version != MEMPROF_SERVER_ABI_VERSION) {
    return Fail(ErrorCode::kFailedPrecondition,
                path + " is not a server of this agent version (reinstall memprof)");
  }
  return ops;  // the handle stays open for the life of the process
}

Result<const memprof_server_ops*> LoadOnce(const std::string& override_path) {
  std::string tried;
  for (const auto& path : Candidates(override_path)) {
    if (::access(path.c_str(), R_OK) != 0) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    return Open(path);
  }
  return Fail(ErrorCode::kFailedPrecondition, std::string("cannot find ") + kServerFile +
                                                  " (looked for " + tried +
                                                  "); set MEMPROF_SERVER_LIBRARY to its path");
}

}  // namespace

Result<const memprof_server_ops*> LoadServer(const std::string& override_path) {
  static std::mutex mu;
  static const memprof_server_ops* loaded = nullptr;
  std::lock_guard lock(mu);
  if (loaded != nullptr) return loaded;
  auto ops = LoadOnce(override_path);
  if (ops) loaded = *ops;
  return ops;
}

}  // namespace memprof::agent
