#ifndef MEMPROF_CLI_IO_FILE_STREAMBUF_H_
#define MEMPROF_CLI_IO_FILE_STREAMBUF_H_

#include <optional>
#include <streambuf>
#include <vector>

#include "cli/io/atomic_file_writer.h"
#include "common/result.h"

namespace memprof::cli {

// A std::streambuf that hands what a renderer writes to an AtomicFileWriter
// in fixed-size pieces, so a large report (a collapsed profile can be
// hundreds of megabytes) is never held whole in memory. The first write
// error is kept (error()) and fails the stream; Finish() flushes the rest.
class FileStreamBuf final : public std::streambuf {
 public:
  static constexpr size_t kBufferBytes = 1 << 20;

  explicit FileStreamBuf(AtomicFileWriter& writer);
  FileStreamBuf(const FileStreamBuf&) = delete;
  FileStreamBuf& operator=(const FileStreamBuf&) = delete;

  // Writes what is buffered; the first error seen, if any.
  [[nodiscard]] Result<void> Finish();

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  bool Flush();

  AtomicFileWriter& writer_;
  std::vector<char> buffer_;
  std::optional<Error> error_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_FILE_STREAMBUF_H_
