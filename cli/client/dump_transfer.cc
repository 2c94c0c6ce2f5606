#include "cli/client/dump_transfer.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/client/local_dump_file.h"
#include "cli/io/logging.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

// The largest chunk an agent sends (docs/protocol.md, "Dump"): fewer
// messages for both sides to frame, copy and hash one by one.
constexpr uint32_t kDumpChunkBytes = 1024 * 1024;

// One Dump call; `local_pid` non-zero asks the agent to name its file for
// this process to copy (docs/protocol.md, "Dump").
Result<DumpSummary> DumpOnce(const Target& target, ProfileClient& client,
                             const DumpReceiver::Writer& write, memprof::v1::DumpRequest request,
                             pid_t local_pid, bool& local_file_refused) {
  DumpReceiver receiver(write, local_pid);
  request.set_local_file(local_pid != 0);
  auto streamed = client.Dump(target, request, [&receiver](const memprof::v1::DumpChunk& chunk) {
    return receiver.OnChunk(chunk);
  });
  local_file_refused = receiver.local_file_refused();
  if (!streamed) return Fail(streamed.error());
  return receiver.Finish();
}

// Whether to copy the profile out of the agent's file: for a local target
// whose files this process may open, and not for an allocation window's
// profile, which the agent hands over once (a refused open could not be
// followed by a second try) and which is small anyway.
pid_t LocalCopyPid(const Target& target, uint64_t allocation_window) {
  if (allocation_window != 0) return 0;
  return CanOpenFilesOf(target.local_pid()) ? target.local_pid() : 0;
}

}  // namespace

Result<DumpSummary> StreamDump(const Target& target, ProfileClient& client,
                               const DumpReceiver::Writer& write, const std::stop_token& stop,
                               uint64_t capture_sequence, uint64_t allocation_window) {
  memprof::v1::DumpRequest request;
  request.set_chunk_size_bytes(kDumpChunkBytes);
  request.set_capture_sequence(capture_sequence);
  request.set_allocation_window(allocation_window);
  bool refused = false;
  auto summary =
      DumpOnce(target, client, write, request, LocalCopyPid(target, allocation_window), refused);
  if (!summary && refused && !stop.stop_requested()) {
    Log().debug("{}: {}; asking for the profile's bytes instead", DescribeTarget(target),
                summary.error().message);
    summary = DumpOnce(target, client, write, request, 0, refused);
  }
  if (!summary) return Fail(summary.error());
  if (stop.stop_requested()) return Fail(ErrorCode::kCancelled, "dump interrupted");
  return summary;
}

Result<Fd> OpenScratchFile() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  Fd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd) {
    return Fail(ErrorCode::kInternal, "cannot create a scratch file in " + dir +
                                          " for the profile: " + std::strerror(errno));
  }
  return fd;
}

nlohmann::json DumpSummaryToJson(const DumpSummary& summary, pid_t pid, const std::string& path) {
  return {{"schema_version", kDumpJsonVersion},
          {"pid", pid},
          {"path", path},
          {"size_bytes", summary.size_bytes},
          {"sha256", summary.sha256_hex},
          {"sample_interval_bytes", summary.sample_interval_bytes},
          {"created_unix_ms", summary.created_unix_ms}};
}

}  // namespace memprof::cli
