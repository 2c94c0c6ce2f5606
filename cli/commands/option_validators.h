#ifndef MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_
#define MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace memprof::cli {

// CLI11 validators, so that bad values are usage errors (exit 2) found while
// parsing, before anything is contacted. Each says in memprofctl's words what
// was given and what is valid (CLI11 puts the option's name in front); none
// of CLI11's own ("Value abc not in range 1 to 1000000") is used.

// A duration with a unit ("30s", "5m", "1h30m") within [min, max] (ParseDuration).
CLI::Validator DurationValidator(std::chrono::milliseconds min, std::chrono::milliseconds max);

// A sample interval: a size (cli/io/byte_size.h) from 1 B to 1 GiB.
CLI::Validator SampleIntervalValidator();

// A peak capture growth: a size from 1 MiB to 1024 GiB (ParseCaptureGrowth).
CLI::Validator CaptureGrowthValidator();
// A share of the memory limit: 1% to 99% (ParseNearLimitShare).
CLI::Validator NearLimitShareValidator();

// A positive process id.
CLI::Validator PidValidator();

// A whole number of things within [min, max]: "invalid count 'abc': expected
// a whole number from 1 to 1000000" (`what`: "count", "number").
CLI::Validator CountValidator(uint64_t min, uint64_t max, const std::string& what = "count");

// One of `valid`: "unknown report format 'yaml' (valid: text, json)"
// (`what`: "report format").
CLI::Validator ChoiceValidator(std::vector<std::string> valid, const std::string& what);

// A file that exists and is not a directory: "no such file 'x.heap'".
CLI::Validator ExistingFileValidator();

// A directory that exists: "no such directory 'x'", "'x' is not a directory".
CLI::Validator ExistingDirectoryValidator();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_OPTION_VALIDATORS_H_
