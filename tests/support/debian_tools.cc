#include "tests/support/debian_tools.h"

#include <unistd.h>

#include <climits>

namespace memprof::test_support {
namespace {

// A recorded dump (tests/data/analysis/README.md says how it was made).
constexpr char kJeprofProbeDump[] = MEMPROF_TEST_DATA_DIR "/analysis/many_stacks_sampled.heap";

// jeprof wants a 64-bit ELF beside the dump; any will do, and the running
// test is one.
std::string ThisExecutable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "/proc/self/exe";
}

RequiredTool Binutils(const std::string& program) {
  RequiredTool tool;
  tool.name = program;
  tool.candidates = {program};
  tool.package = "binutils";
  tool.why = "jeprof runs it to read symbols";
  tool.probe_args = {"--version"};
  return tool;
}

// jeprof runs /usr/bin/file by that path, not from PATH, to learn a binary's
// type. Without it (Debian's minbase has no `file`) a numeric comparison in
// its ConfigureObjTools takes every binary for a Windows one, and any run
// with --tools exits 1: "No 'addr2line-pdb' found with prefix specified by
// --tools".
RequiredTool File() {
  RequiredTool tool;
  tool.name = "file";
  tool.candidates = {"/usr/bin/file"};
  tool.package = "file";
  tool.why =
      "jeprof runs /usr/bin/file to learn a binary's type, and without it takes every "
      "binary for a Windows one";
  tool.probe_args = {"--version"};
  return tool;
}

RequiredTool VersionProbed(const std::string& name, std::vector<std::string> candidates,
                           const std::string& package, std::vector<std::string> probe_args) {
  RequiredTool tool;
  tool.name = name;
  tool.candidates = std::move(candidates);
  tool.package = package;
  tool.probe_args = std::move(probe_args);
  return tool;
}

}  // namespace

RequiredTool Jeprof() {
  RequiredTool tool;
  tool.name = "jeprof";
  tool.candidates = {"jeprof"};
  tool.package = "libjemalloc-dev";
  // The run JeprofComparisonTest makes (object tools replaced, so it is
  // quick and names frames by address): it fails the way those tests would.
  tool.probe_args = {"--text",
                     "--tools=nm:/bin/false,addr2line:/bin/false,objdump:/bin/false,"
                     "c++filt:/bin/false",
                     ThisExecutable(), kJeprofProbeDump};
  tool.probe_expects = "Total:";
  tool.helpers = {File(), Binutils("addr2line"), Binutils("nm"), Binutils("objdump"),
                  Binutils("c++filt")};
  return tool;
}

RequiredTool Pprof(const std::string& built_path) {
  RequiredTool tool;
  tool.name = "pprof";
  if (!built_path.empty()) tool.candidates = {built_path};
  tool.package = "golang-go golang-github-google-pprof-dev";
  tool.note = "then re-run cmake, which builds pprof from their sources";
  tool.probe_args = {"-h"};
  tool.probe_expects = "usage:";
  return tool;
}

RequiredTool Promtool() {
  return VersionProbed("promtool", {"promtool"}, "prometheus", {"--version"});
}

RequiredTool Chromium() {
  return VersionProbed("Chromium", {"chromium", "chromium-browser", "google-chrome"}, "chromium",
                       {"--version"});
}

RequiredTool Xmllint() {
  return VersionProbed("xmllint", {"xmllint"}, "libxml2-utils", {"--version"});
}

RequiredTool Ip() {
  // A user's PATH often lacks the sbin directories.
  return VersionProbed("ip", {"ip", "/usr/sbin/ip", "/sbin/ip"}, "iproute2", {"-V"});
}

RequiredTool Unshare() {
  return VersionProbed("unshare", {"unshare", "/usr/bin/unshare"}, "util-linux", {"--version"});
}

RequiredTool Nsenter() {
  return VersionProbed("nsenter", {"nsenter", "/usr/bin/nsenter"}, "util-linux", {"--version"});
}

RequiredTool Debuginfod() {
  return VersionProbed("debuginfod", {"debuginfod", "/usr/bin/debuginfod"}, "debuginfod",
                       {"--version"});
}

RequiredTool Objcopy() {
  return VersionProbed("objcopy", {"objcopy", "/usr/bin/objcopy"}, "binutils", {"--version"});
}

RequiredTool Strip() {
  return VersionProbed("strip", {"strip", "/usr/bin/strip"}, "binutils", {"--version"});
}

RequiredTool Groff() {
  return VersionProbed("groff", {"groff", "/usr/bin/groff"}, "groff-base", {"--version"});
}

RequiredTool Zsh() {
  // zsh_complete.zsh drives an interactive zsh through zsh/zpty.
  return VersionProbed("zsh", {"zsh", "/usr/bin/zsh", "/bin/zsh"}, "zsh",
                       {"-fc", "zmodload zsh/zpty && echo zpty"});
}

RequiredTool Bash() {
  return VersionProbed("bash", {"bash", "/bin/bash"}, "bash", {"--version"});
}

RequiredTool SystemdAnalyze() {
  return VersionProbed("systemd-analyze", {"systemd-analyze", "/usr/bin/systemd-analyze"},
                       "systemd", {"--version"});
}

std::vector<RequiredTool> ToolsTheTestsRun() {
  return {Jeprof(),     Promtool(), Chromium(), Xmllint(), Ip(),   Unshare(), Nsenter(), Debuginfod(),
          Objcopy(),    Strip(),    Groff(),    Zsh(),     Bash(), SystemdAnalyze()};
}

}  // namespace memprof::test_support
