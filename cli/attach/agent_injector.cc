#include "cli/attach/agent_injector.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cli/attach/load_block.h"
#include "cli/attach/process_image.h"
#include "cli/attach/stopped_thread.h"
#include "cli/attach/thread_frames.h"
#include "common/fd.h"
#include "common/proc_status.h"
#include "common/text_file.h"

extern "C" const unsigned char memprof_load_thread_begin[];
extern "C" const unsigned char memprof_load_thread_end[];

namespace memprof::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kPages = 2 * MEMPROF_LB_PAGE_SIZE;
constexpr auto kStopBudget = std::chrono::milliseconds(200);
constexpr auto kCallBudget = std::chrono::seconds(5);
constexpr auto kLoadPoll = std::chrono::milliseconds(1);
constexpr auto kRetryPause = std::chrono::milliseconds(5);
constexpr int kBorrowRounds = 20;

// The target's libc functions the injection calls, and a `syscall`
// instruction to run system calls from.
struct LibcEntries {
  uint64_t pthread_create = 0;
  uint64_t syscall_function = 0;
  std::map<int, uint64_t> block_slots;  // MEMPROF_LB_* offset -> address
};

Result<LibcEntries> FindLibcEntries(const InjectRequest& request) {
  auto files = ReadMappedFiles(request.proc_root, request.pid);
  if (!files) return Fail(files.error());
  const MappedFile* libc = FindMappedFile(*files, "libc.so.6");
  if (libc == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition,
                "process " + std::to_string(request.pid) +
                    " does not use glibc's libc.so.6 (a static program?); attach needs its "
                    "pthread_create and dlopen");
  }
  const std::vector<std::string> names = {"pthread_create", "pthread_self", "pthread_detach",
                                          "dlopen",         "dlsym",        "dlerror",
                                          "strncpy",        "syscall"};
  auto found = DynamicSymbolAddresses(request.proc_root, request.pid, *libc, names);
  if (!found) return Fail(found.error());
  for (const std::string& name : names) {
    if (!found->contains(name)) {
      return Fail(ErrorCode::kFailedPrecondition,
                  libc->path + " does not export " + name + " (glibc 2.34 or later is needed)");
    }
  }
  LibcEntries entries;
  entries.pthread_create = found->at("pthread_create");
  entries.syscall_function = found->at("syscall");
  entries.block_slots = {{MEMPROF_LB_PTHREAD_SELF, found->at("pthread_self")},
                         {MEMPROF_LB_PTHREAD_DETACH, found->at("pthread_detach")},
                         {MEMPROF_LB_DLOPEN, found->at("dlopen")},
                         {MEMPROF_LB_DLSYM, found->at("dlsym")},
                         {MEMPROF_LB_DLERROR, found->at("dlerror")},
                         {MEMPROF_LB_STRNCPY, found->at("strncpy")}};
  return entries;
}

// The process's threads, those asleep in the kernel first (a thread blocked
// in epoll_wait or a condition variable is the likeliest to hold no lock),
// the main thread first among equals.
std::vector<pid_t> ThreadsToTry(const InjectRequest& request) {
  const std::string dir = request.proc_root + "/" + std::to_string(request.pid) + "/task";
  std::vector<std::pair<int, pid_t>> ranked;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (tid <= 0) continue;
      std::ifstream stat(dir + "/" + entry->d_name + "/stat");
      std::string line;
      std::getline(stat, line);
      const auto parsed = ParseProcStat(line);
      const char state = parsed ? parsed->state : '?';
      const int rank = (state == 'S' ? 0 : 2) + (tid == request.pid ? 0 : 1);
      ranked.emplace_back(rank, tid);
    }
    ::closedir(d);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<pid_t> tids;
  for (const auto& [rank, tid] : ranked) tids.push_back(tid);
  return tids;
}

