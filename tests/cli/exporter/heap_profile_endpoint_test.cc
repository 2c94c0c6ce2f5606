// /debug/pprof/heap and /debug/pprof/allocs without a real agent: their
// queries, their admission, their status codes, and the HTML index around
// them.
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

HttpRequest Allocs(std::vector<std::pair<std::string, std::string>> query) {
  return HttpRequest{"GET", "/debug/pprof/allocs", std::move(query)};
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [key, value] : r.headers) {
    if (key == name) return value;
  }
  return "";
}

using Query = std::vector<std::pair<std::string, std::string>>;

// Each query (with the request `make` builds of it) is refused by `parse`
// as kInvalidArgument, its message holding the case's text.
void ExpectRefused(const std::function<Result<HeapQuery>(const HttpRequest&)>& parse,
                   HttpRequest (*make)(Query),
                   const std::vector<std::pair<Query, std::string>>& cases) {
  for (const auto& [query, message] : cases) {
    auto q = parse(make(query));
    ASSERT_FALSE(q) << message;
    EXPECT_EQ(q.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(q.error().message.find(message), std::string::npos) << q.error().message;
  }
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
  ExpectRefused(ParseHeapQuery, Heap,
                {
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
                });
}

// An allocation window has a length: 30 s (Go's CPU profile's default)
// when the client gives none, so that `pprof URL` works as is.
TEST(HeapQueryTest, AllocsSecondsDefaultsToThirty) {
  auto q = ParseAllocsQuery(Allocs({{"pid", "42"}}));
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->pid, 42);
  EXPECT_EQ(q->seconds, seconds(30));
  q = ParseAllocsQuery(Allocs({{"pid", "7"}, {"seconds", "1"}}));
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->seconds, seconds(1));
}

TEST(HeapQueryTest, BadAllocsQueriesSayWhatIsValid) {
  ExpectRefused(ParseAllocsQuery, Allocs,
                {
                    {{}, "no pid: ask /debug/pprof/pid/N/allocs (or /debug/pprof/allocs?pid=N)"},
                    {{{"pid", "x"}},
                     "pid=x is not a process id (a number from 1 up): ask "
                     "/debug/pprof/pid/N/allocs"},
                    {{{"pid", "1"}, {"seconds", "0"}},
                     "seconds=0: must be a whole number of seconds from 1 to 300"},
                    {{{"pid", "1"}, {"seconds", "301"}},
                     "seconds=301: must be a whole number of seconds from 1 to 300"},
                    {{{"pid", "1"}, {"seconds", "2"}, {"seconds", "2"}}, "seconds given twice"},
                });
}

TEST(HeapRequestGateTest, OnePerPidAndABoundInAll) {
  HeapRequestGate gate(2, "heap profile");
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

TEST(HeapRequestGateTest, ItsRefusalsNameWhatItAdmits) {
  HeapRequestGate gate(1, "allocation profile");
  auto a = gate.TryEnter(1, seconds(5));
  ASSERT_TRUE(a);
  auto again = gate.TryEnter(1, seconds(5));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().reason,
            "an allocation profile of pid 1 is already being taken (one at a time per process); "
            "try again when it is done");
  auto other = gate.TryEnter(2, seconds(5));
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().reason.find("already taking 1 allocation profiles"), std::string::npos)
      << other.error().reason;
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
  HeapProfileEndpoint allocs_{discovery_,
                              [this] {
                                auto c = std::make_unique<testing::FakeProfileClient>();
                                c->status_result = status_;
                                return std::unique_ptr<ProfileClient>(std::move(c));
                              },
                              [this](const Target& t, std::optional<std::chrono::milliseconds> w) {
                                return capture_(t, w);
                              },
                              PprofProfile::kAllocs};

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

TEST_F(HeapProfileEndpointTest, AnAllocationProfileIsAWindowServedAsAllocs) {
  status_ = Ready(false);  // the window activates profiling itself
  HttpResponse r = allocs_.Handle(Allocs({{"pid", "42"}}));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "profile of 42 over 30000") << "30 s without seconds";
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(Header(r, "Content-Disposition"), "attachment; filename=\"allocs.pb.gz\"");
  EXPECT_EQ(allocs_.Handle(Allocs({{"pid", "42"}, {"seconds", "2"}})).body,
            "profile of 42 over 2000");
}

