#include "cli/report/pprof/pprof_writer.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "cli/report/pprof/gzip_writer.h"
#include "cli/report/pprof/location_table.h"
#include "cli/report/pprof/mapping_table.h"
#include "cli/report/pprof/string_table.h"
#include "cli/report/symbolize/module_file.h"
#include "common/chunk_writer.h"
#include "pprof_proto/profile.pb.h"

namespace memprof::report::pprof {

// Anchored by pprof as ^(...)$ and matched against names without their
// argument lists ("operator new(unsigned long)" is "operator new"). pprof
// scans each stack from its root and cuts at the first match, so listing the
// entry points is enough: jemalloc's internals (imalloc, prof_backtrace...)
// are always below one of them. je_ covers a prefixed jemalloc build.
const char kAllocatorDropFrames[] =
    "(je_)?(malloc|calloc|realloc|free|cfree|memalign|posix_memalign|aligned_alloc|valloc|"
    "pvalloc|mallocx|rallocx|xallocx|dallocx|sdallocx|sdallocx_noflags|malloc_default)|"
    "operator new(\\[\\])?|operator delete(\\[\\])?|\\[lib(je|tc)malloc[^\\]]*\\]";

namespace {

namespace pb = perftools::profiles;

// An unsampled estimate as pprof's int64, to the nearest integer. Rounding
// (not truncating, which is what pprof's own legacy heap parser does) keeps
// the sum over many small samples unbiased: 20,000 stacks of ~1.5 objects
// each would otherwise lose a third of the objects.
int64_t ToCount(double value) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (std::isnan(value)) return 0;
  if (value >= kLimit) return std::numeric_limits<int64_t>::max();
  if (value <= -kLimit) return std::numeric_limits<int64_t>::min();
  return std::llround(value);
}

void SetValueType(pb::ValueType& type, StringTable& strings, const char* name, const char* unit) {
  type.set_type(strings.Intern(name));
  type.set_unit(strings.Intern(unit));
}

// The sample types in the order jeprof's --inuse_objects ... flags name
// them, counts before bytes as profile.proto's convention asks; an
// allocation profile's in the order of Go's allocs profile.
void SetSampleTypes(pb::Profile& profile, StringTable& strings, const report::HeapProfile& heap,
                    const PprofOptions& options) {
  if (options.allocation_profile) {
    SetValueType(*profile.add_sample_type(), strings, "alloc_objects", "count");
    SetValueType(*profile.add_sample_type(), strings, "alloc_space", "bytes");
  }
  SetValueType(*profile.add_sample_type(), strings, "inuse_objects", "count");
  SetValueType(*profile.add_sample_type(), strings, "inuse_space", "bytes");
  if (heap.has_alloc && !options.allocation_profile) {
    SetValueType(*profile.add_sample_type(), strings, "alloc_objects", "count");
    SetValueType(*profile.add_sample_type(), strings, "alloc_space", "bytes");
  }
  profile.set_default_sample_type(
      strings.Intern(options.allocation_profile ? "alloc_space" : "inuse_space"));
}

void SetHeader(pb::Profile& profile, StringTable& strings, const report::HeapProfile& heap,
               const PprofOptions& options) {
  SetSampleTypes(profile, strings, heap, options);
  SetValueType(*profile.mutable_period_type(), strings, "space", "bytes");
  profile.set_period(static_cast<int64_t>(heap.sample_period));
  if (options.time_nanos) profile.set_time_nanos(*options.time_nanos);
  if (options.duration_nanos) profile.set_duration_nanos(*options.duration_nanos);
  if (!options.drop_frames.empty()) profile.set_drop_frames(strings.Intern(options.drop_frames));
}

void AddSample(pb::Profile& profile, LocationTable& locations, const report::Sample& sample,
               bool has_alloc, bool alloc_first) {
  pb::Sample* out = profile.add_sample();
  out->mutable_location_id()->Reserve(static_cast<int>(sample.stack.size()));
  for (size_t i = 0; i < sample.stack.size(); ++i) {
    out->add_location_id(locations.IdFor(report::LookupAddress(sample.stack, i)));
  }
  if (alloc_first) {
    out->add_value(ToCount(sample.alloc.objects));
    out->add_value(ToCount(sample.alloc.bytes));
  }
  out->add_value(ToCount(sample.inuse.objects));
  out->add_value(ToCount(sample.inuse.bytes));
  if (has_alloc && !alloc_first) {
    out->add_value(ToCount(sample.alloc.objects));
    out->add_value(ToCount(sample.alloc.bytes));
  }
}

// Build IDs per file, read once even when a file has several executable
// mappings, from the file opened as the symbolizer opens it. A deleted
// mapping gets one only through a live process's map_files: the file now at
// its path (if any) is not the one that was mapped, and a wrong build ID is
// worse than none.
MappingTable::BuildIdReader CachedBuildIds(const PprofOptions& options) {
  if (!options.build_ids) return [](const symbolize::MemoryMapping&) { return std::string(); };
  auto cache = std::make_shared<std::unordered_map<std::string, std::string>>();
  symbolize::SymbolizerOptions files;
  files.sysroot = options.sysroot;
  files.pid = options.pid;
  return [cache, files](const symbolize::MemoryMapping& mapping) {
    auto [it, inserted] = cache->try_emplace(mapping.path);
    if (inserted) it->second = symbolize::MappedBuildId(mapping, files).value_or("");
    return it->second;
  };
}

// The elements [from, to) of a repeated message field, as the message
// they are in serializes them: each its tag, length and bytes.
template <typename Message>
std::string SerializedElements(int field,
                               const google::protobuf::RepeatedPtrField<Message>& elements,
                               int from, int to) {
  using google::protobuf::internal::WireFormatLite;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    const uint32_t tag = WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    for (int i = from; i < to; ++i) {
      coded.WriteTag(tag);
      coded.WriteVarint32(static_cast<uint32_t>(elements.Get(i).ByteSizeLong()));
      elements.Get(i).SerializeWithCachedSizes(&coded);
    }
  }
  return bytes;
}

