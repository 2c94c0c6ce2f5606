#ifndef MEMPROF_CLI_IO_PARALLEL_FOR_H_
#define MEMPROF_CLI_IO_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace memprof::cli {

// Runs `work(i)` for every i < n on at most `max_parallel` threads (this one
// included), each taking the next i as it becomes free. If no more threads
// can be started, the ones running (at least this one) do all the work.
void ForEachInParallel(size_t n, size_t max_parallel, const std::function<void(size_t)>& work);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_PARALLEL_FOR_H_
