#include "agent/heap/allocation_profile_writer.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "agent/heap/recent_allocations.h"
#include "common/fd.h"

namespace memprof::agent {
namespace {

constexpr std::string_view kRecordKey = "\"usize\":";

// Writes everything appended to it gzip'd into the file behind `fd`,
// remembering the first failure. jemalloc's JSON repeats every stack as hex
// text: zlib's fastest level makes a profile 30 to 50 times smaller, and the
// memfd that holds it until it is fetched is memory of the process's cgroup.
class GzipAppender {
 public:
  explicit GzipAppender(int fd) : fd_(fd) {
    // 15 + 16: a gzip header and trailer around the deflate stream.
    if (deflateInit2(&zs_, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      error_ = Error(ErrorCode::kInternal, "cannot start zlib for the allocation profile");
    } else {
      initialized_ = true;
    }
  }
  ~GzipAppender() {
    if (initialized_) deflateEnd(&zs_);
  }
  GzipAppender(const GzipAppender&) = delete;
  GzipAppender& operator=(const GzipAppender&) = delete;

  void Append(std::string_view text) {
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs_.avail_in = static_cast<uInt>(text.size());
    Deflate(Z_NO_FLUSH);
  }
  // Ends the gzip stream: the size written, or the first failure.
  Result<uint64_t> Finish() {
    zs_.avail_in = 0;
    Deflate(Z_FINISH);
    if (error_) return Fail(*error_);
    return written_;
  }
  // jemalloc's write callback.
  static void Write(void* self, const char* text) { static_cast<GzipAppender*>(self)->Append(text); }

 private:
  void Deflate(int flush) {
    while (!error_) {
      zs_.next_out = out_;
      zs_.avail_out = sizeof(out_);
      if (deflate(&zs_, flush) == Z_STREAM_ERROR) {
        error_ = Error(ErrorCode::kInternal, "zlib failed on the allocation profile");
        return;
      }
      const size_t size = sizeof(out_) - zs_.avail_out;
      if (auto r = WriteAll(fd_, std::string_view(reinterpret_cast<char*>(out_), size),
                            "the allocation profile");
          !r) {
        error_ = r.error();
        return;
      }
      written_ += size;
      if (zs_.avail_out != 0) return;  // all input taken (and, finishing, all output)
    }
  }

  int fd_;
  z_stream zs_{};
  bool initialized_ = false;
  unsigned char out_[65536];
  std::optional<Error> error_;
  uint64_t written_ = 0;
};

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
  line("records_lost", f.records_lost ? "1" : "0");
  h.append("--- recent allocations\n");
  return h;
}

// The process's mappings, as jemalloc appends them to a heap_v2 profile.
Result<void> AppendMappings(GzipAppender& out) {
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

uint64_t ResolutionNs(clockid_t id) {
  timespec res{};
  if (::clock_getres(id, &res) != 0) return 0;
  return static_cast<uint64_t>(res.tv_sec) * 1000000000u + static_cast<uint64_t>(res.tv_nsec);
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
  clock.resolution_ns = ResolutionNs(clock.id);
  return clock;
}

ProfClock ProfClock::Monotonic() {
  ProfClock clock;
  clock.id = CLOCK_MONOTONIC;
  clock.name = "monotonic";
  clock.resolution_ns = ResolutionNs(clock.id);
  return clock;
}

uint64_t ProfClock::NowNs() const {
  timespec now{};
  ::clock_gettime(id, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

Result<uint64_t> WriteAllocationProfile(const RecentAllocations& records,
                                        const AllocationWindowFacts& facts, int fd) {
  GzipAppender out(fd);
  out.Append(Header(facts));
  if (auto r = records.Dump(&GzipAppender::Write, &out); !r) {
    return Fail(r.error());
  }
  out.Append("\n");
  if (auto r = AppendMappings(out); !r) return Fail(r.error());
  out.Append("--- end\n");
  return out.Finish();
}

Result<int64_t> CountRecentAllocations(const JemallocControl& jemalloc) {
  RecordCounter counter;
  if (auto r = jemalloc.DumpRecentAllocations(&CountInto, &counter); !r) return Fail(r.error());
  return counter.count();
}

void RecordCounter::Feed(const char* text) {
  const std::string_view piece(text);
  // A key that starts in the last piece's tail and ends in this one (it
  // cannot lie wholly in the tail, which is shorter than the key).
  const std::string joint = carry_ + std::string(piece.substr(0, kRecordKey.size() - 1));
  for (size_t at = joint.find(kRecordKey); at != std::string::npos && at < carry_.size();
       at = joint.find(kRecordKey, at + 1)) {
    ++count_;
  }
  for (size_t at = piece.find(kRecordKey); at != std::string_view::npos;
       at = piece.find(kRecordKey, at + kRecordKey.size())) {
    ++count_;
  }
  const std::string tail = carry_ + std::string(piece.substr(
                                        piece.size() > kRecordKey.size() - 1
                                            ? piece.size() - (kRecordKey.size() - 1)
                                            : 0));
  carry_ = tail.substr(tail.size() > kRecordKey.size() - 1 ? tail.size() - (kRecordKey.size() - 1)
                                                           : 0);
}

}  // namespace memprof::agent
