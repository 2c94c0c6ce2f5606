#include "cli/client/target.h"

namespace memprof::cli {

std::string DescribeTarget(const Target& target) {
  if (target.remote() && target.pid == 0) return "the agent at " + target.address;
  std::string out = "pid " + std::to_string(target.pid);
  if (!target.command.empty()) out += " (" + target.command + ")";
  if (target.remote()) out += " on " + target.address;
  return out;
}

std::string ProcessTitle(const std::vector<std::string>& argv) {
  std::string title;
  for (const std::string& arg : argv) {
    if (arg.empty()) continue;
    title += (title.empty() ? "" : " ") + arg;
  }
  const size_t first = title.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return title.substr(first, title.find_last_not_of(" \t") - first + 1);
}

std::string AddressHost(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace memprof::cli
