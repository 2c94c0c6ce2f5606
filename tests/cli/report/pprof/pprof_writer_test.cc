#include "cli/report/pprof/pprof_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/symbolize/elf_layout.h"
#include "tests/cli/report/pprof/test_support.h"

namespace memprof::report::pprof {
namespace {

namespace pb = perftools::profiles;
using aggregate::Frame;

// Resolves exact lookup addresses to registered frames and counts calls, so
// the tests can tell which address the writer asked for and how often.
class FakeSymbolizer final : public aggregate::AddressSymbolizer {
 public:
  void Add(uint64_t address, std::vector<Frame> frames) { frames_[address] = std::move(frames); }

  std::span<const Frame> Resolve(uint64_t address) override {
    ++calls[address];
    auto it = frames_.find(address);
    if (it == frames_.end()) return {&unknown_, 1};
    return it->second;
  }

  std::map<uint64_t, int> calls;

 private:
  std::map<uint64_t, std::vector<Frame>> frames_;
  Frame unknown_;  // what the interface returns for an unresolvable address
};

std::string SelfPath() { return std::filesystem::read_symlink("/proc/self/exe"); }

symbolize::MemoryMapping Mapping(uint64_t start, uint64_t end, uint64_t offset, const char* perms,
                                 std::string path) {
  symbolize::MemoryMapping mapping;
  mapping.start = start;
  mapping.end = end;
  mapping.offset = offset;
  mapping.perms = perms;
  mapping.path = std::move(path);
  return mapping;
}

// Three mappings: an executable one (backed by this test binary, so there is
// a real build ID to read), a data one, and an executable one whose file
// does not exist. Addresses:
//   0x1010 leaf, 0x2010 / 0x2020 / 0x2050 callers in the first mapping,
//   0x3010 a caller in the data mapping, 0x8010 a caller nobody resolves.
class PprofWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mappings_ = {Mapping(0x1000, 0x3000, 0x400, "r-xp", SelfPath()),
                 Mapping(0x3000, 0x4000, 0, "rw-p", SelfPath()),
                 Mapping(0x8000, 0x9000, 0x1000, "r-xp", "/nonexistent/libgone.so")};
    profile_.sample_period = 524288;
    profile_.has_alloc = true;
    profile_.mapped_libraries = {"ignored: the writer uses `mappings`"};
    profile_.samples = {{{0x1010, 0x2010, 0x3010}, {1.5, 1000.4}, {2.5, 2000.6}},
                        {{0x1010, 0x2020, 0x8010}, {2.49, 10.5}, {3, 20}},
                        {{0x1010, 0x2050}, {0.2, 0.4}, {1e30, -2.5}}};
    symbolizer_.Add(0x1010, {{"leaf", "a.cc", 10, "app", 0}});
    // Lookup addresses of callers are one below the return address.
    symbolizer_.Add(0x200f, {{"inlined", "b.h", 5, "app", 0}, {"outer", "b.cc", 20, "app", 0}});
    symbolizer_.Add(0x201f, {{"outer", "b.cc", 22, "app", 0}});
    symbolizer_.Add(0x204f, {{"outer", "other.cc", 7, "app", 0}});
    symbolizer_.Add(0x300f, {{"main", "main.cc", 3, "app", 0}});
  }

  pb::Profile Write(const PprofOptions& options = {}) {
    std::ostringstream out;
    Result<void> written = WritePprof(profile_, symbolizer_, mappings_, options, out);
    EXPECT_TRUE(written.has_value()) << written.error().message;
    return testing::DecodeProfile(out.str());
  }

  report::HeapProfile profile_;
  FakeSymbolizer symbolizer_;
  std::vector<symbolize::MemoryMapping> mappings_;
};

const std::string& Str(const pb::Profile& profile, int64_t index) {
  return profile.string_table(static_cast<int>(index));
}

