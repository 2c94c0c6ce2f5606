#ifndef MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_SUPPORT_H_
#define MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_SUPPORT_H_

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "agent/sampler/elf_imports.h"
#include "agent/sampler/sampler.h"

namespace memprof::agent::testing {

// Every GOT slot of the malloc family in every loaded module, and its value.
using SlotValues = std::map<uintptr_t*, uintptr_t>;

inline bool IsFamily(const char* symbol) {
  static const char* const kNames[] = {"malloc", "calloc", "realloc", "free", "posix_memalign",
                                       "memalign", "aligned_alloc", "valloc", "dlopen",
                                       "dlclose", "reallocarray"};
  for (const char* name : kNames) {
    if (std::strcmp(symbol, name) == 0) return true;
  }
  return false;
}

inline SlotValues SnapshotSlots() {
  // Filled in two steps: a std::map inserts (allocates) and the loader's
  // lock is held in the callback, so slots are gathered into a fixed array.
  struct Gather {
    uintptr_t* slots[8192];
    size_t count = 0;
  };
  static Gather gather;
  gather.count = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        ForEachImportSlot(
            ModuleOf(*info),
            [](void*, uintptr_t* slot, const char* symbol, bool) {
              if (IsFamily(symbol) && gather.count < 8192) gather.slots[gather.count++] = slot;
            },
            nullptr);
        return 0;
      },
      nullptr);
  SlotValues values;
  for (size_t i = 0; i < gather.count; ++i) values[gather.slots[i]] = *gather.slots[i];
  return values;
}

// Activation as the tests want it: the test executable itself is patched.
inline SamplerOptions TestOptions(uint64_t interval) {
  SamplerOptions options;
  options.sample_interval = interval;
  options.skip_own_module = false;
  return options;
}

// Whether `after` differs from `before` only where the loader bound a lazy
// slot meanwhile (its PLT stub replaced by the host's function): a first
// call through it, which is not the sampler's doing. A slot left holding a
// hook (no dynamic symbol of that name there) fails.
inline bool SameButLazyBindings(const SlotValues& before, const SlotValues& after) {
  if (before.size() != after.size()) return false;
  for (const auto& [slot, value] : before) {
    const auto it = after.find(slot);
    if (it == after.end()) return false;
    if (it->second == value) continue;
    Dl_info stub{};
    Dl_info slot_module{};
    Dl_info bound{};
    if (dladdr(reinterpret_cast<void*>(value), &stub) == 0 || dladdr(slot, &slot_module) == 0 ||
        stub.dli_fbase != slot_module.dli_fbase) {
      return false;  // before was no stub of the slot's own module
    }
    if (dladdr(reinterpret_cast<void*>(it->second), &bound) == 0 || bound.dli_sname == nullptr ||
        dlsym(RTLD_DEFAULT, bound.dli_sname) != reinterpret_cast<void*>(it->second)) {
      return false;
    }
  }
  return true;
}

// Activates with `interval` and makes it apply on this thread at once: a
// thread's countdown draws from a new interval only at its next sample, so
// one 64 MiB block (sampled, at any interval up to a few MiB) crosses it.
inline bool ActivateForTest(uint64_t interval) {
  if (!Sampler::Activate(TestOptions(interval))) return false;
  volatile size_t big = size_t{64} << 20;
  std::free(std::malloc(big));
  return true;
}

}  // namespace memprof::agent::testing

#endif  // MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_SUPPORT_H_
