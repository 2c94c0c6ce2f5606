#include "cli/io/file_streambuf.h"

#include <string_view>

namespace memprof::cli {

FileStreamBuf::FileStreamBuf(AtomicFileWriter& writer) : writer_(writer), buffer_(kBufferBytes) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FileStreamBuf::Flush() {
  if (error_) return false;
  const std::string_view pending(pbase(), static_cast<size_t>(pptr() - pbase()));
  if (!pending.empty()) {
    if (auto written = writer_.Write(pending); !written) error_ = written.error();
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return !error_;
}

FileStreamBuf::int_type FileStreamBuf::overflow(int_type ch) {
  if (!Flush()) return traits_type::eof();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

int FileStreamBuf::sync() { return Flush() ? 0 : -1; }

Result<void> FileStreamBuf::Finish() {
  Flush();
  if (error_) return Fail(*error_);
  return {};
}

}  // namespace memprof::cli
