// The allocation window's records where memprof samples: the ring
// (agent/sampler/recent_ring.h), its JSON (recent_json_writer.h), and the
// sampler recording through its hooks, across free, realloc and fork.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/sampler/recent_json_writer.h"
#include "agent/sampler/recent_ring.h"
#include "agent/sampler/sampler.h"
#include "tests/agent/sampler/sampler_test_lib.h"
#include "tests/agent/sampler/sampler_test_support.h"

namespace memprof::agent {
namespace {

using nlohmann::json;

std::vector<RecentRecord> Held(const RecentRing& ring) {
  std::vector<RecentRecord> out(ring.capacity());
  out.resize(ring.CopyOut(out.data()));
  return out;
}

TEST(RecentRingTest, KeepsRecordsOldestFirstAndTheirFrees) {
  RecentRing ring;
  EXPECT_EQ(ring.Append(1, 0, 1, 1), 0u) << "not recording yet";
  ASSERT_TRUE(ring.Begin(4));
  const uint32_t a = ring.Append(100, 7, 11, 1000);
  const uint32_t b = ring.Append(200, 8, 12, 2000);
  ring.Release(a, 13, 1500);
  std::vector<RecentRecord> held = Held(ring);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].size, 100u);
  EXPECT_EQ(held[0].dalloc_tid, 13u);
  EXPECT_EQ(held[0].dalloc_ns, 1500u);
  EXPECT_EQ(held[1].seq, b);
  EXPECT_EQ(held[1].dalloc_tid, 0u) << "not freed";
  EXPECT_FALSE(ring.lost());
}

TEST(RecentRingTest, AFullRingOverwritesTheOldestAndSaysSo) {
  RecentRing ring;
  ASSERT_TRUE(ring.Begin(3));
  std::vector<uint32_t> seqs;
  for (uint64_t i = 1; i <= 5; ++i) seqs.push_back(ring.Append(i, 0, 1, i));
  EXPECT_EQ(ring.count(), 3u);
  EXPECT_TRUE(ring.lost());
  ring.Release(seqs[0], 2, 9);  // overwritten: its free finds nothing
  ring.Release(seqs[4], 2, 9);
  std::vector<RecentRecord> held = Held(ring);
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(held[0].size, 3u);
  EXPECT_EQ(held[2].size, 5u);
  EXPECT_EQ(held[0].dalloc_tid, 0u);
  EXPECT_EQ(held[2].dalloc_tid, 2u);
}

TEST(RecentRingTest, ANewWindowIgnoresTheFreesOfTheLastOnesRecords) {
  RecentRing ring;
  ASSERT_TRUE(ring.Begin(2));
  const uint32_t old = ring.Append(1, 0, 1, 1);
  ring.End();
  EXPECT_FALSE(ring.recording());
  ASSERT_TRUE(ring.Begin(2));
  const uint32_t fresh = ring.Append(2, 0, 1, 2);
  EXPECT_NE(fresh, old);
  ring.Release(old, 5, 5);
  ASSERT_EQ(Held(ring).size(), 1u);
  EXPECT_EQ(Held(ring)[0].dalloc_tid, 0u);
  ring.Restart();
  EXPECT_EQ(ring.count(), 0u);
  EXPECT_TRUE(ring.lost()) << "a restart dropped a record";
}

json WrittenJson(const std::vector<RecentRecord>& records, const StackTable& stacks) {
  std::string text;
  TextWriter w([](void* out, const char* piece) { *static_cast<std::string*>(out) += piece; },
               &text);
  WriteRecentJson(w, 4096, 100, records.data(), records.size(), stacks);
  EXPECT_TRUE(w.Flush());
  return json::parse(text);
}

