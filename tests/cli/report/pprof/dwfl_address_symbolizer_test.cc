#include "cli/report/pprof/dwfl_address_symbolizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace memprof::report::pprof {
namespace {

// A function of this binary to look up; noinline so it has an address.
__attribute__((noinline)) int PprofAdapterProbe(int x) { return x * 3 + 1; }

std::vector<std::string> SelfMaps() {
  std::ifstream in("/proc/self/maps");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(DwflAddressSymbolizerTest, NamesAFunctionOfThisBinaryAtItsEntry) {
  Result<symbolize::Symbolizer> symbolizer = symbolize::Symbolizer::FromMapsLines(SelfMaps());
  ASSERT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
  DwflAddressSymbolizer adapter(*symbolizer);
  // An entry address is a PC, not a return address: looked up as given
  // (through Resolve it would be looked up one byte earlier, in whatever
  // precedes the function).
  auto address = reinterpret_cast<uint64_t>(&PprofAdapterProbe);
  std::span<const aggregate::Frame> frames = adapter.Resolve(address);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().function.find("PprofAdapterProbe"), std::string::npos)
      << frames.back().function;
  EXPECT_FALSE(frames.back().module.empty());
}

TEST(DwflAddressSymbolizerTest, UnresolvedAddressesHaveNoFunctionName) {
  Result<symbolize::Symbolizer> symbolizer = symbolize::Symbolizer::Create({});
  ASSERT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
  DwflAddressSymbolizer adapter(*symbolizer);
  std::span<const aggregate::Frame> frames = adapter.Resolve(0x1234);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "");  // not the Symbolizer's "0x1234"
}

TEST(DwflAddressSymbolizerTest, AnAddressInAMappingWithoutCodeKeepsItsModule) {
  Result<symbolize::Symbolizer> symbolizer = symbolize::Symbolizer::FromMapsLines(SelfMaps());
  ASSERT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
  DwflAddressSymbolizer adapter(*symbolizer);
  auto block = std::make_unique<char[]>(64);  // heap memory: mapped, no symbols
  std::span<const aggregate::Frame> frames =
      adapter.Resolve(reinterpret_cast<uint64_t>(block.get()));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "");  // not "[heap]+0x..."
}

}  // namespace
}  // namespace memprof::report::pprof
