#include "tests/cli/report/pprof/test_support.h"

#include <gtest/gtest.h>
#include <zlib.h>

namespace memprof::report::pprof::testing {

std::string Gunzip(const std::string& compressed) {
  z_stream stream{};
  // 15 + 16: accept only a gzip header, which is what profile.proto asks for.
  if (inflateInit2(&stream, 15 + 16) != Z_OK) {
    ADD_FAILURE() << "inflateInit2 failed";
    return "";
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int code = Z_OK;
  while (code == Z_OK) {
    char buffer[64 * 1024];
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    code = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  inflateEnd(&stream);
  EXPECT_EQ(code, Z_STREAM_END) << "not a complete gzip stream";
  EXPECT_EQ(stream.avail_in, 0u) << "bytes after the gzip member";
  return code == Z_STREAM_END ? out : "";
}

perftools::profiles::Profile DecodeProfile(const std::string& gzipped) {
  perftools::profiles::Profile profile;
  EXPECT_TRUE(profile.ParseFromString(Gunzip(gzipped))) << "not a perftools.profiles.Profile";
  return profile;
}

}  // namespace memprof::report::pprof::testing
