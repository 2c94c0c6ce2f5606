#include "cli/report/symbolize/debuginfo_lookup.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "cli/report/symbolize/debug_file_cache.h"
#include "cli/report/symbolize/hex.h"

namespace memprof::report::symbolize {
namespace {

std::atomic<DebuginfoLookupObserver*> g_observer{nullptr};

// The cache's plain copy of the debug file open on `fd` in its place (the
// name libdwfl keeps is still the file's own, which is where it looks for a
// .gnu_debugaltlink beside it).
int PreferPlainCopy(Dwfl_Module* module, int fd) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int size = dwfl_module_build_id(module, &bits, &vaddr);
  if (size <= 0) return fd;
  Fd plain = PlainDebugFile(fd, LowerHex(bits, static_cast<size_t>(size)));
  if (!plain.valid()) return fd;
  ::close(fd);
  return plain.Release();
}

}  // namespace

bool DebuginfodConfigured() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls != nullptr && urls[0] != '\0';
}

void SetDebuginfoLookupObserver(DebuginfoLookupObserver* observer) { g_observer.store(observer); }

int FindDebuginfoObserved(Dwfl_Module* module, void** userdata, const char* module_name,
                          Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                          GElf_Word debuglink_crc, char** debuginfo_file_name) {
  DebuginfoLookupObserver* observer = g_observer.load();
  const std::string_view file = file_name != nullptr ? file_name : module_name;
  if (observer != nullptr) observer->LookupStarted(file);
  const int fd = dwfl_standard_find_debuginfo(module, userdata, module_name, base, file_name,
                                              debuglink_file, debuglink_crc, debuginfo_file_name);
  const int usable = fd >= 0 ? PreferPlainCopy(module, fd) : fd;
  if (observer != nullptr) observer->LookupFinished(file);
  return usable;
}

}  // namespace memprof::report::symbolize
