/*
 * A program that links the memprof agent (package libmemprof-agent-dev) and
 * starts it itself, instead of having `memprofctl run` preload it. It serves
 * until its standard input ends, then stops the agent and exits.
 *
 * With pkg-config:
 *   cc agent_example.c $(pkg-config --cflags --libs memprof-agent) -o agent_example
 * With CMake: see CMakeLists.txt next to this file.
 *
 *   ./agent_example &      then: memprofctl list, memprofctl stats --pid <pid>
 *
 * For heap profiles the program must allocate with jemalloc: link it too
 * (-ljemalloc) and start with MALLOC_CONF=prof:true,prof_active:false.
 */
#include <memprof/agent.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  if (memprof_agent_start() != 0) {
    fprintf(stderr, "agent_example: the memprof agent did not start\n");
    return 1;
  }
  printf("agent_example: pid %d serves memprof; end stdin to stop\n", (int)getpid());
  fflush(stdout);
  char buffer[256];
  while (read(STDIN_FILENO, buffer, sizeof buffer) > 0) {
  }
  memprof_agent_stop();
  return 0;
}
