// memprofctl: all logic lives in memprof_cli_core (cli/app/cli_app.h).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app/cli_app.h"
#include "cli/app/huge_page_heap.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  memprof::cli::ReexecWithHugePageHeapIfWorthIt(argv, args);
  const int code = memprof::cli::RunCli(args, memprof::cli::ProductionEnvironment());
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return code;  // every destructor, so that LeakSanitizer sees what was freed
#else
  // Everything the command did is done (its files written and closed, its
  // threads joined): what is left is output to flush and gRPC's threads,
  // which the exit ends instead of a shutdown that joins them
  // (grpc_profile_client.cc), and without the static destructors that would
  // run beside them.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
#endif
}
