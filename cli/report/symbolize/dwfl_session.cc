#include "cli/report/symbolize/dwfl_session.h"

#include <memory>

#include "cli/report/symbolize/debuginfo_lookup.h"

namespace memprof::report::symbolize {
namespace {

// libdwfl's path syntax (see dwfl_standard_find_debuginfo): "" = the
// binary's own directory, ".debug" = its .debug/ subdirectory, absolute
// entries are roots for both .build-id/ and debuglink searches.
std::string DebuginfoPath(const std::vector<std::string>& debug_roots) {
  std::string path = ":.debug";
  for (const std::string& root : debug_roots) path += ":" + root;
  return path;
}

}  // namespace

std::string DwflErrorMessage() {
  const char* message = dwfl_errmsg(-1);
  return message != nullptr ? message : "unknown libdwfl error";
}

DwflSession::DwflSession(const std::vector<std::string>& debug_roots)
    : debuginfo_path_(DebuginfoPath(debug_roots)) {
  debuginfo_path_ptr_ = debuginfo_path_.data();
  // find_elf is never consulted (Report always passes an open fd) but must
  // be callable; find_debuginfo does build-ID, debuglink and (when the user
  // set DEBUGINFOD_URLS) debuginfod lookups, watched by the observer.
  callbacks_.find_elf = dwfl_build_id_find_elf;
  callbacks_.find_debuginfo = FindDebuginfoObserved;
  callbacks_.section_address = dwfl_offline_section_address;
  callbacks_.debuginfo_path = &debuginfo_path_ptr_;
  dwfl_ = dwfl_begin(&callbacks_);
}

DwflSession::~DwflSession() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

Result<std::unique_ptr<DwflSession>> DwflSession::Create(
    const std::vector<std::string>& debug_roots) {
  std::unique_ptr<DwflSession> session(new DwflSession(debug_roots));
  if (session->dwfl_ == nullptr) {
    return Fail(ErrorCode::kInternal, "cannot start libdwfl: " + DwflErrorMessage());
  }
  return session;
}

Result<Dwfl_Module*> DwflSession::Report(const std::string& name, const std::string& file_name,
                                         Fd& fd, uint64_t bias) {
  // begin_add keeps the modules already reported (dwfl_report_begin would
  // drop them), so files are opened only when an address first needs them.
  dwfl_report_begin_add(dwfl_);
  Dwfl_Module* module =
      dwfl_report_elf(dwfl_, name.c_str(), file_name.c_str(), fd.get(), bias, /*add_p_vaddr=*/true);
  const std::string error = module == nullptr ? DwflErrorMessage() : std::string();
  if (module != nullptr) fd.Release();  // libdwfl owns it now
  if (dwfl_report_end(dwfl_, nullptr, nullptr) != 0 || module == nullptr) {
    return Fail(ErrorCode::kInternal, "libdwfl cannot load " + file_name + ": " +
                                          (error.empty() ? DwflErrorMessage() : error));
  }
  return module;
}

}  // namespace memprof::report::symbolize
