// memprof_tool_check NAME...: the check our tests make before running an
// outside program, from the command line. Prints "NAME: PATH" for each tool
// that can run and the reason for each that cannot; exits 1 if any cannot.
// Without arguments it checks every tool the tests run. The test that hides
// /usr/bin/file in a mount namespace runs it there.
#include <iostream>
#include <string>
#include <vector>

#include "tests/support/debian_tools.h"

namespace {

using memprof::test_support::RequiredTool;

std::vector<RequiredTool> Selected(int argc, char** argv, bool& unknown) {
  std::vector<RequiredTool> all = memprof::test_support::ToolsTheTestsRun();
  if (argc < 2) return all;
  std::vector<RequiredTool> selected;
  for (int i = 1; i < argc; ++i) {
    bool found = false;
    for (const RequiredTool& tool : all) {
      if (tool.name == argv[i]) {
        selected.push_back(tool);
        found = true;
      }
    }
    if (!found) std::cerr << "memprof_tool_check: unknown tool '" << argv[i] << "'\n";
    unknown = unknown || !found;
  }
  return selected;
}

}  // namespace

int main(int argc, char** argv) {
  bool unknown = false;
  bool all_ok = true;
  for (const RequiredTool& tool : Selected(argc, argv, unknown)) {
    const memprof::test_support::ToolCheck check = memprof::test_support::CheckTool(tool);
    if (check.ok()) {
      std::cout << tool.name << ": " << check.path << "\n";
    } else {
      std::cout << check.problem << "\n";
      all_ok = false;
    }
  }
  return unknown ? 2 : all_ok ? 0 : 1;
}
