// memprof-demo: the demo service bundled with memprof. A fake request server:
// a few worker threads "handle requests" in a loop, with clearly named
// functions that allocate in different ways:
//   HandleRequest                 transient scratch memory, freed per request
//   ParseHeaders                  transient header strings
//   ResponseCache::Insert         retained, but bounded (a direct-mapped cache)
//   SessionRegistry::LeakSession  retained forever: the leak to find
// It links neither jemalloc nor the agent; start it under
// `memprofctl run -- memprof-demo`, which preloads both. It prints one banner
// line on stderr and runs until SIGTERM/SIGINT.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/testprogs/demo/response_cache.h"
#include "tests/testprogs/demo/session_registry.h"
#include "tests/testprogs/testprog_support.h"

namespace demo {
namespace {

constexpr int kWorkerThreads = 3;
constexpr int kRequestPauseMillis = 4;         // About 250 requests/s per worker.
constexpr std::uint64_t kNewSessionEvery = 3;  // About 1 MiB/s of leaked sessions.
constexpr std::uint64_t kDistinctPaths = 4096;
constexpr std::size_t kCacheSlots = 256;  // About 2.5 MiB of cached bodies.
constexpr std::size_t kLeakCapBytes = std::size_t{1} << 30;
constexpr std::size_t kScratchBytes = 16 * 1024;

struct Header {
  std::string name;
  std::string value;
};

struct Services {
  ResponseCache cache{kCacheSlots};
  SessionRegistry sessions{kLeakCapBytes};
};

std::string MakeFakeRequest(int worker, std::uint64_t sequence) {
  std::string request = "GET /items/" + std::to_string(sequence % kDistinctPaths) + " HTTP/1.1\r\n";
  request += "Host: demo.memprof\r\n";
  request += "User: user-" + std::to_string(worker) + "-" + std::to_string(sequence) + "\r\n";
  if (sequence % kNewSessionEvery == 0) request += "X-New-Session: 1\r\n";
  request += "Accept: */*\r\n\r\n";
  return request;
}

}  // namespace

// Splits "Name: value" lines after the request line into fresh strings.
__attribute__((noinline)) std::vector<Header> ParseHeaders(std::string_view request) {
  std::vector<Header> headers;
  std::size_t line_end = request.find("\r\n");
  while (line_end != std::string_view::npos) {
    std::size_t start = line_end + 2;
    line_end = request.find("\r\n", start);
    std::string_view line = request.substr(start, line_end - start);
    std::size_t colon = line.find(':');
    if (line.empty() || colon == std::string_view::npos) break;
    std::size_t value_start = std::min(line.size(), colon + 2);
    headers.push_back({std::string(line.substr(0, colon)), std::string(line.substr(value_start))});
  }
  return headers;
}

namespace {

std::string_view FindHeader(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& header : headers) {
    if (header.name == name) return header.value;
  }
  return {};
}

std::string RenderResponse(std::string_view path, const char* scratch, std::size_t size) {
  std::string body = "<html><body><h1>";
  body.append(path);
  body += "</h1><pre>";
  body.append(scratch, size / 2);
  body += "</pre></body></html>";
  return body;
}

}  // namespace

// One request: parse it, render a body in scratch memory, cache the body and,
// for a login, register a session (which is never released: the leak).
__attribute__((noinline)) void HandleRequest(std::string_view request, Services& services) {
  std::vector<Header> headers = ParseHeaders(request);
  std::size_t path_start = request.find(' ') + 1;
  std::string_view path = request.substr(path_start, request.find(' ', path_start) - path_start);
  // Transient: freed when the request is done (malloc: see ResponseCache::Insert).
  std::unique_ptr<char, void (*)(void*)> scratch(static_cast<char*>(std::malloc(kScratchBytes)),
                                                 std::free);
  if (scratch == nullptr) return;
  std::memset(scratch.get(), 'x', kScratchBytes);
  std::string body = RenderResponse(path, scratch.get(), kScratchBytes);
  services.cache.Insert(path, body);
  if (!FindHeader(headers, "X-New-Session").empty()) {
    services.sessions.LeakSession(FindHeader(headers, "User"));
  }
}

namespace {

void ServeRequests(int worker, Services& services, const std::atomic<bool>& stop) {
  for (std::uint64_t sequence = 0; !stop.load(std::memory_order_relaxed); ++sequence) {
    HandleRequest(MakeFakeRequest(worker, sequence), services);
    TestProgSleepMillis(kRequestPauseMillis);
  }
}

int Run() {
  if (TestProgInstallStopHandlers() != 0) return 1;
  std::fprintf(stderr,
               "memprof-demo: pid %d serving fake requests on %d threads "
               "(SessionRegistry::LeakSession leaks about 1 MiB/s); stop with Ctrl-C or "
               "kill %d\n",
               static_cast<int>(getpid()), kWorkerThreads, static_cast<int>(getpid()));
  Services services;
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkerThreads; ++i) {
    workers.emplace_back(ServeRequests, i, std::ref(services), std::cref(stop));
  }
  int status = TestProgSignalReady("memprof-demo") == 0 ? 0 : 1;
  while (status == 0 && !TestProgStopRequested()) TestProgSleepMillis(100);
  stop.store(true);
  for (std::thread& worker : workers) worker.join();
  return status;
}

}  // namespace
}  // namespace demo

int main() { return demo::Run(); }
