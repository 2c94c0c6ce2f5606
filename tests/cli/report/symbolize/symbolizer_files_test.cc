// Where the Symbolizer finds binaries and debug info: stripped copies,
// separate debug files (build ID and debuglink), deleted binaries through
// /proc/<pid>/map_files, a sysroot; and agreement with addr2line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/symbolize/debuginfo_lookup.h"
#include "cli/report/symbolize/elf_layout.h"
#include "cli/report/symbolize/hex.h"
#include "cli/report/symbolize/symbolizer.h"
#include "common/fd.h"
#include "tests/cli/report/symbolize/test_support.h"
#include "tests/support/command_runner.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::symbolize {
namespace {

namespace fs = std::filesystem;
using test_support::RunCommand;
using test_support::TempDir;
using testing::Basename;
using testing::FixtureProcess;
using testing::kMainSource;
using testing::MarkerLine;
using testing::Objcopy;

// What the symbolizer says of the file at `path` (a failure if nothing).
ModuleReport ModuleOf(const Symbolizer& symbolizer, const std::string& path) {
  for (const ModuleReport& module : symbolizer.Modules()) {
    if (module.path == path) return module;
  }
  ADD_FAILURE() << "no module report for " << path;
  return {};
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Symbolizer Make(const std::vector<std::string>& maps, SymbolizerOptions options) {
  return Symbolizer::FromMapsLines(maps, std::move(options)).value();
}

SymbolizerOptions WithLines(std::vector<std::string> debug_dirs = {}) {
  SymbolizerOptions options;
  options.lines = true;
  options.debug_dirs = std::move(debug_dirs);
  return options;
}

TEST(SymbolizerFilesTest, StrippedBinaryGivesModuleOffsets) {
  TempDir dir;
  const std::string stripped = dir.File("stripped fixture");
  ASSERT_TRUE(Objcopy({"--strip-all", MEMPROF_SYMBOLIZE_FIXTURE, stripped}));
  FixtureProcess fixture(stripped);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  Symbolizer symbolizer = Make(fixture.maps(), WithLines());
  std::span<const Frame> frames = symbolizer.Resolve(fixture.Address("method_ra"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].module, "stripped fixture");
  EXPECT_EQ(frames[0].function, "stripped fixture+0x" + LowerHex(frames[0].module_offset));
  EXPECT_EQ(frames[0].line, 0);
  // The unstripped library next to it still resolves.
  EXPECT_EQ(symbolizer.Resolve(fixture.Address("lib_ra"))[0].function,
            "fixturelib::CallThrough(void* (*)())");
}

// Splits the fixture into a stripped binary and its debug file, the way
// distributions ship -dbg/-dbgsym packages.
class SeparateDebugTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(fs::path(debug_file_).parent_path());
    ASSERT_TRUE(Objcopy({"--only-keep-debug", MEMPROF_SYMBOLIZE_FIXTURE, debug_file_}));
    ASSERT_TRUE(Objcopy({"--strip-all", MEMPROF_SYMBOLIZE_FIXTURE, binary_}));
  }
  // Where the debug file was found is what Modules() reports, with the
  // binary's build ID.
  void ExpectFullySymbolized(const std::vector<std::string>& debug_dirs,
                             const std::string& debug_file) {
    FixtureProcess fixture(binary_);
    ASSERT_TRUE(fixture.ready()) << fixture.error();
    Symbolizer symbolizer = Make(fixture.maps(), WithLines(debug_dirs));
    std::span<const Frame> frames = symbolizer.Resolve(fixture.Address("inline_ra"));
    const ModuleReport module = ModuleOf(symbolizer, binary_);
    EXPECT_EQ(module.build_id, BuildId(binary_).value());
    EXPECT_TRUE(module.debug_info);
    EXPECT_TRUE(module.full_symtab);
    EXPECT_EQ(fs::weakly_canonical(module.debug_file), fs::weakly_canonical(debug_file));
    EXPECT_EQ(module.problem, "");
    ASSERT_EQ(frames.size(), 2u) << frames[0].function;
    EXPECT_EQ(frames[0].function, "fixture::InlinedMiddle(int)");
    EXPECT_EQ(frames[0].line, MarkerLine(kMainSource, "inlined_call"));
    EXPECT_EQ(frames[1].function, "fixture::OuterWithInline(int)");
    EXPECT_EQ(frames[1].line, MarkerLine(kMainSource, "outer_call"));
    EXPECT_EQ(frames[0].module, "fixture");
  }

  TempDir dir_;
  const std::string binary_ = dir_.File("fixture");
  // Not next to the binary: libdwfl also tries <binary>.debug there, even
  // without a debuglink (it checks the build ID).
  const std::string debug_file_ = dir_.File("elsewhere/fixture.debug");
  const std::string debug_root_ = dir_.File("debug");
};