const pb::Location& LocationById(const pb::Profile& profile, uint64_t id) {
  for (const pb::Location& location : profile.location()) {
    if (location.id() == id) return location;
  }
  ADD_FAILURE() << "no location " << id;
  return pb::Location::default_instance();
}

const pb::Function& FunctionById(const pb::Profile& profile, uint64_t id) {
  for (const pb::Function& function : profile.function()) {
    if (function.id() == id) return function;
  }
  ADD_FAILURE() << "no function " << id;
  return pb::Function::default_instance();
}

// "name file:line" per Line of the location at `address`, in order.
std::vector<std::string> LinesAt(const pb::Profile& profile, uint64_t address) {
  std::vector<std::string> lines;
  for (const pb::Location& location : profile.location()) {
    if (location.address() != address) continue;
    for (const pb::Line& line : location.line()) {
      const pb::Function& function = FunctionById(profile, line.function_id());
      lines.push_back(Str(profile, function.name()) + " " + Str(profile, function.filename()) +
                      ":" + std::to_string(line.line()));
    }
  }
  return lines;
}

TEST_F(PprofWriterTest, HeaderDescribesAHeapProfile) {
  PprofOptions options;
  options.time_nanos = 1700000000123456789;
  pb::Profile profile = Write(options);
  ASSERT_GT(profile.string_table_size(), 0);
  EXPECT_EQ(profile.string_table(0), "");
  std::vector<std::string> types;
  for (const pb::ValueType& type : profile.sample_type())
    types.push_back(Str(profile, type.type()) + "/" + Str(profile, type.unit()));
  EXPECT_EQ(types, (std::vector<std::string>{"inuse_objects/count", "inuse_space/bytes",
                                             "alloc_objects/count", "alloc_space/bytes"}));
  EXPECT_EQ(Str(profile, profile.default_sample_type()), "inuse_space");
  EXPECT_EQ(Str(profile, profile.period_type().type()), "space");
  EXPECT_EQ(Str(profile, profile.period_type().unit()), "bytes");
  EXPECT_EQ(profile.period(), 524288);
  EXPECT_EQ(profile.time_nanos(), 1700000000123456789);
  EXPECT_EQ(Str(profile, profile.drop_frames()), kAllocatorDropFrames);
}

// An allocation profile reads like Go's allocs profile: the alloc types
// first, alloc_space by default, and the window as time and duration.
TEST_F(PprofWriterTest, AllocationProfileHasGoAllocsSampleTypesAndItsWindow) {
  PprofOptions options;
  options.allocation_profile = true;
  options.time_nanos = 1700000000000000000;
  options.duration_nanos = 30000000000;
  pb::Profile profile = Write(options);
  std::vector<std::string> types;
  for (const pb::ValueType& type : profile.sample_type())
    types.push_back(Str(profile, type.type()) + "/" + Str(profile, type.unit()));
  EXPECT_EQ(types, (std::vector<std::string>{"alloc_objects/count", "alloc_space/bytes",
                                             "inuse_objects/count", "inuse_space/bytes"}));
  EXPECT_EQ(Str(profile, profile.default_sample_type()), "alloc_space");
  EXPECT_EQ(profile.time_nanos(), 1700000000000000000);
  EXPECT_EQ(profile.duration_nanos(), 30000000000);
  ASSERT_EQ(profile.sample_size(), 3);
  // The first sample: alloc {2.5, 2000.6}, inuse {1.5, 1000.4}, rounded.
  EXPECT_EQ(std::vector<int64_t>(profile.sample(0).value().begin(), profile.sample(0).value().end()),
            (std::vector<int64_t>{3, 2001, 2, 1000}));
}

TEST_F(PprofWriterTest, OptionalHeaderFieldsStayUnset) {
  profile_.has_alloc = false;
  PprofOptions options;
  options.drop_frames = "";
  pb::Profile profile = Write(options);
  EXPECT_EQ(profile.sample_type_size(), 2);
  EXPECT_EQ(profile.time_nanos(), 0);
  EXPECT_EQ(profile.duration_nanos(), 0);
  EXPECT_EQ(profile.drop_frames(), 0);
  for (const pb::Sample& sample : profile.sample()) EXPECT_EQ(sample.value_size(), 2);
}

