// What memprofctl makes the dynamic loader do before main(): with
// MEMPROF_STATIC_DEPS (the default) gRPC, protobuf, abseil, OpenSSL, spdlog,
// fmt, elfutils and the C++ runtime are linked in, and libmicrohttpd is
// loaded only by the exporter, so
// that every command starts as fast as redis-cli does (docs/performance.md,
// first section; the timings themselves are benchmarks, not assertions).
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/test_binaries.h"
#include "tests/support/shell.h"

namespace memprof::integration {
namespace {

using test_support::Quote;
using test_support::RunShellCommand;

// The DT_NEEDED entries of an ELF file, as readelf prints them.
std::vector<std::string> NeededLibraries(const std::string& path) {
  const auto out = RunShellCommand("readelf --dynamic --wide " + Quote(path));
  EXPECT_TRUE(out.ok()) << "readelf failed on " << path;
  static const std::regex kNeeded(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  std::vector<std::string> needed;
  std::istringstream lines(out.text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, kNeeded)) needed.push_back(match[1]);
  }
  return needed;
}

TEST(StartupTest, MemprofctlNeedsNoHeavyLibraryAtStartUp) {
#ifndef MEMPROF_IT_STATIC_DEPS
  GTEST_SKIP() << "configured with -DMEMPROF_STATIC_DEPS=OFF";
#endif
  const std::vector<std::string> needed = NeededLibraries(kMemprofctl);
  ASSERT_FALSE(needed.empty()) << "no NEEDED entries read from " << kMemprofctl;
  static const std::regex kHeavy(
      "lib(grpc|gpr|upb|address_sorting|re2|cares|protobuf|absl|ssl|crypto|spdlog|fmt|"
      "microhttpd|gnutls|stdc\\+\\+|gcc_s|dw|elf|lzma).*");
  for (const std::string& library : needed) {
    EXPECT_FALSE(std::regex_match(library, kHeavy)) << kMemprofctl << " needs " << library;
  }
  // What stays shared: the C library (libc, libm, ld.so) and the two that Debian
  // wants in one copy, zlib and bzip2 (cmake/MemprofDeps.cmake).
  EXPECT_LE(needed.size(), 5u) << "memprofctl needs " << needed.size() << " libraries";
}

// libmicrohttpd is loaded only when the exporter starts, so a host without it
// runs every other command, and the exporter says what to install. The
// library is hidden in a private mount namespace (root only), never on the
// host itself.
TEST(StartupTest, TheExporterWithoutLibmicrohttpdSaysWhichPackageToInstall) {
  if (::geteuid() != 0) GTEST_SKIP() << "hiding a system library needs a mount namespace (root)";
  if (!RunShellCommand("unshare --mount true 2>&1").ok()) {
    GTEST_SKIP() << "this machine does not allow a new mount namespace";
  }
  const std::string soname = MEMPROF_IT_MICROHTTPD_SONAME;
  const auto library = RunShellCommand("readlink -f \"$(/sbin/ldconfig -p | awk '$1 == \"" + soname +
                                       "\" {print $NF; exit}')\"");
  ASSERT_TRUE(library.ok() && !library.text.empty()) << soname << " not found by ldconfig";
  std::string path = library.text;
  while (!path.empty() && path.back() == '\n') path.pop_back();
  const std::string hide = "mount --bind /dev/null " + Quote(path);
  const auto run = [&](const std::string& command) {
    return RunShellCommand("unshare --mount sh -c " +
                           Quote(hide + " && exec " + Quote(kMemprofctl) + " " + command) +
                           " 2>&1");
  };
  const auto exporter = run("exporter --listen 127.0.0.1:0");
  EXPECT_EQ(exporter.exit_code, 1) << exporter.text;
  EXPECT_NE(exporter.text.find("memprofctl: error: the exporter needs " + soname +
                               " (Debian package libmicrohttpd"),
            std::string::npos)
      << exporter.text;
  const auto version = run("--version");
  EXPECT_TRUE(version.ok()) << "other commands do not need it: " << version.text;
  EXPECT_TRUE(access(path.c_str(), R_OK) == 0 && RunShellCommand("test -s " + Quote(path)).ok())
      << "the library must still be there outside the namespace";
}

}  // namespace
}  // namespace memprof::integration
