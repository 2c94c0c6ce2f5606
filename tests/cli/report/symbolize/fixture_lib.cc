// The shared library of symbolize_fixture (a module with its own load bias).
#include "fixture_lib.h"

namespace fixturelib {

[[gnu::noinline]] void* CallThrough(Callee callee) {
  void* where = callee();  // LINE:lib_call
  asm volatile("" ::: "memory");
  return where;
}

}  // namespace fixturelib
