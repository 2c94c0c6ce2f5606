#ifndef MEMPROF_AGENT_HEAP_DUMP_QUEUE_H_
#define MEMPROF_AGENT_HEAP_DUMP_QUEUE_H_

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "common/result.h"

namespace memprof::agent {

class DumpQueue;

// The right to take and stream one heap profile. Move-only; destroying it
// (or Release()) gives the slot back, and the queue hands it straight to its
// first waiter, if any. Keeps the queue alive.
class DumpSlot {
 public:
  DumpSlot() = default;
  DumpSlot(DumpSlot&& other) noexcept = default;
  DumpSlot& operator=(DumpSlot&& other) noexcept;
  DumpSlot(const DumpSlot&) = delete;
  DumpSlot& operator=(const DumpSlot&) = delete;
  ~DumpSlot() { Release(); }

  bool held() const { return queue_ != nullptr; }
  void Release();

 private:
  friend class DumpQueue;
  explicit DumpSlot(std::shared_ptr<DumpQueue> queue) : queue_(std::move(queue)) {}

  std::shared_ptr<DumpQueue> queue_;
};

// Who may take a heap profile, and when: at most `max_active` slots are held
// at once (each slot is one dump in memory, so this bounds what clients can
// make the agent hold), and up to `max_waiting` more callers wait for one,
// strictly first come, first served. A waiter holds nothing while it waits:
// its dump is taken only once it has its slot.
//
// Thread-safe. Callbacks run without the queue's lock held, on the thread
// that freed the slot.
class DumpQueue : public std::enable_shared_from_this<DumpQueue> {
 public:
  class Waiter {
   public:
    // Called exactly once, when this waiter's turn has come, with its slot.
    virtual void OnSlot(DumpSlot slot) = 0;

   protected:
    ~Waiter() = default;
  };

  [[nodiscard]] static std::shared_ptr<DumpQueue> Create(int max_active, int max_waiting);

  // A slot at once when one is free and nobody waits; otherwise nullopt, and
  // `waiter` is queued (it must stay alive until OnSlot or a true Withdraw).
  // kResourceExhausted, with nothing queued, when max_waiting already wait.
  [[nodiscard]] Result<std::optional<DumpSlot>> Acquire(Waiter& waiter);
  // A slot at once when one is free and nobody waits, else nullopt (and
  // nothing queued).
  [[nodiscard]] std::optional<DumpSlot> TryAcquire();
  // Takes `waiter` out of the queue. True: it was waiting, held nothing, and
  // will never be called. False: it was not waiting (its OnSlot has run, or
  // runs now on another thread).
  bool Withdraw(Waiter& waiter);

  int active() const;
  int waiting() const;
  int max_active() const { return max_active_; }
  int max_waiting() const { return max_waiting_; }

 private:
  friend class DumpSlot;
  DumpQueue(int max_active, int max_waiting)
      : max_active_(max_active), max_waiting_(max_waiting) {}
  void Release();

  const int max_active_;
  const int max_waiting_;
  mutable std::mutex mu_;
  int active_ = 0;               // guarded by mu_
  std::deque<Waiter*> waiting_;  // guarded by mu_; front = next served
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_DUMP_QUEUE_H_
