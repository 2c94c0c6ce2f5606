#include "cli/report/report_pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "cli/report/allocation_report.h"
#include "cli/report/dump_process_check.h"
#include "cli/report/leave_to_exit.h"
#include "cli/report/merge/profile_merge.h"
#include "cli/report/parse/allocation_profile_parser.h"
#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/pprof/pprof_writer.h"
#include "cli/report/profile_loader.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/report_renderer.h"
#include "cli/report/render/svg_report.h"
#include "cli/report/render/text_report.h"
#include "cli/report/report_symbolizer.h"
#include "cli/report/symbolization_report.h"
#include "cli/report/symbolize/debug_file_cache.h"
#include "cli/report/symbolize/debuginfo_lookup.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/symbol_index_cache.h"
#include "cli/report/symbolize/symbolizer.h"
#include "cli/report/trend_pipeline.h"
#include "common/path.h"

namespace memprof::report {
namespace {

std::vector<std::string> DumpPaths(const ReportRequest& request) {
  std::vector<std::string> paths = {request.dump_path};
  paths.insert(paths.end(), request.more_dump_paths.begin(), request.more_dump_paths.end());
  return paths;
}

std::vector<std::string> BasePaths(const ReportRequest& request) {
  std::vector<std::string> paths;
  if (!request.base_path.empty()) paths.push_back(request.base_path);
  paths.insert(paths.end(), request.more_base_paths.begin(), request.more_base_paths.end());
  return paths;
}

// Interns a dump's stacks on a thread of its own while the parser reads on
// (handed over 256 stacks at a time), and offers the early symbolizer each
// lookup address the first time it is met, so that its workers resolve the
// addresses in the files they opened while the dump is still being read.
// What the report then aggregates is this interning: the parsing thread
// neither filters addresses for the symbolizer nor interns afterwards.
class BackgroundInterner {
 public:
  // `dump_bytes`: the dump's size, for room ahead (the ids of a 20 MB dump
  // would otherwise be copied as they grow, 15 MB in all).
  BackgroundInterner(report::pprof::ParallelSymbolizer& symbolizer, uint64_t dump_bytes)
      : symbolizer_(symbolizer) {
    interner_.Reserve(dump_bytes / kDumpBytesPerStack, dump_bytes / kDumpBytesPerFrame);
    thread_ = std::thread([this] { Run(); });
  }
  ~BackgroundInterner() { Stop(); }
  BackgroundInterner(const BackgroundInterner&) = delete;
  BackgroundInterner& operator=(const BackgroundInterner&) = delete;

  // On the parsing thread; `stack` stays valid until Finish (StackObserver).
  void Observe(std::span<const uint64_t> stack) {
    pending_.push_back(stack);
    if (pending_.size() >= kBatch) Hand();
  }
  // Every stack observed, interned in order. Once.
  report::aggregate::InternedAddresses Finish() {
    Stop();
    return interner_.Release();
  }

 private:
  // Small enough that the interning starts early, big enough that the
  // handing over (a lock and a wake-up) costs nothing next to it.
  static constexpr size_t kBatch = 256;
  // Room for as many stacks and frames as a dump of so many bytes holds in
  // practice: jemalloc writes a frame in 9 to 19 bytes (" 0x" and the
  // digits), a stack in 500 to 900 with its counts (the compiler dumps).
  // Only a hint: a dump that holds more grows the vectors.
  static constexpr uint64_t kDumpBytesPerFrame = 8;
  static constexpr uint64_t kDumpBytesPerStack = 256;
  using Batch = std::vector<std::span<const uint64_t>>;