// Stops a thread that may be borrowed. Tries every thread, a few rounds,
// before it gives up with the reasons.
Result<std::unique_ptr<StoppedThread>> BorrowThread(const InjectRequest& request,
                                                    ThreadFrames& frames) {
  std::string last_reason;
  for (int round = 0; round < kBorrowRounds && Clock::now() < request.deadline; ++round) {
    for (pid_t tid : ThreadsToTry(request)) {
      auto thread = StoppedThread::Stop(request.pid, tid, Clock::now() + kStopBudget);
      if (!thread) {
        if (thread.error().code == ErrorCode::kNotFound) continue;  // it just ended
        return Fail(thread.error());
      }
      std::optional<std::string> why = frames.WhyNotBorrow(tid);
      if (!why) return thread;
      last_reason = "thread " + std::to_string(tid) + ": " + *why;
      if (auto released = (*thread)->Release(); !released) return Fail(released.error());
    }
    std::this_thread::sleep_for(kRetryPause);
  }
  return Fail(ErrorCode::kUnavailable,
              "no thread of process " + std::to_string(request.pid) +
                  " could be borrowed safely in time (last: " + last_reason +
                  "); it was left as it was, try again");
}

Result<uint64_t> FindSyscallInstruction(const StoppedThread& thread, uint64_t function) {
  std::array<unsigned char, 64> code{};
  if (auto r = thread.Read(function, code.data(), code.size()); !r) return Fail(r.error());
  for (size_t i = 0; i + 1 < code.size(); ++i) {
    if (code[i] == 0x0f && code[i + 1] == 0x05) return function + i;
  }
  return Fail(ErrorCode::kInternal, "no syscall instruction found in libc's syscall()");
}

Result<int64_t> CheckedSyscall(StoppedThread& thread, uint64_t insn, int64_t nr,
                               std::array<uint64_t, 6> args, const char* what) {
  auto r = thread.Syscall(insn, nr, args);
  if (!r) return Fail(r.error());
  if (*r < 0 && *r > -4096) {
    return Fail(ErrorCode::kInternal, std::string(what) + " in the target failed: " +
                                          std::strerror(static_cast<int>(-*r)));
  }
  return *r;
}

// What the load thread opens and passes on: the agent's path in the target,
// and the server's when it is not beside the agent.
struct LoadPaths {
  std::string agent;
  std::string server;  // "" unless through memfds
};

std::vector<unsigned char> BlockPage(const LibcEntries& libc, const LoadPaths& paths,
                                     const int32_t (&close_fds)[2]) {
  std::vector<unsigned char> page(MEMPROF_LB_PAGE_SIZE, 0);
  std::memcpy(&page[MEMPROF_LB_CLOSE_FDS], close_fds, sizeof close_fds);
  for (const auto& [offset, address] : libc.block_slots) {
    std::memcpy(&page[offset], &address, sizeof address);
  }
  static constexpr char kStart[] = "memprof_agent_attach";
  std::memcpy(&page[MEMPROF_LB_SYMBOL], kStart, sizeof kStart);
  std::memcpy(&page[MEMPROF_LB_PATH], paths.agent.c_str(), paths.agent.size() + 1);
  std::memcpy(&page[MEMPROF_LB_ARGUMENT], paths.server.c_str(), paths.server.size() + 1);
  return page;
}

std::vector<unsigned char> CodePage() {
  std::vector<unsigned char> page(MEMPROF_LB_PAGE_SIZE, 0xcc);  // int3 everywhere else
  std::copy(memprof_load_thread_begin, memprof_load_thread_end, page.begin());
  return page;
}

// The target's memfds holding the agent and its server (through memfds);
// -1 when there are none.
struct PlantedFiles {
  int agent = -1;
  int server = -1;
};

// Maps the two pages (read-write for now) in the borrowed thread.
Result<uint64_t> MapPages(StoppedThread& thread, uint64_t insn) {
  auto mapped = CheckedSyscall(thread, insn, SYS_mmap,
                               {0, kPages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                static_cast<uint64_t>(-1), 0},
                               "mmap");
  if (!mapped) return Fail(mapped.error());
  return static_cast<uint64_t>(*mapped);
}

// Undoes what a failed attach left in the target: the pages and the memfds.
void Withdraw(StoppedThread& thread, uint64_t insn, uint64_t pages, const PlantedFiles& files) {
  if (pages != 0) (void)thread.Syscall(insn, SYS_munmap, {pages, kPages, 0, 0, 0, 0});
  for (int fd : {files.agent, files.server}) {
    if (fd >= 0) (void)thread.Syscall(insn, SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0});
  }
}

