#include "cli/launch/elf_inspector.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "common/fd.h"

namespace memprof::cli {
namespace {

using ElfPtr = std::unique_ptr<Elf, int (*)(Elf*)>;

bool HasProgramHeader(Elf* elf, Elf64_Word type) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return false;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == type) {
      return true;
    }
  }
  return false;
}

void ReadNeeded(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfInfo& info) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0) return;
  const size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr) break;
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag != DT_NEEDED) continue;
    const char* name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
    if (name != nullptr) info.needed.emplace_back(name);
  }
}

bool DefinesMallctl(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0) return false;
  const size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr) continue;
    const std::string_view n(name);
    if (n == "mallctl" || n == "je_mallctl") return true;
  }
  return false;
}

void ReadSections(Elf* elf, ElfInfo& info) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type == SHT_DYNAMIC) ReadNeeded(elf, scn, shdr, info);
    if (shdr.sh_type == SHT_DYNSYM || shdr.sh_type == SHT_SYMTAB) {
      info.defines_mallctl = info.defines_mallctl || DefinesMallctl(elf, scn, shdr);
    }
  }
}

}  // namespace

bool ElfInfo::UsesJemalloc() const {
  if (defines_mallctl) return true;
  for (const std::string& lib : needed) {
    if (std::string_view(lib).starts_with("libjemalloc")) return true;
  }
  return false;
}

Result<ElfInfo> InspectElf(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    const ErrorCode code = err == ENOENT   ? ErrorCode::kNotFound
                           : err == EACCES ? ErrorCode::kPermissionDenied
                                           : ErrorCode::kInternal;
    return Fail(code, "cannot read " + path + ": " + std::strerror(err));
  }
  elf_version(EV_CURRENT);
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr), &elf_end);
  ElfInfo info;
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return info;
  info.is_elf = true;
  info.is_64bit = gelf_getclass(elf.get()) == ELFCLASS64;
  info.has_interp = HasProgramHeader(elf.get(), PT_INTERP);
  ReadSections(elf.get(), info);
  return info;
}

}  // namespace memprof::cli
