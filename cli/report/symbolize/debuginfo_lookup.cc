#include "cli/report/symbolize/debuginfo_lookup.h"

#include <atomic>
#include <cstdlib>

namespace memprof::report::symbolize {
namespace {

std::atomic<DebuginfoLookupObserver*> g_observer{nullptr};

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
  if (observer != nullptr) observer->LookupFinished(file);
  return fd;
}

}  // namespace memprof::report::symbolize