  void Hand() {
    {
      std::lock_guard lock(mutex_);
      batches_.push_back(std::move(pending_));
    }
    pending_ = Batch();
    pending_.reserve(kBatch);
    ready_.notify_one();
  }
  void Stop() {
    if (!thread_.joinable()) return;
    if (!pending_.empty()) Hand();
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  // The interning thread: each batch in turn, its new addresses offered.
  void Run() {
    std::vector<uint64_t> fresh;
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !batches_.empty() || done_; });
        if (batches_.empty()) return;
        batch = std::move(batches_.front());
        batches_.pop_front();
      }
      for (std::span<const uint64_t> stack : batch) {
        const std::span<const uint64_t> added = interner_.Add(stack);
        fresh.insert(fresh.end(), added.begin(), added.end());
      }
      if (!fresh.empty()) symbolizer_.Offer(fresh);
      fresh.clear();
    }
  }

  report::pprof::ParallelSymbolizer& symbolizer_;
  report::aggregate::StackInterner interner_;  // the interning thread's until Stop
  Batch pending_;                              // the parsing thread's
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Batch> batches_;  // guarded by mutex_
  bool done_ = false;          // guarded by mutex_
  std::thread thread_;
};

// A profile to report on, with its stacks interned if that was done while
// it was read.
struct LoadedProfile {
  report::HeapProfile profile;
  std::optional<report::aggregate::InternedAddresses> interned;
};

// The dumps (summed), minus the base dumps (summed) when there are any. All
// are read side by side, then put in one address space: dumps of different
// processes (or a base from before a restart) have their modules elsewhere.
// A single dump's stacks are interned, and its addresses go to `early`,
// as they are read (when there is an `early`).
Result<LoadedProfile> LoadRequestedProfile(const ReportRequest& request,
                                           report::pprof::ParallelSymbolizer* early) {
  std::vector<std::string> paths = DumpPaths(request);
  const size_t dump_count = paths.size();
  if (dump_count == 1 && request.base_path.empty() && request.more_base_paths.empty()) {
    if (early == nullptr) {
      auto profile = LoadProfile(request.dump_path);
      if (!profile) return Fail(profile.error());
      return LoadedProfile{std::move(*profile), std::nullopt};
    }
    std::error_code unknown;  // no size: no room ahead
    const uintmax_t bytes = std::filesystem::file_size(request.dump_path, unknown);
    BackgroundInterner interner(*early, unknown ? 0 : bytes);
    std::vector<size_t> merged;
    auto profile = LoadProfile(
        request.dump_path,
        [&interner](std::span<const uint64_t> stack) { interner.Observe(stack); }, &merged);
    report::aggregate::InternedAddresses interned = interner.Finish();
    if (!profile) return Fail(profile.error());
    report::aggregate::DropRecords(interned, merged);
    return LoadedProfile{std::move(*profile), std::move(interned)};
  }
  const std::vector<std::string> bases = BasePaths(request);
  paths.insert(paths.end(), bases.begin(), bases.end());
  auto loaded = LoadProfiles(paths);
  if (!loaded) return Fail(loaded.error());
  report::merge::SharedSpace space = report::merge::IntoOneAddressSpace(std::move(*loaded));
  std::vector<report::HeapProfile> base_profiles(
      std::make_move_iterator(space.profiles.begin() + static_cast<ptrdiff_t>(dump_count)),
      std::make_move_iterator(space.profiles.end()));
  space.profiles.resize(dump_count);
  report::HeapProfile profile =
      report::merge::SumProfiles(std::move(space.profiles), space.mapped_libraries);
  if (base_profiles.empty()) return LoadedProfile{std::move(profile), std::nullopt};
  report::HeapProfile base = report::merge::SumProfiles(std::move(base_profiles), {});
  return LoadedProfile{report::aggregate::SubtractBase(std::move(profile), std::move(base)),
                       std::nullopt};
}

// With --base the renderer draws a differential flame graph and adds what
// its colours mean; the title names both dumps.
report::render::SvgOptions SvgOptionsFor(const ReportRequest& request) {
  report::render::SvgOptions options;
  options.title = "memprof: " + std::string(PathBasename(request.dump_path));
  if (!request.more_dump_paths.empty()) {
    options.title += " and " + std::to_string(request.more_dump_paths.size()) + " more (summed)";
  }
  if (!request.base_path.empty())
    options.title += " vs base " + std::string(PathBasename(request.base_path));
  return options;
}

