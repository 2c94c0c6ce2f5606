// jemalloc 5.3 (src/prof_recent.c, prof_recent_alloc_dump) writes
//   {"sample_interval":N,"recent_alloc_max":N,"recent_alloc":[RECORD,...]}
// with each RECORD
//   {"size":N,"usize":N,"released":B,"alloc_thread_uid":N[,"alloc_thread_name":S],
//    "alloc_time":N,"alloc_trace":["0x..",...]
//    [,"dalloc_thread_uid":N[,"dalloc_thread_name":S],"dalloc_time":N,"dalloc_trace":[...]]}
// Thread names are written unescaped, so a name holding '"' or '\' breaks
// the document: the error says so when it breaks near one.
#include "cli/report/parse/recent_alloc_json.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/report/parse/dump_scanner.h"

namespace memprof::report::parse {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kRecordsKey = "recent_alloc";
// The nesting nlohmann's parser callback reports: the document is depth 0,
// its members 1, the records (elements of "recent_alloc") 2.
constexpr int kMemberDepth = 1;
constexpr int kRecordDepth = 2;

// Thrown from the parser callback to stop parsing at the first bad record;
// caught in ParseRecentAllocJson, never beyond it.
struct StopParsing {};

std::string RecordName(size_t index) { return "record " + std::to_string(index) + " of recent_alloc"; }

Result<uint64_t> Unsigned(const Json& record, const char* key, size_t index) {
  auto it = record.find(key);
  if (it == record.end()) return BadField(RecordName(index) + " lacks \"" + key + "\"");
  if (!it->is_number_unsigned()) {
    return BadField(RecordName(index) + ": \"" + key + "\" is not a non-negative integer: " +
                    Excerpt(it->dump()));
  }
  return it->get<uint64_t>();
}

Result<std::optional<uint64_t>> OptionalUnsigned(const Json& record, const char* key,
                                                 size_t index) {
  if (!record.contains(key)) return std::optional<uint64_t>();
  auto value = Unsigned(record, key, index);
  if (!value) return Fail(value.error());
  return std::optional<uint64_t>(*value);
}

Result<std::vector<uint64_t>> Trace(const Json& record, const char* key, size_t index,
                                    size_t max_frames) {
  std::vector<uint64_t> stack;
  auto it = record.find(key);
  if (it == record.end()) return stack;
  if (!it->is_array()) return BadField(RecordName(index) + ": \"" + key + "\" is not an array");
  if (it->size() > max_frames) {
    return BadField(RecordName(index) + ": \"" + key + "\" has more than " +
                    std::to_string(max_frames) + " frames");
  }
  stack.reserve(it->size());
  for (const Json& frame : *it) {
    const std::string* text = frame.get_ptr<const std::string*>();
    std::optional<uint64_t> address;
    if (text != nullptr && text->starts_with("0x")) address = ParseHexAddress(*text);
    if (!address) {
      return BadField(RecordName(index) + ": bad address in \"" + key + "\": " +
                      Excerpt(frame.dump()) + " (expected \"0x<hex>\")");
    }
    stack.push_back(*address);
  }
  return stack;
}

Result<bool> Released(const Json& record, size_t index) {
  auto it = record.find("released");
  if (it == record.end()) return BadField(RecordName(index) + " lacks \"released\"");
  if (!it->is_boolean()) return BadField(RecordName(index) + ": \"released\" is not true or false");
  return it->get<bool>();
}

Result<void> ReadAllocSide(const Json& json, size_t index, size_t max_frames,
                           AllocationRecord& record) {
  auto size = Unsigned(json, "size", index);
  auto usize = size ? Unsigned(json, "usize", index) : size;
  auto released = usize ? Released(json, index) : Result<bool>(Fail(usize.error()));
  if (!released) return Fail(released.error());
  auto thread = Unsigned(json, "alloc_thread_uid", index);
  auto time = thread ? Unsigned(json, "alloc_time", index) : thread;
  if (!time) return Fail(time.error());
  if (!json.contains("alloc_trace")) return BadField(RecordName(index) + " lacks \"alloc_trace\"");
  auto trace = Trace(json, "alloc_trace", index, max_frames);
  if (!trace) return Fail(trace.error());
  record.size = *size;
  record.usize = *usize;
  record.released = *released;
  record.alloc_thread_uid = *thread;
  record.alloc_time_ns = *time;
  record.alloc_stack = std::move(*trace);
  return {};
}

Result<AllocationRecord> ToRecord(const Json& json, size_t index, size_t max_frames) {
  if (!json.is_object()) return BadField(RecordName(index) + " is not an object");
  AllocationRecord record;
  if (auto ok = ReadAllocSide(json, index, max_frames, record); !ok) return Fail(ok.error());
  auto thread = OptionalUnsigned(json, "dalloc_thread_uid", index);
  auto time = thread ? OptionalUnsigned(json, "dalloc_time", index) : thread;
  if (!time) return Fail(time.error());
  auto trace = Trace(json, "dalloc_trace", index, max_frames);
  if (!trace) return Fail(trace.error());
  if (record.released) {
    record.dalloc_thread_uid = *thread;
    record.dalloc_time_ns = *time;
    record.dalloc_stack = std::move(*trace);
  }
  return record;
}

// Follows the parser's events: keeps the top-level sample_interval, turns
// each element of "recent_alloc" into a record as soon as it is complete
// and discards its JSON.
class RecordCollector {
 public:
  RecordCollector(size_t max_records, size_t max_frames)
      : max_records_(max_records), max_frames_(max_frames) {}

