// memprofctl's own dlopen, which keeps libdebuginfod out of the process when
// no debuginfod server is configured.
//
// libdw 0.188 loads libdebuginfod the first time a module's debug file is
// not found locally, whether or not DEBUGINFOD_URLS is set: one dlopen that
// brings libcurl and some 25 libraries behind it (12 ms on the benchmark
// machine, on the symbolizing thread a report waits for), for a client that
// then asks no server. libdw's call binds to this definition: at link time
// when libdw's archive is linked in (the default), else through the global
// scope, where the executable comes first (it is exported for that alone,
// cli/CMakeLists.txt). It answers "not loaded" for libdebuginfod when no
// server is configured, which libdw takes as "no debuginfod support", and
// hands every other call to the C library's dlopen. With DEBUGINFOD_URLS set
// nothing changes: StrippedBinaryTest runs a real server both ways.
#include <dlfcn.h>

#include <cstring>

#include "cli/report/symbolize/debuginfo_lookup.h"

namespace {

using DlopenFunction = void* (*)(const char*, int);

// The C library's, the next definition after the executable's.
DlopenFunction LibcDlopen() {
  static const auto function = reinterpret_cast<DlopenFunction>(::dlsym(RTLD_NEXT, "dlopen"));
  return function;
}

bool IsDebuginfodClient(const char* file) {
  return file != nullptr && std::strncmp(file, "libdebuginfod.so", 16) == 0;
}

}  // namespace

extern "C" void* dlopen(const char* file, int mode) noexcept {
  if (IsDebuginfodClient(file) && !memprof::report::symbolize::DebuginfodConfigured()) {
    return nullptr;
  }
  const DlopenFunction libc = LibcDlopen();
  return libc != nullptr ? libc(file, mode) : nullptr;
}
