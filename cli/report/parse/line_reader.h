#ifndef MEMPROF_CLI_REPORT_PARSE_LINE_READER_H_
#define MEMPROF_CLI_REPORT_PARSE_LINE_READER_H_

#include <sys/types.h>

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <utility>

namespace memprof::report::parse {

// Lines of input read in chunks into one buffer that is reused: lines are
// views into it, valid until the next call to Next(). The buffer holds the
// longest line allowed and no more, so a dump of any size, or a hostile one
// without newlines, costs bounded memory. Where the chunks come from is a
// subclass's ReadMore: a stream (LineReader) or a file (FileLineReader).
// Internal to the parser.
class ChunkedLineReader {
 public:
  enum class Status {
    kLine,      // line() holds the next line, without its '\n'
    kEnd,       // no more input
    kTooLong,   // the line exceeds max_line_bytes (reading stops)
    kReadError  // reading failed (reading stops)
  };

  virtual ~ChunkedLineReader() = default;
  ChunkedLineReader(const ChunkedLineReader&) = delete;
  ChunkedLineReader& operator=(const ChunkedLineReader&) = delete;

  // The input not yet returned as lines, after filling the buffer if it is
  // empty: the first line, to tell the format by, before any Next(). Empty
  // at end of input or on a read error.
  std::string_view Peek();
  // The errno of a failed read, 0 if none failed.
  int read_error() const { return read_error_; }

  Status Next();
  std::string_view line() const { return line_; }
  // 1-based number of the line last returned (or being read on an error).
  size_t line_number() const { return line_number_; }
  // False when the last line returned ended at end of input without '\n'.
  bool had_newline() const { return had_newline_; }
  // Bytes of input consumed so far: the offset just past the last line
  // returned (and its '\n'); at the end, the size of the input.
  size_t bytes_read() const { return bytes_read_; }

 protected:
  ChunkedLineReader(size_t max_line_bytes, size_t chunk_bytes);

  // Up to `size` bytes of input into `into`: how many, 0 at its end, -1
  // (errno set) on an error.
  virtual ssize_t ReadMore(char* into, size_t size) = 0;

 private:
  bool Refill();

  size_t max_line_bytes_;
  std::string buffer_;
  size_t begin_ = 0;  // the unread bytes are [begin_, end_)
  size_t end_ = 0;
  size_t scanned_ = 0;  // bytes after begin_ known to hold no '\n'
  bool eof_ = false;
  bool failed_ = false;
  int read_error_ = 0;
  std::string_view line_;
  size_t line_number_ = 0;
  bool had_newline_ = true;
  size_t bytes_read_ = 0;
};

// A stream, 64 KiB at a time.
class LineReader final : public ChunkedLineReader {
 public:
  LineReader(std::istream& in, size_t max_line_bytes);

 private:
  ssize_t ReadMore(char* into, size_t size) override;

  std::istream& in_;
};

// The same line splitting over text already in memory (an inflated dump):
// lines are views into it, nothing is copied. Same statuses and line
// numbers as the chunked readers, so all drive the parser alike.
class BufferLineReader {
 public:
  using Status = ChunkedLineReader::Status;

  BufferLineReader(std::string_view text, size_t max_line_bytes)
      : rest_(text), size_(text.size()), max_line_bytes_(max_line_bytes) {}

  Status Next();
  std::string_view line() const { return line_; }
  size_t line_number() const { return line_number_; }
  bool had_newline() const { return had_newline_; }
  size_t bytes_read() const { return size_ - rest_.size(); }

 private:
  std::string_view rest_;
  size_t size_;
  size_t max_line_bytes_;
  std::string_view line_;
  size_t line_number_ = 0;
  bool had_newline_ = true;
};

// A file read with read(2), 1 MiB at a time. A dump of any size costs the
// buffer and no mapping. On a VM, putting a file's pages into page tables
// (mmap, then a fault or MADV_POPULATE_READ per page) cost twice the whole
// parse; copying them costs a fraction (docs/performance.md).
class FileLineReader final : public ChunkedLineReader {
 public:
  // `fd` stays the caller's; reading starts where its offset is.
  FileLineReader(int fd, size_t max_line_bytes);

 private:
  ssize_t ReadMore(char* into, size_t size) override;

  int fd_;
};

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_LINE_READER_H_
