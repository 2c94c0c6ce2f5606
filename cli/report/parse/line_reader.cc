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

LineReader::LineReader(std::istream& in, size_t max_line_bytes)
    : in_(in), max_line_bytes_(max_line_bytes), buffer_(kBufferBytes, '\0') {}

// Reads the next chunk into the buffer; false at end of input or on error.
bool LineReader::Refill() {
  if (eof_ || failed_) return false;
  in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  std::streamsize got = in_.gcount();
  if (in_.bad()) failed_ = true;
  if (in_.eof() || got == 0) eof_ = true;
  begin_ = 0;
  end_ = static_cast<size_t>(std::max<std::streamsize>(got, 0));
  return end_ > 0;
}

LineReader::Status LineReader::Next() {
  line_.clear();
  ++line_number_;
  for (;;) {
    if (begin_ == end_ && !Refill()) {
      if (failed_) return Status::kReadError;
      had_newline_ = false;
      return line_.empty() ? Status::kEnd : Status::kLine;
    }
    const char* start = buffer_.data() + begin_;
    size_t available = end_ - begin_;
    const void* found = std::memchr(start, '\n', available);
    size_t take = found ? static_cast<size_t>(static_cast<const char*>(found) - start) : available;
    if (line_.size() + take > max_line_bytes_) return Status::kTooLong;
    line_.append(start, take);
    begin_ += take;
    bytes_read_ += take;
    if (found != nullptr) {
      ++begin_;  // the '\n'
      ++bytes_read_;
      had_newline_ = true;
      return Status::kLine;
    }
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

FileLineReader::FileLineReader(int fd, size_t max_line_bytes)
    : fd_(fd),
      max_line_bytes_(max_line_bytes),
      // Room for a whole line of the longest length allowed and its '\n'.
      buffer_(std::max(kFileBufferBytes, max_line_bytes + 2), '\0') {}

// Moves the unread bytes to the front and reads after them; false at end
// of input or on error.
bool FileLineReader::Refill() {
  if (eof_ || failed_) return false;
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  for (;;) {
    const ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got < 0 && errno == EINTR) continue;
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
}

std::string_view FileLineReader::Peek() {
  if (begin_ == end_) Refill();
  return {buffer_.data() + begin_, end_ - begin_};
}

FileLineReader::Status FileLineReader::Next() {
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