TEST_F(PprofWriterTest, ValuesAreRoundedToTheNearestInteger) {
  pb::Profile profile = Write();
  ASSERT_EQ(profile.sample_size(), 3);
  auto values = [&](int i) {
    const auto& v = profile.sample(i).value();
    return std::vector<int64_t>(v.begin(), v.end());
  };
  EXPECT_EQ(values(0), (std::vector<int64_t>{2, 1000, 3, 2001}));  // halves away from zero
  EXPECT_EQ(values(1), (std::vector<int64_t>{2, 11, 3, 20}));
  EXPECT_EQ(values(2), (std::vector<int64_t>{0, 0, std::numeric_limits<int64_t>::max(), -3}));
}

TEST_F(PprofWriterTest, SamplesReferToLocationsLeafFirstAtLookupAddresses) {
  pb::Profile profile = Write();
  ASSERT_EQ(profile.sample_size(), 3);
  std::vector<std::vector<uint64_t>> addresses;
  for (const pb::Sample& sample : profile.sample()) {
    std::vector<uint64_t>& stack = addresses.emplace_back();
    for (uint64_t id : sample.location_id()) stack.push_back(LocationById(profile, id).address());
  }
  EXPECT_EQ(addresses, (std::vector<std::vector<uint64_t>>{
                           {0x1010, 0x200f, 0x300f}, {0x1010, 0x201f, 0x800f}, {0x1010, 0x204f}}));
}

