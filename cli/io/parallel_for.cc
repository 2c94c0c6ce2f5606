#include "cli/io/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

#include "cli/io/logging.h"

namespace memprof::cli {

void ForEachInParallel(size_t n, size_t max_parallel, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::jthread> helpers;
  const size_t threads = std::min(std::max<size_t>(max_parallel, 1), n);
  for (size_t k = 1; k < threads; ++k) {
    try {
      helpers.emplace_back(worker);
    } catch (const std::system_error& e) {  // out of threads: fewer helpers
      Log().debug("cannot start a worker thread: {}", e.what());
      break;
    }
  }
  worker();
}

}  // namespace memprof::cli
