#ifndef MEMPROF_CLI_REPORT_PPROF_PPROF_WRITER_H_
#define MEMPROF_CLI_REPORT_PPROF_PPROF_WRITER_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/report/aggregate/symbolization.h"
#include "cli/report/model/profile.h"
#include "cli/report/symbolize/memory_map.h"
#include "common/result.h"

namespace memprof::report::pprof {

// pprof's regex (matched against whole, argument-less function names) for
// frames to cut from every stack together with the frames they called: the
// allocator entry points and jemalloc's own frames below them. Written into
// Profile.drop_frames, which pprof applies on load, so its tables start at
// the code that allocated, as jeprof's (RemoveUninterestingFrames) do.
extern const char kAllocatorDropFrames[];

struct PprofOptions {
  // Profile.time_nanos: when the dump was taken (UTC ns since the epoch).
  std::optional<int64_t> time_nanos;
  // Profile.drop_frames; "" keeps every frame.
  std::string drop_frames = kAllocatorDropFrames;
  // Read each mapped file's GNU build ID into Mapping.build_id.
  bool build_ids = true;
  // Prefix for the mapped paths when reading build IDs ("/proc/<pid>/root"
  // for a target in a container). Mapping.filename keeps the unprefixed path.
  std::string sysroot;
  // The live process the profile comes from: its files are read through
  // /proc/<pid>/map_files first (symbolize/module_file.h).
  std::optional<pid_t> pid;
  // The profile is an allocation profile over a window (`duration_nanos`
  // long, starting at time_nanos): its sample types are those of Go's
  // allocs profile, alloc_objects/count, alloc_space/bytes, inuse_objects/
  // count, inuse_space/bytes in that order, default alloc_space; inuse is
  // what survived the window.
  bool allocation_profile = false;
  std::optional<int64_t> duration_nanos;
};

// Writes `profile` as a gzipped perftools.profiles.Profile, the format of
// `pprof` and `go tool pprof`:
//  - sample types inuse_objects/count and inuse_space/bytes, then
//    alloc_objects/count and alloc_space/bytes when profile.has_alloc;
//    default_sample_type inuse_space; period_type space/bytes with the
//    dump's sample period. An allocation profile (PprofOptions::
//    allocation_profile) has the alloc types first and alloc_space as default.
//  - values are the unsampled estimates rounded to the nearest integer.
//  - one Mapping per executable entry of `mappings` (ids in input order,
//    from 1), with its build ID and has_* flags saying what symbolization
//    found for its addresses.
//  - one Location per distinct lookup address (see report::LookupAddress:
//    the leaf as recorded, every caller's return address minus one), which
//    is the address it carries: pprof symbolizes Location.address as is, so
//    a later `pprof -symbolize=local` finds the call's line, not the next.
//    Its Lines are the symbolizer's frames, innermost inlined first, which
//    is profile.proto's order; an unresolved address has no Line.
//  - Functions deduplicated by (name, system_name, filename); both names are
//    the symbolizer's demangled name (we have no other).
// The symbolizer is called once per distinct lookup address. Fails with
// kInternal if compressing or writing to `out` fails.
[[nodiscard]] Result<void> WritePprof(const report::HeapProfile& profile,
                                      aggregate::AddressSymbolizer& symbolizer,
                                      const std::vector<symbolize::MemoryMapping>& mappings,
                                      const PprofOptions& options, std::ostream& out);

// The same for a profile that is not needed after: each sample's stack is
// freed once it is in the message, whose arrays then reuse that memory
// (the stacks of a big dump are tens of megabytes). `profile` keeps its
// samples' values, with empty stacks.
[[nodiscard]] Result<void> WritePprofReleasing(report::HeapProfile& profile,
                                               aggregate::AddressSymbolizer& symbolizer,
                                               const std::vector<symbolize::MemoryMapping>& mappings,
                                               const PprofOptions& options, std::ostream& out);

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_PPROF_WRITER_H_
