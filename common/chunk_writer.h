#ifndef MEMPROF_COMMON_CHUNK_WRITER_H_
#define MEMPROF_COMMON_CHUNK_WRITER_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace memprof {

// Writes chunks to `out` on a thread of its own, so that writing one (the
// kernel's copy of a folded-stacks report, a hundred megabytes; or the
// compression behind a gzip stream, for pprof) overlaps the making of the
// next. At most `max_waiting` chunks wait; Write blocks while they do (the
// pprof writer lets all of a profile's wait, so that what it makes after
// them overlaps their compression too). Without a thread to spare it writes
// in the caller's. Only the writer thread touches `out` until Finish
// returns.
class ChunkWriter {
 public:
  explicit ChunkWriter(std::ostream& out, size_t max_waiting = 2);
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  ~ChunkWriter();  // Finish()

  // Queues `chunk`; returns an emptied buffer for the next one.
  std::string Write(std::string chunk);
  // Returns once every chunk is in `out`.
  void Finish();

 private:
  void Run();

  std::ostream& out_;
  const size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  std::string spare_;  // a written chunk's buffer, for reuse
  bool done_ = false;
  std::jthread thread_;  // last: starts once the rest is set up
};

}  // namespace memprof

#endif  // MEMPROF_COMMON_CHUNK_WRITER_H_
