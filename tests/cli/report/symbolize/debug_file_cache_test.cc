// The cache of plain copies of compressed debug files: what is copied, what
// is read afterwards, what is left alone, and the bound.
#include "cli/report/symbolize/debug_file_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/report/symbolize/elf_layout.h"
#include "cli/report/symbolize/symbolizer.h"
#include "tests/cli/report/symbolize/test_support.h"
#include "tests/support/command_runner.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::symbolize {
namespace {

namespace fs = std::filesystem;
using test_support::RunCommand;
using test_support::TempDir;
using testing::FixtureProcess;
using testing::kMainSource;
using testing::MarkerLine;
using testing::Objcopy;

// readelf's section flags column says C for SHF_COMPRESSED.
bool HasCompressedSections(const std::string& path) {
  const auto result = RunCommand({MEMPROF_READELF, "-S", "-W", path}, {});
  for (size_t at = result.out.find(".debug_"); at != std::string::npos;
       at = result.out.find(".debug_", at + 1)) {
    const std::string line = result.out.substr(at, result.out.find('\n', at) - at);
    if (line.find(" C") != std::string::npos || line.find("C ") != std::string::npos) return true;
  }
  return false;
}

fs::file_time_type LongAgo() { return fs::file_time_type::clock::now() - std::chrono::hours(240); }

// The fixture stripped, with its DWARF in a separate, zlib-compressed debug
// file found by build ID (as Debian ships libc6-dbg), and a cache of our own.
class DebugFileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Objcopy({"--strip-all", MEMPROF_SYMBOLIZE_FIXTURE, binary_}));
    auto id = BuildId(binary_);
    ASSERT_TRUE(id.has_value()) << id.error().message;
    build_id_ = *id;
    debug_file_ = dir_.File("debug/.build-id/" + id->substr(0, 2) + "/" + id->substr(2) + ".debug");
    fs::create_directories(fs::path(debug_file_).parent_path());
    ASSERT_TRUE(Objcopy({"--only-keep-debug", "--compress-debug-sections=zlib",
                         MEMPROF_SYMBOLIZE_FIXTURE, debug_file_}));
    ASSERT_TRUE(HasCompressedSections(debug_file_));
    SetDebugFileCache(DebugFileCacheSettings{cache_});
  }
  void TearDown() override { SetDebugFileCache(std::nullopt); }

  // A symbolizer of `fixture` with file:line, debug files looked up by
  // build ID under the test's own root.
  Symbolizer SymbolizerOf(FixtureProcess& fixture) {
    SymbolizerOptions options;
    options.lines = true;
    options.debug_dirs = {dir_.File("debug")};
    return Symbolizer::FromMapsLines(fixture.maps(), options).value();
  }

  // Symbolizes an inlined call with file:line, which needs the DWARF.
  void ExpectFullySymbolized() {
    FixtureProcess fixture(binary_);
    ASSERT_TRUE(fixture.ready()) << fixture.error();
    Symbolizer symbolizer = SymbolizerOf(fixture);
    std::span<const Frame> frames = symbolizer.Resolve(fixture.Address("inline_ra"));
    ASSERT_EQ(frames.size(), 2u) << frames[0].function;
    EXPECT_EQ(frames[0].function, "fixture::InlinedMiddle(int)");
    EXPECT_EQ(frames[0].line, MarkerLine(kMainSource, "inlined_call"));
    EXPECT_EQ(frames[1].function, "fixture::OuterWithInline(int)");
    // The user is told of the debug file they have, not of our copy.
    for (const ModuleReport& module : symbolizer.Modules()) {
      if (module.path == binary_) {
        EXPECT_EQ(fs::weakly_canonical(module.debug_file), fs::weakly_canonical(debug_file_));
      }
    }
  }

  std::string Copy() const { return cache_ + "/" + build_id_ + ".debug"; }

  TempDir dir_;
  const std::string binary_ = dir_.File("fixture");
  const std::string cache_ = dir_.File("cache/memprof/debug-files");
  std::string build_id_;
  std::string debug_file_;
};

TEST_F(DebugFileCacheTest, ACompressedDebugFileIsCopiedPlainOnceAndThenRead) {
  ExpectFullySymbolized();
  ASSERT_TRUE(fs::is_regular_file(Copy()));
  EXPECT_FALSE(HasCompressedSections(Copy()));
  EXPECT_EQ(BuildId(Copy()).value(), build_id_);
  EXPECT_GT(fs::file_size(Copy()), fs::file_size(debug_file_));
  // What libdw reads from now on is the copy: the installed file, replaced
  // by one without DWARF, would give no lines.
  ASSERT_TRUE(Objcopy({"--only-keep-debug", binary_, debug_file_}));
  // Read again: the copy is opened (its time is set to now), not rewritten.
  const auto inode = [](const std::string& path) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_ino;
  };
  const ino_t first = inode(Copy());
  fs::last_write_time(Copy(), LongAgo());
  ExpectFullySymbolized();
  EXPECT_EQ(inode(Copy()), first);
  EXPECT_GT(fs::last_write_time(Copy()), LongAgo() + std::chrono::hours(1));
  // Nothing but the copy and where it came from: no temporary file is left.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache_), fs::directory_iterator()), 2);
  std::ifstream origin(Copy() + ".origin");
  EXPECT_EQ(fs::weakly_canonical(std::string(std::istreambuf_iterator<char>(origin), {})),
            fs::weakly_canonical(debug_file_));
}

