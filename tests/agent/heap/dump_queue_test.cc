#include "agent/heap/dump_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace memprof::agent {
namespace {

// Records the order in which waiters got their slot, and keeps the slots
// (so the test decides when each is given back).
struct Served {
  std::mutex mu;
  std::vector<int> order;
  std::vector<DumpSlot> slots;
};

class TestWaiter final : public DumpQueue::Waiter {
 public:
  TestWaiter(int id, Served& served) : id_(id), served_(served) {}
  void OnSlot(DumpSlot slot) override {
    EXPECT_TRUE(slot.held());
    ++calls_;
    if (on_slot_) {
      on_slot_(std::move(slot));
      return;
    }
    std::lock_guard lock(served_.mu);
    served_.order.push_back(id_);
    served_.slots.push_back(std::move(slot));
  }
  int calls() const { return calls_; }
  void set_on_slot(std::function<void(DumpSlot)> f) { on_slot_ = std::move(f); }

 private:
  int id_;
  Served& served_;
  std::atomic<int> calls_{0};
  std::function<void(DumpSlot)> on_slot_;
};

// Acquire for a waiter that the test expects to be queued.
void ExpectQueued(DumpQueue& queue, TestWaiter& waiter) {
  auto r = queue.Acquire(waiter);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->has_value()) << "got a slot while it should have waited";
}

// Acquire for a waiter that the test expects to get a slot at once.
DumpSlot ExpectGranted(DumpQueue& queue, TestWaiter& waiter) {
  auto r = queue.Acquire(waiter);
  EXPECT_TRUE(r && r->has_value());
  return r && r->has_value() ? std::move(**r) : DumpSlot();
}

TEST(DumpQueueTest, GrantsUpToTheLimitAtOnceThenQueues) {
  auto queue = DumpQueue::Create(2, 8);
  Served served;
  TestWaiter a(1, served), b(2, served), c(3, served);
  DumpSlot sa = ExpectGranted(*queue, a);
  DumpSlot sb = ExpectGranted(*queue, b);
  ExpectQueued(*queue, c);
  EXPECT_EQ(queue->active(), 2);
  EXPECT_EQ(queue->waiting(), 1);
  EXPECT_EQ(c.calls(), 0);
  EXPECT_FALSE(queue->TryAcquire().has_value());
}

TEST(DumpQueueTest, ReleasingASlotHandsItToTheNextWaiterOnTheSpot) {
  auto queue = DumpQueue::Create(1, 8);
  Served served;
  TestWaiter a(1, served), b(2, served);
  DumpSlot sa = ExpectGranted(*queue, a);
  ExpectQueued(*queue, b);
  sa.Release();
  EXPECT_FALSE(sa.held());
  EXPECT_EQ(b.calls(), 1) << "the waiter was not woken by the release";
  EXPECT_EQ(served.order, std::vector<int>({2}));
  // The slot went from one holder to the next: still one active, and no
  // newcomer can take it.
  EXPECT_EQ(queue->active(), 1);
  EXPECT_EQ(queue->waiting(), 0);
  EXPECT_FALSE(queue->TryAcquire().has_value());
  served.slots.clear();
  EXPECT_EQ(queue->active(), 0);
  EXPECT_TRUE(queue->TryAcquire().has_value());
}

TEST(DumpQueueTest, WaitersAreServedInArrivalOrder) {
  auto queue = DumpQueue::Create(2, 16);
  Served served;
  std::vector<std::unique_ptr<TestWaiter>> waiters;
  for (int i = 0; i < 12; ++i) waiters.push_back(std::make_unique<TestWaiter>(i, served));
  std::vector<DumpSlot> held;
  held.push_back(ExpectGranted(*queue, *waiters[0]));
  held.push_back(ExpectGranted(*queue, *waiters[1]));
  for (int i = 2; i < 12; ++i) ExpectQueued(*queue, *waiters[i]);
  held.clear();  // both slots back: waiters 2 and 3 hold them now
  for (int round = 0; round < 5; ++round) {
    std::vector<DumpSlot> slots;
    {
      std::lock_guard lock(served.mu);
      slots = std::move(served.slots);
      served.slots.clear();
    }
    EXPECT_EQ(slots.size(), 2u) << "round " << round;
    slots.clear();  // hands them on
  }
  std::vector<int> expected;
  for (int i = 2; i < 12; ++i) expected.push_back(i);
  EXPECT_EQ(served.order, expected);
  served.slots.clear();
  EXPECT_EQ(queue->active(), 0);
}

