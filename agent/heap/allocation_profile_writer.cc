#include "agent/heap/allocation_profile_writer.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "common/fd.h"

namespace memprof::agent {
namespace {

constexpr std::string_view kRecordKey = "\"usize\":";

// Appends to the file behind `fd`, remembering the first failure.
class FileAppender {
 public:
  explicit FileAppender(int fd) : fd_(fd) {}

  void Append(std::string_view text) {
    while (error_ == 0 && !text.empty()) {
      const ssize_t n = ::write(fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        return;
      }
      written_ += static_cast<uint64_t>(n);
      text.remove_prefix(static_cast<size_t>(n));
    }
  }
  // jemalloc's write callback: the records, counted on their way.
  static void WriteRecords(void* self, const char* text) {
    auto* appender = static_cast<FileAppender*>(self);
    appender->records_.Feed(text);
    appender->Append(text);
  }
  int64_t records() const { return records_.count(); }

  int error() const { return error_; }
  uint64_t written() const { return written_; }

 private:
  int fd_;
  int error_ = 0;
  uint64_t written_ = 0;
  RecordCounter records_;
};

constexpr std::string_view kRecordsLostKey = "records_lost: ";

std::string Header(const AllocationWindowFacts& f) {
  std::string h = "memprof allocation profile v1\n";
  auto line = [&h](const char* key, const std::string& value) {
    h.append(key).append(": ").append(value).append("\n");
  };
  line("pid", std::to_string(f.pid));
  line("created_unix_ms", std::to_string(f.created_unix_ms));
  line("window_start_unix_ms", std::to_string(f.start_unix_ms));
  line("window_requested_ms", std::to_string(f.requested_ms));
  line("window_start_ns", std::to_string(f.start_ns));
  line("window_end_ns", std::to_string(f.end_ns));
  line("clock", f.clock.name);
  line("clock_resolution_ns", std::to_string(f.clock.resolution_ns));
  line("sample_interval", std::to_string(f.sample_interval_bytes));
  line("record_bound", std::to_string(f.record_bound));
  line("ended_by", WindowEndReasonName(f.ended_by));
  // One character, so that it can be rewritten in place once the records are counted.
  line("records_lost", f.records_lost ? "1" : "0");
  h.append("--- recent allocations\n");
  return h;
}

// The process's mappings, as jemalloc appends them to a heap_v2 profile.
Result<void> AppendMappings(FileAppender& out) {
  Fd maps(::open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (!maps) {
    return Fail(ErrorCode::kInternal,
                std::string("cannot read /proc/self/maps: ") + std::strerror(errno));
  }
  out.Append("MAPPED_LIBRARIES:\n");
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(maps.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(ErrorCode::kInternal,
                  std::string("cannot read /proc/self/maps: ") + std::strerror(errno));
    }
    if (n == 0) return {};
    out.Append(std::string_view(buf, static_cast<size_t>(n)));
  }
}

void CountInto(void* counter, const char* text) { static_cast<RecordCounter*>(counter)->Feed(text); }

}  // namespace

const char* WindowEndReasonName(WindowEndReason reason) {
  switch (reason) {
    case WindowEndReason::kDuration: return "duration";
    case WindowEndReason::kBound: return "bound";
    case WindowEndReason::kClient: return "client";
  }
  return "duration";
}

ProfClock ProfClock::Of(const JemallocControl& jemalloc) {
  ProfClock clock;
  if (jemalloc.ProfTimeResolution() == "high") {
    clock.id = CLOCK_REALTIME;
    clock.name = "realtime";
  }
  timespec res{};
  if (::clock_getres(clock.id, &res) == 0) {
    clock.resolution_ns = static_cast<uint64_t>(res.tv_sec) * 1000000000u +
                          static_cast<uint64_t>(res.tv_nsec);
  }
  return clock;
}

uint64_t ProfClock::NowNs() const {
  timespec now{};
  ::clock_gettime(id, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

Result<uint64_t> WriteAllocationProfile(const JemallocControl& jemalloc,
                                        const AllocationWindowFacts& facts, int fd) {
  FileAppender out(fd);
  const std::string header = Header(facts);
  out.Append(header);
  if (auto r = jemalloc.DumpRecentAllocations(&FileAppender::WriteRecords, &out); !r) {
    return Fail(r.error());
  }
  out.Append("\n");
  // A full record means jemalloc dropped the oldest to make room: the
  // profile then starts at its first record, not at the window's start.
  if (out.records() >= facts.record_bound && out.error() == 0) {
    const off_t at = static_cast<off_t>(header.find(kRecordsLostKey) + kRecordsLostKey.size());
    if (::pwrite(fd, "1", 1, at) != 1) {
      return Fail(ErrorCode::kInternal, std::string("cannot write the allocation profile: ") +
                                            std::strerror(errno));
    }
  }
  if (auto r = AppendMappings(out); !r) return Fail(r.error());
  out.Append("--- end\n");
  if (out.error() != 0) {
    return Fail(ErrorCode::kInternal, std::string("cannot write the allocation profile: ") +
                                          std::strerror(out.error()));
  }
  return out.written();
}

Result<int64_t> CountRecentAllocations(const JemallocControl& jemalloc) {
  RecordCounter counter;
  if (auto r = jemalloc.DumpRecentAllocations(&CountInto, &counter); !r) return Fail(r.error());
  return counter.count();
}

void RecordCounter::Feed(const char* text) {
  for (const char* p = text; *p != '\0'; ++p) {
    const char c = *p;
    if (c == kRecordKey[matched_]) {
      if (++matched_ == kRecordKey.size()) {
        ++count_;
        matched_ = 0;
      }
      continue;
    }
    // The key's only border: after `"usize"` its closing quote may open the next key.
    if (matched_ == kRecordKey.size() - 1 && c == kRecordKey[1]) {
      matched_ = 2;
    } else {
      matched_ = c == kRecordKey[0] ? 1 : 0;
    }
  }
}

}  // namespace memprof::agent
