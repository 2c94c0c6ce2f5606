#include "cli/target.h"

namespace memprof::cli {

std::string DescribeTarget(const Target& target) {
  std::string out = "pid " + std::to_string(target.pid);
  if (!target.command.empty()) out += " (" + target.command + ")";
  return out;
}

}  // namespace memprof::cli
