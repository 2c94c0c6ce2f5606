#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUGINFO_LOOKUP_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUGINFO_LOOKUP_H_

#include <elfutils/libdwfl.h>

#include <string_view>

namespace memprof::report::symbolize {

// Told when libdwfl starts and ends looking for one file's debug info: the
// local places first, then, with DEBUGINFOD_URLS set, a debuginfod server,
// where one download can take seconds. The CLI shows a progress line with
// it. Calls come from the symbolizing threads, so implementations lock.
class DebuginfoLookupObserver {
 public:
  virtual ~DebuginfoLookupObserver() = default;
  virtual void LookupStarted(std::string_view file) = 0;
  virtual void LookupFinished(std::string_view file) = 0;
};

// Whether libdwfl will ask a debuginfod server for missing debug files:
// DEBUGINFOD_URLS is set and not empty.
bool DebuginfodConfigured();

// Sets the process-wide observer; nullptr removes it. The observer must
// stay alive until it is removed.
void SetDebuginfoLookupObserver(DebuginfoLookupObserver* observer);

// libdwfl's find_debuginfo callback: dwfl_standard_find_debuginfo, between
// the observer's LookupStarted and LookupFinished for `file_name`.
int FindDebuginfoObserved(Dwfl_Module* module, void** userdata, const char* module_name,
                          Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                          GElf_Word debuglink_crc, char** debuginfo_file_name);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUGINFO_LOOKUP_H_
