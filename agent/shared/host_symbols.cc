#include "agent/shared/host_symbols.h"

#include <dlfcn.h>

namespace memprof::agent {

void* HostSymbol(const char* name) {
  // The handle of the main program searches the global scope it heads.
  static void* const program = dlopen(nullptr, RTLD_LAZY);
  return program != nullptr ? dlsym(program, name) : nullptr;
}

}  // namespace memprof::agent
