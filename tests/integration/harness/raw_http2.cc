#include "tests/integration/harness/raw_http2.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memprof::integration {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

void AppendBigEndian(std::string& out, uint32_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t ReadBigEndian(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// HPACK "literal header field without indexing, new name" (RFC 7541 6.2.2);
// every name and value here is shorter than 127 bytes, so each length fits
// the 7-bit prefix.
void AppendLiteralHeader(std::string& out, std::string_view name, std::string_view value) {
  out.push_back('\0');
  out.push_back(static_cast<char>(name.size()));
  out.append(name);
  out.push_back(static_cast<char>(value.size()));
  out.append(value);
}

enum class ReadResult { kOk, kEof, kTimeout };

// Reads exactly out.size() bytes before `deadline`.
ReadResult ReadExact(int fd, std::string& out, Clock::time_point deadline) {
  size_t got = 0;
  while (got < out.size()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return ReadResult::kTimeout;
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? ReadResult::kTimeout : ReadResult::kEof;
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return ReadResult::kEof;  // EOF or ECONNRESET: the peer is gone
    got += static_cast<size_t>(r);
  }
  return ReadResult::kOk;
}

ReadResult ReadFrame(int fd, FrameHeader& header, Clock::time_point deadline) {
  std::string raw(9, '\0');
  if (auto r = ReadExact(fd, raw, deadline); r != ReadResult::kOk) return r;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  header.length = ReadBigEndian(p, 3);
  header.type = p[3];
  header.flags = p[4];
  header.stream_id = ReadBigEndian(p + 5, 4) & 0x7fffffffu;
  std::string payload(header.length, '\0');
  return ReadExact(fd, payload, deadline);
}

}  // namespace

std::string Http2ClientStart() {
  return std::string(kPreface, sizeof(kPreface) - 1) + Http2Frame(kFrameSettings, 0, 0, "");
}

std::string Http2Frame(uint8_t type, uint8_t flags, uint32_t stream_id, std::string_view payload) {
  std::string out;
  AppendBigEndian(out, static_cast<uint32_t>(payload.size()), 3);
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  AppendBigEndian(out, stream_id & 0x7fffffffu, 4);
  out.append(payload);
  return out;
}

std::string GrpcCallHeaders(uint32_t stream_id, const std::string& method_path) {
  std::string block;
  AppendLiteralHeader(block, ":method", "POST");
  AppendLiteralHeader(block, ":scheme", "http");
  AppendLiteralHeader(block, ":path", method_path);
  AppendLiteralHeader(block, ":authority", "localhost");
  AppendLiteralHeader(block, "content-type", "application/grpc");
  AppendLiteralHeader(block, "te", "trailers");
  return Http2Frame(kFrameHeaders, kFlagEndHeaders, stream_id, block);
}

std::string GrpcMessagePrefix(uint32_t length) {
  std::string out(1, '\0');  // not compressed
  AppendBigEndian(out, length, 4);
  return out;
}

Fd ConnectRaw(const std::string& path) {
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (!fd || path.size() >= sizeof(addr.sun_path)) return Fd();
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return Fd();
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

const char* StreamEndName(StreamEnd end) {
  switch (end) {
    case StreamEnd::kTrailers: return "trailers";
    case StreamEnd::kRstStream: return "RST_STREAM";
    case StreamEnd::kGoaway: return "GOAWAY";
    case StreamEnd::kConnectionClosed: return "connection closed";
    case StreamEnd::kTimeout: return "timeout";
  }
  return "?";
}

StreamEnd WaitForStreamEnd(int fd, uint32_t stream_id, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    FrameHeader h;
    ReadResult r = ReadFrame(fd, h, deadline);
    if (r == ReadResult::kTimeout) return StreamEnd::kTimeout;
    if (r == ReadResult::kEof) return StreamEnd::kConnectionClosed;
    if (h.type == kFrameGoaway) return StreamEnd::kGoaway;
    if (h.stream_id != stream_id) continue;
    if (h.type == kFrameRstStream) return StreamEnd::kRstStream;
    if (h.type == kFrameHeaders && (h.flags & kFlagEndStream) != 0) return StreamEnd::kTrailers;
  }
}

bool WaitForPeerClose(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string buf(4096, '\0');
  while (true) {
    ReadResult r = ReadExact(fd, buf, deadline);
    if (r == ReadResult::kEof) return true;
    if (r == ReadResult::kTimeout) return false;
  }
}

}  // namespace memprof::integration
