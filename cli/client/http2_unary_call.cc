#include "cli/client/http2_unary_call.h"

#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "cli/io/stop_wake.h"

namespace memprof::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The largest reply accepted, as the gRPC channels' limit.
constexpr size_t kMaxReplyBytes = 64 * 1024 * 1024;
// The flow-control window offered to the agent: a reply of up to this size
// needs no WINDOW_UPDATE round trip.
constexpr uint32_t kWindowBytes = 16 * 1024 * 1024;
// gRPC's length-prefixed message: a compressed flag and a 4-byte length.
constexpr size_t kMessagePrefixBytes = 5;

UnaryCallOutcome Failure(grpc::StatusCode code, std::string message, bool unanswered = false) {
  return {grpc::Status(code, std::move(message)), "", unanswered};
}

std::string Framed(std::string_view message) {
  std::string framed(kMessagePrefixBytes, '\0');
  const auto size = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) framed[1 + i] = static_cast<char>(size >> (24 - 8 * i));
  framed.append(message);
  return framed;
}

// The length in a message's prefix (at least kMessagePrefixBytes of it).
uint32_t MessageLength(std::string_view framed) {
  uint32_t size = 0;
  for (size_t i = 1; i < kMessagePrefixBytes; ++i)
    size = size << 8 | static_cast<uint8_t>(framed[i]);
  return size;
}

nghttp2_nv Header(std::string_view name, std::string_view value) {
  // nghttp2 only reads them (NO_COPY is not asked: it copies into its frame).
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NONE};
}

// One call on one connection: nghttp2 frames it, this class moves the bytes
// and keeps what the agent answered.
class UnaryExchange {
 public:
  UnaryExchange(int socket, std::string_view request)
      : socket_(socket), request_(Framed(request)) {}
  UnaryCallOutcome Run(std::string_view path, Clock::time_point deadline,
                       const std::stop_token& stop);

 private:
  bool Start(std::string_view path, Clock::time_point deadline);
  // Sends what nghttp2 has, then waits for the socket, the deadline or a
  // stop; false when the exchange cannot go on (`ended_` says why).
  bool Step(Clock::time_point deadline, const StopWake& wake, const std::stop_token& stop);
  bool Receive();
  bool Consume(const uint8_t* data, size_t size);
  bool Flush();
  UnaryCallOutcome Outcome();
  UnaryCallOutcome ReplyMessage();
  void EndWith(grpc::StatusCode code, std::string message) {
    if (!ended_) ended_ = grpc::Status(code, std::move(message));
  }

  static ssize_t OnReadRequest(nghttp2_session*, int32_t, uint8_t* buf, size_t size,
                               uint32_t* flags, nghttp2_data_source*, void* self);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                      void* self);
  static int OnData(nghttp2_session*, uint8_t, int32_t stream, const uint8_t* data, size_t size,
                    void* self);
  static int OnStreamClose(nghttp2_session*, int32_t stream, uint32_t code, void* self);
  static int OnFrameSent(nghttp2_session*, const nghttp2_frame* frame, void* self);

  int socket_;
  std::string request_;  // framed
  size_t request_sent_ = 0;
  std::string unsent_;  // frames nghttp2 made that the socket has not taken yet
  std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)> session_{nullptr,
                                                                            nghttp2_session_del};
  int32_t stream_ = -1;
  bool answered_ = false;  // the reply's first HEADERS came
  bool stream_closed_ = false;
  uint32_t reset_code_ = NGHTTP2_NO_ERROR;
  int http_status_ = 0;
  std::optional<int> grpc_status_;
  std::string grpc_message_;
  std::string body_;
  bool too_large_ = false;             // the reply passed kMaxReplyBytes: `body_` is cut
  std::string broken_;                 // why nghttp2 gave up on the connection, if it did
  std::optional<grpc::Status> ended_;  // the transport's verdict, if it ended the call
};

