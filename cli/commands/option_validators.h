#ifndef MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_
#define MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>

namespace memprof::cli {

// CLI11 validators, so that bad values are usage errors (exit 2) found while
// parsing, before anything is contacted.

// A duration with a unit ("30s", "5m", "1h30m") within [min, max] (ParseDuration).
CLI::Validator DurationValidator(std::chrono::milliseconds min, std::chrono::milliseconds max);

// A sample interval: a size (cli/io/byte_size.h) from 1 B to 1 GiB.
CLI::Validator SampleIntervalValidator();

// A peak capture growth: a size from 1 MiB to 1024 GiB (ParseCaptureGrowth).
CLI::Validator CaptureGrowthValidator();

// A positive process id.
CLI::Validator PidValidator();

// A whole number of things (--count) within [min, max].
CLI::Validator CountValidator(uint64_t min, uint64_t max);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_
