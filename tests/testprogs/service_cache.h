#ifndef MEMPROF_TESTS_TESTPROGS_SERVICE_CACHE_H_
#define MEMPROF_TESTS_TESTPROGS_SERVICE_CACHE_H_

// libservice_cache.so: the shared library of service_target, the way a real
// service's allocations go through the libraries it uses. The tests run
// stripped copies of both, as distributions ship them: the exported function
// keeps its name (.dynsym), the program's own functions lose theirs.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// malloc(bytes), called from the library.
void* ServiceCacheAllocate(size_t bytes);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MEMPROF_TESTS_TESTPROGS_SERVICE_CACHE_H_
