#include "common/chunk_writer.h"

#include <system_error>
#include <utility>

namespace memprof {
namespace {

void WriteChunk(std::ostream& out, const std::string& chunk) {
  out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

}  // namespace

ChunkWriter::ChunkWriter(std::ostream& out, size_t max_waiting)
    : out_(out), max_waiting_(max_waiting) {
  try {
    thread_ = std::jthread([this] { Run(); });
  } catch (const std::system_error&) {
    // No thread: Write writes in the caller's thread.
  }
}

ChunkWriter::~ChunkWriter() { Finish(); }

std::string ChunkWriter::Write(std::string chunk) {
  if (!thread_.joinable()) {
    WriteChunk(out_, chunk);
    chunk.clear();
    return chunk;
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.size() < max_waiting_; });
  queue_.push_back(std::move(chunk));
  changed_.notify_all();
  std::string buffer = std::move(spare_);
  buffer.clear();
  return buffer;
}

void ChunkWriter::Finish() {
  if (!thread_.joinable()) return;
  {
    std::unique_lock lock(mutex_);
    done_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void ChunkWriter::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (queue_.empty()) return;
    std::string chunk = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    lock.unlock();
    WriteChunk(out_, chunk);
    lock.lock();
    spare_ = std::move(chunk);
  }
}

}  // namespace memprof