// Runs in the borrowed thread: maps the pages unless they are (through
// memfds), fills them and creates the load thread. On failure the pages are
// unmapped again, and the memfds closed.
Result<void> StartLoadThread(StoppedThread& thread, const LibcEntries& libc,
                             const LoadPaths& paths, uint64_t& pages,
                             const PlantedFiles& files) {
  auto insn = FindSyscallInstruction(thread, libc.syscall_function);
  if (!insn) return Fail(insn.error());
  if (pages == 0) {
    auto mapped = MapPages(thread, *insn);
    if (!mapped) return Fail(mapped.error());
    pages = *mapped;
  }
  const uint64_t code = pages + MEMPROF_LB_PAGE_SIZE;
  Result<void> done = [&]() -> Result<void> {
    const int32_t close_fds[2] = {files.agent, files.server};
    const auto block = BlockPage(libc, paths, close_fds);
    const auto text = CodePage();
    if (auto w = thread.Write(pages, block.data(), block.size()); !w) return w;
    if (auto w = thread.Write(code, text.data(), text.size()); !w) return w;
    auto protect = CheckedSyscall(thread, *insn, SYS_mprotect,
                                  {code, MEMPROF_LB_PAGE_SIZE, PROT_READ | PROT_EXEC, 0, 0, 0},
                                  "mprotect");
    if (!protect) return Fail(protect.error());
    auto created = thread.Call(libc.pthread_create, {pages + MEMPROF_LB_THREAD, 0, code, pages},
                               code + MEMPROF_LB_RETURN_TRAP, Clock::now() + kCallBudget);
    if (!created) return Fail(created.error());
    if (*created != 0) {
      return Fail(ErrorCode::kInternal, std::string("pthread_create in the target failed: ") +
                                            std::strerror(static_cast<int>(*created)));
    }
    return {};
  }();
  if (!done) {
    Withdraw(thread, *insn, pages, files);
    pages = 0;
  }
  return done;
}

// Through memfds, in the borrowed thread: maps the pages and creates the two
// memfds (their names written into the first page). On failure nothing is
// left.
Result<PlantedFiles> PlantFiles(StoppedThread& thread, const LibcEntries& libc, uint64_t& pages) {
  auto insn = FindSyscallInstruction(thread, libc.syscall_function);
  if (!insn) return Fail(insn.error());
  auto mapped = MapPages(thread, *insn);
  if (!mapped) return Fail(mapped.error());
  pages = *mapped;
  PlantedFiles files;
  static constexpr char kNames[] = "memprof-agent\0memprof-agent-server";
  const uint64_t names = pages + MEMPROF_LB_MEMFD_NAMES;
  Result<void> done = [&]() -> Result<void> {
    if (auto w = thread.Write(names, kNames, sizeof kNames); !w) return w;
    auto agent = CheckedSyscall(thread, *insn, SYS_memfd_create, {names, MFD_CLOEXEC, 0, 0, 0, 0},
                                "memfd_create");
    if (!agent) return Fail(agent.error());
    files.agent = static_cast<int>(*agent);
    auto server = CheckedSyscall(thread, *insn, SYS_memfd_create,
                                 {names + sizeof "memprof-agent", MFD_CLOEXEC, 0, 0, 0, 0},
                                 "memfd_create");
    if (!server) return Fail(server.error());
    files.server = static_cast<int>(*server);
    return {};
  }();
  if (!done) {
    Withdraw(thread, *insn, pages, files);
    pages = 0;
    return Fail(done.error());
  }
  return files;
}

// Copies `from` (this process's file) into the target's descriptor `fd`
// through /proc/<pid>/fd, with the target running.
Result<void> CopyInto(const InjectRequest& request, int fd, const std::string& from) {
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) {
    return Fail(ErrorCode::kFailedPrecondition, "cannot read " + from + ": " + std::strerror(errno));
  }
  const std::string to =
      request.proc_root + "/" + std::to_string(request.pid) + "/fd/" + std::to_string(fd);
  Fd out(::open(to.c_str(), O_WRONLY | O_CLOEXEC));
  if (!out) {
    return Fail(ErrorCode::kInternal, "cannot open the target's memfd " + to + ": " +
                                          std::strerror(errno));
  }
  struct stat st{};
  if (::fstat(in.get(), &st) != 0) return Fail(ErrorCode::kInternal, "cannot stat " + from);
  off_t offset = 0;
  while (offset < st.st_size) {
    const ssize_t n = ::sendfile(out.get(), in.get(), &offset, static_cast<size_t>(st.st_size - offset));
    if (n <= 0) {
      return Fail(ErrorCode::kInternal, "cannot copy " + from + " into the target: " +
                                            std::strerror(n < 0 ? errno : EIO));
    }
  }
  return {};
}

