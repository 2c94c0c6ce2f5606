#ifndef MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_
#define MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/client/local_dump_file.h"
#include "common/result.h"
#include "common/sha256.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// What a verified dump contained.
struct DumpSummary {
  uint64_t size_bytes = 0;
  std::string sha256_hex;
  uint64_t sample_interval_bytes = 0;
  int64_t created_unix_ms = 0;
  int32_t pid = 0;
};

// Checks a Dump stream chunk by chunk (metadata first, then data, then the
// trailer) and hands each data chunk to `write` as it arrives, so memory stays
// bounded whatever the dump size. Any violation is kDataLoss.
//
// With `local_pid` (a request with local_file to that local process), the
// metadata may name the agent's file instead: the receiver opens it
// (LocalDumpFile) and copies what each progress chunk says is written, and
// the rest when the trailer gives the size.
class DumpReceiver {
 public:
  using Writer = LocalDumpFile::Writer;

  explicit DumpReceiver(Writer write, pid_t local_pid = 0);

  // Feeds one chunk; the first error ends the dump.
  [[nodiscard]] Result<void> OnChunk(const memprof::v1::DumpChunk& chunk);

  // Call after the stream ended successfully: fails unless the trailer
  // arrived and size and SHA-256 match what was received.
  [[nodiscard]] Result<DumpSummary> Finish();

  // The agent named its file and it could not be opened (OnChunk failed with
  // the reason): the same request without local_file would still work.
  bool local_file_refused() const { return local_file_refused_; }

 private:
  Result<void> OnMetadata(const memprof::v1::DumpMetadata& metadata);
  Result<void> OnData(const std::string& data);
  Result<void> OnTrailer(const memprof::v1::DumpTrailer& trailer);
  Result<void> OnProgress(const memprof::v1::DumpProgress& progress);
  // Counts, checks, hashes and writes the next bytes of the profile.
  Result<void> Accept(std::string_view data);
  // Accepts the named file's bytes up to `end`.
  Result<void> CopyLocalUpTo(uint64_t end);
  // Whether the metadata gave the size: 0 means the agent streams the dump
  // while jemalloc writes it, and only the trailer knows the size.
  bool SizeAnnounced() const { return metadata_.size_bytes() != 0; }

  Writer write_;
  pid_t local_pid_;
  std::optional<LocalDumpFile> local_file_;
  bool local_file_refused_ = false;
  Sha256 hash_;
  bool have_metadata_ = false;
  bool have_trailer_ = false;
  memprof::v1::DumpMetadata metadata_;
  memprof::v1::DumpTrailer trailer_;
  uint64_t received_ = 0;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_
