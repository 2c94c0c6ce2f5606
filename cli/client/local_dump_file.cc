#include "cli/client/local_dump_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace memprof::cli {
namespace {

constexpr size_t kPieceBytes = 1024 * 1024;

std::string ProcPath(pid_t pid, const std::string& rest) {
  return "/proc/" + std::to_string(pid) + "/" + rest;
}

// Whether a failed stat or open of a /proc descriptor was the kernel's no.
bool Refused(int err) { return err == EACCES || err == EPERM; }

}  // namespace

std::unexpected<Error> TransferLoss(const std::string& what) {
  return Fail(ErrorCode::kDataLoss, "heap profile transfer failed: " + what);
}

bool CanOpenFilesOf(pid_t pid) {
  if (pid <= 0) return false;
  char target[PATH_MAX];
  return ::readlink(ProcPath(pid, "exe").c_str(), target, sizeof target) >= 0;
}

namespace {

bool IsNamedFile(const struct stat& st, const memprof::v1::DumpMetadata& metadata) {
  return S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_dev) == metadata.file_device() &&
         static_cast<uint64_t>(st.st_ino) == metadata.file_inode();
}

}  // namespace

Fd LocalDumpFile::OpenIfNamed(const std::string& path, const memprof::v1::DumpMetadata& metadata,
                              bool& refused) {
  // Looked at before it is opened: the same number in another thread's table
  // is one of the host's files, and opening some (a FIFO, a watchdog or tape
  // device) blocks or does something. stat() follows the link without
  // opening; the open then checks again (the number may change in between),
  // and never waits or takes a terminal.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    refused = refused || Refused(errno);
    return Fd();
  }
  if (!IsNamedFile(st, metadata)) return Fd();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    refused = refused || Refused(errno);
    return Fd();
  }
  if (::fstat(fd.get(), &st) != 0 || !IsNamedFile(st, metadata)) return Fd();
  return fd;
}

Result<LocalDumpFile> LocalDumpFile::Open(pid_t pid, const memprof::v1::DumpMetadata& metadata) {
  const std::string fd_part = "/fd/" + std::to_string(metadata.file_descriptor());
  bool refused = false;
  if (metadata.pid() == pid && metadata.file_thread() > 0) {
    const std::string path =
        ProcPath(pid, "task/" + std::to_string(metadata.file_thread())) + fd_part;
    if (Fd fd = OpenIfNamed(path, metadata, refused)) return LocalDumpFile(std::move(fd), path);
  }
  // The agent's thread is gone, or has another number here: every thread
  // (the main thread too: an agent the kernel refused a table of its own
  // shares the host's).
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ProcPath(pid, "task"), ec)) {
    const std::string path = entry.path().string() + fd_part;
    if (Fd fd = OpenIfNamed(path, metadata, refused)) return LocalDumpFile(std::move(fd), path);
  }
  const std::string what = ProcPath(pid, "task/*") + fd_part;
  if (refused) {
    return Fail(ErrorCode::kPermissionDenied,
                "cannot open the agent's dump file (" + what + "): permission denied");
  }
  return Fail(ErrorCode::kNotFound, "no thread of the agent holds its dump file (" + what + ")");
}

Result<void> LocalDumpFile::CopyUpTo(uint64_t end, const Writer& write) {
  while (copied_ < end) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kPieceBytes, end - copied_));
    buffer_.resize(want);
    ssize_t n;
    do {
      n = ::pread(fd_.get(), buffer_.data(), want, static_cast<off_t>(copied_));
    } while (n < 0 && errno == EINTR);
    if (n < 0)
      return TransferLoss(std::string("reading the agent's dump file: ") + std::strerror(errno));
    if (n == 0) {
      return TransferLoss("the agent's dump file ends at " + std::to_string(copied_) +
                          " bytes, before the " + std::to_string(end) + " it said were written");
    }
    copied_ += static_cast<uint64_t>(n);
    if (auto written = write(std::string_view(buffer_.data(), static_cast<size_t>(n))); !written) {
      return Fail(written.error());
    }
  }
  return {};
}

}  // namespace memprof::cli
