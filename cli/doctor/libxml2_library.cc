#include "cli/doctor/libxml2_library.h"

#include <dlfcn.h>

#include <string>

namespace memprof::cli {
namespace {

// The soname and package come from the configured libxml2 (CMake).
constexpr const char* kSoname = MEMPROF_LIBXML2_SONAME;
constexpr const char* kPackage = MEMPROF_LIBXML2_PACKAGE;

template <typename Function>
bool Resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

Result<Libxml2Api> Load() {
  void* library = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return Fail(ErrorCode::kInternal,
                std::string("doctor needs ") + kSoname + " (Debian package " + kPackage +
                    ") to read glibc's malloc_info: " + (why != nullptr ? why : "cannot load it"));
  }
  Libxml2Api api{};
  const bool complete = Resolve(library, "xmlReadMemory", api.read_memory) &&
                        Resolve(library, "xmlDocGetRootElement", api.root_element) &&
                        Resolve(library, "xmlFreeDoc", api.free_doc);
  if (!complete) {
    return Fail(ErrorCode::kInternal,
                std::string(kSoname) + " lacks a function doctor calls; reinstall " + kPackage);
  }
  return api;  // the library stays loaded for the process's lifetime
}

}  // namespace

Result<const Libxml2Api*> Libxml2() {
  static const Result<Libxml2Api> loaded = Load();
  if (!loaded) return Fail(loaded.error());
  return &*loaded;
}

}  // namespace memprof::cli