TEST(RecentJsonWriterTest, WritesWhatJemallocsDumpHolds) {
  StackTable stacks;
  ASSERT_TRUE(stacks.Init(16));
  const uintptr_t frames[] = {0x1234, 0xabcdef};
  const uint32_t stack = stacks.Intern(frames, 2);
  const std::vector<RecentRecord> records = {
      {1, stack, 10, 11, 64, 1000, 2500},
      {2, stack, 10, 0, 128, 3000, 0},
      {3, stack + 1, 10, 0, 256, 4000, 0},  // a stack the table lacks: left out
  };
  const json j = WrittenJson(records, stacks);
  EXPECT_EQ(j["sample_interval"], 4096);
  EXPECT_EQ(j["recent_alloc_max"], 100);
  ASSERT_EQ(j["recent_alloc"].size(), 2u) << j.dump(2);
  const json& freed = j["recent_alloc"][0];
  EXPECT_EQ(freed["size"], 64);
  EXPECT_EQ(freed["usize"], 64);
  EXPECT_EQ(freed["released"], true);
  EXPECT_EQ(freed["alloc_thread_uid"], 10);
  EXPECT_EQ(freed["alloc_time"], 1000);
  EXPECT_EQ(freed["alloc_trace"], json::array({"0x1234", "0xabcdef"}));
  EXPECT_EQ(freed["dalloc_thread_uid"], 11);
  EXPECT_EQ(freed["dalloc_time"], 2500);
  const json& live = j["recent_alloc"][1];
  EXPECT_EQ(live["released"], false);
  EXPECT_FALSE(live.contains("dalloc_time"));
}

TEST(RecentJsonWriterTest, AnEmptyWindowIsAnEmptyArray) {
  StackTable stacks;
  ASSERT_TRUE(stacks.Init(16));
  const json j = WrittenJson({}, stacks);
  EXPECT_TRUE(j["recent_alloc"].is_array());
  EXPECT_TRUE(j["recent_alloc"].empty());
}

std::string Recorded() {
  std::string text;
  EXPECT_TRUE(Sampler::WriteRecentAllocations(
      [](void* out, const char* piece) { *static_cast<std::string*>(out) += piece; }, &text));
  return text;
}

// The hooks record each sampled allocation made while recording, and its
// free or realloc; nothing before the recording began.
TEST(SamplerRecordingTest, RecordsSampledAllocationsAndTheirFrees) {
  auto& lib = testing::PreloadedTestLib();
  ASSERT_NE(lib.handle, nullptr);
  Sampler::Reset();
  ASSERT_TRUE(testing::ActivateForTest(1));
  void* before = lib.malloc(1111);
  EXPECT_FALSE(Sampler::WriteRecentAllocations([](void*, const char*) {}, nullptr).has_value())
      << "no recording yet";
  // Room for what this test allocates besides (every byte is sampled).
  ASSERT_TRUE(Sampler::BeginRecording(1 << 16));
  EXPECT_FALSE(Sampler::BeginRecording(64).has_value()) << "one at a time";
  void* kept = lib.malloc(2222);
  void* freed = lib.malloc(3333);
  lib.free(freed);
  void* moved = lib.realloc(lib.malloc(4444), 5555);
  lib.free(before);
  const json j = json::parse(Recorded());
  std::vector<std::pair<uint64_t, bool>> seen;
  for (const json& r : j["recent_alloc"]) {
    seen.emplace_back(r["size"].get<uint64_t>(), r["released"].get<bool>());
    EXPECT_FALSE(r["alloc_trace"].empty());
    if (r["released"] == true) {
      EXPECT_GE(r["dalloc_time"].get<uint64_t>(), r["alloc_time"].get<uint64_t>());
    }
  }
  const std::vector<std::pair<uint64_t, bool>> expected = {
      {2222, false}, {3333, true}, {4444, true}, {5555, false}};
  EXPECT_EQ(seen, expected) << j.dump(2);
  const Sampler::Recording state = Sampler::RecordingState();
  EXPECT_TRUE(state.on);
  EXPECT_GE(state.records, 4u) << "and what this test allocated since";
  EXPECT_FALSE(state.lost);
  // A child does not go on recording the parent's window.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(Sampler::RecordingState().on ? 1 : 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Sampler::EndRecording();
  EXPECT_FALSE(Sampler::RecordingState().on);
  lib.free(kept);
  lib.free(moved);
  Sampler::Deactivate();
  Sampler::Reset();
}

}  // namespace
}  // namespace memprof::agent
