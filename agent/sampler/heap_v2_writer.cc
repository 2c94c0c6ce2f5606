#include "agent/sampler/heap_v2_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memprof::agent {
void TextWriter::Put(std::string_view text) {
  while (!text.empty()) {
    if (used_ == kCapacity && !Flush()) return;
    const size_t n = std::min(text.size(), kCapacity - used_);
    std::memcpy(buffer_ + used_, text.data(), n);
    used_ += n;
    text.remove_prefix(n);
  }
}

void TextWriter::Decimal(uint64_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[sizeof(digits) - 1 - n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  Put(std::string_view(digits + sizeof(digits) - n, static_cast<size_t>(n)));
}

void TextWriter::Hex(uint64_t value) {
  char digits[18];
  int n = 0;
  do {
    digits[sizeof(digits) - 1 - n++] = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value != 0);
  digits[sizeof(digits) - 1 - n++] = 'x';
  digits[sizeof(digits) - 1 - n++] = '0';
  Put(std::string_view(digits + sizeof(digits) - n, static_cast<size_t>(n)));
}

bool TextWriter::Flush() {
  if (sink_ != nullptr) {
    buffer_[used_] = '\0';
    if (used_ != 0) sink_(opaque_, buffer_);
    written_ += used_;
    used_ = 0;
    return true;
  }
  size_t done = 0;
  while (error_ == 0 && done < used_) {
    const ssize_t n = write(fd_, buffer_ + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  used_ = 0;
  return error_ == 0;
}

namespace {

void PutCounts(TextWriter& w, uint64_t objects, uint64_t bytes) {
  w.Put("  t*: ");
  w.Decimal(objects);
  w.Put(": ");
  w.Decimal(bytes);
  w.Put(" [0: 0]\n");
}

}  // namespace

bool WriteHeapV2(TextWriter& w, uint64_t interval, const ProfileCoverage& coverage,
                 const LiveTable& live, const StackTable& stacks, StackTotals* scratch) {
  const size_t capacity = stacks.capacity();
  std::memset(scratch, 0, capacity * sizeof(StackTotals));
  StackTotals all{0, 0};
  live.ForEach([&](uintptr_t, uint64_t size, uint32_t stack) {
    if (stack >= capacity || stacks.Find(stack) == nullptr) return;
    ++scratch[stack].objects;
    scratch[stack].bytes += size;
    ++all.objects;
    all.bytes += size;
  });
  w.Put("heap_v2/");
  w.Decimal(interval);
  w.Put("\n# memprof_sampler since_unix_ms=");
  w.Decimal(static_cast<uint64_t>(coverage.since_unix_ms > 0 ? coverage.since_unix_ms : 0));
  w.Put(" dropped=");
  w.Decimal(coverage.dropped);
  w.Put("\n");
  PutCounts(w, all.objects, all.bytes);
  for (uint32_t id = 0; id < capacity; ++id) {
    if (scratch[id].objects == 0) continue;
    const StackTable::Stack* stack = stacks.Find(id);
    w.Put("@");
    for (uint32_t i = 0; i < stack->depth; ++i) {
      w.Put(" ");
      w.Hex(stack->frames[i]);
    }
    w.Put("\n");
    PutCounts(w, scratch[id].objects, scratch[id].bytes);
  }
  return w.Flush();
}

bool WriteMappedLibraries(TextWriter& w) {
  w.Put("\nMAPPED_LIBRARIES:\n");
  const int maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (maps < 0) return false;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(maps, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    w.Put(std::string_view(buffer, static_cast<size_t>(n)));
  }
  close(maps);
  return w.Flush();
}

}  // namespace memprof::agent
