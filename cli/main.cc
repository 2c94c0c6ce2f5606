// memprofctl: all logic lives in memprof_cli_core (cli/app/cli_app.h).
#include <string>
#include <vector>

#include "cli/app/cli_app.h"
#include "cli/app/huge_page_heap.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  memprof::cli::ReexecWithHugePageHeapIfWorthIt(argv, args);
  return memprof::cli::RunCli(args, memprof::cli::ProductionEnvironment());
}
