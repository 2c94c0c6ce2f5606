#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_

#include <chrono>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/doctor/doctor_figures.h"
#include "common/result.h"

namespace memprof::cli {

// How long doctor watches the heap for growth: long enough for a steady
// growth to show in each half, short enough for a command an SRE waits for.
inline constexpr std::chrono::milliseconds kDoctorWatch = std::chrono::seconds(2);

// A watch of the heap: three readings of the allocator's summary, at the
// start, the middle and the end of `interval` (0: one reading, growth not
// watched). `stop` ends the wait early (kCancelled).
struct GrowthWatch {
  std::chrono::milliseconds interval{0};
  std::stop_token stop;
};

// Gathers doctor's figures for a local target: the agent's Stats, watched
// over `watch`, the last with the allocator's own report (jemalloc JSON,
// glibc XML, tcmalloc's properties), what memprof's own sampler estimates
// where it serves (sampler_estimate.h), then /proc/<pid>/smaps under
// `proc_root`. kFailedPrecondition for a remote target (its /proc is not
// here) and for an allocator doctor does not know.
[[nodiscard]] Result<DoctorFigures> CollectDoctorFigures(const Target& target,
                                                         ProfileClient& client,
                                                         const std::string& proc_root,
                                                         const GrowthWatch& watch = {});

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_COLLECTOR_H_
