// The cache of sorted symbol tables: an index read from it names every
// address as the table does; a file that is damaged, or whose entries are
// not the module's, is never believed; the bound and the settings.
#include "cli/report/symbolize/symbol_index_cache.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/report/symbolize/module_report.h"
#include "cli/report/symbolize/symbol_index.h"
#include "tests/cli/report/symbolize/test_support.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::symbolize {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

struct ProcessDwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};

// The modules of this test process, as libdwfl reports them.
class ThisProcess {
 public:
  ThisProcess() {
    static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo,
                                             nullptr, nullptr};
    dwfl_.reset(dwfl_begin(&callbacks));
    if (dwfl_ == nullptr || dwfl_linux_proc_report(dwfl_.get(), ::getpid()) != 0 ||
        dwfl_report_end(dwfl_.get(), nullptr, nullptr) != 0) {
      dwfl_.reset();
      return;
    }
    dwfl_getmodules(dwfl_.get(), Collect, &modules_, 0);
  }
  bool ok() const { return dwfl_ != nullptr; }
  // The modules whose tables are big enough to be cached, biggest first.
  std::vector<Dwfl_Module*> Cacheable() const {
    std::vector<Dwfl_Module*> big;
    for (Dwfl_Module* module : modules_) {
      if (dwfl_module_getsymtab(module) >= kMinCachedSymbols && !ModuleBuildId(module).empty()) {
        big.push_back(module);
      }
    }
    std::sort(big.begin(), big.end(), [](Dwfl_Module* a, Dwfl_Module* b) {
      return dwfl_module_getsymtab(a) > dwfl_module_getsymtab(b);
    });
    return big;
  }

 private:
  static int Collect(Dwfl_Module* module, void**, const char*, Dwarf_Addr, void* arg) {
    static_cast<std::vector<Dwfl_Module*>*>(arg)->push_back(module);
    return DWARF_CB_OK;
  }
  std::unique_ptr<Dwfl, ProcessDwflDeleter> dwfl_;
  std::vector<Dwfl_Module*> modules_;
};

// Addresses spread over the module's code, odd so that they are not aligned.
std::vector<uint64_t> CodeAddresses(Dwfl_Module* module) {
  std::vector<uint64_t> addresses;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  for (Elf_Scn* scn = nullptr; elf != nullptr && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || (header.sh_flags & SHF_EXECINSTR) == 0) continue;
    const uint64_t start = header.sh_addr + bias;
    const uint64_t step = std::max<uint64_t>(1, header.sh_size / 1000) | 1;
    for (uint64_t a = start; a < start + header.sh_size; a += step) addresses.push_back(a);
  }
  return addresses;
}

std::string Name(const std::optional<std::string_view>& name) {
  return name ? std::string(*name) : "<none>";
}

// What `index` says of `module`'s code, next to what libdwfl itself says.
void ExpectAgreesWithDwfl(SymbolIndex& index, Dwfl_Module* module) {
  for (uint64_t address : CodeAddresses(module)) {
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* expected =
        dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr);
    ASSERT_EQ(Name(index.Find(address)), expected ? expected : "<none>")
        << "at 0x" << std::hex << address << " in "
        << dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  }
}

std::vector<fs::path> CachedFiles(const std::string& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

class SymbolIndexCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(process_.ok());
    modules_ = process_.Cacheable();
    ASSERT_FALSE(modules_.empty()) << "no table of " << kMinCachedSymbols << " symbols here";
    SetSymbolIndexCache(SymbolIndexCacheSettings{cache_});
  }
  void TearDown() override { SetSymbolIndexCache(std::nullopt); }

  std::string FileOf(Dwfl_Module* module) const {
    return cache_ + "/" + ModuleBuildId(module) + "-" +
           std::to_string(dwfl_module_getsymtab(module)) + ".symidx";
  }

  TempDir dir_{"memprof-symidx"};
  const std::string cache_ = dir_.File("cache/symbol-indexes");
  ThisProcess process_;
  std::vector<Dwfl_Module*> modules_;
};