TEST(DumpQueueTest, RefusesBeyondTheQueueBoundAndQueuesNothing) {
  auto queue = DumpQueue::Create(1, 3);
  Served served;
  TestWaiter holder(0, served);
  DumpSlot slot = ExpectGranted(*queue, holder);
  std::vector<std::unique_ptr<TestWaiter>> waiters;
  for (int i = 1; i <= 3; ++i) {
    waiters.push_back(std::make_unique<TestWaiter>(i, served));
    ExpectQueued(*queue, *waiters.back());
  }
  TestWaiter extra(99, served);
  auto refused = queue->Acquire(extra);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("3 more clients are already waiting"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(queue->waiting(), 3);
  EXPECT_FALSE(queue->Withdraw(extra)) << "a refused caller must not be queued";
  slot.Release();
  EXPECT_EQ(served.order, std::vector<int>({1}));
  EXPECT_EQ(extra.calls(), 0);
  // Waiters 2 and 3 still wait: out of the queue before they are destroyed
  // (served's slot, given back last, would otherwise call a freed waiter).
  EXPECT_TRUE(queue->Withdraw(*waiters[1]));
  EXPECT_TRUE(queue->Withdraw(*waiters[2]));
}

TEST(DumpQueueTest, AWithdrawnWaiterFreesNothingAndIsNeverCalled) {
  auto queue = DumpQueue::Create(2, 8);
  Served served;
  TestWaiter a(1, served), b(2, served), gone(3, served), next(4, served);
  DumpSlot sa = ExpectGranted(*queue, a);
  DumpSlot sb = ExpectGranted(*queue, b);
  ExpectQueued(*queue, gone);
  ExpectQueued(*queue, next);
  EXPECT_TRUE(queue->Withdraw(gone));
  EXPECT_FALSE(queue->Withdraw(gone)) << "withdrawn twice";
  // Leaving the queue gave back no slot: both are still held, nobody was woken.
  EXPECT_EQ(queue->active(), 2);
  EXPECT_EQ(queue->waiting(), 1);
  EXPECT_EQ(next.calls(), 0);
  EXPECT_FALSE(queue->TryAcquire().has_value());
  sa.Release();
  EXPECT_EQ(gone.calls(), 0);
  EXPECT_EQ(served.order, std::vector<int>({4}));
  EXPECT_FALSE(queue->Withdraw(next)) << "a served waiter is no longer queued";
}

TEST(DumpQueueTest, AWaiterThatDropsItsSlotPassesItOn) {
  // A client that went away while waiting gets its turn, drops the slot
  // without dumping, and the one behind it is served at once.
  auto queue = DumpQueue::Create(1, 8);
  Served served;
  TestWaiter holder(0, served), cancelled(1, served), behind(2, served);
  cancelled.set_on_slot([](DumpSlot slot) { slot.Release(); });
  DumpSlot slot = ExpectGranted(*queue, holder);
  ExpectQueued(*queue, cancelled);
  ExpectQueued(*queue, behind);
  slot.Release();
  EXPECT_EQ(cancelled.calls(), 1);
  EXPECT_EQ(served.order, std::vector<int>({2}));
  EXPECT_EQ(queue->active(), 1);
  served.slots.clear();
  EXPECT_EQ(queue->active(), 0);
}

TEST(DumpQueueTest, MovingASlotKeepsOneHolder) {
  auto queue = DumpQueue::Create(1, 1);
  std::optional<DumpSlot> first = queue->TryAcquire();
  ASSERT_TRUE(first.has_value());
  DumpSlot moved = std::move(*first);
  EXPECT_FALSE(first->held());
  first.reset();
  EXPECT_EQ(queue->active(), 1) << "a moved-from slot released the slot";
  DumpSlot other;
  other = std::move(moved);
  EXPECT_EQ(queue->active(), 1);
  other = DumpSlot();
  EXPECT_EQ(queue->active(), 0);
}

TEST(DumpQueueTest, ManyThreadsNeverExceedTheLimitAndAllAreServed) {
  constexpr int kThreads = 32;
  constexpr int kMaxActive = 2;
  auto queue = DumpQueue::Create(kMaxActive, kThreads);
  std::atomic<int> holding{0}, peak{0}, done{0};

  // Each thread's waiter works with its slot on whatever thread grants it.
  class Worker final : public DumpQueue::Waiter {
   public:
    Worker(std::atomic<int>& holding, std::atomic<int>& peak, std::atomic<int>& done)
        : holding_(holding), peak_(peak), done_(done) {}
    void OnSlot(DumpSlot slot) override {
      const int now = holding_.fetch_add(1) + 1;
      int seen = peak_.load();
      while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::yield();
      holding_.fetch_sub(1);
      done_.fetch_add(1);
      slot.Release();
    }

   private:
    std::atomic<int>& holding_;
    std::atomic<int>& peak_;
    std::atomic<int>& done_;
  };

  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kThreads; ++i) workers.push_back(std::make_unique<Worker>(holding, peak, done));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto r = queue->Acquire(*workers[i]);
      ASSERT_TRUE(r) << r.error().message;
      if (r->has_value()) workers[i]->OnSlot(std::move(**r));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(done.load(), kThreads);
  EXPECT_LE(peak.load(), kMaxActive);
  EXPECT_EQ(queue->active(), 0);
  EXPECT_EQ(queue->waiting(), 0);
}

}  // namespace
}  // namespace memprof::agent
