#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_DWFL_SESSION_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_DWFL_SESSION_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::report::symbolize {

// Owns a libdwfl session (Dwfl*) and what libdwfl keeps pointers to: the
// callback table and the debuginfo_path string. Hence neither copyable nor
// movable; hold it by unique_ptr. Not thread-safe (neither is a Dwfl).
class DwflSession {
 public:
  // `debug_roots`: absolute directories for .build-id/ and debuglink lookups.
  [[nodiscard]] static Result<std::unique_ptr<DwflSession>> Create(
      const std::vector<std::string>& debug_roots);
  ~DwflSession();
  DwflSession(const DwflSession&) = delete;
  DwflSession& operator=(const DwflSession&) = delete;

  // Adds the ELF file open on `fd` as module `name`, loaded with `bias`
  // (ignored by libdwfl for ET_EXEC, which has none). Takes `fd` on success.
  // Modules reported earlier stay valid: each file is reported once, lazily.
  [[nodiscard]] Result<Dwfl_Module*> Report(const std::string& name, const std::string& file_name,
                                            Fd& fd, uint64_t bias);

 private:
  explicit DwflSession(const std::vector<std::string>& debug_roots);

  std::string debuginfo_path_;
  char* debuginfo_path_ptr_ = nullptr;  // libdwfl reads the path through a char**
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
};

// libdwfl's message for its last error, for Error texts.
std::string DwflErrorMessage();

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_DWFL_SESSION_H_
