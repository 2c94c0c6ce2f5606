#include "cli/report/pprof/gzip_writer.h"

#include <algorithm>
#include <limits>
#include <string>

namespace memprof::report::pprof {
namespace {

// windowBits 15 + 16 asks zlib for a gzip header and trailer instead of a
// zlib one; memLevel 8 is zlib's default.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;
// Level 6 (zlib's default) costs about twice level 1 for a few percent
// smaller profiles; profiles are written once and read a few times, but the
// write is on the user's critical path, so favour speed.
constexpr int kLevel = 1;

Error ZlibError(const char* what, int code) {
  return Error(ErrorCode::kInternal,
               std::string("gzip: ") + what + " failed (zlib error " + std::to_string(code) + ")");
}

}  // namespace

GzipWriter::GzipWriter(std::ostream& out) : out_(out) {
  initialized_ = deflateInit2(&stream_, kLevel, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                              Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipWriter::~GzipWriter() {
  if (initialized_) deflateEnd(&stream_);
}

Result<void> GzipWriter::Write(std::span<const std::byte> data) {
  if (!initialized_) return Fail(ZlibError("deflateInit2", Z_MEM_ERROR));
  if (finished_) return Fail(ErrorCode::kInternal, "gzip: write after finish");
  // avail_in is a uInt: feed very large spans in pieces.
  constexpr size_t kMaxChunk = std::numeric_limits<uInt>::max();
  while (!data.empty()) {
    size_t chunk = std::min(data.size(), kMaxChunk);
    // zlib's API predates const; deflate only reads next_in.
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data()));
    stream_.avail_in = static_cast<uInt>(chunk);
    if (Result<void> done = Deflate(Z_NO_FLUSH); !done) return done;
    data = data.subspan(chunk);
  }
  return {};
}

Result<void> GzipWriter::Finish() {
  if (!initialized_) return Fail(ZlibError("deflateInit2", Z_MEM_ERROR));
  if (finished_) return {};
  stream_.next_in = nullptr;
  stream_.avail_in = 0;
  if (Result<void> done = Deflate(Z_FINISH); !done) return done;
  finished_ = true;
  out_.flush();
  if (!out_) return Fail(ErrorCode::kInternal, "writing the pprof profile failed");
  return {};
}

// Runs deflate until it has taken all input (Z_NO_FLUSH) or written the
// whole stream (Z_FINISH), draining the output buffer after every call.
Result<void> GzipWriter::Deflate(int flush) {
  while (true) {
    stream_.next_out = buffer_;
    stream_.avail_out = sizeof(buffer_);
    int code = deflate(&stream_, flush);
    if (code == Z_STREAM_ERROR) return Fail(ZlibError("deflate", code));
    if (Result<void> drained = Drain(); !drained) return drained;
    if (flush == Z_FINISH ? code == Z_STREAM_END : stream_.avail_in == 0 && stream_.avail_out != 0)
      return {};
  }
}

Result<void> GzipWriter::Drain() {
  size_t produced = sizeof(buffer_) - stream_.avail_out;
  out_.write(reinterpret_cast<const char*>(buffer_), static_cast<std::streamsize>(produced));
  if (!out_) return Fail(ErrorCode::kInternal, "writing the pprof profile failed");
  return {};
}

std::streamsize GzipStreamBuffer::xsputn(const char* data, std::streamsize size) {
  if (!result_) return 0;
  result_ = gzip_.Write(std::as_bytes(std::span(data, static_cast<size_t>(size))));
  return result_ ? size : 0;
}

GzipStreamBuffer::int_type GzipStreamBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char byte = traits_type::to_char_type(c);
  return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
}

}  // namespace memprof::report::pprof
