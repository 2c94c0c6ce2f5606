#ifndef MEMPROF_CLI_EXPORTER_HEAP_REQUEST_GATE_H_
#define MEMPROF_CLI_EXPORTER_HEAP_REQUEST_GATE_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <expected>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace memprof::cli {

// Admission of profile requests of one kind (heap, or allocation windows):
// at most one at a time per pid (a second dump of the same process would
// only queue in its agent and double its work; the agent opens one
// allocation window at a time), and at most `max_in_flight` in all (each one
// symbolizes on this host). A request that cannot go now is turned away at once, not
// queued: waiting would hold a connection and its thread, and profilers
// scrape again on their next interval anyway. Thread-safe.
class HeapRequestGate {
 public:
  // Held while a request runs; its destruction lets the next one in.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : gate_(other.gate_), pid_(other.pid_) {
      other.gate_ = nullptr;
    }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

   private:
    friend class HeapRequestGate;
    Ticket(HeapRequestGate* gate, pid_t pid) : gate_(gate), pid_(pid) {}
    HeapRequestGate* gate_;
    pid_t pid_;
  };

  // Why a request was turned away, and when to try again (Retry-After).
  struct Busy {
    std::string reason;
    std::chrono::seconds retry_after{1};
  };

  // `profile` names what it admits in its refusals ("heap profile").
  HeapRequestGate(size_t max_in_flight, std::string profile)
      : max_in_flight_(max_in_flight), profile_(std::move(profile)) {}

  // Lets a request for `pid` in that is expected to take `expected` (its
  // profiling window; 0 for a dump now), or says why not. `retry_after` is
  // what is left of the request in the way (at least 1 s).
  std::expected<Ticket, Busy> TryEnter(pid_t pid, std::chrono::seconds expected);

 private:
  using Clock = std::chrono::steady_clock;
  void Leave(pid_t pid);
  std::chrono::seconds RetryAfter(Clock::time_point expected_end) const;

  const size_t max_in_flight_;
  const std::string profile_;
  std::mutex mu_;
  std::map<pid_t, Clock::time_point> running_;  // pid -> when its request should end
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_HEAP_REQUEST_GATE_H_
