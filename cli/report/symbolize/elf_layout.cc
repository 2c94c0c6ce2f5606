#include "cli/report/symbolize/elf_layout.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "cli/report/symbolize/hex.h"
#include "common/fd.h"

namespace memprof::report::symbolize {
namespace {

// No page size in use on Linux is larger; a mapping that starts this far
// before a segment's offset cannot be that segment's first page.
constexpr uint64_t kMaxPageSize = 64 * 1024;

bool SegmentHoldsOffset(const LoadSegment& segment, uint64_t file_offset) {
  if (file_offset <= segment.offset) return segment.offset - file_offset < kMaxPageSize;
  return file_offset < segment.offset + segment.filesz;
}

Result<Fd> OpenForReading(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.valid()) return fd;
  const int err = errno;
  const ErrorCode code = err == ENOENT   ? ErrorCode::kNotFound
                         : err == EACCES ? ErrorCode::kPermissionDenied
                                         : ErrorCode::kInternal;
  return Fail(code, "cannot open " + path + ": " + std::strerror(err));
}

}  // namespace

Result<ElfPtr> BeginElf(int fd, Elf_Cmd command) {
  elf_version(EV_CURRENT);
  ElfPtr elf(elf_begin(fd, command, nullptr), &elf_end);
  if (elf == nullptr || elf_kind(elf.get()) != ELF_K_ELF) {
    return Fail(ErrorCode::kFailedPrecondition, "not an ELF file");
  }
  return elf;
}

std::optional<uint64_t> LoadBias(std::span<const LoadSegment> segments,
                                 const MemoryMapping& mapping) {
  const LoadSegment* fallback = nullptr;
  for (const LoadSegment& segment : segments) {
    if (!SegmentHoldsOffset(segment, mapping.offset)) continue;
    if (segment.executable == mapping.Executable()) {
      fallback = &segment;
      break;
    }
    if (fallback == nullptr) fallback = &segment;
  }
  if (fallback == nullptr) return std::nullopt;
  // The kernel maps file offset o of the segment at vaddr + (o - offset) + bias,
  // and `mapping` says file offset mapping.offset sits at mapping.start.
  // Unsigned wrap-around keeps this exact for any layout.
  return mapping.start - mapping.offset + fallback->offset - fallback->vaddr;
}

Result<std::vector<LoadSegment>> ReadLoadSegments(int fd) {
  auto elf = BeginElf(fd);
  if (!elf) return Fail(elf.error());
  size_t count = 0;
  if (elf_getphdrnum(elf->get(), &count) != 0) {
    return Fail(ErrorCode::kFailedPrecondition, "ELF file without program headers");
  }
  std::vector<LoadSegment> segments;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf->get(), static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type != PT_LOAD) continue;
    segments.push_back({phdr.p_vaddr, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
  }
  return segments;
}

Result<std::string> BuildId(const std::string& path) {
  auto fd = OpenForReading(path);
  if (!fd) return Fail(fd.error());
  return BuildIdOf(fd->get(), path);
}

Result<std::string> BuildIdOf(int fd, const std::string& path) {
  auto elf = BeginElf(fd);
  if (!elf) return Fail(elf.error().code, path + ": " + elf.error().message);
  const void* bits = nullptr;
  const ssize_t size = dwelf_elf_gnu_build_id(elf->get(), &bits);
  if (size <= 0) return Fail(ErrorCode::kNotFound, path + " has no GNU build ID");
  return LowerHex(static_cast<const unsigned char*>(bits), static_cast<size_t>(size));
}

}  // namespace memprof::report::symbolize
