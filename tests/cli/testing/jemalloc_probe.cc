// A program linked against libjemalloc (DT_NEEDED) for ElfInspector and `run` tests.
#include <jemalloc/jemalloc.h>

int main() {
  unsigned narenas = 0;
  size_t size = sizeof(narenas);
  return mallctl("arenas.narenas", &narenas, &size, nullptr, 0) == 0 ? 0 : 1;
}
