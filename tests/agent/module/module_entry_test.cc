// agent/module/module_entry.cc: the C table the core drives the module
// through, read from the built libmemprof_agent_server.so as the core's
// module loader reads it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "agent/shared/module_abi.h"

namespace memprof::agent {
namespace {

// Loads the module once, as the core does (local and deep binding), and never
// unloads it: the core never does either.
const memprof_server_ops* ModuleOps() {
  static const memprof_server_ops* ops = []() -> const memprof_server_ops* {
    void* handle = dlopen(MEMPROF_TEST_AGENT_SERVER, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      ADD_FAILURE() << "dlopen " << MEMPROF_TEST_AGENT_SERVER << ": " << dlerror();
      return nullptr;
    }
    auto entry = reinterpret_cast<memprof_server_entry_fn>(dlsym(handle, MEMPROF_SERVER_ENTRY));
    if (entry == nullptr) {
      ADD_FAILURE() << "no " << MEMPROF_SERVER_ENTRY << " in " << MEMPROF_TEST_AGENT_SERVER;
      return nullptr;
    }
    return entry();
  }();
  return ops;
}

TEST(ModuleEntryTest, TheOpsTableCarriesTheCoresAbiVersion) {
  const memprof_server_ops* ops = ModuleOps();
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->abi_version, static_cast<uint32_t>(MEMPROF_SERVER_ABI_VERSION));
}

TEST(ModuleEntryTest, EveryFunctionIsSetTheSamplersForkHandlersAndStopIncluded) {
  const memprof_server_ops* ops = ModuleOps();
  ASSERT_NE(ops, nullptr);
  EXPECT_NE(ops->create, nullptr);
  EXPECT_NE(ops->adopt, nullptr);
  EXPECT_NE(ops->tick, nullptr);
  EXPECT_NE(ops->live, nullptr);
  EXPECT_NE(ops->stop_grpc, nullptr);
  EXPECT_NE(ops->destroy, nullptr);
  EXPECT_NE(ops->grpc_can_start, nullptr);
  EXPECT_NE(ops->window_end, nullptr);
  EXPECT_NE(ops->inherit_window, nullptr);
  // The core's fork handlers call these: without them a fork during a
  // sampler window would take the locks in the wrong order.
  EXPECT_NE(ops->stop_sampling, nullptr);
  EXPECT_NE(ops->sampler_fork, nullptr);
}

TEST(ModuleEntryTest, TheEntryAnswersTheSameTableAndExportsNoAgentClass) {
  const memprof_server_ops* ops = ModuleOps();
  ASSERT_NE(ops, nullptr);
  void* handle = dlopen(MEMPROF_TEST_AGENT_SERVER, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto entry = reinterpret_cast<memprof_server_entry_fn>(dlsym(handle, MEMPROF_SERVER_ENTRY));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry(), ops);
  // The version script hides the implementation: no C++ symbol is exported.
  EXPECT_EQ(dlsym(handle, "_ZN7memprof5agent6LoggerEv"), nullptr);
  dlclose(handle);  // drops the NOLOAD reference only; the module stays
}

}  // namespace
}  // namespace memprof::agent