// The message is serialized as it is made, so that its compression (most
// of the time of a pprof report) runs on another thread meanwhile (a
// ChunkWriter into a gzip stream): the sample types, then the samples a
// chunk at a time, then the rest of the message without them. protobuf
// writes a message's fields in the order of their numbers, and these are
// fields 1 and 2, so the bytes are those of serializing the whole message
// at the end; zlib's output does not depend on how its input is cut.
class StreamedProfile {
 public:
  StreamedProfile(pb::Profile& profile, std::ostream& out)
      : profile_(profile),
        gzip_(out),
        buffer_(gzip_),
        stream_(&buffer_),
        writer_(stream_, std::numeric_limits<size_t>::max()) {}

  void SendSampleTypes() {
    writer_.Write(SerializedElements(pb::Profile::kSampleTypeFieldNumber, profile_.sample_type(), 0,
                                     profile_.sample_type_size()));
  }
  // After each sample added: sends a chunk's worth.
  void SampleAdded() {
    if (profile_.sample_size() - sent_ >= kSamplesPerChunk) SendSamples();
  }
  [[nodiscard]] Result<void> Finish() {
    SendSamples();
    profile_.mutable_sample_type()->Clear();
    profile_.mutable_sample()->Clear();
    std::string rest;
    if (!profile_.SerializeToString(&rest)) {
      return Fail(ErrorCode::kInternal, "serializing the pprof profile failed");
    }
    writer_.Write(std::move(rest));
    writer_.Finish();
    if (!buffer_.result()) return buffer_.result();
    return gzip_.Finish();
  }

 private:
  // About 64 KiB of a big profile's samples (about 50 frames each).
  static constexpr int kSamplesPerChunk = 256;

  void SendSamples() {
    const int to = profile_.sample_size();
    writer_.Write(
        SerializedElements(pb::Profile::kSampleFieldNumber, profile_.sample(), sent_, to));
    sent_ = to;
  }

  pb::Profile& profile_;
  GzipWriter gzip_;
  GzipStreamBuffer buffer_;
  std::ostream stream_;
  ChunkWriter writer_;  // last: its thread writes into the others
  int sent_ = 0;
};

// WritePprof; of a profile that is not const, each stack is freed once in
// the message (WritePprofReleasing).
template <typename Heap>
Result<void> Write(Heap& heap, aggregate::AddressSymbolizer& symbolizer,
                   const std::vector<symbolize::MemoryMapping>& mappings,
                   const PprofOptions& options, std::ostream& out) {
  // One arena for the whole message: tens of thousands of small Sample and
  // Location objects are allocated and freed together.
  google::protobuf::Arena arena;
  pb::Profile& profile = *google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
  StringTable strings(profile);
  SetHeader(profile, strings, heap, options);
  MappingTable mapping_table(profile, strings, mappings, CachedBuildIds(options));
  LocationTable locations(profile, strings, mapping_table, symbolizer);
  StreamedProfile streamed(profile, out);
  streamed.SendSampleTypes();
  profile.mutable_sample()->Reserve(static_cast<int>(heap.samples.size()));
  for (auto& sample : heap.samples) {
    AddSample(profile, locations, sample, heap.has_alloc, options.allocation_profile);
    if constexpr (!std::is_const_v<Heap>) std::vector<uint64_t>().swap(sample.stack);
    streamed.SampleAdded();
  }
  return streamed.Finish();
}

}  // namespace

Result<void> WritePprof(const report::HeapProfile& heap, aggregate::AddressSymbolizer& symbolizer,
                        const std::vector<symbolize::MemoryMapping>& mappings,
                        const PprofOptions& options, std::ostream& out) {
  return Write(heap, symbolizer, mappings, options, out);
}

Result<void> WritePprofReleasing(report::HeapProfile& heap,
                                 aggregate::AddressSymbolizer& symbolizer,
                                 const std::vector<symbolize::MemoryMapping>& mappings,
                                 const PprofOptions& options, std::ostream& out) {
  return Write(heap, symbolizer, mappings, options, out);
}

}  // namespace memprof::report::pprof