ssize_t UnaryExchange::OnReadRequest(nghttp2_session*, int32_t, uint8_t* buf, size_t size,
                                     uint32_t* flags, nghttp2_data_source*, void* self) {
  auto& call = *static_cast<UnaryExchange*>(self);
  const size_t n = std::min(size, call.request_.size() - call.request_sent_);
  std::memcpy(buf, call.request_.data() + call.request_sent_, n);
  call.request_sent_ += n;
  if (call.request_sent_ == call.request_.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

int UnaryExchange::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                            size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                            void* self) {
  auto& call = *static_cast<UnaryExchange*>(self);
  if (frame->hd.stream_id != call.stream_) return 0;
  call.answered_ = true;
  const std::string_view key(reinterpret_cast<const char*>(name), name_size);
  const std::string_view text(reinterpret_cast<const char*>(value), value_size);
  const auto number = [&text] {
    int n = 0;
    for (char c : text.substr(0, 9)) n = c >= '0' && c <= '9' ? n * 10 + (c - '0') : n;
    return n;
  };
  if (key == ":status") call.http_status_ = number();
  if (key == "grpc-status") call.grpc_status_ = number();
  if (key == "grpc-message") call.grpc_message_ = PercentDecoded(text);
  return 0;
}

int UnaryExchange::OnData(nghttp2_session*, uint8_t, int32_t stream, const uint8_t* data,
                          size_t size, void* self) {
  auto& call = *static_cast<UnaryExchange*>(self);
  if (stream != call.stream_) return 0;
  if (call.body_.size() + size > kMaxReplyBytes + kMessagePrefixBytes) {
    call.too_large_ = true;
    call.EndWith(grpc::StatusCode::RESOURCE_EXHAUSTED, "the agent's reply is larger than the " +
                                                           std::to_string(kMaxReplyBytes >> 20) +
                                                           " MiB memprofctl accepts");
    return 0;
  }
  const bool prefix_incomplete = call.body_.size() < kMessagePrefixBytes;
  call.body_.append(reinterpret_cast<const char*>(data), size);
  // Once the length is known, one allocation for the whole message: growing
  // by doubling touched twice its pages, each a fault on a fresh mapping.
  if (prefix_incomplete && call.body_.size() >= kMessagePrefixBytes) {
    call.body_.reserve(kMessagePrefixBytes +
                       std::min<size_t>(MessageLength(call.body_), kMaxReplyBytes));
  }
  return 0;
}

int UnaryExchange::OnStreamClose(nghttp2_session*, int32_t stream, uint32_t code, void* self) {
  auto& call = *static_cast<UnaryExchange*>(self);
  if (stream != call.stream_) return 0;
  call.stream_closed_ = true;
  call.reset_code_ = code;
  return 0;
}

// nghttp2 answers what breaks the protocol with GOAWAY and an error code,
// and then wants nothing more: the code is all there is to say why.
int UnaryExchange::OnFrameSent(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR) {
    static_cast<UnaryExchange*>(self)->broken_ = nghttp2_http2_strerror(frame->goaway.error_code);
  }
  return 0;
}

bool UnaryExchange::Start(std::string_view path, Clock::time_point deadline) {
  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return false;
  nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnStreamClose);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, OnFrameSent);
  nghttp2_session* session = nullptr;
  const int created = nghttp2_session_client_new(&session, callbacks, this);
  nghttp2_session_callbacks_del(callbacks);
  if (created != 0) return false;
  session_.reset(session);

  const std::array<nghttp2_settings_entry, 2> settings{{
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindowBytes},
  }};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kWindowBytes);
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  const std::string timeout = GrpcTimeoutHeader(std::max(left, milliseconds(1)));
  const std::array headers{
      Header(":method", "POST"),
      Header(":scheme", "http"),
      Header(":path", path),
      Header(":authority", "memprof-agent"),
      Header("content-type", "application/grpc"),
      Header("te", "trailers"),
      Header("grpc-accept-encoding", "identity"),
      Header("grpc-timeout", timeout),
  };
  nghttp2_data_provider body{};
  body.read_callback = OnReadRequest;
  stream_ = nghttp2_submit_request(session, nullptr, headers.data(), headers.size(), &body, this);
  return stream_ > 0;
}

