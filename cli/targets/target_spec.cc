#include "cli/targets/target_spec.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <tuple>

#include "common/host_port.h"
#include "common/text_file.h"

namespace memprof::cli {
namespace {

constexpr std::string_view kUnixPrefix = "unix:";
constexpr size_t kMaxTargetsFileBytes = 16 * 1024 * 1024;

std::string_view Trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

bool ParsePositive(std::string_view text, long max, long& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && value > 0 && value <= max;
}

bool IsDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '-' || host.front() == '.') {
    return false;
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
  });
}

Error BadAddress(std::string_view text, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument,
               "invalid remote target '" + std::string(text) + "': " + why +
                   " (expected HOST:PORT, e.g. db7.example.com:7070, 10.0.0.7:7070 or "
                   "[2001:db8::7]:7070)");
}

}  // namespace

TargetSpec TargetSpec::Pid(pid_t pid, std::string origin) {
  TargetSpec spec;
  spec.kind = Kind::kPid;
  spec.pid = pid;
  spec.origin = std::move(origin);
  return spec;
}

TargetSpec TargetSpec::Address(std::string address, std::string origin) {
  TargetSpec spec;
  spec.kind = Kind::kAddress;
  spec.value = std::move(address);
  spec.origin = std::move(origin);
  return spec;
}

std::string TargetSpec::ToString() const {
  switch (kind) {
    case Kind::kPid:
      return std::to_string(pid);
    case Kind::kUnixSocket:
      return std::string(kUnixPrefix) + value;
    case Kind::kAddress:
      return value;
  }
  return value;
}

bool operator==(const TargetSpec& a, const TargetSpec& b) {
  return std::tie(a.kind, a.pid, a.value) == std::tie(b.kind, b.pid, b.value);
}

Result<std::string> ParseRemoteAddress(std::string_view text) {
  auto parts = SplitHostPort(text, 1);
  if (!parts) return Fail(BadAddress(text, parts.error().message));
  if (parts->bracketed ? !IsIpLiteral(AF_INET6, parts->host) : !IsDnsName(parts->host)) {
    return Fail(BadAddress(text, "'" + parts->host + "' is not a host name or IP address"));
  }
  return std::string(text);
}

Result<TargetSpec> ParseTargetLine(std::string_view line, const std::string& origin) {
  const std::string_view text = Trim(line);
  auto fail = [&](const std::string& why) {
    return Fail(ErrorCode::kInvalidArgument, origin + ": " + why);
  };
  if (text.starts_with(kUnixPrefix)) {
    const std::string_view path = text.substr(kUnixPrefix.size());
    if (!path.starts_with('/')) {
      return fail("'" + std::string(text) + "': a Unix socket path must be absolute");
    }
    TargetSpec spec;
    spec.kind = TargetSpec::Kind::kUnixSocket;
    spec.value = std::string(path);
    spec.origin = origin;
    return spec;
  }
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    long pid = 0;
    if (!ParsePositive(text, INT_MAX, pid)) {
      return fail("invalid pid '" + std::string(text) + "': expected a positive process id");
    }
    return TargetSpec::Pid(static_cast<pid_t>(pid), origin);
  }
  auto address = ParseRemoteAddress(text);
  if (!address) {
    return fail("'" + std::string(text) +
                "' is neither a pid, nor unix:/path/to/socket, nor HOST:PORT (" +
                address.error().message + ")");
  }
  return TargetSpec::Address(*address, origin);
}

Result<std::vector<TargetSpec>> ParseTargetsFile(std::string_view text, const std::string& name) {
  std::vector<TargetSpec> specs;
  size_t line_number = 0;
  while (!text.empty() || line_number == 0) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.starts_with('#')) continue;
    auto spec = ParseTargetLine(trimmed, name + ":" + std::to_string(line_number));
    if (!spec) return Fail(spec.error());
    specs.push_back(std::move(*spec));
  }
  return specs;
}

Result<std::vector<TargetSpec>> ReadTargetsFile(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text) {
    return Fail(ErrorCode::kInvalidArgument, "--targets: " + text.error().message);
  }
  if (text->size() > kMaxTargetsFileBytes) {
    return Fail(ErrorCode::kInvalidArgument, "--targets: " + path + " is larger than 16 MiB");
  }
  return ParseTargetsFile(*text, path);
}

}  // namespace memprof::cli