TEST_F(DebugFileCacheTest, AnUncompressedDebugFileIsReadAsItIs) {
  ASSERT_TRUE(Objcopy({"--only-keep-debug", MEMPROF_SYMBOLIZE_FIXTURE, debug_file_}));
  ExpectFullySymbolized();
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(DebugFileCacheTest, WithoutACacheNothingIsWritten) {
  SetDebugFileCache(std::nullopt);
  ExpectFullySymbolized();
  EXPECT_FALSE(fs::exists(dir_.File("cache")));
}

TEST_F(DebugFileCacheTest, TheLeastRecentlyUsedCopiesGoBeyondTheBound) {
  fs::create_directories(cache_);
  for (const char* name : {"aa.debug", "bb.debug"}) {
    std::ofstream(cache_ + "/" + name) << std::string(4096, 'x');
    fs::last_write_time(cache_ + "/" + name, LongAgo());
  }
  fs::last_write_time(cache_ + "/bb.debug", LongAgo() + std::chrono::hours(1));
  std::ofstream(cache_ + "/notes.txt") << "not a copy";
  // Room for the new copy and one old one: the older old one goes.
  ExpectFullySymbolized();  // a first run measures the copy
  const uint64_t copy_bytes = fs::file_size(Copy());
  fs::remove(Copy());
  fs::remove(Copy() + ".origin");
  std::ofstream(cache_ + "/aa.debug.origin") << debug_file_;
  SetDebugFileCache(DebugFileCacheSettings{cache_, copy_bytes + 4096});
  ExpectFullySymbolized();
  EXPECT_TRUE(fs::exists(Copy()));
  EXPECT_FALSE(fs::exists(cache_ + "/aa.debug"));
  EXPECT_FALSE(fs::exists(cache_ + "/aa.debug.origin"));
  EXPECT_TRUE(fs::exists(cache_ + "/bb.debug"));
  EXPECT_TRUE(fs::exists(cache_ + "/notes.txt"));
}

TEST_F(DebugFileCacheTest, ACopyLargerThanTheBoundIsStillKept) {
  SetDebugFileCache(DebugFileCacheSettings{cache_, 1});
  ExpectFullySymbolized();
  EXPECT_TRUE(fs::exists(Copy()));
}

// A copy whose debug file was removed since (libc6-dbg uninstalled) is not
// read: the report says what is installed now.
TEST_F(DebugFileCacheTest, ACopyOfADebugFileNoLongerInstalledIsNotRead) {
  ExpectFullySymbolized();
  ASSERT_TRUE(fs::exists(Copy()));
  fs::remove(debug_file_);
  FixtureProcess fixture(binary_);
  ASSERT_TRUE(fixture.ready()) << fixture.error();
  Symbolizer symbolizer = SymbolizerOf(fixture);
  EXPECT_EQ(symbolizer.Resolve(fixture.Address("inline_ra"))[0].function.rfind("fixture+0x", 0),
            0u);
}

// Another user's directory (or copy) is never written to or read from.
TEST_F(DebugFileCacheTest, ADirectoryOfAnotherUserIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  fs::create_directories(cache_);
  ASSERT_EQ(::chown(cache_.c_str(), 65534, 65534), 0);
  ExpectFullySymbolized();
  EXPECT_FALSE(fs::exists(Copy()));
  // A copy there that is not ours is not read either: it is garbage.
  std::ofstream(Copy()) << "not an ELF file";
  ASSERT_EQ(::chown(Copy().c_str(), 65534, 65534), 0);
  ExpectFullySymbolized();
}

TEST(DebugFileCacheDirTest, XdgCacheHomeFirstThenHome) {
  using Env = testing::ScopedCacheEnvironment;
  Env env;
  Env::Set("XDG_CACHE_HOME", "/x/cache");
  Env::Set("HOME", "/home/u");
  EXPECT_EQ(DefaultDebugFileCacheDir(), "/x/cache/memprof/debug-files");
  Env::Set("XDG_CACHE_HOME", "relative");  // not absolute: ignored, as the XDG spec says
  EXPECT_EQ(DefaultDebugFileCacheDir(), "/home/u/.cache/memprof/debug-files");
  Env::Set("XDG_CACHE_HOME", nullptr);
  Env::Set("HOME", nullptr);
  EXPECT_EQ(DefaultDebugFileCacheDir(), std::nullopt);
}

}  // namespace
}  // namespace memprof::report::symbolize
