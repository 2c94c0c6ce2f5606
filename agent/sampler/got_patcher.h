#ifndef MEMPROF_AGENT_SAMPLER_GOT_PATCHER_H_
#define MEMPROF_AGENT_SAMPLER_GOT_PATCHER_H_

#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "agent/sampler/elf_imports.h"
#include "agent/sampler/mapped_region.h"

namespace memprof::agent {

// One function to intercept: calls to `symbol` through a GOT slot that
// holds `real` (or a lazy PLT stub that would resolve to it) go to `hook`.
struct HookSpec {
  const char* symbol;
  uintptr_t hook;
  uintptr_t real;  // 0: the host has no such function; never patched
  // Frees (or moves) blocks: kept hooked after deactivation while samples
  // live, so that the samples kept stay true (Restore(keep_frees)).
  bool frees;
};

// What one patching pass did, and what it could not do, in fixed storage:
// it is filled while the loader's lock is held and the hooks may be live.
struct PatchReport {
  static constexpr int kMaxNotes = 8;
  static constexpr int kNoteBytes = 200;
  uint32_t modules_patched = 0;
  uint32_t slots_patched = 0;
  uint32_t slots_foreign = 0;     // bound to another definition: left alone
  uint32_t slots_unwritable = 0;  // mprotect refused, or no record left
  bool executable_allocator = false;  // the program defines malloc itself
  int note_count = 0;
  char notes[kMaxNotes][kNoteBytes] = {};

  void Note(const char* what, const char* module, const char* symbol);
};

// Redirects the malloc family's GOT slots of every loaded module to the
// sampler's hooks and puts them back, as heaptrack's inject does. A slot is
// one aligned word, so each write is atomic: a thread calling malloc at that
// moment goes either to the allocator or to the hook, both correct. Slots in
// RELRO pages are made writable for the write and read-only again. Each
// change is recorded (previous value, module), so restoring writes back
// exactly what was there, only in modules still loaded, and only where the
// slot still holds our hook.
//
// Thread-safety: every method takes the patcher's own lock; LockForFork and
// UnlockAfterFork hold it across fork().
class GotPatcher {
 public:
  // Room for `max_records` patched slots; false if mmap fails.
  bool Init(size_t max_records);
  // The hooks (kept by pointer: must outlive the patcher) and addresses
  // inside modules never to patch (the sampler's own, the agent's).
  void Configure(const HookSpec* hooks, size_t hook_count, const uintptr_t* own, size_t own_count);

  // Patches the slots of every loaded module not patched yet (modules loaded
  // since the last call included), adding to the report. Nothing while
  // disabled: a hooked dlopen that returns after deactivation must not put
  // the hooks back.
  void PatchLoaded();
  void SetEnabled(bool enabled);
  // Restores every recorded slot, or with `keep_frees` all but those of
  // hooks that free; the number restored. The report is cleared once no
  // slot is left patched.
  size_t Restore(bool keep_frees);
  size_t RestoreAll() { return Restore(false); }
  // Drops the records of modules no longer loaded (after a dlclose), so that
  // a module later mapped at the same place is never written to from them.
  void Prune();
  size_t patched() const;
  // What the passes since the last RestoreAll did and could not do.
  PatchReport Report() const;

  void LockForFork() { pthread_mutex_lock(&mu_); }
  void UnlockAfterFork(bool child);

 private:
  struct Record {
    uintptr_t* slot;
    uintptr_t previous;
    uintptr_t module_base;
    const void* module_phdr;
    uint32_t hook;
    bool seen;  // during Prune
  };
  struct Pass;

  static int PatchModule(dl_phdr_info* info, size_t, void* pass);
  static int RestoreModule(dl_phdr_info* info, size_t, void* patcher);
  static int MarkModule(dl_phdr_info* info, size_t, void* patcher);
  static int NoteSkippedModule(dl_phdr_info* info, size_t, void* patcher);
  static int DetectSanitizerAllocator(dl_phdr_info* info, size_t, void* patcher);
  bool InSkippedModule(uintptr_t address) const;
  static void VisitSlot(void* pass, uintptr_t* slot, const char* symbol, bool may_be_lazy);
  bool Skipped(const LoadedModule& module) const;
  int FindHook(const char* symbol) const;
  void Patch(Pass& pass, uintptr_t* slot, uint32_t hook, bool may_be_lazy);

  mutable pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  MappedRegion region_;
  Record* records_ = nullptr;
  size_t capacity_ = 0;
  size_t count_ = 0;     // guarded by mu_
  size_t restored_ = 0;      // guarded by mu_, during Restore
  bool keep_frees_ = false;  // guarded by mu_, during Restore
  PatchReport report_;   // guarded by mu_
  bool enabled_ = false;  // guarded by mu_
  const HookSpec* hooks_ = nullptr;
  size_t hook_count_ = 0;
  static constexpr int kMaxOwn = 4;
  uintptr_t own_[kMaxOwn] = {};
  size_t own_count_ = 0;
  // Where the skipped modules lie, noted at the start of each pass: a slot
  // bound into one of them (a library the agent's deep-bound module brought,
  // whose malloc is the module's forwarder) is the agent's, left alone
  // without a note.
  static constexpr int kMaxSkippedRanges = 16;
  struct Range {
    uintptr_t start;
    uintptr_t end;
  };
  Range skipped_[kMaxSkippedRanges] = {};
  int skipped_count_ = 0;             // guarded by mu_
  bool sanitizer_allocator_ = false;  // guarded by mu_: malloc is ASan's/TSan's
};

// Writes `value` into the GOT word `slot` of `module`, opening a read-only
// (RELRO) page for the write and closing it again. False if it cannot.
bool WriteSlot(const LoadedModule& module, uintptr_t* slot, uintptr_t value);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_GOT_PATCHER_H_
