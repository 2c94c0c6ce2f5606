#include "cli/io/atomic_file_writer.h"

#include <cstdio>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "common/path.h"

namespace memprof::cli {
namespace {

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

Error AlreadyExists(const std::string& path) {
  return Error(
      ErrorCode::kInvalidArgument,
      "output file '" + path + "' already exists; add --force to replace it, or name another file");
}

// The directory the file goes into must exist: a usage error otherwise, as
// a missing --out-dir is (periodic_dump.h), found before any work.
Result<void> CheckDirectory(const std::string& path, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return {};
    errno = ENOTDIR;
  }
  const std::string where = "output path '" + path + "': ";
  if (errno == ENOENT) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "directory '" + dir + "' does not exist; create it first (mkdir -p)");
  }
  if (errno == ENOTDIR) {
    return Fail(ErrorCode::kInvalidArgument,
                where + "'" + dir + "' is not a directory; name a file in a directory");
  }
  return {};  // EACCES and the like: creating the file says it, with its code
}

Result<void> CheckDestination(const std::string& path, ExistingFile existing) {
  if (path.empty() || path.back() == '/') {
    return Fail(ErrorCode::kInvalidArgument, "output path '" + path + "' names a directory");
  }
  if (auto ok = CheckDirectory(path, PathDirname(path)); !ok) return ok;
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
  if (existing == ExistingFile::kRefuse) return Fail(AlreadyExists(path));
  return {};
}

void SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());
}

// A fresh name for the temp file beside `path`: ".<basename>.XXXXXX".
std::string TempPattern(const std::string& path) {
  return PathDirname(path) + "/." + std::string(PathBasename(path)) + ".XXXXXX";
}

// File systems without O_TMPFILE say so with one of these.
bool TmpfileUnsupported(int err) {
  return err == EOPNOTSUPP || err == EISDIR || err == EINVAL || err == ENOENT;
}

std::string ProcSelfFd(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Gives the anonymous file at `proc_path` the name `name`; EEXIST if taken.
int LinkAnonymous(const std::string& proc_path, const std::string& name) {
  return ::linkat(AT_FDCWD, proc_path.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW);
}

}  // namespace

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path, ExistingFile existing) {
  if (auto ok = CheckDestination(path, existing); !ok) return Fail(ok.error());
  const std::string dir = PathDirname(path);
  Fd anonymous(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, kFinalMode));
  if (anonymous) {
    const std::string proc_path = ProcSelfFd(anonymous.get());
    return AtomicFileWriter(path, proc_path, std::move(anonymous), true, existing);
  }
  if (!TmpfileUnsupported(errno)) {
    return ErrnoFail(errno, "cannot create a file in directory '" + dir + "' for '" + path + "'");
  }
  std::string pattern = TempPattern(path);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  Fd fd(::mkostemp(buf.data(), O_CLOEXEC));
  if (!fd) {
    return ErrnoFail(errno, "cannot create a file in directory '" + dir + "' for '" + path + "'");
  }
  return AtomicFileWriter(path, std::string(buf.data()), std::move(fd), false, existing);
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp_path, Fd fd, bool anonymous,
                                   ExistingFile existing)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      fd_(std::move(fd)),
      anonymous_(anonymous),
      existing_(existing) {}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      fd_(std::move(other.fd_)),
      anonymous_(other.anonymous_),
      existing_(other.existing_),
      synced_(other.synced_) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temp_path_ = std::exchange(other.temp_path_, std::string());
    fd_ = std::move(other.fd_);
    anonymous_ = other.anonymous_;
    existing_ = other.existing_;
    synced_ = other.synced_;
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { Discard(); }

void AtomicFileWriter::Discard() {
  fd_.Reset();  // an anonymous file disappears with its last descriptor
  if (!temp_path_.empty() && !anonymous_) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

// The anonymous file gets the destination's name directly when it is free
// (no temp name ever exists); else a temp name that is renamed over it.
Result<void> AtomicFileWriter::LinkIntoPlace() {
  if (LinkAnonymous(temp_path_, path_) == 0) return {};
  if (errno != EEXIST) return ErrnoFail(errno, "cannot create " + path_);
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    // linkat creates the name exclusively (EEXIST if taken): no race.
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%08x", random());
    const std::string name =
        PathDirname(path_) + "/." + std::string(PathBasename(path_)) + "." + suffix;
    if (LinkAnonymous(temp_path_, name) == 0) {
      if (::rename(name.c_str(), path_.c_str()) == 0) return {};
      const int err = errno;
      ::unlink(name.c_str());
      return ErrnoFail(err, "cannot rename " + name + " to " + path_);
    }
    if (errno != EEXIST) return ErrnoFail(errno, "cannot create a file beside " + path_);
  }
  return Fail(ErrorCode::kInternal, "cannot find a free temporary name beside " + path_);
}

Result<void> AtomicFileWriter::Write(std::string_view data) {
  if (temp_path_.empty()) return Fail(ErrorCode::kInternal, "write after commit to " + path_);
  while (!data.empty()) {
    const ssize_t n = ::write(fd_.get(), data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    // The user's path: the temporary file's name is ours (an anonymous
    // file's is /proc/self/fd/N), and the cause is the same.
    if (n < 0) return ErrnoFail(errno, "cannot write " + path_);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Result<void> AtomicFileWriter::SyncData() {
  if (synced_) return {};
  if (::fsync(fd_.get()) != 0) return ErrnoFail(errno, "cannot write " + path_);
  if (::fchmod(fd_.get(), kFinalMode) != 0) return ErrnoFail(errno, "cannot chmod " + path_);
  synced_ = true;
  return {};
}

Result<bool> AtomicFileWriter::CommitNew(const std::string& path) {
  if (temp_path_.empty()) return Fail(ErrorCode::kInternal, "commit twice to " + path);
  if (PathDirname(path) != PathDirname(path_)) {
    return Fail(ErrorCode::kInternal, path + " is not in the directory of " + path_);
  }
  if (auto synced = SyncData(); !synced) return Fail(synced.error());
  const int rc = anonymous_ ? LinkAnonymous(temp_path_, path)
                            : ::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, path.c_str(),
                                          RENAME_NOREPLACE);
  if (rc != 0 && errno == EEXIST) return false;
  if (rc != 0) return ErrnoFail(errno, "cannot create " + path);
  path_ = path;
  temp_path_.clear();
  fd_.Reset();
  SyncDirectory(PathDirname(path_));
  return true;
}

Result<void> AtomicFileWriter::Commit() {
  if (temp_path_.empty()) return Fail(ErrorCode::kInternal, "commit twice to " + path_);
  if (existing_ == ExistingFile::kRefuse) {
    auto committed = CommitNew(path_);
    if (!committed) return Fail(committed.error());
    if (!*committed) return Fail(AlreadyExists(path_));  // it appeared meanwhile
    return {};
  }
  if (auto synced = SyncData(); !synced) return synced;
  if (anonymous_) {
    if (auto linked = LinkIntoPlace(); !linked) return linked;
  } else if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoFail(errno, "cannot rename " + temp_path_ + " to " + path_);
  }
  temp_path_.clear();
  fd_.Reset();
  SyncDirectory(PathDirname(path_));
  return {};
}

}  // namespace memprof::cli
