#include "agent/sampler/got_patcher.h"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>
#include <iterator>

#include "common/path.h"

namespace memprof::agent {
namespace {

// Modules whose slots are never ours to change: the kernel's vDSO (not
// writable), the dynamic loader (its malloc calls go through its own
// pointers, and it runs with its locks held), the sanitizer runtimes (they
// are the allocator's interceptor), and memprof's own objects, so that the
// agent's allocations are never sampled.
constexpr const char* kSkippedNames[] = {
    "linux-vdso", "linux-gate", "/ld-linux", "ld-linux-", "libasan.so", "libtsan.so",
    "liblsan.so", "libubsan.so", "libmemprof_agent",
};
constexpr const char* kSanitizerNames[] = {"libasan.so", "libtsan.so", "liblsan.so"};

bool NameHasAny(const char* name, const char* const* parts, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (std::strstr(name, parts[i]) != nullptr) return true;
  }
  return false;
}

void CopyTruncated(char* out, size_t size, const char* a, const char* b, const char* c) {
  size_t n = 0;
  for (const char* part : {a, b, c}) {
    for (; part != nullptr && *part != '\0' && n + 1 < size; ++part) out[n++] = *part;
  }
  out[n] = '\0';
}

}  // namespace

void PatchReport::Note(const char* what, const char* module, const char* symbol) {
  if (note_count >= kMaxNotes) return;
  // The basename of a NUL-terminated path is its tail, NUL-terminated too.
  const char* name = *module != '\0' ? PathBasename(module).data() : "the executable";
  char* out = notes[note_count++];
  CopyTruncated(out, kNoteBytes, name, ": ", symbol);
  const size_t used = std::strlen(out);
  CopyTruncated(out + used, kNoteBytes - used, " ", what, nullptr);
}

struct GotPatcher::Pass {
  GotPatcher* patcher;
  PatchReport* report;
  LoadedModule module;
  bool is_executable;
  uint32_t patched_here;
};

