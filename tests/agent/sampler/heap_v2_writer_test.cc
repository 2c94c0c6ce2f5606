// The sampler's dump read back by the report engine's own parser, and a
// known leak estimated from it with jeprof's unsampling.
#include "agent/sampler/heap_v2_writer.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "agent/sampler/sampler.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "tests/agent/sampler/sampler_test_lib.h"
#include "tests/agent/sampler/sampler_test_support.h"

namespace memprof::agent {
namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buffer[65536];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// jeprof's (and report's) estimate of what one record stands for.
double UnsampledBytes(const report::parse::RawCounts& counts, uint64_t period) {
  if (counts.objects == 0) return 0;
  const double mean = static_cast<double>(counts.bytes) / static_cast<double>(counts.objects);
  return static_cast<double>(counts.bytes) / (1 - std::exp(-mean / static_cast<double>(period)));
}

TEST(HeapV2WriterTest, FormatsNumbersAsJemallocDoes) {
  const int fd = memfd_create("writer", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  TextWriter w(fd);
  w.Decimal(0);
  w.Put(" ");
  w.Decimal(18446744073709551615u);
  w.Put(" ");
  w.Hex(0x7fd8302a2630);
  w.Put(" ");
  w.Hex(0);
  ASSERT_TRUE(w.Flush());
  EXPECT_EQ(ReadAll(fd), "0 18446744073709551615 0x7fd8302a2630 0x0");
  EXPECT_EQ(w.written(), 41u);
  close(fd);
}

TEST(HeapV2WriterTest, WriteFailureIsReported) {
  TextWriter w(-1);
  w.Put("x");
  EXPECT_FALSE(w.Flush());
  EXPECT_EQ(w.error(), EBADF);
}

TEST(HeapV2WriterTest, ReportEstimatesAKnownLeakWithin30Percent) {
  auto& lib = testing::PreloadedTestLib();
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  constexpr uint64_t kInterval = 16 * 1024;
  constexpr size_t kBlocks = 4000;
  constexpr size_t kBlockBytes = 2000;
  std::vector<void*> leak(kBlocks);
  Sampler::Reset();
  const auto before = std::chrono::system_clock::now();
  ASSERT_TRUE(testing::ActivateForTest((kInterval)));
  lib.leak(leak.data(), kBlocks, kBlockBytes);
  Sampler::Deactivate();
  const int fd = memfd_create("profile", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto written = Sampler::WriteProfile(fd);
  ASSERT_TRUE(written) << written.error().message;
  std::istringstream in(ReadAll(fd));
  close(fd);
  auto dump = report::parse::ParseHeapV2(in, "sampler.heap");
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ(dump->sample_period, kInterval);
  EXPECT_FALSE(dump->mapped_libraries.empty());
  // The coverage line: since the activation after the reset, nothing dropped.
  ASSERT_TRUE(dump->sampler.has_value());
  const auto since = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(dump->sampler->since_unix_ms));
  EXPECT_GE(since, std::chrono::time_point_cast<std::chrono::milliseconds>(before));
  EXPECT_LE(since, std::chrono::system_clock::now());
  EXPECT_EQ(dump->sampler->dropped, 0u);
  EXPECT_EQ(Sampler::Status().since_unix_ms, dump->sampler->since_unix_ms);
  double leaked = 0;
  for (const report::parse::StackRecord& record : dump->records) {
    ASSERT_FALSE(record.stack.empty());
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(record.stack[0]), &info) != 0 &&
        info.dli_saddr == reinterpret_cast<void*>(lib.leak)) {
      leaked += UnsampledBytes(record.counts.inuse, dump->sample_period);
    }
  }
  const double expected = static_cast<double>(kBlocks * kBlockBytes);
  EXPECT_NEAR(leaked, expected, expected * 0.3);
  for (void* p : leak) lib.free(p);
  Sampler::Reset();
}

}  // namespace
}  // namespace memprof::agent
