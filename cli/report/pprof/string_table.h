#ifndef MEMPROF_CLI_REPORT_PPROF_STRING_TABLE_H_
#define MEMPROF_CLI_REPORT_PPROF_STRING_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pprof_proto/profile.pb.h"

namespace memprof::report::pprof {

// Profile.string_table: every string once, "" at index 0 as profile.proto
// requires (so an unset index field reads as the empty string).
class StringTable {
 public:
  explicit StringTable(perftools::profiles::Profile& profile);

  // The index of `text`, appending it on first use.
  int64_t Intern(std::string_view text);

 private:
  perftools::profiles::Profile& profile_;
  // Keys view the strings in the proto's table: RepeatedPtrField stores each
  // string behind its own pointer, so they do not move when the table grows.
  std::unordered_map<std::string_view, int64_t> index_;
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_STRING_TABLE_H_
