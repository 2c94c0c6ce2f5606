#ifndef MEMPROF_CLI_REPORT_PPROF_FILE_WORK_QUEUE_H_
#define MEMPROF_CLI_REPORT_PPROF_FILE_WORK_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/report/aggregate/symbolization.h"
#include "cli/report/symbolize/memory_map.h"

namespace memprof::report::pprof {

// The addresses of one mapped file (or of no file), resolved by one worker.
struct FileWork {
  std::string path;                 // "" for addresses in no file
  uint64_t prepare_pc = 0;          // an address in its code, for Symbolizer::Prepare
  uint64_t code_bytes = 0;          // the size of its executable mappings
  uint64_t prepare_cost = 0;        // CostFunction's, else code_bytes
  std::optional<size_t> owner;      // the worker that prepared it, if one did
  bool taken = false;               // a worker is resolving it (or has)
  std::vector<uint64_t> addresses;  // lookup addresses, distinct
  std::vector<std::vector<aggregate::Frame>> frames;  // parallel to addresses
};

// Who symbolizes which file, in two phases. Before the addresses are known
// (the caller is still reading the profile), workers claim the files with
// the most code first and prepare them (only those that cost at least
// `min_early_cost`: a file cheaper to open than that is opened only once an
// address needs it), then resolve ahead the addresses the caller offers as
// it meets them that lie in files they prepared; once SetAddresses has
// shared all the addresses out by file, each worker resolves the files it
// prepared, then takes the unclaimed ones, those with the most addresses
// first. A file is only ever in one worker's hands: a libdwfl session is
// not thread-safe, and opening a file is the costly part. Thread-safe.
class FileWorkQueue {
 public:
  // What preparing a file costs, in no particular unit (PrepareCost in
  // parallel_symbolizer.cc); the files are prepared costliest first.
  using CostFunction = std::function<uint64_t(const FileWork&)>;

  // Without `cost`, a file's cost is its code_bytes.
  explicit FileWorkQueue(std::vector<symbolize::MemoryMapping> mappings, CostFunction cost = {},
                         uint64_t min_early_cost = 0);

  // Before SetAddresses: the prepare_pc of the next unclaimed file that
  // costs at least min_early_cost, now `worker`'s; nullopt when none is
  // left (or SetAddresses or Stop ran).
  std::optional<uint64_t> ClaimToPrepare(size_t worker);
  // Before SetAddresses: lookup addresses of the profile met so far, each
  // once over all calls, for the workers to resolve ahead.
  void Offer(std::span<const uint64_t> addresses);
  // For `worker` once it has nothing left to prepare: the offered
  // addresses it has not been given yet that lie in files it prepared
  // (maybe none), waiting for an offer if there is nothing new; nullopt
  // once SetAddresses or Stop ran.
  std::optional<std::vector<uint64_t>> TakeOffered(size_t worker);
  // Groups `addresses` (duplicates allowed) by file and wakes the workers.
  void SetAddresses(std::span<const uint64_t> addresses);
  // No addresses will come: waiting workers return.
  void Stop();
  // After SetAddresses: the next file for `worker` to resolve, or nullptr.
  FileWork* NextToResolve(size_t worker);

  // Every file; read once the workers are done.
  std::vector<FileWork>& files() { return files_; }

 private:
  // Orders files_ by cost_, once, when the first worker claims a file: on
  // that worker's thread, since costing a file may read it. Then fills
  // mapping_files_.
  void OrderByCost();
  void SortByCost();
  // The index in sorted_ of the mapping that holds `address`, if one does.
  std::optional<size_t> MappingOf(uint64_t address) const;
  // The file of `address` (an index into files_), if it is in one with code.
  // Once OrderByCost ran.
  std::optional<size_t> FileOf(uint64_t address) const;

  std::vector<symbolize::MemoryMapping> sorted_;  // a copy, by start
  std::vector<FileWork> files_;  // costliest first, then files met in the addresses
  CostFunction cost_;
  uint64_t min_early_cost_;
  bool ordered_ = false;
  std::vector<std::optional<size_t>> mapping_files_;  // per sorted_ mapping, its file

  std::vector<size_t> resolve_order_;  // indexes into files_, most addresses first
  std::vector<uint64_t> offered_;      // Offer's addresses, in order
  std::vector<size_t> offered_taken_;  // per worker, how many of them it was given
  std::mutex mutex_;
  std::condition_variable addresses_set_;  // SetAddresses, Stop or Offer
  bool ready_ = false;                     // SetAddresses or Stop ran
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_FILE_WORK_QUEUE_H_
