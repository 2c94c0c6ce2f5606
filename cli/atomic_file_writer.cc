#include "cli/atomic_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace memprof::cli {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

ErrorCode CodeForErrno(int err) {
  return err == EACCES || err == EPERM ? ErrorCode::kPermissionDenied : ErrorCode::kInternal;
}

std::unexpected<Error> ErrnoFail(int err, const std::string& what) {
  return Fail(CodeForErrno(err), what + ": " + std::strerror(err));
}

// Heap profiles carry the target's memory map and call stacks, and Stats
// its memory layout: like a core file, only their owner reads them.
constexpr mode_t kFinalMode = 0600;

std::string FileKind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

Result<void> CheckDestination(const std::string& path) {
  if (path.empty() || path.back() == '/') {
    return Fail(ErrorCode::kInvalidArgument, "output path '" + path + "' names a directory");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  if (S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                "output path '" + path + "' is a directory; name a file inside it");
  }
  // The file is written beside the destination and renamed over it, which
  // would replace a device or FIFO (e.g. /dev/null) with a regular file.
  if (!S_ISREG(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                "output path '" + path + "' is not a regular file (" + FileKind(st.st_mode) +
                    "); name a regular file, or use --out - and redirect stdout");
  }
  return {};
}

void SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());
}

}  // namespace

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  if (auto ok = CheckDestination(path); !ok) return Fail(ok.error());
  const std::string dir = DirectoryOf(path);
  std::string pattern = dir + "/." + BaseName(path) + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  Fd fd(::mkostemp(buf.data(), O_CLOEXEC));
  if (!fd) {
    return ErrnoFail(errno, "cannot create a file in directory '" + dir + "' for '" + path + "'");
  }
  return AtomicFileWriter(path, std::string(buf.data()), std::move(fd), kFinalMode);
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp_path, Fd fd,
                                   mode_t final_mode)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      fd_(std::move(fd)),
      final_mode_(final_mode) {}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      fd_(std::move(other.fd_)),
      final_mode_(other.final_mode_) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temp_path_ = std::exchange(other.temp_path_, std::string());
    fd_ = std::move(other.fd_);
    final_mode_ = other.final_mode_;
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { Discard(); }

void AtomicFileWriter::Discard() {
  fd_.Reset();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

Result<void> AtomicFileWriter::Write(std::string_view data) {
  if (temp_path_.empty()) return Fail(ErrorCode::kInternal, "write after commit to " + path_);
  while (!data.empty()) {
    const ssize_t n = ::write(fd_.get(), data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoFail(errno, "cannot write " + temp_path_);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Result<void> AtomicFileWriter::Commit() {
  if (temp_path_.empty()) return Fail(ErrorCode::kInternal, "commit twice to " + path_);
  if (::fsync(fd_.get()) != 0) return ErrnoFail(errno, "cannot sync " + temp_path_);
  if (::fchmod(fd_.get(), final_mode_) != 0) return ErrnoFail(errno, "cannot chmod " + temp_path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoFail(errno, "cannot rename " + temp_path_ + " to " + path_);
  }
  temp_path_.clear();
  fd_.Reset();
  SyncDirectory(DirectoryOf(path_));
  return {};
}

}  // namespace memprof::cli
