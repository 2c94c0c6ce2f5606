#ifndef MEMPROF_TESTS_AGENT_SUPPORT_THREAD_NAMES_H_
#define MEMPROF_TESTS_AGENT_SUPPORT_THREAD_NAMES_H_

#include <filesystem>
#include <fstream>
#include <string>

namespace memprof::agent {

// Threads of this process named `name` (/proc/self/task/*/comm).
inline int ThreadsNamed(const std::string& name) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  return count;
}

}  // namespace memprof::agent

#endif  // MEMPROF_TESTS_AGENT_SUPPORT_THREAD_NAMES_H_
