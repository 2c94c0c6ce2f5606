// /debug/pprof/symbol without a real process: the request pprof sends, the
// answer it reads, and each failure's status.
#include "cli/exporter/symbol_endpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>
#include <utility>

#include "cli/exporter/symbol_query.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

HttpRequest Symbol(const std::string& method,
                   std::vector<std::pair<std::string, std::string>> query, std::string body = "") {
  return HttpRequest{method, "/debug/pprof/symbol", std::move(query), std::move(body)};
}

TEST(SymbolQueryTest, AddressesAsPprofJoinsThem) {
  auto a = ParseSymbolRequest("0x4a1f2c+0x7FFF00001000+0x1\n");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(*a, (std::vector<uint64_t>{0x4a1f2c, 0x7fff00001000, 0x1}));
  auto one = ParseSymbolRequest("0xffffffffffffffff");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->front(), UINT64_MAX);
}

TEST(SymbolQueryTest, AnythingElseSaysWhatIsExpected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no addresses: POST hexadecimal addresses joined by '+'"},
      {"  \n", "no addresses"},
      {"4a1f2c", "'4a1f2c' is not a hexadecimal address (0x...)"},
      {"0x", "'0x' is not a hexadecimal address"},
      {"0x12+", "'' is not a hexadecimal address"},
      {"0x12++0x13", "'' is not a hexadecimal address"},
      {"0x12 0x13", "'0x12 0x13' is not a hexadecimal address"},
      {"0xg1", "'0xg1' is not"},
      {"0x10000000000000000", "'0x10000000000000000' is not"},
      {"-0x1", "'-0x1' is not"},
      {std::string(100, 'z'), "'" + std::string(40, 'z') + "...' is not"},
  };
  for (const auto& [body, message] : cases) {
    auto a = ParseSymbolRequest(body);
    ASSERT_FALSE(a) << body;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(a.error().message.find(message), std::string::npos) << a.error().message;
  }
}

TEST(SymbolQueryTest, TheNumberOfAddressesIsBounded) {
  std::string body = "0x1";
  for (size_t i = 1; i < kMaxSymbolAddresses; ++i) body += "+0x1";
  EXPECT_TRUE(ParseSymbolRequest(body)) << "exactly the bound";
  auto over = ParseSymbolRequest(body + "+0x1");
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("more than 65536 addresses in one symbol request"),
            std::string::npos)
      << over.error().message;
}

TEST(SymbolQueryTest, TheAnswerNamesWhatHasANameInTheRequestsOrder) {
  const std::vector<uint64_t> addresses = {0x4a1f2c, 0x10, 0x7fff00001000};
  const std::vector<std::string> names = {"Leak(unsigned long)", "", "main"};
  EXPECT_EQ(FormatSymbolAnswer(addresses, names),
            "0x4a1f2c Leak(unsigned long)\n0x7fff00001000 main\n");
  EXPECT_EQ(FormatSymbolAnswer(addresses, {}), "");
}

class SymbolEndpointTest : public testing::CommandTest {
 protected:
  std::function<Result<std::vector<std::string>>(const Target&, std::span<const uint64_t>)>
      lookup_ = [](const Target& t, std::span<const uint64_t> addresses) {
        std::vector<std::string> names;
        for (uint64_t a : addresses) {
          names.push_back(a == 0x100 ? "" : "f" + std::to_string(a) + "@" + std::to_string(t.pid));
        }
        return Result<std::vector<std::string>>(names);
      };
  SymbolEndpoint endpoint_{
      discovery_, [this](const Target& t, std::span<const uint64_t> a) { return lookup_(t, a); }};
};

TEST_F(SymbolEndpointTest, PostNamesTheAddressesInThatProcess) {
  HttpResponse r = endpoint_.Handle(Symbol("POST", {{"pid", "42"}}, "0x10+0x100+0x11"));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.content_type, kPlainText);
  EXPECT_EQ(r.body, "0x10 f16@42\n0x11 f17@42\n") << "the unnamed one is left out, as Go does";
}

TEST_F(SymbolEndpointTest, GetSaysWhetherSymbolsAreServed) {
  EXPECT_EQ(endpoint_.Handle(Symbol("GET", {{"pid", "42"}})).body, "num_symbols: 1\n");
  EXPECT_EQ(endpoint_.Handle(Symbol("GET", {})).body, "num_symbols: 0\n");
}

// A profile fetched as /debug/pprof/heap?pid=N leads pprof to plain
// /debug/pprof/symbol: no process to ask, so nothing is named, and pprof
// goes on with the names the profile has.
TEST_F(SymbolEndpointTest, WithoutAPidNothingIsNamedAndNothingFails) {
  bool asked = false;
  lookup_ = [&](const Target&, std::span<const uint64_t>) {
    asked = true;
    return Result<std::vector<std::string>>(std::vector<std::string>{});
  };
  HttpResponse r = endpoint_.Handle(Symbol("POST", {}, "0x10+0x11"));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(asked);
}