struct LoadResult {
  int32_t start_result = 0;
  int32_t state = MEMPROF_LB_STATE_RUNNING;
  int32_t tid = 0;
  std::string error;
};

Result<void> ReadRemote(const Fd& mem, uint64_t address, void* out, size_t size) {
  if (::pread(mem.get(), out, size, static_cast<off_t>(address)) == static_cast<ssize_t>(size)) {
    return {};
  }
  return Fail(ErrorCode::kInternal, std::string("cannot read the target's memory: ") +
                                        std::strerror(errno));
}

// The load thread's id as this process sees it: it wrote gettid() of its
// own pid namespace (a container's), which /proc here numbers otherwise.
// NSpid in each thread's status has both. The thread's own id when no
// thread matches (same namespace, or it is gone).
pid_t HostTid(const std::string& pid_dir, pid_t ns_tid) {
  DIR* d = ::opendir((pid_dir + "/task").c_str());
  if (d == nullptr) return ns_tid;
  pid_t found = ns_tid;
  while (const dirent* entry = ::readdir(d)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid <= 0) continue;
    auto text = ReadTextFile(pid_dir + "/task/" + entry->d_name + "/status");
    auto status = text ? ParseProcStatus(*text) : Result<ProcStatus>(Fail(text.error()));
    if (status && !status->ns_pids.empty() && status->ns_pids.back() == ns_tid) {
      found = tid;
      break;
    }
  }
  ::closedir(d);
  return found;
}

