// The Symbolizer against a live fixture process: a PIE with DWARF, an
// inlined function, C++ and C names, and a shared library.
#include "cli/report/symbolize/symbolizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/report/symbolize/hex.h"
#include "tests/cli/report/symbolize/test_support.h"

namespace memprof::report::symbolize {
namespace {

using testing::FixtureProcess;
using testing::Basename;
using testing::kMainSource;
using testing::MarkerLine;

constexpr const char* kLibSource = MEMPROF_SYMBOLIZE_FIXTURE_LIB_SOURCE;

std::vector<std::string> Functions(std::span<const Frame> frames) {
  std::vector<std::string> names;
  for (const Frame& frame : frames) names.push_back(frame.function);
  return names;
}

class SymbolizerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fixture_.ready()) << fixture_.error(); }

  Symbolizer Make(SymbolizerOptions options = {}) {
    return Symbolizer::FromMapsLines(fixture_.maps(), std::move(options)).value();
  }
  Symbolizer MakeWithLines() {
    SymbolizerOptions options;
    options.lines = true;
    return Make(options);
  }
  const MemoryMapping* FirstMappingWhere(bool (*predicate)(const MemoryMapping&)) {
    mappings_ = ParseMemoryMap(fixture_.maps()).mappings;
    for (const MemoryMapping& m : mappings_) {
      if (predicate(m)) return &m;
    }
    return nullptr;
  }

  FixtureProcess fixture_{MEMPROF_SYMBOLIZE_FIXTURE};
  std::vector<MemoryMapping> mappings_;
};

TEST_F(SymbolizerTest, FixtureMapsParseCleanly) {
  Symbolizer symbolizer = Make();
  EXPECT_EQ(symbolizer.skipped_map_lines(), 0u);
  EXPECT_GT(fixture_.maps().size(), 5u);
}

TEST_F(SymbolizerTest, DemanglesCppMemberFunction) {
  Symbolizer symbolizer = Make();
  std::span<const Frame> frames = symbolizer.Resolve(fixture_.Address("method_ra"));
  EXPECT_EQ(Functions(frames), std::vector<std::string>{"fixture::Widget::Method(int)"});
  EXPECT_EQ(frames[0].module, "symbolize_fixture");
  EXPECT_EQ(frames[0].file, "");  // lines were not asked for
  EXPECT_EQ(frames[0].line, 0);
}

TEST_F(SymbolizerTest, KeepsCNamesAsTheyAre) {
  Symbolizer symbolizer = Make();
  EXPECT_EQ(Functions(symbolizer.Resolve(fixture_.Address("c_ra"))),
            std::vector<std::string>{"plain_c_function"});
}

TEST_F(SymbolizerTest, InlineChainInnermostFirst) {
  Symbolizer symbolizer = Make();
  std::span<const Frame> frames = symbolizer.Resolve(fixture_.Address("inline_ra"));
  EXPECT_EQ(Functions(frames), (std::vector<std::string>{"fixture::InlinedMiddle(int)",
                                                         "fixture::OuterWithInline(int)"}));
  for (const Frame& frame : frames) EXPECT_EQ(frame.module, "symbolize_fixture");
}

TEST_F(SymbolizerTest, FileAndLineOfEachInlineLevel) {
  Symbolizer symbolizer = MakeWithLines();
  std::span<const Frame> frames = symbolizer.Resolve(fixture_.Address("inline_ra"));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(Basename(frames[0].file), "fixture_main.cc");
  EXPECT_EQ(frames[0].line, MarkerLine(kMainSource, "inlined_call"));
  EXPECT_EQ(Basename(frames[1].file), "fixture_main.cc");
  EXPECT_EQ(frames[1].line, MarkerLine(kMainSource, "outer_call"));

  std::span<const Frame> method = symbolizer.Resolve(fixture_.Address("method_ra"));
  ASSERT_EQ(method.size(), 1u);
  EXPECT_EQ(method[0].line, MarkerLine(kMainSource, "method_call"));
  EXPECT_EQ(symbolizer.Resolve(fixture_.Address("c_ra"))[0].line,
            MarkerLine(kMainSource, "c_call"));
}

