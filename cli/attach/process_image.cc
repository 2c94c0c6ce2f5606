#include "cli/attach/process_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/io/logging.h"
#include "common/mapped_file_open.h"
#include "common/path.h"

namespace memprof::cli {
namespace {

std::string PidDir(const std::string& proc_root, pid_t pid) {
  return proc_root + "/" + std::to_string(pid);
}

// The lowest virtual address of the file's PT_LOAD segments, page aligned:
// what maps at offset 0 (0 for a shared object, the link address for a
// position-dependent executable).
Result<uint64_t> FirstLoadAddress(Elf* elf) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return Fail(ErrorCode::kInternal, elf_errmsg(-1));
  uint64_t lowest = UINT64_MAX;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type == PT_LOAD) lowest = std::min<uint64_t>(lowest, phdr.p_vaddr);
  }
  if (lowest == UINT64_MAX) return Fail(ErrorCode::kInternal, "no loadable segment");
  return lowest & ~uint64_t{0xfff};
}

void CollectSymbols(Elf* elf, uint64_t bias, const std::set<std::string, std::less<>>& wanted,
                    std::map<std::string, uint64_t>& found) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNSYM || shdr.sh_entsize == 0) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name == nullptr || !wanted.contains(std::string_view(name))) continue;
      found.try_emplace(name, bias + sym.st_value);
    }
  }
}

}  // namespace

Result<std::vector<MappedFile>> ReadMappedFiles(const std::string& proc_root, pid_t pid) {
  const std::string path = PidDir(proc_root, pid) + "/maps";
  std::ifstream in(path);
  if (!in) {
    return Fail(errno == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kNotFound,
                "cannot read " + path + ": " + std::strerror(errno));
  }
  std::vector<MappedFile> files;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, file;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, file);
    if (file.empty() || file[0] != '/' || std::stoull(offset, nullptr, 16) != 0) continue;
    if (!seen.insert(file).second) continue;
    const size_t dash = range.find('-');
    files.push_back({file, std::stoull(range, nullptr, 16),
                     dash == std::string::npos ? 0 : std::stoull(range.substr(dash + 1), nullptr, 16)});
  }
  return files;
}

const MappedFile* FindMappedFile(const std::vector<MappedFile>& files, std::string_view prefix) {
  for (const MappedFile& file : files) {
    if (PathBasename(file.path).starts_with(prefix)) return &file;
  }
  return nullptr;
}

Result<std::map<std::string, uint64_t>> DynamicSymbolAddresses(
    const std::string& proc_root, pid_t pid, const MappedFile& file,
    const std::vector<std::string>& names) {
  MappedFileSource source{proc_root, pid, PidDir(proc_root, pid) + "/root"};
  Result<OpenedMappedFile> opened = OpenMappedFile({file.path, file.start, file.end}, source);
  if (!opened) return Fail(opened.error());
  Log().info("{}: read {}", file.path, DescribeOpenedMappedFile(*opened));
  const std::string& path = opened->opened_path;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(opened->fd.get(), ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return Fail(ErrorCode::kInternal, path + ": " + elf_errmsg(-1));
  std::map<std::string, uint64_t> found;
  auto first = FirstLoadAddress(elf);
  if (first) {
    const std::set<std::string, std::less<>> wanted(names.begin(), names.end());
    CollectSymbols(elf, file.start - *first, wanted, found);
  }
  elf_end(elf);
  if (!first) return Fail(ErrorCode::kInternal, path + ": " + first.error().message);
  return found;
}

}  // namespace memprof::cli
