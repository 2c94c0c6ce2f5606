#include "cli/report/aggregate/aggregate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "cli/report/aggregate/frame_names.h"
#include "cli/report/aggregate/jeprof_names.h"
#include "cli/report/model/stack_hash.h"

namespace memprof::report::aggregate {
namespace {

constexpr size_t kNotSeen = static_cast<size_t>(-1);

// Every distinct address, symbolized once, plus what the passes below need
// per location: whether jeprof cuts the stack there, and its function-name ids.
class SymbolizedLocations {
 public:
  SymbolizedLocations(AddressSymbolizer& symbolizer, const InternedAddresses& interned, bool lines)
      : symbolizer_(symbolizer),
        interned_(interned),
        lines_(lines),
        by_id_(interned.addresses.size(), kNoLocation) {}

  // The location of interned_.addresses[id], symbolized when first met.
  uint32_t InternId(uint32_t id);
  bool IsCut(uint32_t location) const { return cut_[location] != 0; }
  // jeprof leaves the location out of every function table (IsIgnoredAddress).
  bool IsIgnored(uint32_t location) const { return ignored_[location] != 0; }
  std::span<const uint32_t> NameIds(uint32_t location) const {
    return std::span(name_ids_).subspan(name_starts_[location],
                                        name_starts_[location + 1] - name_starts_[location]);
  }
  const Location& at(uint32_t location) const { return locations_[location]; }
  const std::vector<std::string>& names() const { return names_; }
  std::vector<Location> ReleaseLocations() { return std::move(locations_); }

 private:
  static constexpr uint32_t kNoLocation = static_cast<uint32_t>(-1);

  uint32_t Add(uint64_t address);
  uint32_t NameId(const std::string& name);
  const std::string& ShortName(const std::string& function);
  std::vector<std::string> FunctionNames(uint64_t address, const std::vector<Frame>& frames);

