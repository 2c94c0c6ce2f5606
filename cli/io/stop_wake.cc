#include "cli/io/stop_wake.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace memprof::cli {

StopWake::StopWake(const std::stop_token& stop)
    : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), on_stop_(stop, [this] {
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fd_.get(), &one, sizeof(one));
      }) {}

}  // namespace memprof::cli
