#ifndef MEMPROF_CLI_DOCTOR_SAMPLER_ESTIMATE_H_
#define MEMPROF_CLI_DOCTOR_SAMPLER_ESTIMATE_H_

#include <stop_token>
#include <string_view>

#include "cli/client/profile_client.h"
#include "cli/doctor/doctor_figures.h"
#include "common/result.h"

namespace memprof::cli {

// What memprof's own sampler holds in `target`, for doctor to set beside the
// allocator's figure: its state from Status and, once it has been switched
// on, the live bytes its samples stand for, from a dump streamed into memory
// (a dump of the sampler's tables, not of the heap: bounded and cheap for
// the target). serves=false, and nothing fetched, where the allocator
// samples by itself or nothing samples.
[[nodiscard]] Result<SamplerFigures> CollectSamplerFigures(const Target& target,
                                                           ProfileClient& client,
                                                           const std::stop_token& stop);

// Reads a dump of the sampler's: the live bytes its samples stand for,
// unsampled as `report` does, and the samples it dropped, into `figures`
// (errors: the parser's, naming the dump "the sampler's dump").
[[nodiscard]] Result<void> ReadSamplerDump(std::string_view dump_text, SamplerFigures& figures);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_SAMPLER_ESTIMATE_H_
