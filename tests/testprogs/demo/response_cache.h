#ifndef MEMPROF_TESTS_TESTPROGS_DEMO_RESPONSE_CACHE_H_
#define MEMPROF_TESTS_TESTPROGS_DEMO_RESPONSE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace demo {

// A bounded, direct-mapped cache of rendered responses: the demo's legitimate
// retained memory. Each key hashes to one slot, and a newer response evicts the
// older one, so the cache never holds more than `capacity` bodies.
// Thread-safe.
class ResponseCache {
 public:
  explicit ResponseCache(std::size_t capacity);

  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // Copies `body` into the slot of `key`, replacing what was there. The copy is
  // allocated in this frame so heap profiles name ResponseCache::Insert.
  __attribute__((noinline)) void Insert(std::string_view key, std::string_view body);

  // Bytes of response bodies currently held.
  std::size_t size_bytes() const;

 private:
  struct FreeDeleter {
    void operator()(char* body) const { std::free(body); }
  };
  using Body = std::unique_ptr<char, FreeDeleter>;

  struct Slot {
    std::uint64_t key_hash = 0;
    std::size_t size = 0;
    Body body;
  };

  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::size_t size_bytes_ = 0;
};

}  // namespace demo

#endif  // MEMPROF_TESTS_TESTPROGS_DEMO_RESPONSE_CACHE_H_