TEST_F(SymbolIndexCacheTest, AnIndexReadFromTheCacheNamesWhatTheTableDoes) {
  for (Dwfl_Module* module : modules_) {
    SymbolIndex built = SymbolIndex::Build(module);
    EXPECT_FALSE(built.from_cache());
    ASSERT_TRUE(fs::is_regular_file(FileOf(module)));
    SymbolIndex cached = SymbolIndex::Build(module);
    ASSERT_TRUE(cached.from_cache());
    EXPECT_EQ(cached.size(), built.size());
    ExpectAgreesWithDwfl(cached, module);
    for (uint64_t address : CodeAddresses(module)) {
      const auto a = built.FindNearest(address);
      const auto b = cached.FindNearest(address);
      ASSERT_EQ(a.has_value(), b.has_value());
      if (a) {
        EXPECT_EQ(std::pair(a->name, a->start), std::pair(b->name, b->start));
      }
    }
    EXPECT_TRUE(cached.from_cache()) << "a sound file was replaced";
  }
  // Only ours may read it, in a directory only we may write into.
  struct stat st {};
  ASSERT_EQ(::stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(FileOf(modules_[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SymbolIndexCacheTest, ADamagedFileIsNotReadAndIsWrittenAgain) {
  Dwfl_Module* module = modules_[0];
  SymbolIndex::Build(module);
  const std::string file = FileOf(module);
  const uintmax_t size = fs::file_size(file);
  {
    std::fstream damaged(file, std::ios::in | std::ios::out | std::ios::binary);
    damaged.seekp(static_cast<std::streamoff>(size / 2));
    damaged.put('\x5a').put('\xa5').put('\x5a');
  }
  SymbolIndex index = SymbolIndex::Build(module);
  EXPECT_FALSE(index.from_cache());
  ExpectAgreesWithDwfl(index, module);
  EXPECT_TRUE(SymbolIndex::Build(module).from_cache());

  // Cut short, or not a file of ours at all.
  fs::resize_file(file, size - 40);
  EXPECT_FALSE(SymbolIndex::Build(module).from_cache());
  std::ofstream(file, std::ios::trunc) << "not an index";
  EXPECT_FALSE(SymbolIndex::Build(module).from_cache());
  EXPECT_EQ(fs::file_size(file), size);
}

// A file that is sound in itself but whose entries are not the module's
// (written for another table that happens to share the name): the first
// symbol a lookup finds is checked against the module's own table, and the
// index is then read afresh, and the file replaced.
TEST_F(SymbolIndexCacheTest, EntriesThatAreNotTheModulesAreFoundOutAndReplaced) {
  Dwfl_Module* module = modules_[0];
  const int count = dwfl_module_getsymtab(module);
  std::vector<IndexEntry> wrong(1);
  wrong[0].start = 0;
  wrong[0].size = ~uint64_t{0};  // covers every address
  wrong[0].reach = ~uint64_t{0};
  wrong[0].order = 1;
  wrong[0].binding_rank = 3;
  CacheSymbolIndex(ModuleBuildId(module), count, wrong, {});
  SymbolIndex index = SymbolIndex::Build(module);
  ASSERT_TRUE(index.from_cache());
  ExpectAgreesWithDwfl(index, module);
  EXPECT_FALSE(index.from_cache());
  SymbolIndex replaced = SymbolIndex::Build(module);
  EXPECT_TRUE(replaced.from_cache());
  EXPECT_GT(replaced.size(), 1u);
}

TEST_F(SymbolIndexCacheTest, TheBoundRemovesTheLeastRecentlyUsedFirst) {
  if (modules_.size() < 2) GTEST_SKIP() << "needs two modules with big tables";
  SetSymbolIndexCache(SymbolIndexCacheSettings{cache_, 1});  // room for one file
  SymbolIndex::Build(modules_[0]);
  ASSERT_TRUE(fs::exists(FileOf(modules_[0])));
  SymbolIndex::Build(modules_[1]);
  EXPECT_EQ(CachedFiles(cache_), std::vector<fs::path>{FileOf(modules_[1])});
}

TEST_F(SymbolIndexCacheTest, NothingIsWrittenWithoutACacheOrForASmallTable) {
  SetSymbolIndexCache(std::nullopt);
  EXPECT_FALSE(SymbolIndex::Build(modules_[0]).from_cache());
  EXPECT_FALSE(fs::exists(cache_));
  SetSymbolIndexCache(SymbolIndexCacheSettings{cache_});
  // A symbol table of a few symbols (Build(nullptr): none at all).
  EXPECT_EQ(SymbolIndex::Build(nullptr).size(), 0u);
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(SymbolIndexCacheTest, ADirectoryOfAnotherUserIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  fs::create_directories(cache_);
  ASSERT_EQ(::chown(cache_.c_str(), 65534, 65534), 0);
  SymbolIndex index = SymbolIndex::Build(modules_[0]);
  EXPECT_FALSE(index.from_cache());
  EXPECT_TRUE(CachedFiles(cache_).empty());
}

TEST(SymbolIndexCacheDirTest, XdgCacheHomeFirstThenHome) {
  using Env = testing::ScopedCacheEnvironment;
  Env env;
  Env::Set("XDG_CACHE_HOME", "/x/cache");
  Env::Set("HOME", "/home/u");
  EXPECT_EQ(DefaultSymbolIndexCacheDir(), "/x/cache/memprof/symbol-indexes");
  Env::Set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(DefaultSymbolIndexCacheDir(), "/home/u/.cache/memprof/symbol-indexes");
  Env::Set("HOME", nullptr);
  EXPECT_EQ(DefaultSymbolIndexCacheDir(), std::nullopt);
}

}  // namespace
}  // namespace memprof::report::symbolize