TEST_F(PprofWriterTest, OneLocationPerAddressSymbolizedOnce) {
  pb::Profile profile = Write();
  EXPECT_EQ(profile.location_size(), 6);
  std::set<uint64_t> ids;
  for (const pb::Location& location : profile.location()) {
    EXPECT_NE(location.id(), 0u);
    ids.insert(location.id());
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(symbolizer_.calls,
            (std::map<uint64_t, int>{
                {0x1010, 1}, {0x200f, 1}, {0x201f, 1}, {0x204f, 1}, {0x300f, 1}, {0x800f, 1}}));
}

TEST_F(PprofWriterTest, InlinedFramesComeInnermostFirst) {
  pb::Profile profile = Write();
  EXPECT_EQ(LinesAt(profile, 0x200f), (std::vector<std::string>{"inlined b.h:5", "outer b.cc:20"}));
  EXPECT_EQ(LinesAt(profile, 0x1010), (std::vector<std::string>{"leaf a.cc:10"}));
  EXPECT_EQ(LinesAt(profile, 0x800f), std::vector<std::string>{});  // unresolved: no Line
}

TEST_F(PprofWriterTest, FunctionsAreSharedByNameAndFile) {
  pb::Profile profile = Write();
  // leaf, inlined, outer (b.cc), outer (other.cc), main.
  ASSERT_EQ(profile.function_size(), 5);
  std::set<std::pair<std::string, std::string>> seen;
  for (const pb::Function& function : profile.function()) {
    EXPECT_NE(function.id(), 0u);
    EXPECT_EQ(function.system_name(), function.name());
    seen.emplace(Str(profile, function.name()), Str(profile, function.filename()));
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_TRUE(seen.contains({"outer", "b.cc"}));
  EXPECT_TRUE(seen.contains({"outer", "other.cc"}));
}

TEST_F(PprofWriterTest, OneMappingPerExecutableMapping) {
  pb::Profile profile = Write();
  ASSERT_EQ(profile.mapping_size(), 2);
  const pb::Mapping& app = profile.mapping(0);
  EXPECT_EQ(app.id(), 1u);
  EXPECT_EQ(app.memory_start(), 0x1000u);
  EXPECT_EQ(app.memory_limit(), 0x3000u);
  EXPECT_EQ(app.file_offset(), 0x400u);
  EXPECT_EQ(Str(profile, app.filename()), SelfPath());
  Result<std::string> build_id = symbolize::BuildId(SelfPath());
  ASSERT_TRUE(build_id.has_value()) << build_id.error().message;
  EXPECT_EQ(Str(profile, app.build_id()), *build_id);
  EXPECT_TRUE(app.has_functions());
  EXPECT_TRUE(app.has_filenames());
  EXPECT_TRUE(app.has_line_numbers());
  EXPECT_TRUE(app.has_inline_frames());

  const pb::Mapping& gone = profile.mapping(1);
  EXPECT_EQ(gone.id(), 2u);
  EXPECT_EQ(Str(profile, gone.filename()), "/nonexistent/libgone.so");
  EXPECT_EQ(gone.build_id(), 0);  // unreadable file: no build ID
  EXPECT_FALSE(gone.has_functions());
  EXPECT_FALSE(gone.has_filenames());
  EXPECT_FALSE(gone.has_line_numbers());
  EXPECT_FALSE(gone.has_inline_frames());
}

TEST_F(PprofWriterTest, LocationsPointAtTheirMapping) {
  pb::Profile profile = Write();
  std::map<uint64_t, uint64_t> mapping_of;
  for (const pb::Location& location : profile.location())
    mapping_of[location.address()] = location.mapping_id();
  EXPECT_EQ(mapping_of, (std::map<uint64_t, uint64_t>{{0x1010, 1},
                                                      {0x200f, 1},
                                                      {0x201f, 1},
                                                      {0x204f, 1},
                                                      {0x300f, 0},  // data, not code
                                                      {0x800f, 2}}));
}

TEST_F(PprofWriterTest, BuildIdsCanBeSkippedAndDeletedFilesGetNone) {
  PprofOptions options;
  options.build_ids = false;
  EXPECT_EQ(Write(options).mapping(0).build_id(), 0);
  mappings_[0].deleted = true;
  EXPECT_EQ(Write().mapping(0).build_id(), 0);
}

TEST_F(PprofWriterTest, FlagsStayOffWhenSymbolizationFoundOnlyNames) {
  symbolizer_.Add(0x1010, {{"leaf", "", 0, "app", 0}});
  profile_.samples.resize(1);
  profile_.samples[0].stack = {0x1010};
  pb::Profile profile = Write();
  EXPECT_TRUE(profile.mapping(0).has_functions());
  EXPECT_FALSE(profile.mapping(0).has_filenames());
  EXPECT_FALSE(profile.mapping(0).has_line_numbers());
  EXPECT_FALSE(profile.mapping(0).has_inline_frames());
}

// One unnamed address in a mapping (a stripped binary whose exported
// symbols name some frames) leaves all its flags off, so pprof will still
// symbolize the mapping itself (PPROF_BINARY_PATH, a symbol server).
TEST_F(PprofWriterTest, FlagsStayOffWhileAnyAddressOfTheMappingIsUnnamed) {
  profile_.samples.resize(1);
  profile_.samples[0].stack = {0x1010, 0x2090};  // 0x208f: nobody names it
  const pb::Mapping partly = Write().mapping(0);
  EXPECT_FALSE(partly.has_functions());
  EXPECT_FALSE(partly.has_filenames());
  EXPECT_FALSE(partly.has_line_numbers());
  EXPECT_FALSE(partly.has_inline_frames());
  profile_.samples[0].stack = {0x2090, 0x1010};  // the unnamed one first
  EXPECT_FALSE(Write().mapping(0).has_functions());
}

TEST_F(PprofWriterTest, AFailingStreamIsAnError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  Result<void> written = WritePprof(profile_, symbolizer_, mappings_, {}, out);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, ErrorCode::kInternal);
}

}  // namespace
}  // namespace memprof::report::pprof
