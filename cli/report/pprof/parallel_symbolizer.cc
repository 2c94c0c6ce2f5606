#include "cli/report/pprof/parallel_symbolizer.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace memprof::pprof {
namespace {

// The addresses of one mapped file (or of no file), resolved by one worker.
struct FileWork {
  std::vector<uint64_t> addresses;
  std::vector<std::vector<analysis::Frame>> frames;  // parallel to addresses
};

// The path of the mapping holding `address` ("" if none); `sorted` by start.
const std::string& PathOf(const std::vector<const symbolize::MemoryMapping*>& sorted,
                          uint64_t address) {
  static const std::string kNone;
  auto it = std::upper_bound(sorted.begin(), sorted.end(), address,
                             [](uint64_t a, const auto* mapping) { return a < mapping->start; });
  if (it == sorted.begin() || !(*std::prev(it))->Contains(address)) return kNone;
  return (*std::prev(it))->path;
}

// The addresses grouped by file, the files with most addresses first.
std::vector<FileWork> SplitByFile(const std::vector<symbolize::MemoryMapping>& mappings,
                                  std::span<const uint64_t> addresses) {
  std::vector<const symbolize::MemoryMapping*> sorted;
  for (const symbolize::MemoryMapping& mapping : mappings) sorted.push_back(&mapping);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->start < b->start; });
  std::unordered_map<std::string, size_t> by_path;
  std::vector<FileWork> work;
  for (uint64_t address : addresses) {
    auto [it, inserted] = by_path.try_emplace(PathOf(sorted, address), work.size());
    if (inserted) work.emplace_back();
    work[it->second].addresses.push_back(address);
  }
  std::stable_sort(work.begin(), work.end(), [](const FileWork& a, const FileWork& b) {
    return a.addresses.size() > b.addresses.size();
  });
  return work;
}

// One worker: files taken from `next` until none is left.
void ResolveFiles(analysis::AddressSymbolizer& symbolizer, std::vector<FileWork>& work,
                  std::atomic<size_t>& next) {
  for (size_t i = next++; i < work.size(); i = next++) {
    for (uint64_t address : work[i].addresses) {
      std::span<const analysis::Frame> frames = symbolizer.Resolve(address);
      work[i].frames.emplace_back(frames.begin(), frames.end());
    }
  }
}

// A worker thread's own Symbolizer (libdwfl sessions are not thread-safe).
// What it found about the files it opened is appended to `modules`.
void ResolveFilesWithOwnSymbolizer(const std::vector<symbolize::MemoryMapping>& mappings,
                                   const symbolize::SymbolizerOptions& options,
                                   std::vector<FileWork>& work, std::atomic<size_t>& next,
                                   std::vector<symbolize::ModuleReport>& modules) {
  Result<symbolize::Symbolizer> symbolizer = symbolize::Symbolizer::Create(mappings, options);
  if (!symbolizer) return;  // the other workers take its share
  DwflAddressSymbolizer adapter(*symbolizer);
  ResolveFiles(adapter, work, next);
  modules = symbolizer->Modules();
}

}  // namespace

ParallelSymbolizer::ParallelSymbolizer(symbolize::Symbolizer symbolizer,
                                       const std::vector<symbolize::MemoryMapping>& mappings,
                                       const symbolize::SymbolizerOptions& options,
                                       std::span<const uint64_t> addresses, unsigned threads)
    : symbolizer_(std::move(symbolizer)), adapter_(symbolizer_) {
  std::vector<FileWork> work = SplitByFile(mappings, addresses);
  std::atomic<size_t> next = 0;
  const size_t worker_count = std::max<size_t>(std::min<size_t>(threads, work.size()), 1) - 1;
  std::vector<std::vector<symbolize::ModuleReport>> worker_modules(worker_count);
  {
    std::vector<std::jthread> workers;
    for (size_t i = 0; i < worker_count; ++i) {
      workers.emplace_back([&, i] {
        ResolveFilesWithOwnSymbolizer(mappings, options, work, next, worker_modules[i]);
      });
    }
    ResolveFiles(adapter_, work, next);
  }  // joins the workers
  for (auto& modules : worker_modules) {
    for (auto& module : modules) worker_modules_.push_back(std::move(module));
  }
  frames_.reserve(addresses.size());
  for (FileWork& file : work) {
    for (size_t i = 0; i < file.frames.size(); ++i) {
      frames_.try_emplace(file.addresses[i], std::move(file.frames[i]));
    }
  }
}

std::span<const analysis::Frame> ParallelSymbolizer::Resolve(uint64_t address) {
  if (auto it = frames_.find(address); it != frames_.end()) return it->second;
  return adapter_.Resolve(address);
}

std::vector<symbolize::ModuleReport> ParallelSymbolizer::Modules() const {
  std::vector<symbolize::ModuleReport> all = worker_modules_;
  for (symbolize::ModuleReport& module : symbolizer_.Modules()) all.push_back(std::move(module));
  return symbolize::MergeModuleReports(std::move(all));
}

std::vector<uint64_t> DistinctLookupAddresses(const analysis::HeapProfile& profile) {
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> addresses;
  for (const analysis::Sample& sample : profile.samples) {
    for (size_t i = 0; i < sample.stack.size(); ++i) {
      const uint64_t address = analysis::LookupAddress(sample.stack, i);
      if (seen.insert(address).second) addresses.push_back(address);
    }
  }
  return addresses;
}

}  // namespace memprof::pprof
