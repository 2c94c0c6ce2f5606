#ifndef MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_FIXTURE_LIB_H_
#define MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_FIXTURE_LIB_H_

namespace fixturelib {

using Callee = void* (*)();

// Calls `callee` and returns what it returns: a callee that records its own
// return address yields an address inside this shared library.
void* CallThrough(Callee callee);

}  // namespace fixturelib

#endif  // MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_FIXTURE_LIB_H_