  bool OnEvent(int depth, Json::parse_event_t event, Json& parsed);

  RecentAllocs result;
  Error error;
  bool failed = false;
  bool saw_records = false;

 private:
  bool InRecords() const { return key_ == kRecordsKey && in_array_; }
  bool Record(const Json& parsed);

  size_t max_records_;
  size_t max_frames_;
  std::string key_;  // the top-level member being parsed
  bool in_array_ = false;
};

bool RecordCollector::OnEvent(int depth, Json::parse_event_t event, Json& parsed) {
  using Event = Json::parse_event_t;
  if (depth == kMemberDepth) {
    if (event == Event::key) key_ = parsed.get<std::string>();
    if (event == Event::array_start && key_ == kRecordsKey) in_array_ = saw_records = true;
    if (event == Event::array_end) in_array_ = false;
    if (event == Event::value && key_ == "sample_interval" && parsed.is_number_unsigned()) {
      result.sample_interval = parsed.get<uint64_t>();
    }
    return true;  // the records array stays empty: each record is discarded
  }
  if (depth != kRecordDepth || !InRecords()) return true;
  if (event == Event::object_end || event == Event::array_end || event == Event::value) {
    return Record(parsed);
  }
  return true;
}

bool RecordCollector::Record(const Json& parsed) {
  const size_t index = result.records.size();
  if (index == max_records_) {
    error = Error(ErrorCode::kInvalidArgument,
                  "more than " + std::to_string(max_records_) + " records in recent_alloc");
    throw StopParsing{};
  }
  auto record = ToRecord(parsed, index, max_frames_);
  if (!record) {
    error = record.error();
    throw StopParsing{};
  }
  result.records.push_back(std::move(*record));
  return false;  // discard the record's JSON
}

// A parse error's text without nlohmann's "[json.exception.parse_error.101] "
// prefix, and a hint when it breaks inside a thread name.
std::string ParseErrorText(const Json::parse_error& error, std::string_view line) {
  std::string what = error.what();
  if (const size_t close = what.find("] "); what.starts_with("[json.") && close != std::string::npos) {
    what.erase(0, close + 2);
  }
  const size_t at = std::min<size_t>(error.byte, line.size());
  const size_t from = at > 256 ? at - 256 : 0;
  const std::string_view before = line.substr(from, at - from);
  const size_t name = before.rfind("_thread_name\":\"");
  if (name != std::string_view::npos && before.find("\",\"", name) == std::string_view::npos) {
    what += " (inside a thread name: jemalloc does not escape thread names, so a name holding "
            "'\"' or '\\' makes its dump invalid JSON; rename the thread)";
  }
  return "the recent allocations JSON is invalid at byte " + std::to_string(error.byte) +
         " of the line: " + what;
}

}  // namespace

Result<RecentAllocs> ParseRecentAllocJson(std::string_view line, size_t max_records,
                                          size_t max_frames) {
  if (line.empty() || line.front() != '{') {
    return BadField("expected the recent allocations JSON object ('{...}'), got " +
                    Excerpt(line));
  }
  RecordCollector collector(max_records, max_frames);
  try {
    Json::parser_callback_t callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
      return collector.OnEvent(depth, event, parsed);
    };
    const Json root = Json::parse(line.begin(), line.end(), callback);
    (void)root;  // the records went to the collector, one at a time
  } catch (const StopParsing&) {
    return Fail(collector.error);
  } catch (const Json::parse_error& error) {
    return BadField(ParseErrorText(error, line));
  } catch (const Json::exception& error) {
    return BadField(std::string("the recent allocations JSON is invalid: ") + error.what());
  }
  if (!collector.saw_records) {
    return BadField("the recent allocations JSON has no \"recent_alloc\" array");
  }
  return std::move(collector.result);
}

}  // namespace memprof::report::parse
