#ifndef MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_
#define MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_

#include <string>
#include <string_view>
#include <vector>

namespace memprof::cli {

// What `memprofctl run` needs in MALLOC_CONF for profiling to be possible
// later without sampling now.
inline constexpr char kProfilingMallocConf[] = "prof:true,prof_active:false";

struct MergedMallocConf {
  std::string value;                  // the MALLOC_CONF to start CMD with
  std::vector<std::string> warnings;  // for the user, one sentence each
};

// Merges kProfilingMallocConf with the user's MALLOC_CONF ("key:value,..."):
// the user's keys win (prof_active:true, lg_prof_sample:17, ...) and keep
// their order after ours, except `prof`, which must stay true (overriding it
// produces a warning). Entries without ':' are passed through for jemalloc to
// judge. Pure function.
MergedMallocConf MergeMallocConf(std::string_view user_conf);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_
