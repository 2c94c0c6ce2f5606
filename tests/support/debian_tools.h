#ifndef MEMPROF_TESTS_SUPPORT_DEBIAN_TOOLS_H_
#define MEMPROF_TESTS_SUPPORT_DEBIAN_TOOLS_H_

#include <string>
#include <vector>

#include "tests/support/required_tool.h"

// The outside programs our tests run, each with its Debian package (all in
// dev.sh's PACKAGES) and a probe that shows it can really run.
namespace memprof::test_support {

// jeprof (libjemalloc-dev), with what it runs itself: /usr/bin/file and
// binutils. Probed with a real --text report of a recorded dump.
RequiredTool Jeprof();
// The real pprof, built by tests/cli/report/pprof at `built_path` from
// Debian's Go sources ("" when the configure step found no go).
RequiredTool Pprof(const std::string& built_path);
RequiredTool Promtool();
RequiredTool Chromium();
RequiredTool Xmllint();
RequiredTool Ip();
RequiredTool Unshare();
// nsenter (util-linux): a command in another process's mount namespace.
RequiredTool Nsenter();
// Debian's debuginfod server (elfutils), objcopy to split debug files, and
// strip, as packages strip their binaries.
RequiredTool Debuginfod();
RequiredTool Objcopy();
RequiredTool Strip();

// groff (groff-base) renders the man pages; zsh, bash and systemd-analyze
// (systemd) run the shell completion and check the systemd examples.
RequiredTool Groff();
RequiredTool Zsh();
RequiredTool Bash();
RequiredTool SystemdAnalyze();
// Every tool above but pprof, whose path only tests/cli/report/pprof knows.
std::vector<RequiredTool> ToolsTheTestsRun();

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_DEBIAN_TOOLS_H_
