// Target program for symbolizer_test. Prints code addresses whose frames the
// test knows, then its own /proc/self/maps, then "ready", and stays alive
// until its stdin is closed, so the test can look at /proc/<pid>/map_files.
// Lines marked "// LINE:<name>" are found by the test in this source file.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "fixture_lib.h"

namespace fixture {

volatile int g_sink = 0;

// Returns its own return address: a point inside whoever called it.
[[gnu::noinline]] void* RecordReturnAddress() {
  void* where = __builtin_return_address(0);
  asm volatile("" ::: "memory");
  return where;
}

// Always inlined into OuterWithInline, so the return address of the call
// below lies in inlined code: the frames are InlinedMiddle, then its caller.
[[gnu::always_inline]] inline void* InlinedMiddle(int depth) {
  void* where = RecordReturnAddress();  // LINE:inlined_call
  g_sink = g_sink + depth;
  return where;
}

[[gnu::noinline]] void* OuterWithInline(int depth) {
  void* where = InlinedMiddle(depth);  // LINE:outer_call
  g_sink = g_sink + 1;
  return where;
}

struct Widget {
  [[gnu::noinline]] void* Method(int x);
};

void* Widget::Method(int x) {
  void* where = RecordReturnAddress();  // LINE:method_call
  g_sink = g_sink + x;
  return where;
}

}  // namespace fixture

extern "C" [[gnu::noinline]] void* plain_c_function() {
  void* where = fixture::RecordReturnAddress();  // LINE:c_call
  fixture::g_sink = fixture::g_sink + 3;
  return where;
}

namespace {

void PrintAddress(const char* name, const void* address) {
  std::printf("%s %#jx\n", name, static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(address)));
}

}  // namespace

int main() {
  fixture::Widget widget;
  PrintAddress("inline_ra", fixture::OuterWithInline(1));
  PrintAddress("method_ra", widget.Method(2));
  PrintAddress("c_ra", plain_c_function());
  PrintAddress("lib_ra", fixturelib::CallThrough(&fixture::RecordReturnAddress));
  PrintAddress("leaf_pc", reinterpret_cast<const void*>(&fixture::RecordReturnAddress));
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) std::printf("map %s\n", line.c_str());
  std::printf("ready\n");
  std::fflush(stdout);
  // Stay mapped until the test is done with us (EOF on stdin).
  while (std::fgetc(stdin) != EOF) {
  }
  return 0;
}
