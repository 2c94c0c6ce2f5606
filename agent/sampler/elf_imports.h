#ifndef MEMPROF_AGENT_SAMPLER_ELF_IMPORTS_H_
#define MEMPROF_AGENT_SAMPLER_ELF_IMPORTS_H_

#include <link.h>

#include <cstdint>

namespace memprof::agent {

// A module as the dynamic loader has it mapped (dl_iterate_phdr).
struct LoadedModule {
  uintptr_t base = 0;  // load bias
  const char* name = "";
  const ElfW(Phdr)* phdr = nullptr;
  uint16_t phnum = 0;
};

LoadedModule ModuleOf(const dl_phdr_info& info);

// Called for each import slot of a module: the GOT word the loader filled
// for `symbol`. `may_be_lazy`: a PLT slot of a module not bound at load
// time (no DF_BIND_NOW / DF_1_NOW), which may still hold its PLT stub.
using ImportVisitor = void (*)(void* context, uintptr_t* slot, const char* symbol,
                               bool may_be_lazy);

enum class ImportScan {
  kOk,
  kNoDynamic,    // no PT_DYNAMIC: a static executable, or the vDSO's like
  kUnsupported,  // REL relocations, or a dynamic section we cannot read
};

// Visits every JUMP_SLOT (calls through the PLT) and GLOB_DAT (calls with
// -fno-plt, and function pointers taken) relocation of the module's
// DT_JMPREL and DT_RELA tables, by symbol name. Reads only the loaded image.
ImportScan ForEachImportSlot(const LoadedModule& module, ImportVisitor visit, void* context);

// Whether `address` lies in one of the module's PT_LOAD segments.
bool ContainsAddress(const LoadedModule& module, uintptr_t address);

// The protection the page of `address` has now, as the loader left it: its
// PT_LOAD segment's flags, without PROT_WRITE inside PT_GNU_RELRO (which the
// loader made read-only after relocating). -1 outside every segment.
int LoadedProtection(const LoadedModule& module, uintptr_t address);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_ELF_IMPORTS_H_
