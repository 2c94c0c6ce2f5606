#ifndef MEMPROF_CLI_REPORT_MERGE_ADDRESS_SPACE_H_
#define MEMPROF_CLI_REPORT_MERGE_ADDRESS_SPACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/report/symbolize/memory_map.h"

namespace memprof::report::merge {

// Where one dump's module instance moves in the shared address space: every
// address in [start, end) of the dump moves by `delta` (mod 2^64).
struct Relocation {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t delta = 0;
};

// One address space for the dumps of several processes, so that their
// stacks can be merged and symbolized by one Symbolizer.
//
// ASLR loads the same binary at a different address in every process, so a
// raw return address means nothing outside its own dump. What is the same
// in every process is (module, offset from the module's load address). A
// module instance is a run of consecutive maps lines with one path; two
// instances are the same module when the path and the layout of their
// segments (sizes, file offsets, permissions relative to the first) agree.
// A rebuilt binary at the same path has a different layout and stays apart.
//
// The first dump keeps its addresses and maps lines verbatim (so a single
// dump, or a series of one process, is not rewritten at all). A module first
// seen in a later dump keeps its addresses if they are free, else it moves
// above everything placed so far, by a multiple of 2 MiB (alignment kept).
// Addresses outside every file-backed mapping (JIT code, anonymous memory)
// are left as they are: they cannot be symbolized, and may then coincide
// with another process's unrelated address.
class AddressSpace {
 public:
  // Places the modules of one dump's MAPPED_LIBRARIES lines and returns how
  // its addresses move, sorted by start; moves of 0 are left out, so an
  // empty result means "nothing to rewrite".
  std::vector<Relocation> Place(const std::vector<std::string>& mapped_libraries);

  // The maps lines of the shared space: the first dump's, then one line per
  // mapping of each module first seen later, at its new place.
  const std::vector<std::string>& mapped_libraries() const { return lines_; }

 private:
  struct Instance {
    std::vector<symbolize::MemoryMapping> mappings;  // consecutive, same path
    uint64_t base() const { return mappings.front().start; }
    uint64_t end() const { return mappings.back().end; }
  };

  static std::vector<Instance> Instances(const std::vector<symbolize::MemoryMapping>& mappings);
  static std::string LayoutKey(const Instance& instance);
  bool IsFree(uint64_t start, uint64_t end) const;
  uint64_t NewBase(const Instance& instance) const;
  void Claim(uint64_t start, uint64_t end);
  void AddLines(const Instance& instance, uint64_t delta);

  bool first_ = true;
  std::unordered_map<std::string, uint64_t> base_by_key_;  // layout key -> shared base
  std::map<uint64_t, uint64_t> claimed_;                   // start -> end, disjoint
  std::vector<std::string> lines_;
};

// Moves the stacks of one dump by `relocations` (sorted by start): every
// address (raw return addresses, leaf first) that falls in one of them. A
// caller's return address is looked up minus one, as the symbolizer does,
// so a call that ends a mapping still counts as inside it. A direct-mapped
// cache of lookup addresses sits in front of the search, as a dump's
// million frames repeat a few thousand addresses.
class Relocator {
 public:
  explicit Relocator(std::vector<Relocation> relocations);
  void Relocate(std::vector<uint64_t>& stack);

 private:
  static constexpr unsigned kCacheBits = 13;
  static constexpr size_t kCacheSize = size_t{1} << kCacheBits;
  struct Slot {
    uint64_t lookup = 0;
    uint64_t delta = 0;
    bool valid = false;
  };

  std::vector<Relocation> relocations_;  // sorted by start
  std::vector<Slot> cache_;
};

}  // namespace memprof::report::merge

#endif  // MEMPROF_CLI_REPORT_MERGE_ADDRESS_SPACE_H_
