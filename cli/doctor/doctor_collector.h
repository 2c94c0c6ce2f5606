#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_

#include <string>

#include "cli/client/profile_client.h"
#include "cli/doctor/doctor_figures.h"
#include "common/result.h"

namespace memprof::cli {

// Gathers doctor's figures for a local target: /proc/<pid>/smaps_rollup and
// smaps under `proc_root`, and the agent's Stats with the allocator's own
// report (jemalloc JSON or glibc XML). kFailedPrecondition for a remote
// target (its /proc is not here) and for an allocator that is neither.
[[nodiscard]] Result<DoctorFigures> CollectDoctorFigures(const Target& target,
                                                         ProfileClient& client,
                                                         const std::string& proc_root);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_
