#ifndef MEMPROF_TESTS_CLI_REPORT_PARSE_GPERFTOOLS_PROFILES_H_
#define MEMPROF_TESTS_CLI_REPORT_PARSE_GPERFTOOLS_PROFILES_H_

// gperftools' two heap profile forms, for the parser's tests and for the
// tests that unsample what it read (tests/cli/report/aggregate/).

#include <string>

namespace memprof::report::parse::testing {

// As gperftools 2.10's heap profiler writes it (padding, 0x%08 addresses,
// a stack whose objects were all freed again, a CRLF line).
inline const std::string kHeapProfile =
    "heap profile:    3:     3072 [  1003:  1003072] @ heapprofile\n"
    "     2:     2048 [     2:     2048] @ 0x00401000 0x00402000 0x00403000\n"
    "     1:     1024 [     1:     1024] @ 0x00401100 0x00402000\r\n"
    "     0:        0 [  1000:  1000000] @ 0x00401200 0x00402000\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "00400000-00410000 r-xp 00000000 08:01 42    /usr/bin/app\n";

// As tcmalloc's GetHeapSample writes it: one line per sampled object,
// brackets repeating the counts, the allocator's own frames at the leaf.
inline const std::string kHeapSample =
    "heap profile:      3:  2101248 [     3:  2101248] @ heap_v2/524288\n"
    "     1:  1048576 [     1:  1048576] @ 0x7f00000010 0x401000 0x402000\n"
    "     1:  1048576 [     1:  1048576] @ 0x7f00000010 0x401000 0x402000\n"
    "     1:     4096 [     1:     4096] @ 0x7f00000010 0x401100 0x402000\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "00400000-00410000 r-xp 00000000 08:01 42    /usr/bin/app\n";

}  // namespace memprof::report::parse::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_PARSE_GPERFTOOLS_PROFILES_H_
