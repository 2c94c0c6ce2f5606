#include "cli/launch/malloc_conf.h"

#include <algorithm>
#include <utility>

namespace memprof::cli {
namespace {

struct Entry {
  std::string key;
  std::string text;  // the whole "key:value" (or the malformed entry as is)
};

std::vector<Entry> SplitConf(std::string_view conf) {
  std::vector<Entry> entries;
  while (!conf.empty()) {
    const size_t comma = conf.find(',');
    const std::string_view item = conf.substr(0, comma);
    conf.remove_prefix(comma == std::string_view::npos ? conf.size() : comma + 1);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    entries.push_back({std::string(item.substr(0, colon)), std::string(item)});
  }
  return entries;
}

// Replaces an existing entry with the same key in place, or appends.
void Upsert(std::vector<Entry>& entries, Entry entry) {
  auto same = [&](const Entry& e) { return e.key == entry.key && e.key != e.text; };
  auto it = std::find_if(entries.begin(), entries.end(), same);
  if (it != entries.end() && entry.key != entry.text) {
    *it = std::move(entry);
  } else {
    entries.push_back(std::move(entry));
  }
}

}  // namespace

MergedMallocConf MergeMallocConf(std::string_view user_conf) {
  MergedMallocConf merged;
  std::vector<Entry> entries = SplitConf(kProfilingMallocConf);
  for (Entry& entry : SplitConf(user_conf)) {
    if (entry.key == "prof" && entry.text != "prof:true") {
      merged.warnings.push_back("ignoring '" + entry.text + "' from MALLOC_CONF: memprofctl run " +
                                "needs prof:true (sampling stays off until `memprofctl activate`)");
      continue;
    }
    Upsert(entries, std::move(entry));
  }
  for (const Entry& entry : entries) {
    if (!merged.value.empty()) merged.value += ',';
    merged.value += entry.text;
  }
  return merged;
}

}  // namespace memprof::cli
