// memprofctl: all logic lives in memprof_cli_core (cli/app/cli_app.h).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app/cli_app.h"
#include "cli/app/huge_page_heap.h"

namespace {

// A report over a big dump runs again with glibc's heap on huge pages
// (cli/app/huge_page_heap.h). Deciding it from the executable's
// .preinit_array, before its static constructors (gRPC's, protobuf's,
// abseil's, OpenSSL's: some 400), spares the first process all of them.
// The C library is ready here; the C++ library's own initialisation
// (iostreams, locales) has not run, and the decision uses neither.
void ReexecBeforeConstructors(int argc, char** argv, char** envp) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  memprof::cli::ReexecWithHugePageHeapIfWorthIt(argv, envp, args);
}

__attribute__((section(".preinit_array"),
               used)) void (*preinit_reexec)(int, char**, char**) = &ReexecBeforeConstructors;

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
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