bool WriteSlot(const LoadedModule& module, uintptr_t* slot, uintptr_t value) {
  const auto address = reinterpret_cast<uintptr_t>(slot);
  const int prot = LoadedProtection(module, address);
  if (prot < 0) return false;
  const auto page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(address & ~(page_size - 1));
  const bool reopen = (prot & PROT_WRITE) == 0;
  if (reopen && mprotect(page, page_size, prot | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  // Put the loader's protection back; a failure leaves the page writable,
  // which is what a module without RELRO has anyway.
  if (reopen) mprotect(page, page_size, prot);
  return true;
}

bool GotPatcher::Init(size_t max_records) {
  MappedRegion region = MappedRegion::Map(max_records * sizeof(Record));
  if (region.empty()) return false;
  region_ = static_cast<MappedRegion&&>(region);
  records_ = static_cast<Record*>(region_.data());
  capacity_ = region_.size() / sizeof(Record);
  return true;
}

void GotPatcher::Configure(const HookSpec* hooks, size_t hook_count, const uintptr_t* own,
                           size_t own_count) {
  pthread_mutex_lock(&mu_);
  hooks_ = hooks;
  hook_count_ = hook_count;
  own_count_ = own_count < kMaxOwn ? own_count : kMaxOwn;
  for (size_t i = 0; i < own_count_; ++i) own_[i] = own[i];
  pthread_mutex_unlock(&mu_);
}

bool GotPatcher::Skipped(const LoadedModule& module) const {
  for (size_t i = 0; i < own_count_; ++i) {
    if (ContainsAddress(module, own_[i])) return true;
  }
  if (NameHasAny(module.name, kSkippedNames, std::size(kSkippedNames))) return true;
  // A sanitizer runtime that serves malloc calls into libc before it has
  // set up a thread (pthread_getattr_np's realloc), through libc's GOT: a
  // hook there would run instrumented code on a thread the runtime does not
  // know yet. libc's own calls are left to the runtime.
  return sanitizer_allocator_ && std::strstr(module.name, "/libc.so") != nullptr;
}

int GotPatcher::FindHook(const char* symbol) const {
  for (size_t i = 0; i < hook_count_; ++i) {
    if (hooks_[i].real != 0 && std::strcmp(hooks_[i].symbol, symbol) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void GotPatcher::VisitSlot(void* context, uintptr_t* slot, const char* symbol,
                           bool may_be_lazy) {
  auto& pass = *static_cast<Pass*>(context);
  const int hook = pass.patcher->FindHook(symbol);
  if (hook >= 0) pass.patcher->Patch(pass, slot, static_cast<uint32_t>(hook), may_be_lazy);
}

void GotPatcher::Patch(Pass& pass, uintptr_t* slot, uint32_t hook, bool may_be_lazy) {
  const HookSpec& spec = hooks_[hook];
  const uintptr_t current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (current == spec.hook) return;  // patched by an earlier pass
  // A lazy slot points at its own module's PLT stub, which would resolve to
  // the host's definition; any other value is a different definition (a
  // module with an allocator of its own, a deep-bound scope): calling the
  // host's instead would mix two heaps, so it is left alone.
  const bool lazy = may_be_lazy && ContainsAddress(pass.module, current);
  if (current != spec.real && !lazy) {
    if (InSkippedModule(current)) return;
    ++pass.report->slots_foreign;
    pass.report->Note("is bound to another definition; not intercepted", pass.module.name,
                      spec.symbol);
    return;
  }
  if (count_ >= capacity_ || !WriteSlot(pass.module, slot, spec.hook)) {
    ++pass.report->slots_unwritable;
    pass.report->Note("could not be patched (no record left, or mprotect refused)",
                      pass.module.name, spec.symbol);
    return;
  }
  records_[count_++] = Record{slot, current, pass.module.base, pass.module.phdr, hook, false};
  ++pass.patched_here;
}

int GotPatcher::PatchModule(dl_phdr_info* info, size_t, void* context) {
  auto& pass = *static_cast<Pass*>(context);
  pass.module = ModuleOf(*info);
  pass.patched_here = 0;
  GotPatcher& self = *pass.patcher;
  if (pass.is_executable && self.hook_count_ > 0 &&
      ContainsAddress(pass.module, self.hooks_[0].real)) {
    // The executable's own calls to its own malloc never go through a GOT.
    pass.report->executable_allocator = true;
  }
  if (!self.Skipped(pass.module)) {
    if (ForEachImportSlot(pass.module, VisitSlot, &pass) == ImportScan::kUnsupported) {
      pass.report->Note("has REL relocations or an unreadable dynamic section; not intercepted",
                        pass.module.name, "");
    }
  }
  if (pass.patched_here > 0) ++pass.report->modules_patched;
  pass.report->slots_patched += pass.patched_here;
  pass.is_executable = false;  // dl_iterate_phdr lists the program first
  return 0;
}

int GotPatcher::DetectSanitizerAllocator(dl_phdr_info* info, size_t, void* context) {
  auto& self = *static_cast<GotPatcher*>(context);
  const LoadedModule module = ModuleOf(*info);
  if (NameHasAny(module.name, kSanitizerNames, std::size(kSanitizerNames)) &&
      ContainsAddress(module, self.hooks_[0].real)) {
    self.sanitizer_allocator_ = true;
  }
  return 0;
}

int GotPatcher::NoteSkippedModule(dl_phdr_info* info, size_t, void* context) {
  auto& self = *static_cast<GotPatcher*>(context);
  const LoadedModule module = ModuleOf(*info);
  if (self.skipped_count_ >= kMaxSkippedRanges || !self.Skipped(module)) return 0;
  Range range{UINTPTR_MAX, 0};
  for (uint16_t i = 0; i < module.phnum; ++i) {
    const ElfW(Phdr)& p = module.phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t start = module.base + p.p_vaddr;
    if (start < range.start) range.start = start;
    if (start + p.p_memsz > range.end) range.end = start + p.p_memsz;
  }
  if (range.start < range.end) self.skipped_[self.skipped_count_++] = range;
  return 0;
}

bool GotPatcher::InSkippedModule(uintptr_t address) const {
  for (int i = 0; i < skipped_count_; ++i) {
    if (address >= skipped_[i].start && address < skipped_[i].end) return true;
  }
  return false;
}

void GotPatcher::PatchLoaded() {
  pthread_mutex_lock(&mu_);
  Pass pass{this, &report_, {}, true, 0};
  skipped_count_ = 0;
  if (enabled_ && records_ != nullptr && hooks_ != nullptr) {
    sanitizer_allocator_ = false;
    if (hook_count_ > 0) dl_iterate_phdr(DetectSanitizerAllocator, this);
    dl_iterate_phdr(NoteSkippedModule, this);
    dl_iterate_phdr(PatchModule, &pass);
  }
  pthread_mutex_unlock(&mu_);
}

int GotPatcher::RestoreModule(dl_phdr_info* info, size_t, void* context) {
  auto& self = *static_cast<GotPatcher*>(context);
  const LoadedModule module = ModuleOf(*info);
  for (size_t i = 0; i < self.count_; ++i) {
    Record& r = self.records_[i];
    if (r.slot == nullptr || r.module_base != module.base || r.module_phdr != module.phdr) {
      continue;
    }
    r.seen = true;
    if (self.keep_frees_ && self.hooks_[r.hook].frees) continue;
    // Someone else's write since ours (a later interposer) is kept.
    if (__atomic_load_n(r.slot, __ATOMIC_ACQUIRE) == self.hooks_[r.hook].hook &&
        WriteSlot(module, r.slot, r.previous)) {
      ++self.restored_;
    }
    r.slot = nullptr;
  }
  return 0;
}

size_t GotPatcher::Restore(bool keep_frees) {
  pthread_mutex_lock(&mu_);
  restored_ = 0;
  keep_frees_ = keep_frees;
  for (size_t i = 0; i < count_; ++i) records_[i].seen = false;
  if (count_ > 0) dl_iterate_phdr(RestoreModule, this);
  // What is left: the kept slots of modules still loaded. Records of
  // modules unloaded since are dropped unseen: their slots are gone.
  size_t kept = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (records_[i].slot != nullptr && records_[i].seen) records_[kept++] = records_[i];
  }
  count_ = kept;
  if (count_ == 0) report_ = PatchReport{};
  const size_t restored = restored_;
  pthread_mutex_unlock(&mu_);
  return restored;
}

void GotPatcher::SetEnabled(bool enabled) {
  pthread_mutex_lock(&mu_);
  enabled_ = enabled;
  pthread_mutex_unlock(&mu_);
}

int GotPatcher::MarkModule(dl_phdr_info* info, size_t, void* context) {
  auto& self = *static_cast<GotPatcher*>(context);
  for (size_t i = 0; i < self.count_; ++i) {
    Record& r = self.records_[i];
    if (r.module_base == info->dlpi_addr && r.module_phdr == info->dlpi_phdr) r.seen = true;
  }
  return 0;
}

void GotPatcher::Prune() {
  pthread_mutex_lock(&mu_);
  for (size_t i = 0; i < count_; ++i) records_[i].seen = false;
  if (count_ > 0) dl_iterate_phdr(MarkModule, this);
  size_t kept = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (records_[i].seen) records_[kept++] = records_[i];
  }
  count_ = kept;
  pthread_mutex_unlock(&mu_);
}

PatchReport GotPatcher::Report() const {
  pthread_mutex_lock(&mu_);
  PatchReport copy = report_;
  pthread_mutex_unlock(&mu_);
  return copy;
}

size_t GotPatcher::patched() const {
  pthread_mutex_lock(&mu_);
  const size_t n = count_;
  pthread_mutex_unlock(&mu_);
  return n;
}

void GotPatcher::UnlockAfterFork(bool child) {
  if (child) {
    pthread_mutex_init(&mu_, nullptr);
  } else {
    pthread_mutex_unlock(&mu_);
  }
}

}  // namespace memprof::agent
