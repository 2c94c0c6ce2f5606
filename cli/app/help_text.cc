#include "cli/app/help_text.h"

#include "cli/io/exit_codes.h"

namespace memprof::cli {

std::string RootDescription() {
  return "memprofctl - look inside the heap of a running jemalloc process: activate heap\n"
         "profiling, stream heap profiles and read allocator statistics through the\n"
         "process's memprof agent (a Unix socket per process), and analyse the profiles.";
}

std::string RootFooter() {
  return "Target selection (status, activate, deactivate, dump, profile, stats, doctor, purge):\n"
         "  --pid PID, --name REGEX, else $MEMPROF_PID, else the only process with an agent.\n"
         "  `exporter` serves every process with an agent, found anew at each scrape.\n\n"
         "Durations (--for, --duration, --every, --watch, --timeout, ...):\n"
         "  a number and a unit, ms, s, m or h, in any letter case (M is minutes), with a\n"
         "  fraction if you like: 500ms, 30s, 1.5h, 10M, 1h30m. A bare number is refused.\n\n"
         "Environment:\n"
         "  MEMPROF_SOCKET_DIR    where agents put their sockets (default /tmp/memprof)\n"
         "  MEMPROF_PID           default target pid\n"
         "  MEMPROF_AGENT_LIB     agent library for `run` (default: found next to memprofctl)\n"
         "  MEMPROF_JEMALLOC_LIB  jemalloc library for `run`\n"
         "  MEMPROFCTL_CONFIG     config file (default ~/.config/memprof/memprofctl.toml)\n"
         "  MEMPROFCTL_TLS_CA, MEMPROFCTL_TLS_CERT, MEMPROFCTL_TLS_KEY\n"
         "                        TLS files for remote agents (--tls-* beat them)\n\n" +
         ExitCodeHelp() +
         "\nExamples:\n"
         "  memprofctl run -- ./my-server &                # start with the agent preloaded\n"
         "  memprofctl list                                # processes with an agent\n"
         "  memprofctl activate --pid 1234 --for 10m       # sample allocations for 10 minutes\n"
         "  memprofctl dump --pid 1234 --out profile.heap  # stream a heap profile\n"
         "  memprofctl profile --pid 1234 --duration 30s --out p.heap\n"
         "                        # activate, wait 30s, dump, leave profiling as it was\n"
         "  memprofctl activate --pid 1234 --sample-interval 128KiB\n"
         "                        # finer sampling; DISCARDS the samples so far (as --reset)\n"
         "  memprofctl stats --pid 1234 --json             # allocator statistics for scripts\n"
         "  memprofctl stats --pid 1234 --watch 2s         # live, with changes per second\n"
         "  memprofctl dump --pid 1234 --every 5m --out-dir heaps   # timestamped dumps\n"
         "  memprofctl doctor --pid 1234                   # where the RSS is, and what to do\n"
         "  memprofctl purge --pid 1234                    # give unused pages back now\n"
         "  memprofctl exporter --listen 127.0.0.1:9464    # GET /metrics, "
         "/debug/pprof/heap?pid=N\n"
         "  memprofctl report profile.heap --top 20        # top allocating functions\n"
         "  memprofctl report profile.heap -f svg -o h.svg # flame graph for a browser\n\n"
         "Run `memprofctl help COMMAND` (or `memprofctl COMMAND --help`) for the options\n"
         "of a command.\n";
}

}  // namespace memprof::cli
