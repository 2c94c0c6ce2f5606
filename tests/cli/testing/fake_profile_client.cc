#include "tests/cli/testing/fake_profile_client.h"

#include <algorithm>

#include "common/sha256.h"

namespace memprof::cli::testing {

std::vector<memprof::v1::DumpChunk> MakeDumpStream(const std::string& data, size_t chunk_size,
                                                   int32_t pid) {
  std::vector<memprof::v1::DumpChunk> chunks(1);
  auto* meta = chunks[0].mutable_metadata();
  meta->set_format("jemalloc_heap_v2");
  meta->set_size_bytes(data.size());
  meta->set_sample_interval_bytes(524288);
  meta->set_created_unix_ms(1700000000000);
  meta->set_pid(pid);
  meta->set_sequence(1);
  for (size_t at = 0; at < data.size(); at += chunk_size) {
    chunks.emplace_back().set_data(data.substr(at, std::min(chunk_size, data.size() - at)));
  }
  Sha256 hash;
  hash.Update(data);
  auto* trailer = chunks.emplace_back().mutable_trailer();
  trailer->set_size_bytes(data.size());
  trailer->set_sha256_hex(hash.FinalHex());
  return chunks;
}

}  // namespace memprof::cli::testing
