#ifndef MEMPROF_CLI_DOCTOR_LIBXML2_LIBRARY_H_
#define MEMPROF_CLI_DOCTOR_LIBXML2_LIBRARY_H_

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "common/result.h"

namespace memprof::cli {

// The libxml2 functions doctor calls to read glibc's malloc_info XML,
// resolved from the shared library when doctor needs them instead of when
// memprofctl starts.
//
// Why: libxml2 brings ICU and liblzma with it, and every memprofctl command
// would pay the dynamic loader for them while only `doctor` on a glibc
// process uses them (tests/integration/startup_test.cc holds memprofctl to
// its short list of start-up libraries). The exporter loads libmicrohttpd
// the same way.
struct Libxml2Api {
  decltype(&xmlReadMemory) read_memory;
  decltype(&xmlDocGetRootElement) root_element;
  decltype(&xmlFreeDoc) free_doc;
};

// Loads the library on the first call (thread-safe) and keeps it loaded.
// The error names the library and the Debian package that provides it.
[[nodiscard]] Result<const Libxml2Api*> Libxml2();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_LIBXML2_LIBRARY_H_
