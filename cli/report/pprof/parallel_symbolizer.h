#ifndef MEMPROF_CLI_REPORT_PPROF_PARALLEL_SYMBOLIZER_H_
#define MEMPROF_CLI_REPORT_PPROF_PARALLEL_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/model/profile.h"
#include "cli/report/pprof/dwfl_address_symbolizer.h"
#include "cli/report/pprof/file_work_queue.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/symbolizer.h"
#include "cli/report/symbolize/symbolizer_options.h"

namespace memprof::report::pprof {

// Symbolizes every address a profile will ask for before the reports run,
// on several threads, then answers Resolve from what it found.
//
// libdwfl sessions are not thread-safe, so each worker owns a Symbolizer of
// its own, and the work is split by mapped file (FileWorkQueue): a file's
// addresses all go to one worker, which alone opens it and reads its symbols
// and DWARF (the costly part: symbol tables of libLLVM-sized libraries,
// compressed separate debug files). The workers start at construction and
// open the files with the most code while the caller still reads the
// profile; ResolveAll then shares the addresses out. The answers are those
// of one DwflAddressSymbolizer over the same maps. The calling thread works
// with `symbolizer`, which then also answers addresses that were not
// resolved beforehand.
class ParallelSymbolizer final : public aggregate::AddressSymbolizer {
 public:
  // Starts `threads` - 1 workers (none for 0 or 1). `symbolizer` must be
  // made from the same mappings and options.
  ParallelSymbolizer(symbolize::Symbolizer symbolizer,
                     const std::vector<symbolize::MemoryMapping>& mappings,
                     const symbolize::SymbolizerOptions& options, unsigned threads);
  // The same, then ResolveAll(addresses).
  ParallelSymbolizer(symbolize::Symbolizer symbolizer,
                     const std::vector<symbolize::MemoryMapping>& mappings,
                     const symbolize::SymbolizerOptions& options,
                     std::span<const uint64_t> addresses, unsigned threads);
  ~ParallelSymbolizer() override;  // stops the workers when ResolveAll never ran

  // Before ResolveAll, while the profile is read: lookup addresses met so
  // far (each once over all calls), which the workers resolve ahead in the
  // files they have opened. Every one of them must be among ResolveAll's:
  // resolving an address marks its file as needed.
  void Offer(std::span<const uint64_t> addresses);
  // Resolves `addresses` (lookup addresses, report::LookupAddress;
  // duplicates allowed) on every thread. Once.
  void ResolveAll(std::span<const uint64_t> addresses);

  std::span<const aggregate::Frame> Resolve(uint64_t address) override;
  // What every thread found about the files it opened, one entry per path.
  std::vector<symbolize::ModuleReport> Modules() const;

 private:
  symbolize::Symbolizer symbolizer_;
  DwflAddressSymbolizer adapter_;  // over symbolizer_
  absl::flat_hash_map<uint64_t, std::vector<aggregate::Frame>> frames_;
  std::vector<symbolize::ModuleReport> worker_modules_;
  std::unique_ptr<FileWorkQueue> queue_;
  std::vector<std::vector<symbolize::ModuleReport>> modules_of_;  // per worker
  std::vector<std::optional<symbolize::Symbolizer>> kept_;        // per worker, once done
  std::vector<std::jthread> workers_;
};

// Every distinct lookup address of `profile`'s stacks, in no particular order.
std::vector<uint64_t> DistinctLookupAddresses(const report::HeapProfile& profile);

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_PARALLEL_SYMBOLIZER_H_
