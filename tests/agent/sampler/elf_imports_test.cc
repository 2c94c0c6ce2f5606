#include "agent/sampler/elf_imports.h"

#include <gtest/gtest.h>
#include <link.h>
#include <sys/mman.h>

#include <cstring>
#include <string>

#include "tests/agent/sampler/sampler_test_lib.h"

namespace memprof::agent {
namespace {

struct Found {
  const char* wanted;
  uintptr_t* slot = nullptr;
};

void FindSlot(void* context, uintptr_t* slot, const char* symbol, bool) {
  auto* found = static_cast<Found*>(context);
  if (std::strcmp(symbol, found->wanted) == 0) found->slot = slot;
}

struct ModuleSearch {
  const char* name_part;
  LoadedModule module;
  bool found = false;
};

int FindModule(dl_phdr_info* info, size_t, void* context) {
  auto* search = static_cast<ModuleSearch*>(context);
  if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, search->name_part) != nullptr) {
    search->module = ModuleOf(*info);
    search->found = true;
    return 1;
  }
  return 0;
}

TEST(ElfImportsTest, FindsTheTestLibrarysMallocSlot) {
  ASSERT_NE(testing::PreloadedTestLib().handle, nullptr) << dlerror();
  ModuleSearch search{"memprof_sampler_testlib.so", {}};
  dl_iterate_phdr(FindModule, &search);
  ASSERT_TRUE(search.found);
  Found found{"malloc"};
  ASSERT_EQ(ForEachImportSlot(search.module, FindSlot, &found), ImportScan::kOk);
  ASSERT_NE(found.slot, nullptr);
  EXPECT_TRUE(ContainsAddress(search.module, reinterpret_cast<uintptr_t>(found.slot)));
  // The library was opened RTLD_NOW and has called nothing yet: the slot is
  // bound to the process's malloc.
  EXPECT_EQ(*found.slot, reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "malloc")));
  const int prot = LoadedProtection(search.module, reinterpret_cast<uintptr_t>(found.slot));
  EXPECT_NE(prot & PROT_READ, 0);
}

TEST(ElfImportsTest, ProtectionOfCodeIsExecutable) {
  ASSERT_NE(testing::PreloadedTestLib().handle, nullptr) << dlerror();
  ModuleSearch search{"memprof_sampler_testlib.so", {}};
  dl_iterate_phdr(FindModule, &search);
  ASSERT_TRUE(search.found);
  const auto code = reinterpret_cast<uintptr_t>(testing::PreloadedTestLib().malloc);
  EXPECT_EQ(LoadedProtection(search.module, code), PROT_READ | PROT_EXEC);
  EXPECT_EQ(LoadedProtection(search.module, 16), -1);
  EXPECT_FALSE(ContainsAddress(search.module, 16));
}

}  // namespace
}  // namespace memprof::agent
