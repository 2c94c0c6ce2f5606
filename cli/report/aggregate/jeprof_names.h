#ifndef MEMPROF_CLI_REPORT_AGGREGATE_JEPROF_NAMES_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_JEPROF_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace memprof::report::aggregate {

// jeprof's ShortFunctionName: drops argument lists (with a trailing
// "const"), template arguments and a leading return type, so that
// "std::vector<int>::reserve(unsigned long)" reports as "std::vector::reserve".
// The function tables group by this name, so it matches jeprof's, with one
// deliberate difference: "(anonymous namespace)" and "operator()" are kept,
// as pprof keeps them, where jeprof mistakes them for argument lists
// ("demo::(anonymous namespace)::Serve()" is not "demo::::Serve").
std::string ShortFunctionName(std::string_view full_name);

// True for the allocator entry points jeprof's RemoveUninterestingFrames
// cuts at (malloc, calloc, operator new, ... and TCMalloc internals), given a
// short function name. A stack loses such a frame and every frame before it
// (the profiler's and allocator's own: prof_backtrace, imalloc, ...).
bool IsAllocatorEntryPoint(std::string_view short_name);

// Whether `module` (a mapped file's basename) is an allocator library. A
// stripped allocator (Debian's libjemalloc.so.2) leaves its internal frames
// without names, so jeprof's name-based cut would miss them: frames that no
// symbol names inside such a library are cut as the allocator's own.
bool IsAllocatorModule(std::string_view module);

// The address as jeprof prints and matches it: 16 zero-padded hex digits.
std::string JeprofAddress(uint64_t address);

// jeprof's TranslateStack ignores frames above 0x7fffffffffffffff ("fake
// entries" such as the vsyscall page): they get no row in the tables.
inline bool IsIgnoredAddress(uint64_t address) { return address > 0x7fffffffffffffffULL; }

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_JEPROF_NAMES_H_