TEST_F(SymbolEndpointTest, EachFailureHasItsStatusAndSaysWhatToDo) {
  const std::vector<std::tuple<HttpRequest, unsigned, std::string>> cases = {
      {Symbol("POST", {{"pid", "abc"}}, "0x1"), 400u, "pid=abc is not a process id"},
      {Symbol("POST", {{"pid", "42"}, {"pid", "43"}}, "0x1"), 400u, "pid given twice"},
      {Symbol("POST", {{"pid", "42"}}, "main"), 400u, "'main' is not a hexadecimal address"},
      {Symbol("POST", {}, "main"), 400u, "'main' is not a hexadecimal address"},
      {Symbol("POST", {{"pid", "42"}}, ""), 400u, "no addresses"},
      {Symbol("POST", {{"pid", "77"}}, "0x1"), 404u, "no process with pid 77"},
      {Symbol("GET", {{"pid", "77"}}), 404u, "no process with pid 77"},
  };
  for (const auto& [request, status, message] : cases) {
    HttpResponse r = endpoint_.Handle(request);
    EXPECT_EQ(r.status, status) << request.body << "\n" << r.body;
    EXPECT_NE(r.body.find(message), std::string::npos) << r.body;
    ASSERT_FALSE(r.headers.empty());
    EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>{"X-Go-Pprof", "1"}));
  }
  lookup_ = [](const Target&, std::span<const uint64_t>) -> Result<std::vector<std::string>> {
    return Fail(ErrorCode::kPermissionDenied, "cannot read /proc/42/maps: Permission denied");
  };
  HttpResponse denied = endpoint_.Handle(Symbol("POST", {{"pid", "42"}}, "0x1"));
  EXPECT_EQ(denied.status, 403u);
  EXPECT_EQ(denied.body, "cannot read /proc/42/maps: Permission denied\n");
}

// Each request opens the process's files: a bounded number at once, the
// next one waits for a turn.
TEST_F(SymbolEndpointTest, ABoundedNumberAreAnsweredAtOnceTheNextWaitsItsTurn) {
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  int most = 0;
  bool release = false;
  lookup_ = [&](const Target&, std::span<const uint64_t> a) {
    std::unique_lock lock(mu);
    most = std::max(most, ++inside);
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    --inside;
    return Result<std::vector<std::string>>(std::vector<std::string>(a.size(), "f"));
  };
  std::vector<std::future<HttpResponse>> replies;
  for (size_t i = 0; i <= kMaxSymbolRequests; ++i) {
    replies.push_back(std::async(std::launch::async, [this] {
      return endpoint_.Handle(Symbol("POST", {{"pid", "42"}}, "0x1"));
    }));
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20),
                            [&] { return inside == static_cast<int>(kMaxSymbolRequests); }));
    release = true;
    cv.notify_all();
  }
  for (auto& reply : replies) EXPECT_EQ(reply.get().body, "0x1 f\n");
  EXPECT_EQ(most, static_cast<int>(kMaxSymbolRequests));
}

TEST_F(SymbolEndpointTest, OneThatWaitsTooLongForItsTurnIsTurnedAway) {
  HttpResponse second;
  std::function<HttpResponse()> ask_again;
  SymbolEndpoint one_at_a_time(
      discovery_,
      [&](const Target&, std::span<const uint64_t> a) {
        if (ask_again) second = std::exchange(ask_again, nullptr)();  // while this one runs
        return Result<std::vector<std::string>>(std::vector<std::string>(a.size(), "f"));
      },
      1, std::chrono::milliseconds(50));
  ask_again = [&] { return one_at_a_time.Handle(Symbol("POST", {{"pid", "42"}}, "0x2")); };
  EXPECT_EQ(one_at_a_time.Handle(Symbol("POST", {{"pid", "42"}}, "0x1")).body, "0x1 f\n");
  EXPECT_EQ(second.status, 429u);
  EXPECT_EQ(second.body,
            "the exporter is already naming addresses for 1 symbol requests (its limit); try "
            "again shortly\n");
  EXPECT_NE(std::find(second.headers.begin(), second.headers.end(),
                      std::pair<std::string, std::string>{"Retry-After", "1"}),
            second.headers.end());
  EXPECT_EQ(one_at_a_time.Handle(Symbol("POST", {{"pid", "42"}}, "0x3")).body, "0x3 f\n")
      << "the turn is free again";
}

}  // namespace
}  // namespace memprof::cli
