// The service fills messages through the generated inline accessors, which
// are compiled into the agent; the generated serializer (memprof_proto) and
// Debian's libprotobuf then read them. All three must agree on each message's
// layout, whatever the build: under ThreadSanitizer protobuf's map_field.h
// made a message with a map field larger in instrumented code than in both
// of the others, and serializing a StatsResponse crashed (docs/reliability.md).
#include <gtest/gtest.h>

#include <string>

#include "memprof/v1/memory_profile.pb.h"

namespace memprof::agent {
namespace {

// Every kind of field around the map: a submessage, a string, scalars.
v1::StatsResponse FilledLikeTheService() {
  v1::StatsResponse response;
  response.set_allocator(v1::ALLOCATOR_KIND_JEMALLOC);
  response.mutable_summary()->set_allocated(4096);
  response.set_rss_bytes(8192);
  response.set_raw_format(v1::RAW_STATS_FORMAT_JSON);
  response.set_raw(std::string(100, 'x'));
  response.set_profiling_active(true);
  (*response.mutable_allocator_properties())["generic.heap_size"] = 12345;
  return response;
}

TEST(ProtoLayoutTest, WhatInlineAccessorsWriteTheGeneratedSerializerReads) {
  const v1::StatsResponse sent = FilledLikeTheService();
  v1::StatsResponse received;
  ASSERT_TRUE(received.ParseFromString(sent.SerializeAsString()));
  EXPECT_EQ(received.summary().allocated(), 4096u);
  EXPECT_EQ(received.rss_bytes(), 8192u);
  EXPECT_EQ(received.raw(), std::string(100, 'x'));
  EXPECT_TRUE(received.profiling_active());
  ASSERT_EQ(received.allocator_properties().size(), 1u);
  EXPECT_EQ(received.allocator_properties().at("generic.heap_size"), 12345u);
}

// Reflection reads through the generated offset table and libprotobuf's map
// code, not through the accessors compiled here.
TEST(ProtoLayoutTest, ReflectionSeesWhatInlineAccessorsWrote) {
  const v1::StatsResponse response = FilledLikeTheService();
  const auto* descriptor = response.GetDescriptor();
  const auto* reflection = response.GetReflection();
  const auto* summary = descriptor->FindFieldByName("summary");
  const auto* raw = descriptor->FindFieldByName("raw");
  const auto* properties = descriptor->FindFieldByName("allocator_properties");
  ASSERT_NE(summary, nullptr);
  ASSERT_NE(raw, nullptr);
  ASSERT_NE(properties, nullptr);
  EXPECT_EQ(&reflection->GetMessage(response, summary), &response.summary());
  EXPECT_EQ(reflection->GetString(response, raw), response.raw());
  EXPECT_EQ(reflection->FieldSize(response, properties), 1);
}

}  // namespace
}  // namespace memprof::agent
