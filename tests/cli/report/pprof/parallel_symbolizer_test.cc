#include "cli/report/pprof/parallel_symbolizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/pprof/dwfl_address_symbolizer.h"
#include "cli/report/pprof/file_work_queue.h"

namespace memprof::report::pprof {
namespace {

__attribute__((noinline)) int ParallelProbe(int x) { return x * 5 + 2; }

std::vector<symbolize::MemoryMapping> SelfMappings() {
  std::ifstream in("/proc/self/maps");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return symbolize::ParseMemoryMap(lines).mappings;
}

// Addresses in this binary, in libc, in libstdc++ and in no file at all.
std::vector<uint64_t> Addresses() {
  return {reinterpret_cast<uint64_t>(&ParallelProbe), reinterpret_cast<uint64_t>(&std::abort),
          reinterpret_cast<uint64_t>(&std::abort) + 16,
          reinterpret_cast<uint64_t>(&std::terminate), 0x1234};
}

void ExpectSameFrames(std::span<const aggregate::Frame> a, std::span<const aggregate::Frame> b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].function, b[i].function);
    EXPECT_EQ(a[i].file, b[i].file);
    EXPECT_EQ(a[i].line, b[i].line);
    EXPECT_EQ(a[i].module, b[i].module);
    EXPECT_EQ(a[i].module_offset, b[i].module_offset);
  }
}

// What `parallel` answers for each of `addresses`, next to `expected`'s.
void ExpectAnswersAs(DwflAddressSymbolizer& expected, ParallelSymbolizer& parallel,
                     const std::vector<uint64_t>& addresses) {
  for (uint64_t address : addresses) {
    SCOPED_TRACE(::testing::Message() << "0x" << std::hex << address);
    std::vector<aggregate::Frame> want;
    for (const aggregate::Frame& frame : expected.Resolve(address)) want.push_back(frame);
    ExpectSameFrames(parallel.Resolve(address), want);
  }
}

// Whatever the number of threads, and for addresses it was not given too,
// it answers exactly what one DwflAddressSymbolizer answers.
TEST(ParallelSymbolizerTest, AnswersAsOneSerialSymbolizer) {
  const std::vector<symbolize::MemoryMapping> mappings = SelfMappings();
  Result<symbolize::Symbolizer> serial = symbolize::Symbolizer::Create(mappings);
  ASSERT_TRUE(serial.has_value()) << serial.error().message;
  DwflAddressSymbolizer expected(*serial);
  const std::vector<uint64_t> addresses = Addresses();
  for (unsigned threads : {0u, 1u, 2u, 4u}) {
    Result<symbolize::Symbolizer> own = symbolize::Symbolizer::Create(mappings);
    ASSERT_TRUE(own.has_value()) << own.error().message;
    ParallelSymbolizer parallel(std::move(*own), mappings, {},
                                std::span(addresses).first(3), threads);
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    ExpectAnswersAs(expected, parallel, addresses);
  }
  EXPECT_NE(expected.Resolve(addresses[0]).back().function.find("ParallelProbe"),
            std::string::npos);
}

// Started before the addresses are known, its worker opens the files with
// the most code (the test binary, libc, libstdc++) meanwhile; the answers
// stay the same, and Modules() names only the files an address needed.
TEST(ParallelSymbolizerTest, StartedEarlyAnswersTheSameAndListsOnlyNeededFiles) {
  const std::vector<symbolize::MemoryMapping> mappings = SelfMappings();
  Result<symbolize::Symbolizer> serial = symbolize::Symbolizer::Create(mappings);
  ASSERT_TRUE(serial.has_value()) << serial.error().message;
  DwflAddressSymbolizer expected(*serial);
  Result<symbolize::Symbolizer> own = symbolize::Symbolizer::Create(mappings);
  ASSERT_TRUE(own.has_value()) << own.error().message;
  ParallelSymbolizer parallel(std::move(*own), mappings, {}, 2);
  const std::vector<uint64_t> addresses = Addresses();
  parallel.ResolveAll(std::span(addresses).first(1));  // in this binary only
  std::vector<aggregate::Frame> want;
  for (const aggregate::Frame& frame : expected.Resolve(addresses[0])) want.push_back(frame);
  ExpectSameFrames(parallel.Resolve(addresses[0]), want);
  const std::vector<symbolize::ModuleReport> modules = parallel.Modules();
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_EQ(std::filesystem::canonical(modules[0].path),
            std::filesystem::canonical("/proc/self/exe"));
}

