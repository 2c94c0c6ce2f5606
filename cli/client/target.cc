#include "cli/client/target.h"

namespace memprof::cli {

std::string DescribeTarget(const Target& target) {
  if (target.remote() && target.pid == 0) return "the agent at " + target.address;
  std::string out = "pid " + std::to_string(target.pid);
  if (!target.command.empty()) out += " (" + target.command + ")";
  if (target.remote()) out += " on " + target.address;
  return out;
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
