#ifndef MEMPROF_CLI_REPORT_PPROF_GZIP_WRITER_H_
#define MEMPROF_CLI_REPORT_PPROF_GZIP_WRITER_H_

#include <zlib.h>

#include <cstddef>
#include <ostream>
#include <span>
#include <streambuf>

#include "common/result.h"

namespace memprof::report::pprof {

// Compresses a byte stream into `out` as one gzip member (RFC 1952), the
// container profile.proto requires on disk ("the serialized proto must be
// gzip-compressed"). Output is written as zlib produces it, so memory stays
// one buffer whatever the size. Not copyable: it owns a z_stream.
class GzipWriter {
 public:
  // Call ok() before use: deflateInit2 can fail (out of memory).
  explicit GzipWriter(std::ostream& out);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  [[nodiscard]] Result<void> Write(std::span<const std::byte> data);
  // Writes the gzip trailer and flushes `out`. Write after Finish fails.
  [[nodiscard]] Result<void> Finish();

 private:
  Result<void> Deflate(int flush);
  Result<void> Drain();

  std::ostream& out_;
  z_stream stream_{};
  bool initialized_ = false;
  bool finished_ = false;
  unsigned char buffer_[64 * 1024];
};

// A stream buffer that compresses whatever is written to it through a
// GzipWriter, for code that writes to an ostream (a ChunkWriter on its own
// thread). No buffer of its own: each write goes to zlib as it comes. The
// first error is kept, and the stream goes bad with it.
class GzipStreamBuffer final : public std::streambuf {
 public:
  explicit GzipStreamBuffer(GzipWriter& gzip) : gzip_(gzip) {}
  const Result<void>& result() const { return result_; }

 protected:
  std::streamsize xsputn(const char* data, std::streamsize size) override;
  int_type overflow(int_type c) override;

 private:
  GzipWriter& gzip_;
  Result<void> result_;
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_GZIP_WRITER_H_
