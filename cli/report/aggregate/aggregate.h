#ifndef MEMPROF_CLI_REPORT_AGGREGATE_AGGREGATE_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_AGGREGATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli/report/aggregate/symbolization.h"
#include "cli/report/model/profile.h"
#include "common/result.h"

namespace memprof::report::aggregate {

// What to aggregate, with jeprof's option semantics.
// Every frame of a profile as an index into its distinct lookup addresses
// (LookupAddress), made in one pass: the symbolizer needs the distinct
// addresses, and the aggregation then needs no lookup per frame.
struct InternedAddresses {
  std::vector<uint64_t> addresses;  // distinct, in the order first seen
  std::vector<uint32_t> ids;        // per frame of every sample, back to back in sample order
  std::vector<size_t> starts;       // per sample, where its frames start in `ids`; then ids.size()
  std::span<const uint32_t> StackOf(size_t sample) const {
    return {ids.data() + starts[sample], starts[sample + 1] - starts[sample]};
  }
};
InternedAddresses InternLookupAddresses(const HeapProfile& profile);
// The same, freeing each sample's stack once its frames are interned: the
// aggregation needs only the ids, and the memory freed is what it reuses
// (a fresh page costs more than the work done on it in a big report).
// `profile` keeps its samples' values, with empty stacks.
InternedAddresses TakeLookupAddresses(HeapProfile& profile);

// InternLookupAddresses a stack at a time, for a caller that meets the
// stacks while a dump is read (and, there, on another thread than the
// parser's): Add the stacks in order, then Release.
class StackInterner {
 public:
  StackInterner();
  ~StackInterner();
  StackInterner(const StackInterner&) = delete;
  StackInterner& operator=(const StackInterner&) = delete;

  // Room for this many stacks and frames (a hint: more may be added).
  void Reserve(size_t stacks, size_t frames);
  // Interns the lookup addresses of `stack`, the next stack. Returns those
  // met for the first time, in order; valid until the next call.
  std::span<const uint64_t> Add(std::span<const uint64_t> stack);
  // The stacks added. Once; nothing may be added after.
  InternedAddresses Release();

 private:
  class Ids;
  InternedAddresses interned_;
  std::unique_ptr<Ids> ids_;  // into interned_.addresses
};

// Takes out of `interned` (one stack per record of a dump) the stacks of
// `records` (ascending), which Unsample merged into an earlier record's
// sample: what is left is the interning of the profile's samples.
void DropRecords(InternedAddresses& interned, std::span<const size_t> records);

struct AggregateOptions {
  Metric metric = Metric::kInuseSpace;
  // ECMAScript regexes, searched (not anchored) in each frame's address
  // (0x<hex> and jeprof's 16-digit form), short function name and
  // "file:line". Empty means unset. --focus keeps a stack if any frame
  // matches; --ignore then drops a stack if any frame matches.
  std::string focus;
  std::string ignore;
  // InternLookupAddresses of the profile being aggregated, if the caller
  // made it already (for the symbolizer); otherwise it is made here.
  const InternedAddresses* interned = nullptr;
  // --lines: every name carries its frame's " file:line" (FrameLineSuffix),
  // so rows are per line of code, as in jeprof --lines.
  bool lines = false;
};

// One distinct code address of the profile, symbolized once.
struct Location {
  uint64_t address = 0;       // lookup address (see LookupAddress)
  std::vector<Frame> frames;  // innermost inlined frame first, never empty
  // The names the function tables use, innermost first: the short function
  // name, " (inline)" appended for inlined frames, UnnamedFrameName if unknown.
  std::vector<std::string> names;
};

// A stack after the allocator's own frames were cut and the filters ran.
struct StackSample {
  std::vector<uint32_t> locations;  // indexes into Aggregation::locations, leaf first
  double value = 0;                 // in a --base diff: the change
  double base = 0;                  // a diff only: the base's value (now = value + base)
};

// One row of jeprof's --text table.
struct FunctionRow {
  std::string name;
  double flat = 0;  // in stacks whose leaf is this function
  double cum = 0;   // in stacks containing it (counted once per stack)
  // A diff only: the same sums over the base's values.
  double flat_base = 0;
  double cum_base = 0;
  // Whether the text table lists it: rows with nothing in them are left out.
  bool shown() const { return flat != 0 || cum != 0; }
};

struct Aggregation {
  Metric metric = Metric::kInuseSpace;
  // jeprof's "Total:" line: every stack, before frames are cut or filters run.
  double total = 0;
  // The sum of `flat`: what survives the filters, and the base of the
  // percentages (jeprof's TotalProfile($flat) in PrintText).
  double shown_total = 0;
  // A --base diff: the values above are changes, and each stack and row
  // also carries the base's value. Stacks that did not change are kept
  // then (value 0), for the "now" and "base" sums of their callers.
  bool is_diff = false;
  bool lines = false;     // AggregateOptions::lines: names carry file:line
  double total_base = 0;  // the base's header total
  std::vector<Location> locations;
  std::vector<StackSample> stacks;     // identical stacks merged, first-seen order
  std::vector<FunctionRow> functions;  // SortFunctionRows(by flat, by_change: is_diff)
};

// Symbolizes `profile` (each distinct address once) and aggregates it per
// function the way jeprof's FilterAndPrint does: RemoveUninterestingFrames,
// --focus, --ignore, then ReduceProfile (per-function names, each function
// once per stack) into flat and cum. Fails only on a bad regex.
[[nodiscard]] Result<Aggregation> AggregateProfile(const HeapProfile& profile,
                                                   AddressSymbolizer& symbolizer,
                                                   const AggregateOptions& options);

// AggregateProfile without its function table (`functions` empty,
// `shown_total` 0), for the reports that draw the stacks: FunctionRows
// makes the table from the result, on another thread if need be.
[[nodiscard]] Result<Aggregation> AggregateStacks(const HeapProfile& profile,
                                                  AddressSymbolizer& symbolizer,
                                                  const AggregateOptions& options);

// The `functions` and `shown_total` AggregateProfile gives, made from what
// AggregateStacks gives; reads `aggregation`, writes nothing.
struct FunctionTable {
  std::vector<FunctionRow> functions;
  double shown_total = 0;
};
FunctionTable FunctionRows(const Aggregation& aggregation);

// Whether FunctionRows would give a row with something in it (shown()),
// without making the table where it can tell: outside a diff every stack
// kept has a value, so a row shows as soon as one stack has a location
// the table does not ignore; a diff's changes can cancel out, and its
// table is made.
bool AnyRowShown(const Aggregation& aggregation);
// Whether a row of a made table has something in it.
bool AnyRowShown(const std::vector<FunctionRow>& rows);

// The function each sample's flat value goes to in AggregateProfile's
// table: the innermost name of the first location left after the
// allocator's frames are cut (addresses jeprof ignores skipped); "" when
// no frame is left. One per sample of `profile`, in order; `interned` is
// InternLookupAddresses(profile). No filters: --focus and --ignore are not
// applied.
std::vector<std::string> FlatFunctionNames(const HeapProfile& profile,
                                           AddressSymbolizer& symbolizer,
                                           const InternedAddresses& interned, bool lines);

// Sorts rows like jeprof's PrintText: by flat (or cum) descending, ties by
// name in byte order. `by_change` (a --base diff) ranks by the size of the
// change first: what shrank most ranks as high as what grew most, where
// jeprof's signed order puts it last, below thousands of unchanged rows
// (growth first between equal sizes).
void SortFunctionRows(std::vector<FunctionRow>& rows, bool by_cum, bool by_change = false);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_AGGREGATE_H_
