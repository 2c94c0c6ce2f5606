#include "cli/report/parse/line_reader.h"

#include <algorithm>
#include <cstring>

namespace memprof::report::parse {
namespace {

constexpr size_t kBufferBytes = 64 * 1024;

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
  if (progress_ && bytes_read() >= next_progress_) {
    progress_(bytes_read());
    next_progress_ = bytes_read() + kProgressStep;
  }
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

}  // namespace memprof::report::parse
