#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_RAW_HTTP2_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_RAW_HTTP2_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"

namespace memprof::integration {

// Just enough HTTP/2 (RFC 9113) and gRPC framing to talk to the agent the way
// a broken or hostile client would: bytes are built by hand and written to a
// plain Unix socket, so a test decides exactly what is sent, what is never
// sent, and what is never read.

inline constexpr uint8_t kFrameData = 0x0;
inline constexpr uint8_t kFrameHeaders = 0x1;
inline constexpr uint8_t kFrameRstStream = 0x3;
inline constexpr uint8_t kFrameSettings = 0x4;
inline constexpr uint8_t kFrameGoaway = 0x7;
inline constexpr uint8_t kFlagEndStream = 0x1;
inline constexpr uint8_t kFlagAck = 0x1;
inline constexpr uint8_t kFlagEndHeaders = 0x4;

// The client connection preface followed by an empty SETTINGS frame.
std::string Http2ClientStart();
// One frame: 9-byte header + payload.
std::string Http2Frame(uint8_t type, uint8_t flags, uint32_t stream_id, std::string_view payload);
// A HEADERS frame (END_HEADERS) opening a gRPC call of `method_path`, e.g.
// "/memprof.v1.MemoryProfile/Dump"; HPACK literals only, no Huffman.
std::string GrpcCallHeaders(uint32_t stream_id, const std::string& method_path);
// The 5-byte gRPC message prefix (uncompressed) announcing `length` bytes.
std::string GrpcMessagePrefix(uint32_t length);

// A Unix socket connected to `path` (blocking); invalid Fd on failure.
Fd ConnectRaw(const std::string& path);
// Writes everything; false on error (e.g. the peer closed).
bool SendAll(int fd, std::string_view data);

// A frame header as received.
struct FrameHeader {
  uint32_t length = 0;
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t stream_id = 0;
};

// How the server ended a stream (or the whole connection).
enum class StreamEnd { kTrailers, kRstStream, kGoaway, kConnectionClosed, kTimeout };
const char* StreamEndName(StreamEnd end);

// Reads frames from `fd` until `stream_id` ends (trailers with END_STREAM,
// RST_STREAM), the connection ends (GOAWAY, EOF) or `timeout` passes.
StreamEnd WaitForStreamEnd(int fd, uint32_t stream_id, std::chrono::milliseconds timeout);

// Reads (and discards) until the peer closes the connection; false if it is
// still open after `timeout`.
bool WaitForPeerClose(int fd, std::chrono::milliseconds timeout);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_RAW_HTTP2_H_
