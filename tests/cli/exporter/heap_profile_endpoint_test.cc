// /debug/pprof/heap without a real agent: its query, its admission, its
// status codes, and the HTML index around it.
#include "cli/exporter/heap_profile_endpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/exporter/heap_query.h"
#include "cli/exporter/html_pages.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using std::chrono::seconds;

HttpRequest Heap(std::vector<std::pair<std::string, std::string>> query) {
  return HttpRequest{"GET", "/debug/pprof/heap", std::move(query)};
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [key, value] : r.headers) {
    if (key == name) return value;
  }
  return "";
}

TEST(HeapQueryTest, PidAndSeconds) {
  auto q = ParseHeapQuery(Heap({{"pid", "42"}, {"gc", "1"}}));
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->pid, 42);
  EXPECT_FALSE(q->seconds);
  q = ParseHeapQuery(Heap({{"seconds", "300"}, {"pid", "7"}}));
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->seconds, seconds(300));
}

TEST(HeapQueryTest, BadQueriesSayWhatIsValid) {
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>>
      cases = {
          {{}, "no pid: ask /debug/pprof/pid/N/heap (or /debug/pprof/heap?pid=N)"},
          {{{"pid", "abc"}}, "pid=abc is not a process id"},
          {{{"pid", "0"}}, "pid=0 is not a process id"},
          {{{"pid", "-3"}}, "pid=-3 is not a process id"},
          {{{"pid", "12x"}}, "pid=12x is not a process id"},
          {{{"pid", "99999999999"}}, "is not a process id"},
          {{{"pid", "1"}, {"pid", "2"}}, "pid given twice"},
          {{{"pid", "1"}, {"seconds", "0"}},
           "seconds=0: must be a whole number of seconds from 1 to 300"},
          {{{"pid", "1"}, {"seconds", "301"}},
           "seconds=301: must be a whole number of seconds from 1 to 300"},
          {{{"pid", "1"}, {"seconds", "1.5"}}, "seconds=1.5: must be"},
          {{{"pid", "1"}, {"seconds", ""}}, "seconds=: must be"},
      };
  for (const auto& [query, message] : cases) {
    auto q = ParseHeapQuery(Heap(query));
    ASSERT_FALSE(q) << message;
    EXPECT_EQ(q.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(q.error().message.find(message), std::string::npos) << q.error().message;
  }
}

TEST(HeapRequestGateTest, OnePerPidAndABoundInAll) {
  HeapRequestGate gate(2);
  auto a = gate.TryEnter(1, seconds(30));
  ASSERT_TRUE(a);
  auto again = gate.TryEnter(1, seconds(0));
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().reason.find("pid 1 is already being taken"), std::string::npos);
  EXPECT_GE(again.error().retry_after, seconds(29)) << "what is left of the window in the way";
  auto b = gate.TryEnter(2, seconds(0));
  ASSERT_TRUE(b);
  auto third = gate.TryEnter(3, seconds(0));
  ASSERT_FALSE(third);
  EXPECT_NE(third.error().reason.find("already taking 2 heap profiles"), std::string::npos);
  EXPECT_EQ(third.error().retry_after, seconds(1)) << "the soonest to end is a dump now";
  { auto done = std::move(*b); }
  EXPECT_TRUE(gate.TryEnter(3, seconds(0))) << "a finished request lets the next one in";
}

class HeapProfileEndpointTest : public testing::CommandTest {
 protected:
  memprof::v1::StatusResponse status_ = Ready(true);
  std::function<Result<std::string>(const Target&, std::optional<std::chrono::milliseconds>)>
      capture_ = [](const Target& t, std::optional<std::chrono::milliseconds> window) {
        return Result<std::string>("profile of " + std::to_string(t.pid) +
                                   (window ? " over " + std::to_string(window->count()) : ""));
      };
  HeapProfileEndpoint endpoint_{
      discovery_,
      [this] {
        auto c = std::make_unique<testing::FakeProfileClient>();
        c->status_result = status_;
        return std::unique_ptr<ProfileClient>(std::move(c));
      },
      [this](const Target& t, std::optional<std::chrono::milliseconds> w) {
        return capture_(t, w);
      }};

  static memprof::v1::StatusResponse Ready(bool active) {
    memprof::v1::StatusResponse s;
    s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
    s.set_profiling_supported(true);
    s.set_profiling_enabled(true);
    s.set_profiling_active(active);
    return s;
  }
};

TEST_F(HeapProfileEndpointTest, AProfileIsAnAttachmentLikeGos) {
  HttpResponse r = endpoint_.Handle(Heap({{"pid", "42"}}));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "profile of 42");
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(Header(r, "Content-Disposition"), "attachment; filename=\"heap.pb.gz\"");
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}, {"seconds", "2"}})).body,
            "profile of 42 over 2000");
}