// `symbolization` may be null for the formats that do not show it.
std::unique_ptr<report::render::ReportRenderer> MakeRenderer(
    const ReportRequest& request, const report::aggregate::SymbolizationSummary* symbolization,
    const report::AllocationSummary* allocation) {
  report::render::ReportOptions options;
  options.allocation = allocation;
  options.show_bytes = request.show_bytes;
  options.sort_by_cum = request.sort_by_cum;
  options.top = request.top;
  options.symbolization = symbolization;
  switch (request.format) {
    case Format::kCollapsed: return std::make_unique<report::render::CollapsedReportRenderer>();
    case Format::kJson: return std::make_unique<report::render::JsonReportRenderer>(options);
    case Format::kSvg:
      return std::make_unique<report::render::SvgReportRenderer>(SvgOptionsFor(request));
    case Format::kText:
    case Format::kPprof: break;
  }
  return std::make_unique<report::render::TextReportRenderer>(options);
}

// "PATH: read through /proc/N/map_files/..." for each file the symbolizer
// opened, or "PATH: not read: why".
std::vector<std::string> FilesRead(const std::vector<report::symbolize::ModuleReport>& modules) {
  std::vector<std::string> lines;
  for (const report::symbolize::ModuleReport& module : modules) {
    lines.push_back(module.path + (module.opened_as.empty() ? ": not read: " + module.problem
                                                            : ": read " + module.opened_as));
  }
  return lines;
}

// With a thread to spare, the Debian packages of the files with unnamed
// frames are looked up while the main thread aggregates
// (PrefetchPackageOwners); a profile whose frames all have names reads
// none of dpkg's lists.
SummaryContext SummaryContextFor(const ReportRequest& request,
                                 const report::aggregate::InternedAddresses& interned,
                                 report::pprof::ParallelSymbolizer& symbolizer) {
  SummaryContext context;
  context.debuginfod = report::symbolize::DebuginfodConfigured();
  context.sysroot = request.sysroot;
  if (!context.sysroot.empty() || ReportThreadCount() < 2) return context;
  const std::vector<report::symbolize::ModuleReport> modules =
      ModulesWithUnnamedFrames(symbolizer.Modules(), interned.addresses, symbolizer);
  if (!modules.empty()) context.owners = PrefetchPackageOwners(modules, context.dpkg_info_dir);
  return context;
}

// The svg and collapsed renderers read no function table: whether the
// report is empty is told beside the summary, without one outside a diff.
bool DrawsStacksOnly(Format format) {
  return format == Format::kSvg || format == Format::kCollapsed;
}

// Gives `aggregation` its function table; whether a row of it is shown.
bool AddFunctionTable(report::aggregate::Aggregation& aggregation) {
  report::aggregate::FunctionTable table = report::aggregate::FunctionRows(aggregation);
  aggregation.functions = std::move(table.functions);
  aggregation.shown_total = table.shown_total;
  return report::aggregate::AnyRowShown(aggregation.functions);
}

// After the aggregation, with two threads: the second makes the
// symbolization summary (reading the stacks and locations) while the first
// makes the function table and, but for json (whose head holds the
// summary), writes the report.
Result<void> RenderAggregated(const ReportRequest& request, const report::HeapProfile& profile,
                              const report::aggregate::InternedAddresses& interned,
                              report::pprof::ParallelSymbolizer& symbolizer, std::ostream& out,
                              report::aggregate::SymbolizationSummary* symbolization,
                              const report::AllocationSummary* allocation) {
  namespace aggregate = report::aggregate;
  const SummaryContext context = SummaryContextFor(request, interned, symbolizer);
  aggregate::AggregateOptions options{request.metric, request.focus, request.ignore, &interned,
                                      request.lines};
  auto aggregation = aggregate::AggregateStacks(profile, symbolizer, options);
  if (!aggregation) return Fail(aggregation.error());
  const bool stacks_only = DrawsStacksOnly(request.format);
  aggregate::SymbolizationSummary summary;
  bool any_row_shown = false;
  auto summarize = [&] {
    if (stacks_only) any_row_shown = aggregate::AnyRowShown(*aggregation);
    summary = SummarizeSymbolization(
        *aggregation, [&] { return symbolizer.Modules(); }, context);
  };
  const bool json = request.format == Format::kJson;
  Result<void> rendered;
  {
    std::jthread side;
    if (ReportThreadCount() >= 2) {
      side = std::jthread(summarize);
    } else {
      summarize();
    }
    if (!stacks_only) any_row_shown = AddFunctionTable(*aggregation);
    if (!json) rendered = MakeRenderer(request, nullptr, allocation)->Render(*aggregation, out);
  }
  summary.is_diff = aggregation->is_diff;
  summary.empty = !any_row_shown;
  if (request.describe_files) summary.files_read = FilesRead(symbolizer.Modules());
  summary.sampler = profile.sampler;
  if (json) rendered = MakeRenderer(request, &summary, allocation)->Render(*aggregation, out);
  if (symbolization != nullptr) *symbolization = summary;
  if (request.process_ends_after) LeaveToExit(std::move(*aggregation));
  return rendered;
}