TEST_F(SymbolizerTest, SharedLibraryAtItsOwnBias) {
  Symbolizer symbolizer = MakeWithLines();
  std::span<const Frame> frames = symbolizer.Resolve(fixture_.Address("lib_ra"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "fixturelib::CallThrough(void* (*)())");
  EXPECT_EQ(frames[0].module, "libsymbolize_fixture_lib.so");
  EXPECT_EQ(Basename(frames[0].file), "fixture_lib.cc");
  EXPECT_EQ(frames[0].line, MarkerLine(kLibSource, "lib_call"));
}

TEST_F(SymbolizerTest, ResolvePcLooksUpTheAddressItself) {
  Symbolizer symbolizer = Make();
  EXPECT_EQ(Functions(symbolizer.ResolvePc(fixture_.Address("leaf_pc"))),
            std::vector<std::string>{"fixture::RecordReturnAddress()"});
}

TEST_F(SymbolizerTest, ModuleOffsetIsTheFileOffsetOfTheGivenAddress) {
  const uint64_t address = fixture_.Address("method_ra");
  Symbolizer symbolizer = Make();
  const Frame& frame = symbolizer.Resolve(address)[0];
  const MemoryMapping* text = FirstMappingWhere(
      [](const MemoryMapping& m) { return m.Executable() && m.Basename() == "symbolize_fixture"; });
  ASSERT_NE(text, nullptr);
  ASSERT_TRUE(text->Contains(address));
  EXPECT_EQ(frame.module_offset, address - text->start + text->offset);
}

TEST_F(SymbolizerTest, AddressesOutsideFilesGetPlaceholders) {
  Symbolizer symbolizer = Make();
  std::span<const Frame> nowhere = symbolizer.Resolve(0x10);
  ASSERT_EQ(nowhere.size(), 1u);
  EXPECT_EQ(nowhere[0].function, "0x10");
  EXPECT_EQ(nowhere[0].module, "");

  const MemoryMapping* anon =
      FirstMappingWhere([](const MemoryMapping& m) { return m.path.empty(); });
  ASSERT_NE(anon, nullptr);
  EXPECT_EQ(symbolizer.Resolve(anon->start + 0x21)[0].function,
            "0x" + LowerHex(anon->start + 0x21));
}

TEST_F(SymbolizerTest, PseudoMappingsAreNamedAfterThemselves) {
  const MemoryMapping* vdso =
      FirstMappingWhere([](const MemoryMapping& m) { return m.path == "[vdso]"; });
  if (vdso == nullptr) GTEST_SKIP() << "no [vdso] mapping";
  Symbolizer symbolizer = Make();
  const Frame& frame = symbolizer.Resolve(vdso->start + 0x101)[0];
  EXPECT_EQ(frame.module, "[vdso]");
  EXPECT_EQ(frame.function, "[vdso]+0x101");
}

TEST_F(SymbolizerTest, CachesPerAddress) {
  Symbolizer symbolizer = Make();
  const uint64_t address = fixture_.Address("inline_ra");
  std::span<const Frame> first = symbolizer.Resolve(address);
  for (int i = 0; i < 100; ++i) symbolizer.Resolve(address + static_cast<uint64_t>(i));
  std::span<const Frame> again = symbolizer.Resolve(address);
  EXPECT_EQ(first.data(), again.data());  // same cached frames, still valid
  EXPECT_EQ(Functions(first)[0], "fixture::InlinedMiddle(int)");
}

TEST_F(SymbolizerTest, MovedSymbolizerKeepsWorking) {
  Symbolizer original = Make();
  std::span<const Frame> before = original.Resolve(fixture_.Address("method_ra"));
  Symbolizer moved = std::move(original);
  EXPECT_EQ(moved.Resolve(fixture_.Address("method_ra")).data(), before.data());
  EXPECT_EQ(Functions(moved.Resolve(fixture_.Address("lib_ra")))[0],
            "fixturelib::CallThrough(void* (*)())");
}

TEST(SymbolizerProblemsTest, MissingBinaryIsReportedOnceAndNamedByOffset) {
  const std::vector<std::string> maps = {
      "10000-20000 r-xp 00001000 08:02 99 /nonexistent/memprof/libgone.so",
      "20000-30000 r-xp 00000000 08:02 98 /nonexistent/memprof/other (deleted)"};
  Symbolizer symbolizer = Symbolizer::FromMapsLines(maps).value();
  EXPECT_EQ(symbolizer.Resolve(0x10101)[0].function, "libgone.so+0x1101");
  EXPECT_EQ(symbolizer.Resolve(0x10201)[0].function, "libgone.so+0x1201");
  EXPECT_EQ(symbolizer.Resolve(0x20001)[0].function, "other+0x1");
  EXPECT_EQ(symbolizer.Problems().size(), 2u);
}

TEST(SymbolizerProblemsTest, NonElfFileIsAProblemNotACrash) {
  const std::vector<std::string> maps = {std::string("10000-20000 r-xp 00000000 08:02 99 ") +
                                         MEMPROF_SYMBOLIZE_FIXTURE_SOURCE};
  Symbolizer symbolizer = Symbolizer::FromMapsLines(maps).value();
  EXPECT_EQ(symbolizer.Resolve(0x10011)[0].function, "fixture_main.cc+0x11");
  ASSERT_EQ(symbolizer.Problems().size(), 1u);
}

}  // namespace
}  // namespace memprof::report::symbolize