  AddressSymbolizer& symbolizer_;
  const InternedAddresses& interned_;
  bool lines_;
  std::vector<uint32_t> by_id_;  // per interned address: its location, or kNoLocation
  std::vector<Location> locations_;
  // Per location, read once per frame: flat arrays rather than a field of
  // each Location, which would take a cache line of its own.
  std::vector<uint8_t> cut_;      // bytes, not bits
  std::vector<uint8_t> ignored_;  // bytes, not bits
  // The name ids of every location, one after another: location i's are
  // name_ids_[name_starts_[i], name_starts_[i + 1]).
  std::vector<uint32_t> name_ids_;
  std::vector<uint32_t> name_starts_ = {0};
  absl::flat_hash_map<std::string, uint32_t> by_name_;
  std::vector<std::string> names_;
  // ShortFunctionName per full name: the addresses of one function share it,
  // and shortening a long template name is the costly part of a location.
  absl::flat_hash_map<std::string, std::string> short_names_;
};

const std::string& SymbolizedLocations::ShortName(const std::string& function) {
  auto [it, inserted] = short_names_.try_emplace(function);
  if (inserted) it->second = ShortFunctionName(function);
  return it->second;
}

// jeprof's TranslateStack at function granularity: innermost first, the
// function that holds the address last and without " (inline)".
std::vector<std::string> SymbolizedLocations::FunctionNames(uint64_t address,
                                                      const std::vector<Frame>& frames) {
  std::vector<std::string> names;
  for (size_t i = 0; i < frames.size(); ++i) {
    const std::string& function = frames[i].function;
    if (function.empty() || function == "??") {
      names.push_back(UnnamedFrameName(frames[i], address));
    } else {
      names.push_back(ShortName(function) + (i + 1 < frames.size() ? " (inline)" : ""));
    }
    if (lines_) names.back() += FrameLineSuffix(frames[i]);
  }
  return names;
}

uint32_t SymbolizedLocations::InternId(uint32_t id) {
  uint32_t& location = by_id_[id];
  if (location == kNoLocation) location = Add(interned_.addresses[id]);
  return location;
}

// A new location for `address`, numbered in the order first seen.
uint32_t SymbolizedLocations::Add(uint64_t address) {
  const auto index = static_cast<uint32_t>(locations_.size());
  std::span<const Frame> resolved = symbolizer_.Resolve(address);
  Location location{address, {resolved.begin(), resolved.end()}, {}};
  if (location.frames.empty()) location.frames.push_back(Frame{});  // contract says never
  location.names = FunctionNames(address, location.frames);
  const Frame& outer = location.frames.back();
  cut_.push_back(outer.function.empty()
                     ? IsAllocatorModule(outer.module)
                     : IsAllocatorEntryPoint(ShortName(outer.function)));
  ignored_.push_back(IsIgnoredAddress(address) ? 1 : 0);
  for (const std::string& name : location.names) name_ids_.push_back(NameId(name));
  name_starts_.push_back(static_cast<uint32_t>(name_ids_.size()));
  locations_.push_back(std::move(location));
  return index;
}

uint32_t SymbolizedLocations::NameId(const std::string& name) {
  auto [it, inserted] = by_name_.emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

// A --focus or --ignore regex, evaluated once per location.
class FrameMatcher {
 public:
  static Result<FrameMatcher> Create(const std::string& pattern, const char* option);
  bool active() const { return regex_.has_value(); }
  bool AnyMatches(const std::vector<uint32_t>& stack, const SymbolizedLocations& table);

 private:
  bool Search(const std::string& text) const;
  bool Matches(const Location& location) const;

  std::optional<std::regex> regex_;
  std::vector<signed char> cache_;  // -1 unknown, 0 no, 1 yes
};

Result<FrameMatcher> FrameMatcher::Create(const std::string& pattern, const char* option) {
  FrameMatcher matcher;
  if (pattern.empty()) return matcher;
  try {
    matcher.regex_.emplace(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("bad ") + option + " regex '" + pattern + "': " + error.what());
  }
  return matcher;
}

bool FrameMatcher::Search(const std::string& text) const {
  try {
    return std::regex_search(text, *regex_);
  } catch (const std::regex_error&) {
    return false;  // too complex for std::regex on this input: treat as no match
  }
}

// What jeprof's FocusProfile matches: the address and, per inline frame, the
// short function name and "file:line".
bool FrameMatcher::Matches(const Location& location) const {
  if (Search(JeprofAddress(location.address)) || Search(HexAddress(location.address))) return true;
  for (const Frame& frame : location.frames) {
    if (frame.function.empty() && Search(UnnamedFrameName(frame, location.address))) return true;
    if (!frame.function.empty() && Search(ShortFunctionName(frame.function))) return true;
    if (!frame.file.empty() && Search(frame.file + ":" + std::to_string(frame.line))) return true;
  }
  return false;
}

bool FrameMatcher::AnyMatches(const std::vector<uint32_t>& stack,
                              const SymbolizedLocations& table) {
  for (uint32_t location : stack) {
    if (location >= cache_.size()) cache_.resize(location + 1, -1);
    if (cache_[location] < 0) cache_[location] = Matches(table.at(location)) ? 1 : 0;
    if (cache_[location] == 1) return true;
  }
  return false;
}

// The merged stacks, indexed by their paths without a copy of them: the
// index holds positions in `stacks`.
class StackIndex {
 public:
  explicit StackIndex(std::vector<StackSample>& stacks)
      : stacks_(stacks), index_(0, Hash{&stacks}, Equal{&stacks}) {}

  void Reserve(size_t stacks) { index_.reserve(stacks); }

  // Adds `value` (and `base`) to the stack with this path, or appends one.
  void Add(std::vector<uint32_t> path, double value, double base) {
    stacks_.push_back({std::move(path), value, base});
    auto [it, inserted] = index_.insert(stacks_.size() - 1);
    if (inserted) return;
    stacks_[*it].value += value;
    stacks_[*it].base += base;
    stacks_.pop_back();
  }

 private:
  struct Hash {
    const std::vector<StackSample>* stacks;
    size_t operator()(size_t i) const { return report::StackHash((*stacks)[i].locations); }
  };
  struct Equal {
    const std::vector<StackSample>* stacks;
    bool operator()(size_t a, size_t b) const {
      return (*stacks)[a].locations == (*stacks)[b].locations;
    }
  };

  std::vector<StackSample>& stacks_;
  absl::flat_hash_set<size_t, Hash, Equal> index_;
};

// jeprof's RemoveUninterestingFrames: an allocator entry point drops itself
// and everything before it (leaf side), i.e. the allocator's own frames.
// `ids`: the stack's interned addresses, one per frame, leaf first.
std::vector<uint32_t> CutAllocatorFrames(std::span<const uint32_t> ids,
                                         SymbolizedLocations& table) {
  std::vector<uint32_t> path(ids.size());
  size_t kept_from = 0;  // after the last cut frame
  for (size_t i = 0; i < ids.size(); ++i) {
    path[i] = table.InternId(ids[i]);
    if (table.IsCut(path[i])) kept_from = i + 1;
  }
  path.erase(path.begin(), path.begin() + static_cast<ptrdiff_t>(kept_from));
  return path;
}

// Cuts, merges identical results and sums the header totals. Stacks worth
// 0 are left out: they add nothing to any row. In a diff that means no
// change and nothing in the base either: an unchanged stack still adds to
// the base (and now) values that the differential reports show.
std::vector<StackSample> CutAndMerge(const HeapProfile& profile, Metric metric,
                                     const InternedAddresses& interned, SymbolizedLocations& table,
                                     Aggregation& aggregation) {
  std::vector<StackSample> stacks;
  stacks.reserve(profile.samples.size());
  StackIndex index(stacks);
  index.Reserve(profile.samples.size());
  const bool diff = profile.is_diff && profile.base.size() == profile.samples.size();
  for (size_t i = 0; i < profile.samples.size(); ++i) {
    const Sample& sample = profile.samples[i];
    double value = ValueOf(sample, metric);
    double base = diff ? ValueOf(profile.base[i], metric) : 0;
    aggregation.total += value;
    aggregation.total_base += base;
    if (value == 0 && base == 0) continue;
    index.Add(CutAllocatorFrames(interned.StackOf(i), table), value, base);
  }
  aggregation.is_diff = diff;
  return stacks;
}

void ApplyFilters(std::vector<StackSample>& stacks, FrameMatcher& focus, FrameMatcher& ignore,
                  const SymbolizedLocations& table) {
  std::erase_if(stacks, [&](const StackSample& stack) {
    if (focus.active() && !focus.AnyMatches(stack.locations, table)) return true;
    return ignore.active() && ignore.AnyMatches(stack.locations, table);
  });
}

// jeprof's ReduceProfile + FlatProfile + CumulativeProfile: each function
// once per stack; flat goes to the first (innermost) name of the stack.
// kDiff adds the base sums: a template, so that the hot loop of an ordinary
// report does no more than it used to.
template <bool kDiff, typename Table>
std::vector<FunctionRow> Reduce(const std::vector<StackSample>& stacks, const Table& table,
                                double& shown_total) {
  const std::vector<std::string>& names = table.names();
  std::vector<FunctionRow> rows(names.size());
  std::vector<size_t> seen_in(names.size(), kNotSeen);
  for (size_t s = 0; s < stacks.size(); ++s) {
    bool first = true;
    for (uint32_t location : stacks[s].locations) {
      if (table.IsIgnored(location)) continue;
      for (uint32_t id : table.NameIds(location)) {
        if (seen_in[id] == s) continue;
        seen_in[id] = s;
        if (first) rows[id].flat += stacks[s].value;
        if (first) shown_total += stacks[s].value;
        if (kDiff && first) rows[id].flat_base += stacks[s].base;
        first = false;
        rows[id].cum += stacks[s].value;
        if (kDiff) rows[id].cum_base += stacks[s].base;
      }
    }
  }
  std::vector<FunctionRow> used;
  for (size_t id = 0; id < rows.size(); ++id) {
    if (seen_in[id] == kNotSeen) continue;
    rows[id].name = names[id];
    used.push_back(std::move(rows[id]));
  }
  return used;
}

// What Reduce reads of SymbolizedLocations, made again from an
// aggregation's locations (FunctionRows): the same names, numbered in the
// same order.
class LocationNames {
 public:
  explicit LocationNames(const std::vector<Location>& locations) {
    absl::flat_hash_map<std::string_view, uint32_t> by_name;
    ignored_.reserve(locations.size());
    name_starts_.reserve(locations.size() + 1);
    for (const Location& location : locations) {
      ignored_.push_back(IsIgnoredAddress(location.address) ? 1 : 0);
      for (const std::string& name : location.names) {
        auto [it, inserted] = by_name.emplace(name, static_cast<uint32_t>(names_.size()));
        if (inserted) names_.push_back(name);
        name_ids_.push_back(it->second);
      }
      name_starts_.push_back(static_cast<uint32_t>(name_ids_.size()));
    }
  }
  bool IsIgnored(uint32_t location) const { return ignored_[location] != 0; }
  std::span<const uint32_t> NameIds(uint32_t location) const {
    return std::span(name_ids_).subspan(name_starts_[location],
                                        name_starts_[location + 1] - name_starts_[location]);
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<uint8_t> ignored_;
  std::vector<uint32_t> name_ids_;
  std::vector<uint32_t> name_starts_ = {0};
  std::vector<std::string> names_;
};

// The name Reduce gives the flat value of a cut stack (see FlatFunctionNames).
std::string FlatName(const std::vector<uint32_t>& path, const SymbolizedLocations& table) {
  for (uint32_t location : path) {
    if (table.IsIgnored(location)) continue;
    return table.names()[table.NameIds(location).front()];
  }
  return {};
}

}  // namespace

std::vector<std::string> FlatFunctionNames(const HeapProfile& profile,
                                           AddressSymbolizer& symbolizer,
                                           const InternedAddresses& interned, bool lines) {
  SymbolizedLocations table(symbolizer, interned, lines);
  std::vector<std::string> names;
  names.reserve(profile.samples.size());
  for (size_t i = 0; i < profile.samples.size(); ++i) {
    names.push_back(FlatName(CutAllocatorFrames(interned.StackOf(i), table), table));
  }
  return names;
}

void SortFunctionRows(std::vector<FunctionRow>& rows, bool by_cum, bool by_change) {
  std::sort(rows.begin(), rows.end(), [=](const FunctionRow& a, const FunctionRow& b) {
    double key_a = by_cum ? a.cum : a.flat;
    double key_b = by_cum ? b.cum : b.flat;
    if (by_change && std::abs(key_a) != std::abs(key_b)) return std::abs(key_a) > std::abs(key_b);
    if (key_a != key_b) return key_a > key_b;
    return a.name < b.name;
  });
}

namespace {

// InternLookupAddresses; of a profile that is not const, each stack is
// freed once interned (TakeLookupAddresses).
template <typename Profile>
InternedAddresses Intern(Profile& profile) {
  StackInterner interner;
  size_t frames = 0;
  for (const Sample& sample : profile.samples) frames += sample.stack.size();
  interner.Reserve(profile.samples.size(), frames);
  for (auto& sample : profile.samples) {
    interner.Add(sample.stack);
    if constexpr (!std::is_const_v<Profile>) std::vector<uint64_t>().swap(sample.stack);
  }
  return interner.Release();
}

}  // namespace

// The ids of addresses, with a direct-mapped cache in front of the map: a
// profile's million frames repeat a few thousand addresses, and most are
// found in the cache without hashing or probing.
class StackInterner::Ids {
 public:
  explicit Ids(std::vector<uint64_t>& addresses) : addresses_(addresses) {}

  uint32_t IdOf(uint64_t address) {
    Slot& slot = cache_[(address ^ (address >> kCacheBits)) & (kCacheSize - 1)];
    if (slot.id != kNone && slot.address == address) return slot.id;
    auto [it, inserted] = map_.try_emplace(address, static_cast<uint32_t>(addresses_.size()));
    if (inserted) addresses_.push_back(address);
    slot = {address, it->second};
    return it->second;
  }

 private:
  static constexpr uint32_t kNone = static_cast<uint32_t>(-1);
  static constexpr unsigned kCacheBits = 14;
  static constexpr size_t kCacheSize = size_t{1} << kCacheBits;
  struct Slot {
    uint64_t address = 0;
    uint32_t id = kNone;
  };

  std::vector<uint64_t>& addresses_;  // by id
  absl::flat_hash_map<uint64_t, uint32_t> map_;
  std::vector<Slot> cache_ = std::vector<Slot>(kCacheSize);
};

StackInterner::StackInterner() : ids_(std::make_unique<Ids>(interned_.addresses)) {}

StackInterner::~StackInterner() = default;

void StackInterner::Reserve(size_t stacks, size_t frames) {
  interned_.starts.reserve(stacks + 1);
  interned_.ids.reserve(frames);
}

std::span<const uint64_t> StackInterner::Add(std::span<const uint64_t> stack) {
  const size_t known = interned_.addresses.size();
  interned_.starts.push_back(interned_.ids.size());
  for (size_t i = 0; i < stack.size(); ++i) {
    interned_.ids.push_back(ids_->IdOf(LookupAddress(stack, i)));
  }
  return std::span<const uint64_t>(interned_.addresses).subspan(known);
}

InternedAddresses StackInterner::Release() {
  interned_.starts.push_back(interned_.ids.size());
  ids_.reset();
  return std::move(interned_);
}

void DropRecords(InternedAddresses& interned, std::span<const size_t> records) {
  if (records.empty()) return;
  std::vector<uint32_t> ids;
  std::vector<size_t> starts;
  ids.reserve(interned.ids.size());
  starts.reserve(interned.starts.size() - records.size());
  auto dropped = records.begin();
  for (size_t record = 0; record + 1 < interned.starts.size(); ++record) {
    if (dropped != records.end() && *dropped == record) {
      ++dropped;
      continue;
    }
    starts.push_back(ids.size());
    const std::span<const uint32_t> stack = interned.StackOf(record);
    ids.insert(ids.end(), stack.begin(), stack.end());
  }
  starts.push_back(ids.size());
  interned.ids = std::move(ids);
  interned.starts = std::move(starts);
}

InternedAddresses InternLookupAddresses(const HeapProfile& profile) { return Intern(profile); }

InternedAddresses TakeLookupAddresses(HeapProfile& profile) { return Intern(profile); }

namespace {

// AggregateProfile up to the function table, which `reduce` makes, if
// given, from the stacks and the table of their locations.
template <typename Reduce>
Result<Aggregation> Aggregate(const HeapProfile& profile, AddressSymbolizer& symbolizer,
                              const AggregateOptions& options, Reduce reduce) {
  auto focus = FrameMatcher::Create(options.focus, "--focus");
  if (!focus) return Fail(focus.error());
  auto ignore = FrameMatcher::Create(options.ignore, "--ignore");
  if (!ignore) return Fail(ignore.error());
  Aggregation aggregation;
  aggregation.metric = options.metric;
  aggregation.lines = options.lines;
  InternedAddresses own;  // when the caller has none
  const InternedAddresses& interned =
      options.interned != nullptr ? *options.interned : (own = InternLookupAddresses(profile));
  SymbolizedLocations table(symbolizer, interned, options.lines);
  aggregation.stacks = CutAndMerge(profile, options.metric, interned, table, aggregation);
  ApplyFilters(aggregation.stacks, *focus, *ignore, table);
  reduce(aggregation, table);
  aggregation.locations = table.ReleaseLocations();
  return aggregation;
}

template <typename Table>
FunctionTable MakeFunctionTable(const Aggregation& aggregation, const Table& table) {
  FunctionTable made;
  made.functions = aggregation.is_diff ? Reduce<true>(aggregation.stacks, table, made.shown_total)
                                       : Reduce<false>(aggregation.stacks, table, made.shown_total);
  SortFunctionRows(made.functions, false, aggregation.is_diff);
  return made;
}

}  // namespace

Result<Aggregation> AggregateProfile(const HeapProfile& profile, AddressSymbolizer& symbolizer,
                                     const AggregateOptions& options) {
  return Aggregate(profile, symbolizer, options,
                   [](Aggregation& aggregation, const SymbolizedLocations& table) {
                     FunctionTable made = MakeFunctionTable(aggregation, table);
                     aggregation.functions = std::move(made.functions);
                     aggregation.shown_total = made.shown_total;
                   });
}

Result<Aggregation> AggregateStacks(const HeapProfile& profile, AddressSymbolizer& symbolizer,
                                    const AggregateOptions& options) {
  return Aggregate(profile, symbolizer, options, [](Aggregation&, const SymbolizedLocations&) {});
}

FunctionTable FunctionRows(const Aggregation& aggregation) {
  return MakeFunctionTable(aggregation, LocationNames(aggregation.locations));
}

bool AnyRowShown(const std::vector<FunctionRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const FunctionRow& row) { return row.shown(); });
}

bool AnyRowShown(const Aggregation& aggregation) {
  if (aggregation.is_diff) return AnyRowShown(FunctionRows(aggregation).functions);
  return std::any_of(
      aggregation.stacks.begin(), aggregation.stacks.end(), [&](const StackSample& stack) {
        return stack.value != 0 &&
               std::any_of(stack.locations.begin(), stack.locations.end(), [&](uint32_t location) {
                 return !IsIgnoredAddress(aggregation.locations[location].address);
               });
      });
}

}  // namespace memprof::report::aggregate
