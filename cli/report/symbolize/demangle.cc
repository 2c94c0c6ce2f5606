#include "cli/report/symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace memprof::report::symbolize {

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  // Only mangled names go to the demangler: it would also "demangle" a plain
  // C name such as "f" into a type name ("float").
  if (!std::string_view(name).starts_with("_Z")) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  if (status != 0 || demangled == nullptr) return name;
  return demangled.get();
}

}  // namespace memprof::report::symbolize
