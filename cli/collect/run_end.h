#ifndef MEMPROF_CLI_COLLECT_RUN_END_H_
#define MEMPROF_CLI_COLLECT_RUN_END_H_

#include <string>

#include "cli/client/target.h"
#include "cli/targets/target_discovery.h"
#include "common/error.h"

namespace memprof::cli {

// The error that ends a long-running command (dump --every, stats --watch)
// after `progress` ("stopped after 3 dumps, kept in DIR"). If the target has
// gone away meanwhile, that is what the error says, with kNotFound (exit 3),
// whatever the failed call reported; otherwise `error` keeps its code and
// gets `progress` appended.
Error ExplainEndOfRun(Error error, const Target& target, const TargetDiscovery& discovery,
                      const std::string& progress);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_RUN_END_H_