TEST_F(SeparateDebugTest, WithoutDebugFileOnlyOffsets) {
  FixtureProcess fixture(binary_);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  Symbolizer symbolizer = Make(fixture.maps(), WithLines({debug_root_}));
  EXPECT_EQ(symbolizer.Resolve(fixture.Address("inline_ra"))[0].function.rfind("fixture+0x", 0),
            0u);
  // What the summary tells the user: the build ID to look for, and that
  // neither a symbol table nor DWARF was found.
  const ModuleReport module = ModuleOf(symbolizer, binary_);
  EXPECT_EQ(module.build_id, BuildId(binary_).value());
  EXPECT_FALSE(module.debug_info);
  EXPECT_FALSE(module.full_symtab);
  EXPECT_EQ(module.debug_file, "");
}

// --nearest-symbol names an address no symbol covers after the closest
// symbol below it, marked as a guess: here the function holding the address
// is taken out of the symbol table (as a stripped library has no entry for
// its static functions). Without the option the frame is module+0xOFFSET.
TEST(SymbolizerFilesTest, NearestSymbolIsAMarkedGuess) {
  TempDir dir;
  const std::string binary = dir.File("fixture");
  ASSERT_TRUE(Objcopy({"--strip-debug", "--strip-symbol=_ZN7fixture15OuterWithInlineEi",
                       MEMPROF_SYMBOLIZE_FIXTURE, binary}));
  FixtureProcess fixture(binary);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  SymbolizerOptions options = WithLines();
  Symbolizer plain = Make(fixture.maps(), options);
  const Frame unnamed = plain.Resolve(fixture.Address("inline_ra"))[0];
  EXPECT_FALSE(unnamed.guessed);
  EXPECT_EQ(unnamed.function, "fixture+0x" + LowerHex(unnamed.module_offset));
  options.nearest_symbol = true;
  Symbolizer guessing = Make(fixture.maps(), options);
  const Frame guessed = guessing.Resolve(fixture.Address("inline_ra"))[0];
  ASSERT_TRUE(guessed.guessed) << guessed.function;
  EXPECT_NE(guessed.function.find("+0x"), std::string::npos) << guessed.function;
  EXPECT_EQ(guessed.function.back(), '?') << guessed.function;
  EXPECT_EQ(guessed.function.find("OuterWithInline"), std::string::npos) << guessed.function;
}

TEST_F(SeparateDebugTest, FoundByBuildId) {
  auto id = BuildId(binary_);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  const fs::path linked =
      fs::path(debug_root_) / ".build-id" / id->substr(0, 2) / (id->substr(2) + ".debug");
  fs::create_directories(linked.parent_path());
  fs::rename(debug_file_, linked);
  ExpectFullySymbolized({"/nonexistent/memprof-debug", debug_root_}, linked);
}

TEST_F(SeparateDebugTest, FoundNextToTheBinary) {
  fs::rename(debug_file_, binary_ + ".debug");
  ExpectFullySymbolized({}, binary_ + ".debug");
}

TEST_F(SeparateDebugTest, FoundByDebuglink) {
  // --add-gnu-debuglink records the name and CRC; the file then lives under
  // <root>/<directory of the binary>/, like /usr/lib/debug/usr/bin/x.debug.
  ASSERT_TRUE(Objcopy({"--add-gnu-debuglink=" + debug_file_, binary_}));
  const fs::path placed = fs::path(debug_root_ + dir_.path()) / "fixture.debug";
  fs::create_directories(placed.parent_path());
  fs::rename(debug_file_, placed);
  ExpectFullySymbolized({debug_root_}, placed);
}

// The observer (the CLI's debuginfod progress line) hears of each lookup
// of a file's debug info, started and finished, and of nothing once removed.
class RecordingObserver final : public DebuginfoLookupObserver {
 public:
  void LookupStarted(std::string_view file) override { events.push_back("+" + std::string(file)); }
  void LookupFinished(std::string_view file) override {
    events.push_back("-" + std::string(file));
  }
  std::vector<std::string> events;
};

TEST_F(SeparateDebugTest, TheObserverHearsOfEachDebugInfoLookup) {
  FixtureProcess fixture(binary_);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  RecordingObserver observer;
  SetDebuginfoLookupObserver(&observer);
  Symbolizer symbolizer = Make(fixture.maps(), WithLines({debug_root_}));
  symbolizer.Resolve(fixture.Address("inline_ra"));
  SetDebuginfoLookupObserver(nullptr);
  ASSERT_GE(observer.events.size(), 2u);
  const auto started = std::find(observer.events.begin(), observer.events.end(), "+" + binary_);
  ASSERT_NE(started, observer.events.end()) << ::testing::PrintToString(observer.events);
  EXPECT_NE(std::find(started, observer.events.end(), "-" + binary_), observer.events.end())
      << ::testing::PrintToString(observer.events);
  const size_t heard = observer.events.size();
  Symbolizer after = Make(fixture.maps(), WithLines({debug_root_}));
  after.Resolve(fixture.Address("inline_ra"));
  EXPECT_EQ(observer.events.size(), heard);
}

