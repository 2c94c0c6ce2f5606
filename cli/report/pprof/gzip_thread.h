#ifndef MEMPROF_CLI_REPORT_PPROF_GZIP_THREAD_H_
#define MEMPROF_CLI_REPORT_PPROF_GZIP_THREAD_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "cli/report/pprof/gzip_writer.h"
#include "common/result.h"

namespace memprof::report::pprof {

// A GzipWriter on a thread of its own: Write hands a piece of the stream
// over and returns, and the pieces are compressed into `out` in order while
// the caller makes the next. zlib's output does not depend on how its input
// is cut, so the bytes are those of one GzipWriter fed the same stream.
// `out` is written only by that thread until Finish returns.
class GzipThread {
 public:
  explicit GzipThread(std::ostream& out);
  // Without Finish, stops after the piece being compressed: the stream is
  // left unfinished (the caller failed).
  ~GzipThread();
  GzipThread(const GzipThread&) = delete;
  GzipThread& operator=(const GzipThread&) = delete;

  void Write(std::string piece);
  // Waits for every piece, writes the gzip trailer; the first error of
  // any step.
  [[nodiscard]] Result<void> Finish();

 private:
  void Run();

  GzipWriter gzip_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pieces_;
  bool finishing_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  Result<void> result_;  // the first error
  std::jthread thread_;  // last: started once the rest is made
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_GZIP_THREAD_H_
