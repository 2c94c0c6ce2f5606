#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_DEMANGLE_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_DEMANGLE_H_

#include <string>

namespace memprof::report::symbolize {

// Demangles an Itanium C++ ABI name ("_ZN2ns3FooEv" -> "ns::Foo()").
// Anything else (C names, names the demangler rejects) comes back unchanged.
std::string Demangle(const char* name);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_DEMANGLE_H_
