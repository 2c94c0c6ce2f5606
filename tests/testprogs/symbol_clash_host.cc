// symbol_clash_host: a service that carries its own definitions of names the
// agent's dependencies use, and exports them (built with -rdynamic, CMake's
// ENABLE_EXPORTS), as a service that statically links its own gRPC or protobuf
// and exports its symbols does. The executable comes first in the global
// lookup scope, so a library that resolves one of these names through it
// binds to the host's copy. Each copy writes a marker to stderr and aborts: if
// the agent, or anything it loads, calls one of them, the host dies and says
// which. Linked with jemalloc only; the tests preload the agent.
//
// At start it checks that the global scope really resolves each name to its
// own copy (else the test would prove nothing): it prints
// "clash symbols exported" on stdout, or exits 3 saying which is not. Then it
// allocates steadily until SIGTERM/SIGINT.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/testprogs/testprog_support.h"

namespace {

// Async-signal-safe and allocation-free: the marker must get out even if the
// caller holds locks.
[[noreturn]] void Clash(const char* name) {
  static const char kPrefix[] = "symbol_clash_host: the host's ";
  static const char kSuffix[] = " was called (something bound to the host's symbol)\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kPrefix, sizeof(kPrefix) - 1);
  n = ::write(STDERR_FILENO, name, std::strlen(name));
  n = ::write(STDERR_FILENO, kSuffix, sizeof(kSuffix) - 1);
  std::abort();
}

}  // namespace

// gRPC core's entry point: every gRPC server and channel calls it first.
extern "C" __attribute__((visibility("default"), noinline)) void grpc_init(void) {
  Clash("grpc_init");
}

// gRPC's logging function (its real severity parameter is an enum).
extern "C" __attribute__((visibility("default"), noinline)) void gpr_log(
    const char* /*file*/, int /*line*/, int /*severity*/, const char* /*format*/, ...) {
  Clash("gpr_log");
}

// bool google::protobuf::MessageLite::ParseFromZeroCopyStream(
//     google::protobuf::io::ZeroCopyInputStream*), exported by libprotobuf.so.32:
// gRPC's C++ layer parses every request message with it, so an agent serving
// any RPC calls it. Defined under its mangled name rather than through a fake
// class declaration; (this, input) is how the member function is called.
#define CLASH_PROTOBUF_SYMBOL \
  "_ZN6google8protobuf11MessageLite23ParseFromZeroCopyStreamEPNS0_2io19ZeroCopyInputStreamE"
constexpr char kProtobufSymbol[] = CLASH_PROTOBUF_SYMBOL;
extern "C" __attribute__((visibility("default"), noinline)) bool HostParseFromZeroCopyStream(
    void* /*self*/, void* /*input*/) __asm__(CLASH_PROTOBUF_SYMBOL);
extern "C" bool HostParseFromZeroCopyStream(void* /*self*/, void* /*input*/) {
  Clash("google::protobuf::MessageLite::ParseFromZeroCopyStream");
}

namespace {

constexpr std::size_t kBlockBytes = 32 * 1024;
constexpr std::size_t kRingSlots = 64;
constexpr int kTickMillis = 10;

void* g_ring[kRingSlots];
std::size_t g_ring_next = 0;

__attribute__((noinline)) int ClashHostAllocate() {
  void* block = std::malloc(kBlockBytes);
  if (block == nullptr) return -1;
  std::memset(block, 0x2d, kBlockBytes);
  std::free(g_ring[g_ring_next]);
  g_ring[g_ring_next] = block;
  g_ring_next = (g_ring_next + 1) % kRingSlots;
  return 0;
}

// Whether the global scope resolves `name` to `own` (the host's definition).
bool ResolvesToHost(const char* name, void* own) {
  void* found = ::dlsym(RTLD_DEFAULT, name);
  if (found == own) return true;
  std::fprintf(stderr, "symbol_clash_host: %s resolves to %p, not the host's %p\n", name, found,
               own);
  return false;
}

}  // namespace

int main() {
  const bool exported =
      ResolvesToHost("grpc_init", reinterpret_cast<void*>(&grpc_init)) &
      ResolvesToHost("gpr_log", reinterpret_cast<void*>(&gpr_log)) &
      ResolvesToHost(kProtobufSymbol, reinterpret_cast<void*>(&HostParseFromZeroCopyStream));
  if (!exported) return 3;
  std::printf("clash symbols exported\n");
  std::fflush(stdout);
  if (TestProgInstallStopHandlers() != 0) return 1;
  for (std::size_t i = 0; i < kRingSlots; ++i) {
    if (ClashHostAllocate() != 0) return 1;
  }
  if (TestProgSignalReady("symbol_clash_host") != 0) return 1;
  while (!TestProgStopRequested()) {
    if (ClashHostAllocate() != 0) return 1;
    TestProgSleepMillis(kTickMillis);
  }
  for (void* block : g_ring) std::free(block);
  return 0;
}
