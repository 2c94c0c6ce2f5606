// What memprofctl makes the dynamic loader do before main(): with
// MEMPROF_STATIC_DEPS (the default) gRPC, protobuf, abseil, OpenSSL, spdlog
// and fmt are linked in, and libmicrohttpd is loaded only by the exporter, so
// that every command starts as fast as redis-cli does (docs/performance.md,
// section 3; the timings themselves are benchmarks, not assertions).
#include <gtest/gtest.h>

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
      "microhttpd|gnutls).*");
  for (const std::string& library : needed) {
    EXPECT_FALSE(std::regex_match(library, kHeavy)) << kMemprofctl << " needs " << library;
  }
  // What stays shared: the C and C++ runtimes and elfutils (symbolization).
  EXPECT_LE(needed.size(), 8u) << "memprofctl needs " << needed.size() << " libraries";
}

}  // namespace
}  // namespace memprof::integration