// The symbolizer started from the maps at the end of the (first) dump,
// before the dump is parsed: its threads open the big files meanwhile.
struct EarlySymbolizer {
  std::vector<std::string> maps_lines;
  std::unique_ptr<report::pprof::ParallelSymbolizer> symbolizer;  // null if not started
};

// Not with debuginfod: opening a file no address needs could download its
// debug info.
EarlySymbolizer StartEarly(const ReportRequest& request) {
  EarlySymbolizer early;
  if (ReportThreadCount() < 2 || report::symbolize::DebuginfodConfigured()) return early;
  early.maps_lines = PeekMappedLibraries(request.dump_path);
  if (early.maps_lines.empty()) return early;
  const report::symbolize::ParsedMemoryMap map =
      report::symbolize::ParseMemoryMap(early.maps_lines);
  auto symbolizer = StartReportSymbolizer(request, map.mappings);
  if (symbolizer) early.symbolizer = std::move(*symbolizer);
  return early;
}

}  // namespace

namespace {

// The symbolizer for `profile`'s maps: the early one when the peek saw
// them right. With --pid, first checks that the process wrote the dump.
Result<std::unique_ptr<report::pprof::ParallelSymbolizer>> ReadySymbolizer(
    const ReportRequest& request, const report::HeapProfile& profile,
    const report::symbolize::ParsedMemoryMap& map, EarlySymbolizer& early) {
  if (request.pid) {
    // The first dump's own maps: merged dumps' are moved into one space.
    const bool alone = request.more_dump_paths.empty() && BasePaths(request).empty();
    auto ok = CheckDumpProcess(*request.pid, alone ? profile.mapped_libraries
                                                   : PeekMappedLibraries(request.dump_path));
    if (!ok) return Fail(ok.error());
  }
  if (early.symbolizer != nullptr && early.maps_lines == profile.mapped_libraries) {
    return std::move(early.symbolizer);
  }
  early.symbolizer.reset();  // stops its threads: the dump's maps were not what the peek saw
  return StartReportSymbolizer(request, map.mappings);
}

// Symbolizes and writes `profile` in request.format; `allocation` when it
// is an allocation profile. The stacks are freed as they are used
// (TakeLookupAddresses, WritePprofReleasing). `interned`: the profile's
// stacks interned already (as it was read), if they were.
Result<void> RenderProfile(
    const ReportRequest& request, report::HeapProfile& profile, EarlySymbolizer& early,
    std::ostream& out, report::aggregate::SymbolizationSummary* symbolization,
    const report::AllocationSummary* allocation = nullptr,
    std::optional<report::aggregate::InternedAddresses> interned_already = {}) {
  auto map = report::symbolize::ParseMemoryMap(profile.mapped_libraries);
  auto symbolizer = ReadySymbolizer(request, profile, map, early);
  if (!symbolizer) return Fail(symbolizer.error());
  Result<void> rendered;
  if (request.format != Format::kPprof) {
    report::aggregate::InternedAddresses interned;
    if (interned_already) {
      interned = std::move(*interned_already);
      // As TakeLookupAddresses leaves them: the aggregation reuses the memory.
      for (report::Sample& sample : profile.samples) std::vector<uint64_t>().swap(sample.stack);
    } else {
      interned = report::aggregate::TakeLookupAddresses(profile);
    }
    (*symbolizer)->ResolveAll(interned.addresses);
    rendered = RenderAggregated(request, profile, interned, **symbolizer, out, symbolization,
                                allocation);
    if (request.process_ends_after) LeaveToExit(std::move(interned));
  } else {
    // The interned addresses are DistinctLookupAddresses' list: first met,
    // in sample order (the records merged away bring no address of their own).
    (*symbolizer)
        ->ResolveAll(interned_already ? interned_already->addresses
                                      : report::pprof::DistinctLookupAddresses(profile));
    if (symbolization != nullptr) symbolization->sampler = profile.sampler;
    report::pprof::PprofOptions pprof_options;
    pprof_options.sysroot = SymbolizerOptionsFor(request).sysroot;
    pprof_options.pid = request.pid;
    if (allocation != nullptr) SetAllocationPprofOptions(*allocation, pprof_options);
    rendered =
        report::pprof::WritePprofReleasing(profile, **symbolizer, map.mappings, pprof_options, out);
    if (request.describe_files && symbolization != nullptr) {
      symbolization->files_read = FilesRead((*symbolizer)->Modules());
    }
  }
  if (request.process_ends_after) LeaveToExit(std::move(*symbolizer));
  return rendered;
}

// An allocation profile: read alone, by default ranked by bytes allocated.
Result<void> RunAllocationReport(const ReportRequest& request, std::ostream& out,
                                 report::aggregate::SymbolizationSummary* symbolization) {
  if (auto ok = CheckAllocationRequest(request); !ok) return ok;
  EarlySymbolizer early = StartEarly(request);
  auto loaded = LoadAllocationProfile(request.dump_path);
  if (!loaded) return Fail(loaded.error());
  report::HeapProfile& profile = loaded->samples.profile;
  if (request.lifetimes) {
    auto map = report::symbolize::ParseMemoryMap(profile.mapped_libraries);
    auto symbolizer = ReadySymbolizer(request, profile, map, early);
    if (!symbolizer) return Fail(symbolizer.error());
    return WriteLifetimes(request, *loaded, **symbolizer, out);
  }
  ReportRequest ranked = request;
  ranked.metric = AllocationMetric(request);
  return RenderProfile(ranked, profile, early, out, symbolization, &loaded->samples.summary);
}

// Before any symbolizer starts: its threads read the settings.
void UseCaches(const ReportRequest& request) {
  namespace symbolize = report::symbolize;
  std::optional<std::string> debug_files;
  std::optional<std::string> symbol_indexes;
  if (request.use_caches) {
    debug_files = symbolize::DefaultDebugFileCacheDir();
    symbol_indexes = symbolize::DefaultSymbolIndexCacheDir();
  }
  symbolize::SetDebugFileCache(
      debug_files ? std::optional(symbolize::DebugFileCacheSettings{*debug_files}) : std::nullopt);
  symbolize::SetSymbolIndexCache(
      symbol_indexes ? std::optional(symbolize::SymbolIndexCacheSettings{*symbol_indexes})
                     : std::nullopt);
}

}  // namespace

Result<void> RunReportPipeline(const ReportRequest& request, std::ostream& out,
                               report::aggregate::SymbolizationSummary* symbolization) {
  UseCaches(request);
  if (report::parse::IsAllocationProfileFile(request.dump_path)) {
    return RunAllocationReport(request, out, symbolization);
  }
  if (request.lifetimes) return LifetimesNeedAllocationProfile(request.dump_path);
  if (request.trend) return RunTrendPipeline(request, out);
  EarlySymbolizer early = StartEarly(request);
  auto loaded = LoadRequestedProfile(request, early.symbolizer.get());
  if (!loaded) return Fail(loaded.error());
  report::HeapProfile& profile = loaded->profile;
  if (auto ok = CheckMetricHasData(profile, request.metric, request.dump_path); !ok) {
    return Fail(ok.error());
  }
  Result<void> rendered = RenderProfile(request, profile, early, out, symbolization, nullptr,
                                        std::move(loaded->interned));
  if (request.process_ends_after) LeaveToExit(std::move(profile));
  return rendered;
}

}  // namespace memprof::report
