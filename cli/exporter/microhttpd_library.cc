#include "cli/exporter/microhttpd_library.h"

#include <dlfcn.h>

#include <string>

namespace memprof::cli {
namespace {

// The soname and package come from the configured libmicrohttpd (CMake).
constexpr const char* kSoname = MEMPROF_MICROHTTPD_SONAME;
constexpr const char* kPackage = MEMPROF_MICROHTTPD_PACKAGE;

template <typename Function>
bool Resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

Result<MicrohttpdApi> Load() {
  void* library = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return Fail(ErrorCode::kInternal,
                std::string("the exporter needs ") + kSoname + " (Debian package " + kPackage +
                    "): " + (why != nullptr ? why : "cannot load it"));
  }
  MicrohttpdApi api{};
  const bool complete =
      Resolve(library, "MHD_start_daemon", api.start_daemon) &&
      Resolve(library, "MHD_stop_daemon", api.stop_daemon) &&
      Resolve(library, "MHD_create_response_from_buffer", api.create_response_from_buffer) &&
      Resolve(library, "MHD_add_response_header", api.add_response_header) &&
      Resolve(library, "MHD_queue_response", api.queue_response) &&
      Resolve(library, "MHD_destroy_response", api.destroy_response) &&
      Resolve(library, "MHD_get_connection_values", api.get_connection_values) &&
      Resolve(library, "MHD_lookup_connection_value", api.lookup_connection_value);
  if (!complete) {
    return Fail(ErrorCode::kInternal,
                std::string(kSoname) + " lacks a function the exporter calls; reinstall " +
                    kPackage);
  }
  return api;  // the library stays loaded for the process's lifetime
}

}  // namespace

Result<const MicrohttpdApi*> Microhttpd() {
  static const Result<MicrohttpdApi> loaded = Load();
  if (!loaded) return Fail(loaded.error());
  return &*loaded;
}

}  // namespace memprof::cli
