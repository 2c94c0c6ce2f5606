#include "cli/report/parse/gzip_input.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace memprof::report::parse {
namespace {

constexpr size_t kChunkBytes = 1u << 20;
constexpr int kGzipOnly = 16 + MAX_WBITS;  // inflate a gzip header, not zlib's

struct InflateEnd {
  void operator()(z_stream* stream) const { inflateEnd(stream); }
};

std::unexpected<Error> Bad(std::string_view source_name, const std::string& what) {
  return Fail(ErrorCode::kInvalidArgument, std::string(source_name) + ": " + what);
}

}  // namespace

bool IsGzip(std::string_view data) { return data.starts_with("\x1f\x8b"); }

Result<std::string> Gunzip(std::string_view data, std::string_view source_name,
                           size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipOnly) != Z_OK) {
    return Fail(ErrorCode::kInternal, std::string(source_name) + ": cannot start zlib");
  }
  std::unique_ptr<z_stream, InflateEnd> owner(&stream);
  const size_t compressed_bytes = data.size();
  std::string text;
  // zlib counts in uInt: feed large inputs a piece at a time.
  auto feed = [&] {
    stream.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT_MAX));
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  };
  feed();
  for (;;) {
    const size_t before = text.size();
    if (before >= max_bytes) {
      return Bad(source_name, "gzip'd dump inflates to more than " + std::to_string(max_bytes) +
                                  " bytes (the parser's limit; a gzip bomb?)");
    }
    const size_t room = std::min(kChunkBytes, max_bytes - before);
    text.resize(before + room);
    stream.next_out = reinterpret_cast<Bytef*>(text.data() + before);
    stream.avail_out = static_cast<uInt>(room);
    const uInt fed = stream.avail_in;
    const int status = inflate(&stream, Z_NO_FLUSH);
    text.resize(before + room - stream.avail_out);
    data.remove_prefix(fed - stream.avail_in);
    if (status == Z_STREAM_END) {
      if (!IsGzip(data)) break;  // trailing zeros or nothing: the end
      inflateReset(&stream);     // another member follows
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      return Bad(source_name, std::string("not a valid gzip file: ") +
                                  (stream.msg != nullptr ? stream.msg : "corrupt data"));
    } else if (data.empty() && stream.avail_in == 0 && stream.avail_out != 0) {
      return Bad(source_name, "gzip'd dump is cut short: truncated at byte " +
                                  std::to_string(compressed_bytes) + " of its compressed data");
    }
    if (stream.avail_in == 0) feed();
  }
  return text;
}

std::string GunzipPrefix(std::string_view data, size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipOnly) != Z_OK) return {};
  std::unique_ptr<z_stream, InflateEnd> owner(&stream);
  std::string text(max_bytes, '\0');
  stream.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT_MAX));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.next_out = reinterpret_cast<Bytef*>(text.data());
  stream.avail_out = static_cast<uInt>(std::min<size_t>(max_bytes, UINT_MAX));
  const int status = inflate(&stream, Z_SYNC_FLUSH);
  if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) return {};
  text.resize(text.size() - stream.avail_out);
  return text;
}

}  // namespace memprof::report::parse
