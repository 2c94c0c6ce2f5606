#include "cli/report/parse/line_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace memprof::report::parse {
namespace {

constexpr size_t kBufferBytes = 64 * 1024;
// FileLineReader's: a few hundred reads for a big dump, and small enough to
// stay in the cache between the read and the parse.
constexpr size_t kFileBufferBytes = size_t{1} << 20;

}  // namespace

ChunkedLineReader::ChunkedLineReader(size_t max_line_bytes, size_t chunk_bytes)
    : max_line_bytes_(max_line_bytes),
      // Room for a whole line of the longest length allowed and its '\n'.
      buffer_(std::max(chunk_bytes, max_line_bytes + 2), '\0') {}

LineReader::LineReader(std::istream& in, size_t max_line_bytes)
    : ChunkedLineReader(max_line_bytes, kBufferBytes), in_(in) {}

ssize_t LineReader::ReadMore(char* into, size_t size) {
  in_.read(into, static_cast<std::streamsize>(size));
  const std::streamsize got = in_.gcount();
  if (got > 0) return got;
  if (!in_.bad()) return 0;
  errno = EIO;
  return -1;
}

FileLineReader::FileLineReader(int fd, size_t max_line_bytes)
    : ChunkedLineReader(max_line_bytes, kFileBufferBytes), fd_(fd) {}

ssize_t FileLineReader::ReadMore(char* into, size_t size) {
  for (;;) {
    const ssize_t got = ::read(fd_, into, size);
    if (got >= 0 || errno != EINTR) return got;
  }
}

BufferLineReader::Status BufferLineReader::Next() {
  ++line_number_;
  if (rest_.empty()) {
    had_newline_ = false;
    return Status::kEnd;
  }
  const void* found = std::memchr(rest_.data(), '\n', rest_.size());
  size_t length = found != nullptr
                      ? static_cast<size_t>(static_cast<const char*>(found) - rest_.data())
                      : rest_.size();
  if (length > max_line_bytes_) return Status::kTooLong;
  line_ = rest_.substr(0, length);
  had_newline_ = found != nullptr;
  rest_.remove_prefix(found != nullptr ? length + 1 : length);
  return Status::kLine;
}

// Moves the unread bytes to the front and reads after them; false at end
// of input or on error.
bool ChunkedLineReader::Refill() {
  if (eof_ || failed_) return false;
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  const ssize_t got = ReadMore(buffer_.data() + end_, buffer_.size() - end_);
  if (got < 0) {
    failed_ = true;
    read_error_ = errno;
  }
  if (got <= 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(got);
  return true;
}

std::string_view ChunkedLineReader::Peek() {
  if (begin_ == end_) Refill();
  return {buffer_.data() + begin_, end_ - begin_};
}

ChunkedLineReader::Status ChunkedLineReader::Next() {
  ++line_number_;
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const size_t available = end_ - begin_;
    const void* found = std::memchr(start + scanned_, '\n', available - scanned_);
    if (found != nullptr) {
      const auto length = static_cast<size_t>(static_cast<const char*>(found) - start);
      if (length > max_line_bytes_) return Status::kTooLong;
      line_ = {start, length};
      begin_ += length + 1;
      bytes_read_ += length + 1;
      scanned_ = 0;
      had_newline_ = true;
      return Status::kLine;
    }
    scanned_ = available;
    if (available > max_line_bytes_) return Status::kTooLong;
    if (!Refill()) {
      if (failed_) return Status::kReadError;
      had_newline_ = false;
      if (available == 0) return Status::kEnd;
      line_ = {buffer_.data() + begin_, available};
      begin_ = end_;
      bytes_read_ += available;
      scanned_ = 0;
      return Status::kLine;
    }
  }
}

}  // namespace memprof::report::parse
