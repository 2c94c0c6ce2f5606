#include "cli/report/pprof/file_work_queue.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <unordered_map>
#include <utility>

namespace memprof::report::pprof {
namespace {

// The files with code, most code first (the costliest to open: symbol
// tables and DWARF grow with the code).
std::vector<FileWork> FilesWithCode(const std::vector<symbolize::MemoryMapping>& mappings) {
  std::vector<FileWork> files;
  std::unordered_map<std::string, size_t> by_path;
  for (const symbolize::MemoryMapping& mapping : mappings) {
    if (!mapping.FileBacked() || !mapping.Executable()) continue;
    auto [it, inserted] = by_path.try_emplace(mapping.path, files.size());
    if (inserted) {
      FileWork& file = files.emplace_back();
      file.path = mapping.path;
      file.prepare_pc = mapping.start;
    }
    files[it->second].code_bytes += mapping.end - mapping.start;
  }
  for (FileWork& file : files) file.prepare_cost = file.code_bytes;
  std::stable_sort(files.begin(), files.end(), [](const FileWork& a, const FileWork& b) {
    return a.code_bytes > b.code_bytes;
  });
  return files;
}

}  // namespace

FileWorkQueue::FileWorkQueue(std::vector<symbolize::MemoryMapping> mappings, CostFunction cost,
                             uint64_t min_early_cost)
    : sorted_(std::move(mappings)),
      files_(FilesWithCode(sorted_)),
      cost_(std::move(cost)),
      min_early_cost_(min_early_cost) {
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const auto& a, const auto& b) { return a.start < b.start; });
}

void FileWorkQueue::OrderByCost() {
  ordered_ = true;
  if (cost_) SortByCost();
  // Which file each mapping belongs to, now that the files stay in place.
  std::unordered_map<std::string, size_t> by_path;
  for (size_t i = 0; i < files_.size(); ++i) by_path.emplace(files_[i].path, i);
  mapping_files_.clear();
  for (const symbolize::MemoryMapping& mapping : sorted_) {
    auto it = by_path.find(mapping.path);
    mapping_files_.push_back(it != by_path.end() ? std::optional(it->second) : std::nullopt);
  }
}

void FileWorkQueue::SortByCost() {
  std::vector<std::pair<uint64_t, size_t>> costs;
  for (size_t i = 0; i < files_.size(); ++i) costs.emplace_back(cost_(files_[i]), i);
  std::stable_sort(costs.begin(), costs.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<FileWork> ordered;
  ordered.reserve(files_.size());
  for (const auto& [cost, i] : costs) {
    ordered.push_back(std::move(files_[i]));
    ordered.back().prepare_cost = cost;
  }
  files_ = std::move(ordered);
}

std::optional<uint64_t> FileWorkQueue::ClaimToPrepare(size_t worker) {
  std::unique_lock lock(mutex_);
  if (ready_) return std::nullopt;
  if (!ordered_) OrderByCost();
  for (FileWork& file : files_) {
    if (file.owner || file.prepare_cost < min_early_cost_) continue;
    file.owner = worker;
    return file.prepare_pc;
  }
  return std::nullopt;
}

std::optional<size_t> FileWorkQueue::MappingOf(uint64_t address) const {
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), address,
                             [](uint64_t a, const auto& mapping) { return a < mapping.start; });
  if (it == sorted_.begin() || !std::prev(it)->Contains(address)) return std::nullopt;
  return static_cast<size_t>(std::prev(it) - sorted_.begin());
}

std::optional<size_t> FileWorkQueue::FileOf(uint64_t address) const {
  const std::optional<size_t> mapping = MappingOf(address);
  return mapping ? mapping_files_[*mapping] : std::nullopt;
}

void FileWorkQueue::Offer(std::span<const uint64_t> addresses) {
  if (addresses.empty()) return;
  std::unique_lock lock(mutex_);
  if (ready_) return;
  offered_.insert(offered_.end(), addresses.begin(), addresses.end());
  addresses_set_.notify_all();
}

std::optional<std::vector<uint64_t>> FileWorkQueue::TakeOffered(size_t worker) {
  std::unique_lock lock(mutex_);
  if (offered_taken_.size() <= worker) offered_taken_.resize(worker + 1);
  size_t& taken = offered_taken_[worker];
  addresses_set_.wait(lock, [&] { return ready_ || offered_.size() > taken; });
  // Once the addresses are in, files_ must stay as it is: NextToResolve
  // hands out pointers into it.
  if (ready_) return std::nullopt;
  if (!ordered_) OrderByCost();
  std::vector<uint64_t> mine;
  for (; taken < offered_.size(); ++taken) {
    const std::optional<size_t> file = FileOf(offered_[taken]);
    if (file && files_[*file].owner == worker) mine.push_back(offered_[taken]);
  }
  return mine;
}

void FileWorkQueue::SetAddresses(std::span<const uint64_t> addresses) {
  std::unique_lock lock(mutex_);
  std::unordered_map<std::string, size_t> by_path;
  for (size_t i = 0; i < files_.size(); ++i) by_path.emplace(files_[i].path, i);
  static const std::string kNone;
  for (uint64_t address : addresses) {
    const std::optional<size_t> mapping = MappingOf(address);
    const std::string& path = mapping ? sorted_[*mapping].path : kNone;
    auto [entry, inserted] = by_path.try_emplace(path, files_.size());
    if (inserted) files_.emplace_back().path = path;
    files_[entry->second].addresses.push_back(address);
  }
  resolve_order_.resize(files_.size());
  std::iota(resolve_order_.begin(), resolve_order_.end(), size_t{0});
  std::stable_sort(resolve_order_.begin(), resolve_order_.end(), [this](size_t a, size_t b) {
    return files_[a].addresses.size() > files_[b].addresses.size();
  });
  ready_ = true;
  addresses_set_.notify_all();
}

void FileWorkQueue::Stop() {
  std::unique_lock lock(mutex_);
  ready_ = true;
  addresses_set_.notify_all();
}

FileWork* FileWorkQueue::NextToResolve(size_t worker) {
  std::unique_lock lock(mutex_);
  FileWork* unclaimed = nullptr;
  for (size_t i : resolve_order_) {
    FileWork& file = files_[i];
    if (file.taken || file.addresses.empty()) continue;
    if (file.owner == worker) {
      file.taken = true;
      return &file;
    }
    if (!file.owner && unclaimed == nullptr) unclaimed = &file;
  }
  if (unclaimed != nullptr) unclaimed->taken = true;
  return unclaimed;
}

}  // namespace memprof::report::pprof
