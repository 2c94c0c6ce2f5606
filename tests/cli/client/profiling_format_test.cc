#include "cli/client/profiling_format.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

// What the agent reports as allocator_version for each allocator
// (agent/allocators/*_allocator.cc), said with the allocator's name once.
TEST(AllocatorTextTest, NamesTheAllocatorOnce) {
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_GLIBC, "glibc 2.36"), "glibc 2.36");
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_JEMALLOC,
                          "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"),
            "jemalloc 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c");
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_TCMALLOC, "gperftools 2.10"),
            "tcmalloc (gperftools 2.10)");
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_TCMALLOC, "TCMalloc 2.10"), "TCMalloc 2.10");
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_OTHER, ""), "other");
  EXPECT_EQ(AllocatorText(memprof::v1::ALLOCATOR_KIND_GLIBC, "glibcx"), "glibc (glibcx)");
}

}  // namespace
}  // namespace memprof::cli