// Reads what the socket has and hands it to nghttp2, until a read comes
// back short.
bool UnaryExchange::Receive() {
  std::array<uint8_t, 16 * 1024> buffer;  // an HTTP/2 frame's default size
  ssize_t n = 0;
  do {
    n = ::recv(socket_, buffer.data(), buffer.size(), 0);
    if (n > 0 && !Consume(buffer.data(), static_cast<size_t>(n))) return false;
  } while (n == static_cast<ssize_t>(buffer.size()) && !ended_ && !stream_closed_);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  // A peer that closes with our bytes unread resets the connection.
  if (n == 0 || (n < 0 && errno == ECONNRESET)) {
    EndWith(grpc::StatusCode::UNAVAILABLE, "Socket closed");
    return false;
  }
  if (n < 0) {
    EndWith(grpc::StatusCode::UNAVAILABLE, std::string("recv: ") + std::strerror(errno));
    return false;
  }
  return true;
}

bool UnaryExchange::Consume(const uint8_t* data, size_t size) {
  const ssize_t used = nghttp2_session_mem_recv(session_.get(), data, size);
  if (used >= 0) return true;
  EndWith(grpc::StatusCode::INTERNAL,
          std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(used)));
  return false;
}

int PollTimeout(Clock::time_point deadline, bool can_wake) {
  const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
  const int64_t most = can_wake ? INT32_MAX : StopWake::kPollWithoutWake.count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, most));
}

// Writes the frames nghttp2 has made, gathered into one send: the preface,
// settings, headers and message reach the agent in one piece, and its gRPC
// reads them in one wake-up. True unless the connection failed.
bool UnaryExchange::Flush() {
  while (true) {
    if (unsent_.empty()) {
      const uint8_t* data = nullptr;
      ssize_t n = 0;
      while ((n = nghttp2_session_mem_send(session_.get(), &data)) > 0) {
        unsent_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
      }
      if (n < 0) {
        EndWith(grpc::StatusCode::INTERNAL,
                std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
        return false;
      }
      if (unsent_.empty()) return true;
    }
    const ssize_t sent = ::send(socket_, unsent_.data(), unsent_.size(), MSG_NOSIGNAL);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) return true;  // poll() waits
    if (sent < 0) {
      // The agent closed the connection: as a read would find it, whatever
      // the write was.
      const bool closed = errno == EPIPE || errno == ECONNRESET;
      EndWith(grpc::StatusCode::UNAVAILABLE,
              closed ? std::string("Socket closed") : std::string("send: ") + std::strerror(errno));
      return false;
    }
    unsent_.erase(0, static_cast<size_t>(sent));
  }
}