TEST_F(HeapProfileEndpointTest, AllocsFailuresHaveTheHeapCodes) {
  HttpResponse bad = allocs_.Handle(Allocs({{"pid", "42"}, {"seconds", "301"}}));
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(bad.body.find("seconds=301: must be a whole number of seconds from 1 to 300"),
            std::string::npos)
      << bad.body;
  EXPECT_EQ(Header(bad, "X-Go-Pprof"), "1");
  EXPECT_EQ(allocs_.Handle(Allocs({{"pid", "77"}})).status, 404u);
  status_.set_profiling_enabled(false);
  HttpResponse off = allocs_.Handle(Allocs({{"pid", "42"}}));
  EXPECT_EQ(off.status, 412u);
  EXPECT_NE(off.body.find("restart it with MALLOC_CONF=prof:true"), std::string::npos) << off.body;
  status_ = Ready(true);
  capture_ = [](const Target&, std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    return Fail(ErrorCode::kFailedPrecondition,
                "allocation profiles need jemalloc's record of recent allocations; this "
                "process's allocator is tcmalloc");
  };
  EXPECT_EQ(allocs_.Handle(Allocs({{"pid", "42"}})).status, 412u) << "the agent refuses it";
  capture_ = [this](const Target&,
                    std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    std::filesystem::remove_all(proc_ + "/42");  // the process exits mid-window
    return Fail(ErrorCode::kNotFound, "pid 42 exited during the allocation window");
  };
  HttpResponse died = allocs_.Handle(Allocs({{"pid", "42"}}));
  EXPECT_EQ(died.status, 502u);
  EXPECT_NE(died.body.find("exited while its allocation profile was being taken"),
            std::string::npos)
      << died.body;
}

// The agent opens one window at a time: one that another client opened
// (`memprofctl profile --allocations`) makes the process busy, as one of
// the exporter's own would.
TEST_F(HeapProfileEndpointTest, AWindowAlreadyOpenInTheAgentIsBusyNotUnprofilable) {
  capture_ = [](const Target&, std::optional<std::chrono::milliseconds>) -> Result<std::string> {
    return Fail(ErrorCode::kFailedPrecondition,
                "allocation window #3 is already open in this process (it ends in 12s); one "
                "runs at a time: try again when it has ended");
  };
  HttpResponse r = allocs_.Handle(Allocs({{"pid", "42"}}));
  EXPECT_EQ(r.status, 429u) << r.body;
  EXPECT_EQ(Header(r, "Retry-After"), "1");
  EXPECT_NE(r.body.find("allocation window #3 is already open"), std::string::npos) << r.body;
}

TEST_F(HeapProfileEndpointTest, OneAllocationWindowPerPidBesideItsHeapProfiles) {
  HttpResponse second;
  HttpResponse heap;
  capture_ = [&](const Target&, std::optional<std::chrono::milliseconds> w) {
    if (w == std::chrono::milliseconds(5000)) {  // the first: arrive during it
      second = allocs_.Handle(Allocs({{"pid", "42"}}));
      heap = endpoint_.Handle(Heap({{"pid", "42"}}));
    }
    return Result<std::string>("done");
  };
  EXPECT_EQ(allocs_.Handle(Allocs({{"pid", "42"}, {"seconds", "5"}})).body, "done");
  EXPECT_EQ(second.status, 429u);
  EXPECT_NE(second.body.find("an allocation profile of pid 42 is already being taken"),
            std::string::npos)
      << second.body;
  EXPECT_GE(std::stoi(Header(second, "Retry-After")), 4) << "what is left of the window";
  EXPECT_EQ(heap.status, 200u) << "a heap profile of the same process may run beside it";
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
  EXPECT_EQ(page.find("pid/7/allocs"), std::string::npos) << "not jemalloc: no allocation window";
  PprofTarget jemalloc{9, "j", "j", "inactive", true, true};
  EXPECT_NE(RenderPprofIndex({jemalloc}).find("<a href=\"/debug/pprof/pid/9/allocs\">"),
            std::string::npos);
  EXPECT_NE(RenderPprofIndex({}).find("No agents found"), std::string::npos);
}

}  // namespace
}  // namespace memprof::cli
