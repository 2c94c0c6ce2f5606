// libservice_cache.so (service_cache.h).

#include "tests/testprogs/service_cache.h"

#include <stdlib.h>

__attribute__((noinline, visibility("default"))) void* ServiceCacheAllocate(size_t bytes) {
  return malloc(bytes);
}
