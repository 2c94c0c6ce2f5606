#ifndef MEMPROF_TESTS_FUZZ_NULL_BUFFER_H_
#define MEMPROF_TESTS_FUZZ_NULL_BUFFER_H_

#include <streambuf>

namespace memprof::fuzz {

// Discards what the renderers write but keeps the stream good, so that a
// fuzz run measures the analysis and not the writing.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize count) override { return count; }
};

}  // namespace memprof::fuzz

#endif  // MEMPROF_TESTS_FUZZ_NULL_BUFFER_H_