// Addresses offered while the profile is read are resolved ahead by the
// worker that opened their file; the answers are the same as without, for
// those and for the rest.
TEST(ParallelSymbolizerTest, OfferedAddressesAnswerTheSame) {
  const std::vector<symbolize::MemoryMapping> mappings = SelfMappings();
  Result<symbolize::Symbolizer> serial = symbolize::Symbolizer::Create(mappings);
  ASSERT_TRUE(serial.has_value()) << serial.error().message;
  DwflAddressSymbolizer expected(*serial);
  const std::vector<uint64_t> addresses = Addresses();
  for (unsigned threads : {1u, 2u, 4u}) {
    Result<symbolize::Symbolizer> own = symbolize::Symbolizer::Create(mappings);
    ASSERT_TRUE(own.has_value()) << own.error().message;
    ParallelSymbolizer parallel(std::move(*own), mappings, {}, threads);
    parallel.Offer(std::span(addresses).first(2));
    parallel.Offer(std::span(addresses).subspan(2, 1));
    parallel.ResolveAll(addresses);
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    ExpectAnswersAs(expected, parallel, addresses);
  }
}

// Destroyed before any address came, it stops its waiting workers.
TEST(ParallelSymbolizerTest, StartedAndNeverUsedStopsItsWorkers) {
  const std::vector<symbolize::MemoryMapping> mappings = SelfMappings();
  Result<symbolize::Symbolizer> own = symbolize::Symbolizer::Create(mappings);
  ASSERT_TRUE(own.has_value()) << own.error().message;
  { ParallelSymbolizer parallel(std::move(*own), mappings, {}, 4); }
  SUCCEED();  // a worker left waiting would hang the join above
}

symbolize::MemoryMapping CodeMapping(uint64_t start, uint64_t end, const std::string& path) {
  symbolize::MemoryMapping mapping;
  mapping.start = start;
  mapping.end = end;
  mapping.perms = "r-xp";
  mapping.path = path;
  return mapping;
}

// Files are handed out to prepare costliest first, by the cost function
// when there is one (a small library with a big debug file before a big
// one without), else by their code.
TEST(FileWorkQueueTest, HandsOutTheCostliestFileFirst) {
  const std::vector<symbolize::MemoryMapping> mappings = {
      CodeMapping(0x100000, 0x900000, "/lib/big.so"),
      CodeMapping(0xa00000, 0xa10000, "/lib/small-with-debug.so"),
      CodeMapping(0xb00000, 0xb80000, "/lib/middle.so")};
  FileWorkQueue by_code(mappings);
  EXPECT_EQ(by_code.ClaimToPrepare(1), 0x100000u);
  EXPECT_EQ(by_code.ClaimToPrepare(1), 0xb00000u);
  EXPECT_EQ(by_code.ClaimToPrepare(1), 0xa00000u);

  FileWorkQueue by_cost(mappings, [](const FileWork& file) {
    return file.path == "/lib/small-with-debug.so" ? uint64_t{1} << 40 : file.code_bytes;
  });
  EXPECT_EQ(by_cost.ClaimToPrepare(1), 0xa00000u);
  EXPECT_EQ(by_cost.ClaimToPrepare(2), 0x100000u);
  EXPECT_EQ(by_cost.ClaimToPrepare(1), 0xb00000u);
  by_cost.Stop();
  EXPECT_EQ(by_cost.ClaimToPrepare(1), std::nullopt);
}

// A file that costs less than the queue's minimum is not prepared before
// the addresses are in; then whichever worker is free takes it, but only
// if an address lies in it.
TEST(FileWorkQueueTest, LeavesCheapFilesUntilAnAddressNeedsThem) {
  const std::vector<symbolize::MemoryMapping> mappings = {
      CodeMapping(0x100000, 0x900000, "/lib/big.so"),
      CodeMapping(0xa00000, 0xa10000, "/lib/small.so"),
      CodeMapping(0xb00000, 0xb80000, "/lib/unused.so")};
  FileWorkQueue queue(mappings, {}, 0x100000);
  EXPECT_EQ(queue.ClaimToPrepare(1), 0x100000u);
  const std::vector<uint64_t> addresses = {0x200000, 0xa00010, 0xa00020};
  queue.SetAddresses(addresses);
  EXPECT_EQ(queue.ClaimToPrepare(1), std::nullopt);
  FileWork* small = queue.NextToResolve(0);  // unclaimed: the free worker's
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->path, "/lib/small.so");
  EXPECT_EQ(small->addresses.size(), 2u);
  FileWork* big = queue.NextToResolve(1);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->path, "/lib/big.so");
  EXPECT_EQ(queue.NextToResolve(0), nullptr);  // unused.so: no address needs it
  EXPECT_EQ(queue.NextToResolve(1), nullptr);
}

