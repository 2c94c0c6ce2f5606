#ifndef MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_
#define MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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
class DumpReceiver {
 public:
  using Writer = std::function<Result<void>(std::string_view data)>;

  explicit DumpReceiver(Writer write);

  // Feeds one chunk; the first error ends the dump.
  [[nodiscard]] Result<void> OnChunk(const memprof::v1::DumpChunk& chunk);

  // Call after the stream ended successfully: fails unless the trailer
  // arrived and size and SHA-256 match what was received.
  [[nodiscard]] Result<DumpSummary> Finish();

 private:
  Result<void> OnMetadata(const memprof::v1::DumpMetadata& metadata);
  Result<void> OnData(const std::string& data);
  Result<void> OnTrailer(const memprof::v1::DumpTrailer& trailer);
  // Whether the metadata gave the size: 0 means the agent streams the dump
  // while jemalloc writes it, and only the trailer knows the size.
  bool SizeAnnounced() const { return metadata_.size_bytes() != 0; }

  Writer write_;
  Sha256 hash_;
  bool have_metadata_ = false;
  bool have_trailer_ = false;
  memprof::v1::DumpMetadata metadata_;
  memprof::v1::DumpTrailer trailer_;
  uint64_t received_ = 0;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_DUMP_RECEIVER_H_
