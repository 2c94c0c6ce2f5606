#ifndef MEMPROF_TESTS_TESTPROGS_DEMO_SESSION_REGISTRY_H_
#define MEMPROF_TESTS_TESTPROGS_DEMO_SESSION_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace demo {

// Remembers every session it is told about and never forgets one: the leak
// the demo invites you to find with memprof. To keep a forgotten demo from
// eating the machine, it stops growing at `cap_bytes` (and says so once on
// stderr). Thread-safe.
class SessionRegistry {
 public:
  explicit SessionRegistry(std::size_t cap_bytes);
  ~SessionRegistry();

  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // Records a new session for `user`. The session is allocated in this frame,
  // so heap profiles name SessionRegistry::LeakSession.
  __attribute__((noinline)) void LeakSession(std::string_view user);

  std::size_t leaked_bytes() const { return leaked_bytes_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t kStateBytes = 4000;

  // Trivially destructible, so the destructor only has to free the memory.
  struct Session {
    Session* next = nullptr;
    std::uint64_t id = 0;
    std::array<char, kStateBytes> state{};
  };

  const std::size_t cap_bytes_;
  std::mutex mutex_;
  Session* sessions_ = nullptr;  // Intrusive list: no container allocations.
  std::uint64_t next_id_ = 1;
  std::atomic<std::size_t> leaked_bytes_{0};
  bool cap_reported_ = false;
};

}  // namespace demo

#endif  // MEMPROF_TESTS_TESTPROGS_DEMO_SESSION_REGISTRY_H_
