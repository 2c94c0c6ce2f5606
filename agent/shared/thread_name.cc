#include "agent/shared/thread_name.h"

#include <sys/prctl.h>

#include <cstring>

namespace memprof::agent {

void NameThisThread(const char* role) {
  char name[16] = "memprof-";
  std::strncat(name, role, sizeof(name) - std::strlen(name) - 1);
  prctl(PR_SET_NAME, name);
}

}  // namespace memprof::agent