TEST(SymbolizerFilesTest, DeletedBinaryThroughMapFiles) {
  TempDir dir;
  const std::string copy = dir.File("doomed");
  fs::copy_file(MEMPROF_SYMBOLIZE_FIXTURE, copy);
  fs::permissions(copy, fs::perms::owner_all);
  FixtureProcess fixture(copy);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  ASSERT_TRUE(fs::remove(copy));
  const std::vector<std::string> maps =
      ReadLines("/proc/" + std::to_string(fixture.pid()) + "/maps");
  bool saw_deleted = false;
  for (const std::string& line : maps) saw_deleted = saw_deleted || line.ends_with("(deleted)");
  ASSERT_TRUE(saw_deleted);

  SymbolizerOptions live = WithLines();
  live.pid = fixture.pid();
  Symbolizer symbolizer = Make(maps, live);
  std::span<const Frame> frames = symbolizer.Resolve(fixture.Address("method_ra"));
  if (frames[0].function.starts_with("doomed+0x")) {
    GTEST_SKIP() << "no access to /proc/<pid>/map_files (needs CAP_CHECKPOINT_RESTORE): "
                 << (symbolizer.Problems().empty() ? "" : symbolizer.Problems()[0]);
  }
  EXPECT_EQ(frames[0].function, "fixture::Widget::Method(int)");
  EXPECT_EQ(frames[0].module, "doomed");
  EXPECT_EQ(frames[0].line, MarkerLine(kMainSource, "method_call"));

  // Without the pid the deleted path is not trusted (or even there).
  Symbolizer offline = Make(maps, WithLines());
  EXPECT_EQ(offline.Resolve(fixture.Address("method_ra"))[0].function.rfind("doomed+0x", 0), 0u);
  EXPECT_EQ(offline.Problems().size(), 1u);
}

TEST(SymbolizerFilesTest, SysrootPrefixesEveryPath) {
  FixtureProcess fixture(MEMPROF_SYMBOLIZE_FIXTURE);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  SymbolizerOptions options;
  options.sysroot = "/proc/" + std::to_string(fixture.pid()) + "/root";
  Symbolizer symbolizer = Make(fixture.maps(), options);
  EXPECT_EQ(symbolizer.Resolve(fixture.Address("lib_ra"))[0].function,
            "fixturelib::CallThrough(void* (*)())");

  options.sysroot = "/nonexistent/memprof-root";
  Symbolizer nowhere = Make(fixture.maps(), options);
  EXPECT_EQ(
      nowhere.Resolve(fixture.Address("method_ra"))[0].function.rfind("symbolize_fixture+0x", 0),
      0u);
}

// addr2line -f -C -i prints "function\nfile:line" per inline level,
// innermost first; the same shape as our frames with lines.
std::vector<std::string> Addr2line(const std::string& binary, uint64_t vaddr) {
  const test_support::CommandResult result =
      RunCommand({MEMPROF_ADDR2LINE, "-f", "-C", "-i", "-e", binary, "0x" + LowerHex(vaddr)}, {});
  std::vector<std::string> out;
  std::istringstream in(result.out);
  for (std::string function, position; std::getline(in, function) && std::getline(in, position);) {
    position = position.substr(0, position.find(" (discriminator"));
    out.push_back(function + " @ " + Basename(position));
  }
  return out;
}

std::vector<std::string> Describe(std::span<const Frame> frames) {
  std::vector<std::string> out;
  for (const Frame& f : frames) {
    out.push_back(f.function + " @ " + Basename(f.file) + ":" + std::to_string(f.line));
  }
  return out;
}

TEST(SymbolizerFilesTest, AgreesWithAddr2line) {
  FixtureProcess fixture(MEMPROF_SYMBOLIZE_FIXTURE);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  Symbolizer symbolizer = Make(fixture.maps(), WithLines());
  // GNU ld lays out the text segment with p_vaddr == p_offset, so a file
  // offset is also the address addr2line wants. Return addresses are looked
  // up one byte earlier, as Resolve does.
  struct Case {
    const char* name;
    const char* binary;
    bool return_address;
  };
  for (const Case& c : {Case{"inline_ra", MEMPROF_SYMBOLIZE_FIXTURE, true},
                        Case{"method_ra", MEMPROF_SYMBOLIZE_FIXTURE, true},
                        Case{"c_ra", MEMPROF_SYMBOLIZE_FIXTURE, true},
                        Case{"leaf_pc", MEMPROF_SYMBOLIZE_FIXTURE, false},
                        Case{"lib_ra", MEMPROF_SYMBOLIZE_FIXTURE_LIB, true}}) {
    const uint64_t address = fixture.Address(c.name);
    std::span<const Frame> frames =
        c.return_address ? symbolizer.Resolve(address) : symbolizer.ResolvePc(address);
    const uint64_t vaddr = frames[0].module_offset - (c.return_address ? 1 : 0);
    EXPECT_EQ(Describe(frames), Addr2line(c.binary, vaddr)) << c.name;
  }
}

}  // namespace
}  // namespace memprof::report::symbolize
