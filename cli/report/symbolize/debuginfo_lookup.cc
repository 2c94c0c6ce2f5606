#include "cli/report/symbolize/debuginfo_lookup.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "cli/report/symbolize/debug_file_cache.h"
#include "cli/report/symbolize/hex.h"

namespace memprof::report::symbolize {
namespace {

std::atomic<DebuginfoLookupObserver*> g_observer{nullptr};

std::string BuildIdHex(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int size = dwfl_module_build_id(module, &bits, &vaddr);
  return size > 0 ? LowerHex(bits, static_cast<size_t>(size)) : std::string();
}

// The cache's plain copy of the module's debug file, named as the file it
// was made from; -1 when there is none.
int CachedCopy(const std::string& build_id, char** debuginfo_file_name) {
  std::optional<CachedDebugFile> cached = OpenCachedDebugFile(build_id);
  if (!cached) return -1;
  char* name = ::strdup(cached->origin.c_str());
  if (name == nullptr) return -1;
  *debuginfo_file_name = name;
  return cached->fd.Release();
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
  const std::string build_id = BuildIdHex(module);
  int fd = CachedCopy(build_id, debuginfo_file_name);
  if (fd < 0) {
    fd = dwfl_standard_find_debuginfo(module, userdata, module_name, base, file_name,
                                      debuglink_file, debuglink_crc, debuginfo_file_name);
    // This report reads the file as libdwfl opened it; the next ones, the copy.
    if (fd >= 0 && *debuginfo_file_name != nullptr) {
      CachePlainCopy(fd, build_id, *debuginfo_file_name);
    }
  }
  if (observer != nullptr) observer->LookupFinished(file);
  return fd;
}

}  // namespace memprof::report::symbolize
