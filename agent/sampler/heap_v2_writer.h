#ifndef MEMPROF_AGENT_SAMPLER_HEAP_V2_WRITER_H_
#define MEMPROF_AGENT_SAMPLER_HEAP_V2_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/sampler/live_table.h"
#include "agent/sampler/stack_table.h"

namespace memprof::agent {

// Where a TextWriter can send text besides a descriptor: jemalloc's write
// callback's shape (`text` ends in NUL), which the allocation profile's
// writer takes (agent/heap/allocation_profile_writer.h).
using TextSink = void (*)(void* opaque, const char* text);

// Buffered writes from a fixed buffer on the stack, into a descriptor or a
// TextSink: a dump runs while the hooks may fire, so it never allocates.
class TextWriter {
 public:
  explicit TextWriter(int fd) : fd_(fd) {}
  TextWriter(TextSink sink, void* opaque) : sink_(sink), opaque_(opaque) {}
  void Put(std::string_view text);
  void Decimal(uint64_t value);
  void Hex(uint64_t value);  // "0x…", lower case, as jemalloc writes addresses
  bool Flush();              // false once any write failed
  uint64_t written() const { return written_; }
  int error() const { return error_; }

 private:
  static constexpr size_t kCapacity = 8192;

  int fd_ = -1;
  TextSink sink_ = nullptr;
  void* opaque_ = nullptr;
  size_t used_ = 0;
  uint64_t written_ = 0;
  int error_ = 0;
  char buffer_[kCapacity + 1];  // + the NUL a sink is handed
};

// Writes the live samples as a jemalloc heap_v2 profile, the format `report`
// reads (cli/report/parse/heap_v2_parser.h):
//   heap_v2/<interval>
//   # memprof_sampler since_unix_ms=<ms> dropped=<count>
//     t*: <objects>: <bytes> [0: 0]
//   @ 0x<leaf> 0x<caller> …
//     t*: <objects>: <bytes> [0: 0]
//   …
//   (blank line)
//   MAPPED_LIBRARIES:
//   <the lines of /proc/self/maps>
// Each stack's counts are the real sizes of its live samples, as jemalloc's
// are; report unsamples them with the interval. `scratch` holds one Totals
// per stack slot (stacks.capacity()). Returns false with errno in
// writer.error() if a write fails.
struct StackTotals {
  uint64_t objects;
  uint64_t bytes;
};
// What the profile covers, on the line after the header, which jeprof skips
// and `report` prints (cli/report/model/profile.h, SamplerCoverage):
//   # memprof_sampler since_unix_ms=<ms> dropped=<samples the tables had no room for>
struct ProfileCoverage {
  int64_t since_unix_ms = 0;
  uint64_t dropped = 0;
};
bool WriteHeapV2(TextWriter& writer, uint64_t interval, const ProfileCoverage& coverage,
                 const LiveTable& live, const StackTable& stacks, StackTotals* scratch);

// Copies /proc/self/maps after the "MAPPED_LIBRARIES:" line.
bool WriteMappedLibraries(TextWriter& writer);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_HEAP_V2_WRITER_H_