bool UnaryExchange::Step(Clock::time_point deadline, const StopWake& wake,
                         const std::stop_token& stop) {
  if (!Flush()) return false;
  if (ended_ || stream_closed_) return false;
  if (unsent_.empty() && nghttp2_session_want_read(session_.get()) == 0 &&
      nghttp2_session_want_write(session_.get()) == 0) {
    EndWith(grpc::StatusCode::INTERNAL,
            "HTTP/2: the agent's side broke the protocol (" +
                (broken_.empty() ? std::string("the session ended") : broken_) + ")");
    return false;
  }
  // Also when the socket keeps being readable: the deadline is the call's.
  if (Clock::now() >= deadline) {
    EndWith(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
    return false;
  }
  const short out = unsent_.empty() ? 0 : POLLOUT;
  std::array<pollfd, 2> fds{
      {{socket_, static_cast<short>(POLLIN | out), 0}, {wake.fd(), POLLIN, 0}}};
  const int ready =
      ::poll(fds.data(), wake.fd() >= 0 ? 2 : 1, PollTimeout(deadline, wake.fd() >= 0));
  if (stop.stop_requested()) {
    EndWith(grpc::StatusCode::CANCELLED, "Cancelled");
    return false;
  }
  if (ready == 0 && Clock::now() >= deadline) {
    EndWith(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
    return false;
  }
  if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) return Receive();
  return true;
}

UnaryCallOutcome UnaryExchange::Run(std::string_view path, Clock::time_point deadline,
                                    const std::stop_token& stop) {
  const int flags = ::fcntl(socket_, F_GETFL);
  if (flags < 0 || ::fcntl(socket_, F_SETFL, flags | O_NONBLOCK) != 0 || !Start(path, deadline)) {
    return Failure(grpc::StatusCode::INTERNAL, "cannot set up an HTTP/2 session");
  }
  const StopWake wake(stop);
  while (Step(deadline, wake, stop)) {
  }
  // A polite end: the agent's gRPC sees GOAWAY rather than a connection cut.
  if (!ended_ || ended_->error_code() != grpc::StatusCode::UNAVAILABLE) {
    nghttp2_session_terminate_session(session_.get(), NGHTTP2_NO_ERROR);
    Flush();
  }
  return Outcome();
}

UnaryCallOutcome UnaryExchange::Outcome() {
  if (grpc_status_ && stream_closed_ && !too_large_) {
    if (*grpc_status_ != 0) {
      return Failure(static_cast<grpc::StatusCode>(*grpc_status_), grpc_message_);
    }
    return ReplyMessage();
  }
  if (ended_) {
    const bool lost = ended_->error_code() == grpc::StatusCode::UNAVAILABLE;
    return Failure(ended_->error_code(), ended_->error_message(), lost && !answered_);
  }
  if (reset_code_ == NGHTTP2_REFUSED_STREAM) {  // also every stream a GOAWAY left unserved
    return Failure(grpc::StatusCode::UNAVAILABLE, "the agent refused the call", true);
  }
  if (reset_code_ == NGHTTP2_CANCEL) {
    return Failure(grpc::StatusCode::CANCELLED, "Cancelled");
  }
  if (reset_code_ != NGHTTP2_NO_ERROR) {
    return Failure(grpc::StatusCode::INTERNAL,
                   std::string("stream reset: ") + nghttp2_http2_strerror(reset_code_));
  }
  if (http_status_ != 200) {
    return Failure(StatusCodeOfHttpStatus(http_status_),
                   "HTTP status " + std::to_string(http_status_));
  }
  return Failure(grpc::StatusCode::INTERNAL, "the reply ended without a gRPC status");
}

UnaryCallOutcome UnaryExchange::ReplyMessage() {
  const auto malformed = [](const char* why) { return Failure(grpc::StatusCode::INTERNAL, why); };
  if (body_.size() < kMessagePrefixBytes) {
    return malformed("No message returned for unary request");
  }
  if (body_[0] != 0) return malformed("the reply is compressed, which memprofctl did not ask for");
  if (MessageLength(body_) != body_.size() - kMessagePrefixBytes) {
    return malformed("the reply's length prefix does not match its size");
  }
  body_.erase(0, kMessagePrefixBytes);  // in place: no second copy of a large reply
  return {grpc::Status::OK, std::move(body_)};
}

}  // namespace

UnaryCallOutcome CallUnaryOverHttp2(int socket, std::string_view path, std::string_view request,
                                    std::chrono::steady_clock::time_point deadline,
                                    const std::stop_token& stop) {
  if (stop.stop_requested()) return Failure(grpc::StatusCode::CANCELLED, "Cancelled");
  UnaryExchange exchange(socket, request);
  return exchange.Run(path, deadline, stop);
}

std::string GrpcTimeoutHeader(std::chrono::milliseconds left) {
  constexpr int64_t kMaxDigits = 99'999'999;
  const int64_t ms = std::max<int64_t>(left.count(), 0);
  if (ms <= kMaxDigits) return std::to_string(ms) + "m";
  return std::to_string(std::min<int64_t>((ms + 999) / 1000, kMaxDigits)) + "S";
}

std::string PercentDecoded(std::string_view text) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      decoded.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      decoded.push_back(text[i]);
    }
  }
  return decoded;
}

grpc::StatusCode StatusCodeOfHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
      return grpc::StatusCode::INTERNAL;
    case 401:
      return grpc::StatusCode::UNAUTHENTICATED;
    case 403:
      return grpc::StatusCode::PERMISSION_DENIED;
    case 404:
      return grpc::StatusCode::UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return grpc::StatusCode::UNAVAILABLE;
    default:
      return grpc::StatusCode::UNKNOWN;
  }
}

}  // namespace memprof::cli
