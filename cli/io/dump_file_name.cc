#include "cli/io/dump_file_name.h"

#include <arpa/inet.h>

#include <unistd.h>

#include <climits>
#include <ctime>

namespace memprof::cli {
namespace {

bool FileSafe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string UtcTimestamp(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(
      std::chrono::floor<std::chrono::seconds>(time));
  std::tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) return std::to_string(seconds);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &utc);
  return buf;
}

namespace {

bool IsIpAddress(std::string_view host) {
  const std::string text(host);
  in_addr v4{};
  in6_addr v6{};
  return ::inet_pton(AF_INET, text.c_str(), &v4) == 1 ||
         ::inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

}  // namespace

std::string FileSafeHostName(std::string_view host) {
  // An IP address is kept whole ("10.0.0.7" -> "10_0_0_7"): its first
  // label alone would name a whole network.
  if (!IsIpAddress(host)) host = host.substr(0, host.find('.'));
  std::string out;
  out.reserve(host.size());
  for (char c : host) out += FileSafe(c) ? c : '_';
  return out.empty() ? "host" : out;
}

std::string LocalFileSafeHostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return FileSafeHostName("");
  return FileSafeHostName(buf);
}

std::string DumpFileName(std::string_view host, pid_t pid,
                         std::chrono::system_clock::time_point time, std::string_view extension,
                         int attempt) {
  std::string name = FileSafeHostName(host) + "-" + std::to_string(pid) + "-" + UtcTimestamp(time);
  if (attempt > 0) name += "-" + std::to_string(attempt);
  name += ".";
  name += extension;
  return name;
}

std::string CaptureFileName(std::string_view host, pid_t pid,
                            std::chrono::system_clock::time_point time, uint64_t sequence,
                            uint64_t allocated_bytes, int attempt) {
  std::string name = FileSafeHostName(host) + "-" + std::to_string(pid) + "-" +
                     UtcTimestamp(time) + "-capture" + std::to_string(sequence) + "-" +
                     std::to_string(allocated_bytes >> 20) + "MiB";
  if (attempt > 0) name += "-" + std::to_string(attempt);
  return name + ".heap";
}

}  // namespace memprof::cli
