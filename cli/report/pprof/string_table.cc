#include "cli/report/pprof/string_table.h"

namespace memprof::report::pprof {

StringTable::StringTable(perftools::profiles::Profile& profile) : profile_(profile) {
  profile_.clear_string_table();
  Intern("");
}

int64_t StringTable::Intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end()) return it->second;
  std::string* stored = profile_.add_string_table();
  stored->assign(text);
  auto index = static_cast<int64_t>(profile_.string_table_size() - 1);
  index_.emplace(*stored, index);
  return index;
}

}  // namespace memprof::report::pprof