// Waits for the load thread to write its outcome, then for it to end (it
// still runs the pages' last instructions after the write).
Result<LoadResult> AwaitLoad(const InjectRequest& request, uint64_t pages) {
  const std::string pid_dir = request.proc_root + "/" + std::to_string(request.pid);
  Fd mem(::open((pid_dir + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!mem) return Fail(ErrorCode::kInternal, "cannot open the target's memory");
  LoadResult result;
  while (result.state == MEMPROF_LB_STATE_RUNNING) {
    if (Clock::now() >= request.deadline) {
      return Fail(ErrorCode::kUnavailable,
                  "the agent's load thread in process " + std::to_string(request.pid) +
                      " did not finish in time; its two pages stay mapped");
    }
    std::this_thread::sleep_for(kLoadPoll);
    if (auto r = ReadRemote(mem, pages + MEMPROF_LB_STATE, &result.state, 4); !r) return Fail(r.error());
  }
  (void)ReadRemote(mem, pages + MEMPROF_LB_RESULT, &result.start_result, 4);
  (void)ReadRemote(mem, pages + MEMPROF_LB_TID, &result.tid, 4);
  char error[MEMPROF_LB_ERROR_SIZE] = {};
  (void)ReadRemote(mem, pages + MEMPROF_LB_ERROR, error, sizeof error - 1);
  result.error = error;
  const std::string task = pid_dir + "/task/" + std::to_string(HostTid(pid_dir, result.tid));
  struct stat st;
  while (::stat(task.c_str(), &st) == 0) {
    if (Clock::now() >= request.deadline) {
      return Fail(ErrorCode::kUnavailable, "the agent's load thread did not end in time");
    }
    std::this_thread::sleep_for(kLoadPoll);
  }
  return result;
}

// Stops a thread again to unmap the pages. munmap takes no lock a thread
// could hold, so any thread will do.
Result<std::chrono::microseconds> UnmapPages(const InjectRequest& request, const LibcEntries& libc,
                                             uint64_t pages, const PlantedFiles& files) {
  for (pid_t tid : ThreadsToTry(request)) {
    auto thread = StoppedThread::Stop(request.pid, tid, Clock::now() + kStopBudget);
    if (!thread) {
      if (thread.error().code == ErrorCode::kNotFound) continue;
      return Fail(thread.error());
    }
    auto insn = FindSyscallInstruction(**thread, libc.syscall_function);
    if (!insn) return Fail(insn.error());
    auto r = CheckedSyscall(**thread, *insn, SYS_munmap, {pages, kPages, 0, 0, 0, 0}, "munmap");
    for (int fd : {files.agent, files.server}) {
      if (fd >= 0 && r) {
        auto closed = CheckedSyscall(**thread, *insn, SYS_close,
                                     {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0}, "close");
        if (!closed) r = Fail(closed.error());
      }
    }
    const auto paused =
        std::chrono::duration_cast<std::chrono::microseconds>((*thread)->stopped_for());
    if (auto released = (*thread)->Release(); !released) return Fail(released.error());
    if (!r) return Fail(r.error());
    return paused;
  }
  return Fail(ErrorCode::kNotFound, "process " + std::to_string(request.pid) + " is gone");
}

}  // namespace

namespace {

std::chrono::microseconds StoppedFor(const StoppedThread& thread) {
  return std::chrono::duration_cast<std::chrono::microseconds>(thread.stopped_for());
}

// Through memfds: a first stop creates them, then they are filled with the
// target running. Returns the paths the load thread uses; on failure nothing
// is left in the target.
Result<LoadPaths> PlantAndFill(const InjectRequest& request, const LibcEntries& libc,
                               ThreadFrames& frames, uint64_t& pages, PlantedFiles& files,
                               InjectOutcome& outcome) {
  auto thread = BorrowThread(request, frames);
  if (!thread) return Fail(thread.error());
  auto planted = PlantFiles(**thread, libc, pages);
  outcome.files_pause = StoppedFor(**thread);
  if (auto released = (*thread)->Release(); !released) return Fail(released.error());
  if (!planted) return Fail(planted.error());
  files = *planted;
  Result<void> filled = CopyInto(request, files.agent, request.agent_path);
  if (filled) filled = CopyInto(request, files.server, request.server_path);
  if (!filled) {
    (void)UnmapPages(request, libc, pages, files);
    return Fail(filled.error());
  }
  return LoadPaths{"/proc/self/fd/" + std::to_string(files.agent),
                   "/proc/self/fd/" + std::to_string(files.server)};
}

}  // namespace

Result<InjectOutcome> InjectAgent(const InjectRequest& request) {
  if (request.agent_path.size() >= MEMPROF_LB_PATH_SIZE) {
    return Fail(ErrorCode::kInvalidArgument, "the agent's path is too long: " + request.agent_path);
  }
  auto libc = FindLibcEntries(request);
  if (!libc) return Fail(libc.error());
  auto frames = ThreadFrames::ForProcess(request.pid);
  if (!frames) return Fail(frames.error());
  InjectOutcome outcome;
  uint64_t pages = 0;
  PlantedFiles files;
  LoadPaths paths{request.agent_path, ""};
  if (!request.server_path.empty()) {
    auto planted = PlantAndFill(request, *libc, **frames, pages, files, outcome);
    if (!planted) return Fail(planted.error());
    paths = *planted;
  }
  auto thread = BorrowThread(request, **frames);
  if (!thread) {
    if (pages != 0) (void)UnmapPages(request, *libc, pages, files);
    return Fail(thread.error());
  }
  outcome.borrowed_tid = (*thread)->tid();
  Result<void> started = StartLoadThread(**thread, *libc, paths, pages, files);
  outcome.first_pause = StoppedFor(**thread);
  if (auto released = (*thread)->Release(); !released) return Fail(released.error());
  thread->reset();
  if (!started) return Fail(started.error());
  auto load = AwaitLoad(request, pages);
  if (!load) return Fail(load.error());
  // The load thread closed the memfds itself (load_thread.S): the thread
  // borrowed now may be one of the agent's, whose descriptor table is its own.
  auto unmapped = UnmapPages(request, *libc, pages, PlantedFiles{});
  if (!unmapped) return Fail(unmapped.error());
  outcome.second_pause = *unmapped;
  if (load->state == MEMPROF_LB_STATE_LOAD_FAILED) {
    return Fail(ErrorCode::kInternal, "the target could not load the agent: " +
                                          (load->error.empty() ? "dlopen failed" : load->error));
  }
  outcome.start_result = load->start_result;
  outcome.start_error = load->error;
  return outcome;
}

}  // namespace memprof::cli