TEST_F(HeapProfileEndpointTest, EachFailureHasItsCodeAndSaysWhatToDo) {
  EXPECT_EQ(endpoint_.Handle(Heap({})).status, 400u);
  HttpResponse missing = endpoint_.Handle(Heap({{"pid", "77"}}));
  EXPECT_EQ(missing.status, 404u) << missing.body;
  status_ = Ready(false);
  HttpResponse inactive = endpoint_.Handle(Heap({{"pid", "42"}}));
  EXPECT_EQ(inactive.status, 409u);
  EXPECT_NE(inactive.body.find("profiling is not active in pid 42"), std::string::npos);
  EXPECT_NE(inactive.body.find("/debug/pprof/pid/42/heap?seconds=S"), std::string::npos)
      << inactive.body;
  EXPECT_NE(inactive.body.find("memprofctl activate --pid 42"), std::string::npos);
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}, {"seconds", "1"}})).status, 200u)
      << "a window needs no active profiling";
  status_.set_profiling_enabled(false);
  HttpResponse off = endpoint_.Handle(Heap({{"pid", "42"}, {"seconds", "1"}}));
  EXPECT_EQ(off.status, 412u);
  EXPECT_NE(off.body.find("restart it with MALLOC_CONF=prof:true,prof_active:false"),
            std::string::npos)
      << off.body;
  status_ = Ready(true);
  capture_ = [](const Target&, std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    return Fail(ErrorCode::kPermissionDenied, "not yours");
  };
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}})).status, 403u);
  capture_ = [](const Target&, std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    return Fail(ErrorCode::kUnavailable, "the memprof agent of pid 42 did not answer in time");
  };
  HttpResponse stuck = endpoint_.Handle(Heap({{"pid", "42"}}));
  EXPECT_EQ(stuck.status, 503u) << "the process is still there";
  EXPECT_EQ(stuck.body, "the memprof agent of pid 42 did not answer in time\n");
  EXPECT_EQ(Header(stuck, "X-Go-Pprof"), "1") << "so that the pprof CLI prints the text";
  capture_ = [this](const Target&,
                    std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    std::filesystem::remove_all(proc_ + "/42");  // the process exits mid-dump
    return Fail(ErrorCode::kUnavailable, "connection reset");
  };
  HttpResponse died = endpoint_.Handle(Heap({{"pid", "42"}}));
  EXPECT_EQ(died.status, 502u);
  EXPECT_NE(died.body.find("exited while its heap profile was being taken"), std::string::npos)
      << died.body;
}

// tcmalloc samples from start-up, and the agent serves its sample of the
// live heap only while activated: without seconds, the shortest window.
TEST_F(HeapProfileEndpointTest, AnInactiveTcmallocProcessIsProfiledForAMoment) {
  status_ = Ready(false);
  status_.set_allocator(memprof::v1::ALLOCATOR_KIND_TCMALLOC);
  HttpResponse r = endpoint_.Handle(Heap({{"pid", "42"}}));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "profile of 42 over 1000");
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}, {"seconds", "3"}})).body,
            "profile of 42 over 3000");
  status_.set_profiling_active(true);
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}})).body, "profile of 42")
      << "active: its sample now, no window";
}

TEST_F(HeapProfileEndpointTest, ASecondRequestForTheSamePidIsTurnedAwayWhileTheFirstRuns) {
  HttpResponse second;
  capture_ = [&](const Target&, std::optional<std::chrono::milliseconds>) {
    second = endpoint_.Handle(Heap({{"pid", "42"}}));  // arrives during the first
    return Result<std::string>("first");
  };
  EXPECT_EQ(endpoint_.Handle(Heap({{"pid", "42"}, {"seconds", "5"}})).body, "first");
  EXPECT_EQ(second.status, 429u);
  EXPECT_NE(second.body.find("already being taken"), std::string::npos) << second.body;
  EXPECT_FALSE(Header(second, "Retry-After").empty());
}

TEST(HtmlPagesTest, TheIndexEscapesWhatTheProcessesControl) {
  PprofTarget hostile{7, "<b>&x", "prog '<script>alert(\"x\")</script>' \xff", "active", true};
  PprofTarget off{8, "plain", "plain", "off", false};
  const std::string page = RenderPprofIndex({hostile, off});
  EXPECT_EQ(page.find("<script>"), std::string::npos) << page;
  EXPECT_EQ(page.find("<b>"), std::string::npos) << page;
  EXPECT_NE(page.find("&lt;b&gt;&amp;x"), std::string::npos) << page;
  EXPECT_NE(
      page.find("prog &#39;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; \xEF\xBF\xBD"),
      std::string::npos)
      << page;
  EXPECT_NE(page.find("<a href=\"/debug/pprof/pid/7/heap\">"), std::string::npos) << page;
  EXPECT_NE(page.find("<a href=\"/debug/pprof/pid/7/heap?seconds=30\">"), std::string::npos)
      << page;
  EXPECT_EQ(page.find("pid/8/"), std::string::npos) << "no link where profiling is off";
  EXPECT_NE(RenderPprofIndex({}).find("No agents found"), std::string::npos);
}

}  // namespace
}  // namespace memprof::cli
