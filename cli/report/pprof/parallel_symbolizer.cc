#include "cli/report/pprof/parallel_symbolizer.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "cli/report/symbolize/module_file.h"

namespace memprof::report::pprof {
namespace {

// What a worker resolved ahead, while the profile was still being read.
using EarlyFrames = absl::flat_hash_map<uint64_t, std::vector<aggregate::Frame>>;

// One thread's share: the files `queue` gives `worker`, resolved with
// `symbolizer` unless `early` has them already.
void ResolveFiles(aggregate::AddressSymbolizer& symbolizer, FileWorkQueue& queue, size_t worker,
                  EarlyFrames* early = nullptr) {
  while (FileWork* file = queue.NextToResolve(worker)) {
    file->frames.reserve(file->addresses.size());
    for (uint64_t address : file->addresses) {
      if (early != nullptr) {
        if (auto it = early->find(address); it != early->end()) {
          file->frames.push_back(std::move(it->second));
          continue;
        }
      }
      std::span<const aggregate::Frame> frames = symbolizer.Resolve(address);
      file->frames.emplace_back(frames.begin(), frames.end());
    }
  }
}

// The addresses offered while the profile is read that lie in the files
// `worker` prepared, resolved into `early` until the addresses are all in.
void ResolveOffered(aggregate::AddressSymbolizer& symbolizer, FileWorkQueue& queue, size_t worker,
                    EarlyFrames& early) {
  while (std::optional<std::vector<uint64_t>> offered = queue.TakeOffered(worker)) {
    for (uint64_t address : *offered) {
      std::span<const aggregate::Frame> frames = symbolizer.Resolve(address);
      early.try_emplace(address, frames.begin(), frames.end());
    }
  }
}

// A byte of debug file costs about 40 times a byte of code to prepare:
// libc's 4 MiB compressed debug file (inflated, then its address ranges
// read) takes 35-50 ms here, libLLVM's 100 MiB of code with 80,000
// exported symbols about 25 ms.
constexpr uint64_t kDebugFileWeight = 40;

// Before the addresses are known, only files at least this costly are
// opened: opening one of 1 MiB of code takes about a millisecond, and a
// program maps many that no sampled stack passes through (clang++-14: 12
// of its 20 files, 6 ms of a worker's time). Once the addresses are in, a
// cheaper file is opened by whichever thread is free, and only if an
// address lies in it.
constexpr uint64_t kMinEarlyPrepareCost = uint64_t{4} << 20;

// The cost of preparing `file`: its code, plus its separate debug file
// (found by build ID under the debug directories), which Debian ships with
// zlib-compressed sections. An estimate for the order of the work only.
uint64_t PrepareCost(const FileWork& file, const std::vector<symbolize::MemoryMapping>& mappings,
                     const symbolize::SymbolizerOptions& options) {
  uint64_t cost = file.code_bytes;
  const auto mapping = std::find_if(mappings.begin(), mappings.end(),
                                    [&](const auto& m) { return m.Contains(file.prepare_pc); });
  if (mapping == mappings.end()) return cost;
  const Result<std::string> id = symbolize::MappedBuildId(*mapping, options);
  if (!id || id->size() < 3) return cost;
  const std::string name = "/.build-id/" + id->substr(0, 2) + "/" + id->substr(2) + ".debug";
  for (const std::string& dir : options.debug_dirs) {
    struct stat info {};
    if (::stat((options.sysroot + dir + name).c_str(), &info) == 0) {
      return cost + kDebugFileWeight * static_cast<uint64_t>(info.st_size);
    }
  }
  return cost;
}

// A worker thread with a Symbolizer of its own (libdwfl sessions are not
// thread-safe): prepares files, resolves what is offered meanwhile in them
// until the addresses are in, then resolves its share.
// What it found about the files it opened goes to `modules`, and the
// symbolizer itself to `kept`: ending its libdwfl session (unmapping every
// file, freeing the symbol indexes) took 5 ms that the caller waited for
// in ResolveAll. It now goes with the ParallelSymbolizer, which a report
// leaves to the process's exit. The copies of the debug files
// (symbolize/debug_file_cache.h) are mapped, not inflated into the heap,
// so keeping it costs little memory.
void RunWorker(const std::vector<symbolize::MemoryMapping>& mappings,
               const symbolize::SymbolizerOptions& options, FileWorkQueue& queue, size_t worker,
               std::vector<symbolize::ModuleReport>& modules,
               std::optional<symbolize::Symbolizer>& kept) {
  Result<symbolize::Symbolizer> symbolizer = symbolize::Symbolizer::Create(mappings, options);
  if (!symbolizer) return;  // the other threads take its share
  while (std::optional<uint64_t> pc = queue.ClaimToPrepare(worker)) symbolizer->Prepare(*pc);
  {
    DwflAddressSymbolizer adapter(*symbolizer);
    EarlyFrames early;
    ResolveOffered(adapter, queue, worker, early);
    ResolveFiles(adapter, queue, worker, &early);
  }
  modules = symbolizer->Modules();
  kept = std::move(*symbolizer);
}

}  // namespace

ParallelSymbolizer::ParallelSymbolizer(symbolize::Symbolizer symbolizer,
                                       const std::vector<symbolize::MemoryMapping>& mappings,
                                       const symbolize::SymbolizerOptions& options,
                                       unsigned threads)
    : symbolizer_(std::move(symbolizer)),
      adapter_(symbolizer_),
      queue_(std::make_unique<FileWorkQueue>(
          mappings,
          [mappings, options](const FileWork& file) {
            return PrepareCost(file, mappings, options);
          },
          kMinEarlyPrepareCost)) {
  const size_t worker_count = std::max(threads, 1u) - 1;
  modules_of_.resize(worker_count);
  kept_.resize(worker_count);
  // Copies for each worker: it may outlive the caller's `mappings`.
  for (size_t i = 0; i < worker_count; ++i) {
    workers_.emplace_back([this, mappings, options, i] {
      RunWorker(mappings, options, *queue_, i + 1, modules_of_[i], kept_[i]);
    });
  }
}

ParallelSymbolizer::ParallelSymbolizer(symbolize::Symbolizer symbolizer,
                                       const std::vector<symbolize::MemoryMapping>& mappings,
                                       const symbolize::SymbolizerOptions& options,
                                       std::span<const uint64_t> addresses, unsigned threads)
    : ParallelSymbolizer(std::move(symbolizer), mappings, options, threads) {
  ResolveAll(addresses);
}

ParallelSymbolizer::~ParallelSymbolizer() {
  queue_->Stop();
  workers_.clear();  // joins
}

void ParallelSymbolizer::Offer(std::span<const uint64_t> addresses) { queue_->Offer(addresses); }

void ParallelSymbolizer::ResolveAll(std::span<const uint64_t> addresses) {
  queue_->SetAddresses(addresses);
  ResolveFiles(adapter_, *queue_, 0);
  workers_.clear();  // joins
  for (auto& modules : modules_of_) {
    for (auto& module : modules) worker_modules_.push_back(std::move(module));
  }
  frames_.reserve(addresses.size());
  for (FileWork& file : queue_->files()) {
    for (size_t i = 0; i < file.frames.size(); ++i) {
      frames_.try_emplace(file.addresses[i], std::move(file.frames[i]));
    }
  }
}

std::span<const aggregate::Frame> ParallelSymbolizer::Resolve(uint64_t address) {
  if (auto it = frames_.find(address); it != frames_.end()) return it->second;
  return adapter_.Resolve(address);
}

std::vector<symbolize::ModuleReport> ParallelSymbolizer::Modules() const {
  std::vector<symbolize::ModuleReport> all = worker_modules_;
  for (symbolize::ModuleReport& module : symbolizer_.Modules()) all.push_back(std::move(module));
  return symbolize::MergeModuleReports(std::move(all));
}

std::vector<uint64_t> DistinctLookupAddresses(const report::HeapProfile& profile) {
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> addresses;
  for (const report::Sample& sample : profile.samples) {
    for (size_t i = 0; i < sample.stack.size(); ++i) {
      const uint64_t address = report::LookupAddress(sample.stack, i);
      if (seen.insert(address).second) addresses.push_back(address);
    }
  }
  return addresses;
}

}  // namespace memprof::report::pprof
