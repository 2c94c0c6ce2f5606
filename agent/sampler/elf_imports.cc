#include "agent/sampler/elf_imports.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

namespace memprof::agent {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "the sampler's GOT patching knows x86-64 and AArch64 relocations only"
#endif

struct DynamicTables {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* jmprel = nullptr;
  size_t jmprel_bytes = 0;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_bytes = 0;
  bool plt_is_rela = true;
  bool bind_now = false;
};

// glibc relocates the d_ptr values of a loaded module's dynamic section in
// place; the vDSO's (and some loaders') are left as link-time addresses.
uintptr_t Absolute(const LoadedModule& module, ElfW(Addr) ptr) {
  return ptr < module.base ? module.base + ptr : ptr;
}

const ElfW(Dyn)* FindDynamic(const LoadedModule& module) {
  for (uint16_t i = 0; i < module.phnum; ++i) {
    if (module.phdr[i].p_type == PT_DYNAMIC) {
      return reinterpret_cast<const ElfW(Dyn)*>(module.base + module.phdr[i].p_vaddr);
    }
  }
  return nullptr;
}

DynamicTables ReadDynamic(const LoadedModule& module, const ElfW(Dyn)* dyn) {
  DynamicTables t;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    const uintptr_t ptr = Absolute(module, dyn->d_un.d_ptr);
    switch (dyn->d_tag) {
      case DT_SYMTAB: t.symtab = reinterpret_cast<const ElfW(Sym)*>(ptr); break;
      case DT_STRTAB: t.strtab = reinterpret_cast<const char*>(ptr); break;
      case DT_JMPREL: t.jmprel = reinterpret_cast<const ElfW(Rela)*>(ptr); break;
      case DT_PLTRELSZ: t.jmprel_bytes = dyn->d_un.d_val; break;
      case DT_RELA: t.rela = reinterpret_cast<const ElfW(Rela)*>(ptr); break;
      case DT_RELASZ: t.rela_bytes = dyn->d_un.d_val; break;
      case DT_PLTREL: t.plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
      case DT_BIND_NOW: t.bind_now = true; break;
      case DT_FLAGS: t.bind_now |= (dyn->d_un.d_val & DF_BIND_NOW) != 0; break;
      case DT_FLAGS_1: t.bind_now |= (dyn->d_un.d_val & DF_1_NOW) != 0; break;
      default: break;
    }
  }
  return t;
}

void VisitTable(const LoadedModule& module, const DynamicTables& t, const ElfW(Rela)* table,
                size_t bytes, ImportVisitor visit, void* context) {
  if (table == nullptr) return;
  const size_t count = bytes / sizeof(ElfW(Rela));
  for (size_t i = 0; i < count; ++i) {
    const ElfW(Rela)& r = table[i];
    const auto type = static_cast<uint32_t>(ELF64_R_TYPE(r.r_info));
    const auto sym = static_cast<uint32_t>(ELF64_R_SYM(r.r_info));
    if ((type != kJumpSlot && type != kGlobDat) || sym == 0) continue;
    const char* name = t.strtab + t.symtab[sym].st_name;
    visit(context, reinterpret_cast<uintptr_t*>(module.base + r.r_offset), name,
          type == kJumpSlot && !t.bind_now);
  }
}

}  // namespace

LoadedModule ModuleOf(const dl_phdr_info& info) {
  LoadedModule m;
  m.base = info.dlpi_addr;
  m.name = info.dlpi_name != nullptr ? info.dlpi_name : "";
  m.phdr = info.dlpi_phdr;
  m.phnum = info.dlpi_phnum;
  return m;
}

ImportScan ForEachImportSlot(const LoadedModule& module, ImportVisitor visit, void* context) {
  const ElfW(Dyn)* dyn = FindDynamic(module);
  if (dyn == nullptr) return ImportScan::kNoDynamic;
  const DynamicTables t = ReadDynamic(module, dyn);
  if (t.symtab == nullptr || t.strtab == nullptr) return ImportScan::kNoDynamic;
  if (!t.plt_is_rela) return ImportScan::kUnsupported;
  VisitTable(module, t, t.jmprel, t.jmprel_bytes, visit, context);
  VisitTable(module, t, t.rela, t.rela_bytes, visit, context);
  return ImportScan::kOk;
}

bool ContainsAddress(const LoadedModule& module, uintptr_t address) {
  for (uint16_t i = 0; i < module.phnum; ++i) {
    const ElfW(Phdr)& p = module.phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t start = module.base + p.p_vaddr;
    if (address >= start && address < start + p.p_memsz) return true;
  }
  return false;
}

int LoadedProtection(const LoadedModule& module, uintptr_t address) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  int prot = -1;
  for (uint16_t i = 0; i < module.phnum; ++i) {
    const ElfW(Phdr)& p = module.phdr[i];
    const uintptr_t start = module.base + p.p_vaddr;
    if (p.p_type == PT_LOAD && address >= start && address < start + p.p_memsz) {
      prot = ((p.p_flags & PF_R) ? PROT_READ : 0) | ((p.p_flags & PF_W) ? PROT_WRITE : 0) |
             ((p.p_flags & PF_X) ? PROT_EXEC : 0);
    }
  }
  for (uint16_t i = 0; prot > 0 && i < module.phnum; ++i) {
    const ElfW(Phdr)& p = module.phdr[i];
    if (p.p_type != PT_GNU_RELRO) continue;
    // The loader protects whole pages: from the segment's first page to the
    // page its end falls in, exclusive (_dl_protect_relro).
    const uintptr_t start = (module.base + p.p_vaddr) & ~(page - 1);
    const uintptr_t end = (module.base + p.p_vaddr + p.p_memsz) & ~(page - 1);
    if (address >= start && address < end) prot &= ~PROT_WRITE;
  }
  return prot;
}

}  // namespace memprof::agent
