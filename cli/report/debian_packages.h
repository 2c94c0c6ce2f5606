#ifndef MEMPROF_CLI_REPORT_DEBIAN_PACKAGES_H_
#define MEMPROF_CLI_REPORT_DEBIAN_PACKAGES_H_

#include <map>
#include <string>
#include <vector>

namespace memprof::report {

// The Debian package that installed each of `paths` ("libssl3" for
// /usr/lib/x86_64-linux-gnu/libcrypto.so.3), as `dpkg -S` answers it, read
// from dpkg's file lists in `dpkg_info_dir` (one "<package>[:arch].list" per
// package). A path is also looked up without its /usr prefix and with one
// added (merged-/usr systems map /usr/lib/... files dpkg lists as /lib/...).
// Paths no package owns, and every path when the directory cannot be read
// (not a Debian system), are absent.
std::map<std::string, std::string> PackagesOwning(
    const std::vector<std::string>& paths,
    const std::string& dpkg_info_dir = "/var/lib/dpkg/info");

// Where Debian keeps the symbols of `package`: "<package>-dbgsym".
std::string DebugPackageOf(const std::string& package);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_DEBIAN_PACKAGES_H_
