#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_FRAME_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_FRAME_H_

#include <cstdint>
#include <string>

namespace memprof::report::symbolize {

// One source-level frame of a machine address. An address inside inlined
// code yields several frames (innermost first); they share module fields.
// The field names match memprof::report::aggregate::Frame so the adapter is a copy.
struct Frame {
  std::string function;  // demangled ("ns::Foo::Bar(int)"), or "libx.so+0x1a2b" when unknown
  std::string file;      // source file as recorded in DWARF; "" unless lines were asked for
  int line = 0;          // 0 when unknown
  std::string module;    // basename of the mapping path; "" when no mapping covers the address
  uint64_t module_offset = 0;  // file offset of the address: address - map.start + map.offset
  bool guessed = false;        // `function` is a nearest-symbol guess ("name+0x2a?")

  friend bool operator==(const Frame&, const Frame&) = default;
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_FRAME_H_
