#ifndef MEMPROF_TESTS_SUPPORT_OCCURRENCES_H_
#define MEMPROF_TESTS_SUPPORT_OCCURRENCES_H_

#include <cstddef>
#include <string_view>

namespace memprof::test_support {

// How many times `needle` (not empty) occurs in `text`, without overlaps: how
// often a command printed a line, a frame, a redraw.
inline size_t CountOccurrences(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_OCCURRENCES_H_
