#include "cli/attach/thread_frames.h"

#include <elfutils/libdwfl.h>

#include <array>
#include <string_view>

#include "common/path.h"

namespace memprof::cli {
namespace {

constexpr std::array<std::string_view, 3> kLockHoldingModules = {"ld-linux", "libjemalloc",
                                                                 "libtcmalloc"};

// libc's exported functions that take the allocator's, the loader's or the
// thread list's locks. A stripped libc names an internal function
// (_int_malloc) after the exported one before it, which is in the same
// object file (malloc.c), so the list also catches most of those.
constexpr std::array<std::string_view, 22> kLockHoldingFunctions = {
    "malloc",       "free",          "calloc",       "realloc",        "memalign",
    "posix_memalign", "aligned_alloc", "valloc",     "pvalloc",        "malloc_trim",
    "malloc_usable_size", "malloc_stats", "malloc_info", "mallopt",    "dlopen",
    "dlclose",      "dlsym",         "dl_iterate_phdr", "fork",        "_Fork",
    "pthread_create", "__libc_dlopen_mode"};

// jemalloc or tcmalloc linked into the program itself, named by its symbols.
constexpr std::array<std::string_view, 4> kAllocatorPrefixes = {"je_", "tc_", "arena_", "tcache_"};

struct Walk {
  Dwfl* dwfl;
  std::optional<std::string> reason;
  int frames = 0;
};

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) {
    walk->reason = std::string("its stack could not be unwound (") + dwfl_errmsg(-1) + ")";
    return DWARF_CB_ABORT;
  }
  ++walk->frames;
  // A return address points after the call: look up the call itself.
  const Dwarf_Addr lookup = activation ? pc : pc - 1;
  Dwfl_Module* module = dwfl_addrmodule(walk->dwfl, lookup);
  if (module == nullptr) return DWARF_CB_OK;  // JIT code, the vDSO without a module
  const char* module_name =
      dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  const char* function = dwfl_module_addrname(module, lookup);
  const std::string file = module_name != nullptr ? std::string(PathBasename(module_name)) : "";
  const std::string name = function != nullptr ? function : "";
  if (IsLockHoldingFrame(file, name)) {
    walk->reason = "it is inside " + (name.empty() ? file : name + " (" + file + ")");
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
}

// No separate debug information: the names of .symtab/.dynsym and the CFI
// of .eh_frame are all the check needs, and looking for debug files (or
// asking a debuginfod server) would cost time.
int NoDebuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                GElf_Word, char**) {
  return -1;
}

// Loads each module's symbol table and call frame information now, before
// any thread is stopped, so that unwinding a stopped thread reads nothing
// from disk.
int Prepare(Dwfl_Module* module, void**, const char*, Dwarf_Addr, void*) {
  (void)dwfl_module_getsymtab(module);
  Dwarf_Addr bias = 0;
  (void)dwfl_module_eh_cfi(module, &bias);
  return DWARF_CB_OK;
}

}  // namespace

bool IsLockHoldingFrame(const std::string& module, const std::string& function) {
  for (std::string_view m : kLockHoldingModules) {
    if (module.starts_with(m)) return true;
  }
  for (std::string_view f : kLockHoldingFunctions) {
    if (function == f) return true;
  }
  for (std::string_view prefix : kAllocatorPrefixes) {
    if (function.starts_with(prefix)) return true;
  }
  return false;
}

Result<std::unique_ptr<ThreadFrames>> ThreadFrames::ForProcess(pid_t pid) {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = NoDebuginfo,
      .section_address = nullptr,
      .debuginfo_path = &debuginfo_path,
  };
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (dwfl == nullptr) return Fail(ErrorCode::kInternal, dwfl_errmsg(-1));
  std::unique_ptr<ThreadFrames> frames(new ThreadFrames(dwfl));
  if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, nullptr, nullptr) != 0) {
    return Fail(ErrorCode::kInternal,
                "cannot read the modules of process " + std::to_string(pid) + ": " + dwfl_errmsg(-1));
  }
  (void)dwfl_getmodules(dwfl, Prepare, nullptr, 0);
  // The threads are stopped by StoppedThread, one at a time; libdwfl must
  // not attach to them itself.
  if (dwfl_linux_proc_attach(dwfl, pid, /*assume_ptrace_stopped=*/true) != 0) {
    return Fail(ErrorCode::kInternal,
                "cannot prepare to unwind process " + std::to_string(pid) + ": " + dwfl_errmsg(-1));
  }
  return frames;
}

ThreadFrames::~ThreadFrames() { dwfl_end(dwfl_); }

std::optional<std::string> ThreadFrames::WhyNotBorrow(pid_t tid) {
  Walk walk{dwfl_, std::nullopt, 0};
  const int rc = dwfl_getthread_frames(dwfl_, tid, OnFrame, &walk);
  if (walk.reason) return walk.reason;
  if (rc != 0 && walk.frames == 0) {
    return std::string("its stack could not be read (") + dwfl_errmsg(-1) + ")";
  }
  return std::nullopt;
}

}  // namespace memprof::cli