TEST(ParallelSymbolizerTest, DistinctLookupAddressesOfAProfile) {
  report::HeapProfile profile;
  profile.samples.push_back({{0x10, 0x21, 0x31}, {}, {}});
  profile.samples.push_back({{0x20, 0x21, 0x41}, {}, {}});
  std::vector<uint64_t> addresses = DistinctLookupAddresses(profile);
  std::sort(addresses.begin(), addresses.end());
  // The leaf as is, callers minus one (report::LookupAddress).
  EXPECT_EQ(addresses, (std::vector<uint64_t>{0x10, 0x20, 0x30, 0x40}));
}

// The report resolves a pprof's addresses from the stacks interned while
// the dump was read, in place of this list: they are the same, in order.
TEST(ParallelSymbolizerTest, DistinctLookupAddressesAreTheInternedOnes) {
  report::HeapProfile profile;
  profile.samples.push_back({{0x10, 0x21, 0x31}, {}, {}});
  profile.samples.push_back({{0x20, 0x21, 0x41}, {}, {}});
  profile.samples.push_back({{0x41, 0x10}, {}, {}});
  EXPECT_EQ(DistinctLookupAddresses(profile),
            report::aggregate::InternLookupAddresses(profile).addresses);
}

// Offers before the addresses are all in: a worker is given, once, the
// offered addresses in the files it prepared, and nothing of the others'
// files or of files no one prepared; SetAddresses ends the offers.
TEST(FileWorkQueueTest, GivesEachWorkerTheOfferedAddressesOfItsOwnFiles) {
  const std::vector<symbolize::MemoryMapping> mappings = {
      CodeMapping(0x100000, 0x900000, "/lib/big.so"),
      CodeMapping(0xa00000, 0xa10000, "/lib/small.so"),
      CodeMapping(0xb00000, 0xb80000, "/lib/middle.so")};
  FileWorkQueue queue(mappings, {}, 0x20000);
  EXPECT_EQ(queue.ClaimToPrepare(1), 0x100000u);
  EXPECT_EQ(queue.ClaimToPrepare(2), 0xb00000u);
  EXPECT_EQ(queue.ClaimToPrepare(1), std::nullopt);  // small.so: not worth it early
  const std::vector<uint64_t> first = {0x200000, 0xa00010, 0xb00010, 0x300000, 0x1234};
  queue.Offer(first);
  EXPECT_EQ(queue.TakeOffered(1), (std::vector<uint64_t>{0x200000, 0x300000}));
  EXPECT_EQ(queue.TakeOffered(2), (std::vector<uint64_t>{0xb00010}));
  const std::vector<uint64_t> second = {0xb00020};
  queue.Offer(second);
  EXPECT_EQ(queue.TakeOffered(2), (std::vector<uint64_t>{0xb00020}));
  EXPECT_EQ(queue.TakeOffered(1), std::vector<uint64_t>{});  // new offers, none its own
  queue.SetAddresses(first);
  EXPECT_EQ(queue.TakeOffered(1), std::nullopt);
  queue.Offer(second);  // too late: ignored
  EXPECT_EQ(queue.TakeOffered(2), std::nullopt);
}

// A worker waiting for offers is woken by the next offer, and by Stop.
TEST(FileWorkQueueTest, AWorkerWaitingForOffersWakesUp) {
  const std::vector<symbolize::MemoryMapping> mappings = {
      CodeMapping(0x100000, 0x900000, "/lib/big.so")};
  FileWorkQueue queue(mappings);
  ASSERT_EQ(queue.ClaimToPrepare(1), 0x100000u);
  std::vector<std::optional<std::vector<uint64_t>>> taken;
  std::thread worker([&] {
    while (true) {
      taken.push_back(queue.TakeOffered(1));
      if (!taken.back()) break;
    }
  });
  const std::vector<uint64_t> offer = {0x200000};
  queue.Offer(offer);
  queue.Stop();
  worker.join();
  ASSERT_GE(taken.size(), 1u);
  EXPECT_EQ(taken.back(), std::nullopt);
  std::vector<uint64_t> all;
  for (const auto& batch : taken) {
    if (batch) all.insert(all.end(), batch->begin(), batch->end());
  }
  EXPECT_TRUE(all.empty() || all == offer);
}

}  // namespace
}  // namespace memprof::report::pprof
