// Times the Symbolizer on N distinct addresses spread over a binary's code,
// cold (first lookups, opening the file and its DWARF) and warm (cache hits),
// optionally next to `addr2line -f -C -i` on the same addresses.
//
//   symbolize_bench <binary> [count=50000] [--lines] [--addr2line] [--check]
//
// --check compares the inline chains (function names) of every 25th address
// with `addr2line -a -f -C -i` and prints the disagreements.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/symbolize/elf_layout.h"
#include "cli/report/symbolize/hex.h"
#include "cli/report/symbolize/symbolizer.h"
#include "common/fd.h"

namespace memprof::report::symbolize {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kBase = 0x7f0000000000;  // where the fake maps load the binary
constexpr uint64_t kPage = 4096;

struct Args {
  std::string binary;
  size_t count = 50000;
  bool lines = false;
  bool addr2line = false;
  bool check = false;
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// One maps line per PT_LOAD, as the kernel would map the file at kBase.
std::vector<std::string> FakeMaps(const std::string& binary, const std::vector<LoadSegment>& segs) {
  std::vector<std::string> lines;
  for (const LoadSegment& s : segs) {
    const uint64_t start = kBase + (s.vaddr & ~(kPage - 1));
    const uint64_t end = (kBase + s.vaddr + s.filesz + kPage - 1) & ~(kPage - 1);
    lines.push_back(LowerHex(start) + "-" + LowerHex(end) + (s.executable ? " r-xp " : " r--p ") +
                    LowerHex(s.offset & ~(kPage - 1)) + " 00:00 1 " + binary);
  }
  return lines;
}

// `count` distinct addresses evenly spread over the largest executable segment.
std::vector<uint64_t> Addresses(const std::vector<LoadSegment>& segs, size_t count) {
  const LoadSegment* text = nullptr;
  for (const LoadSegment& s : segs) {
    if (s.executable && (text == nullptr || s.filesz > text->filesz)) text = &s;
  }
  std::vector<uint64_t> addresses;
  if (text == nullptr || count == 0) return addresses;
  const uint64_t step = text->filesz / count > 0 ? text->filesz / count : 1;
  for (uint64_t i = 0; i < count && i * step < text->filesz; ++i) {
    addresses.push_back(kBase + text->vaddr + i * step + 1);
  }
  return addresses;
}

// Writes the lookup addresses (file addresses, return address - 1) for addr2line.
std::string WriteAddressFile(const std::vector<uint64_t>& addresses) {
  char path[] = "/tmp/symbolize_bench_XXXXXX";
  Fd fd(::mkstemp(path));
  std::ofstream out(path);
  for (uint64_t a : addresses) out << "0x" << LowerHex(a - 1 - kBase) << "\n";
  return path;
}

// addr2line -a prints each address before its "function\nfile:line" pairs.
std::vector<std::vector<std::string>> Addr2lineChains(const std::string& binary,
                                                      const std::vector<uint64_t>& addresses) {
  const std::string input = WriteAddressFile(addresses);
  const std::string output = input + ".out";
  const std::string command =
      "addr2line -a -f -C -i -e '" + binary + "' < '" + input + "' > '" + output + "'";
  std::vector<std::vector<std::string>> chains;
  if (std::system(command.c_str()) == 0) {
    std::ifstream in(output);
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("0x")) {
        chains.emplace_back();
      } else if (!chains.empty()) {
        chains.back().push_back(line);
        std::getline(in, line);  // file:line
      }
    }
  }
  ::unlink(input.c_str());
  ::unlink(output.c_str());
  return chains;
}

void Check(Symbolizer& symbolizer, const std::string& binary,
           const std::vector<uint64_t>& addresses) {
  std::vector<uint64_t> sample;
  for (size_t i = 0; i < addresses.size(); i += 25) sample.push_back(addresses[i]);
  const std::vector<std::vector<std::string>> expected = Addr2lineChains(binary, sample);
  size_t differ = 0;
  for (size_t i = 0; i < sample.size() && i < expected.size(); ++i) {
    std::vector<std::string> ours;
    for (const Frame& f : symbolizer.Resolve(sample[i])) ours.push_back(f.function);
    if (ours == expected[i] || (expected[i] == std::vector<std::string>{"??"})) continue;
    if (++differ > 5) continue;
    std::printf("0x%jx:\n", static_cast<uintmax_t>(sample[i] - 1 - kBase));
    for (const std::string& f : ours) std::printf("  ours      %s\n", f.c_str());
    for (const std::string& f : expected[i]) std::printf("  addr2line %s\n", f.c_str());
  }
  std::printf("check: %zu of %zu sampled addresses differ from addr2line\n", differ, sample.size());
}

double TimeAddr2line(const std::string& binary, const std::vector<uint64_t>& addresses) {
  const std::string path = WriteAddressFile(addresses);
  const std::string command = "addr2line -f -C -i -e '" + binary + "' < '" + path + "' > /dev/null";
  const Clock::time_point start = Clock::now();
  const int status = std::system(command.c_str());
  const double seconds = Seconds(start);
  ::unlink(path.c_str());
  return status == 0 ? seconds : -1;
}

int Run(const Args& args) {
  Fd fd(::open(args.binary.c_str(), O_RDONLY | O_CLOEXEC));
  auto segments = fd.valid() ? ReadLoadSegments(fd.get()) : Fail(ErrorCode::kNotFound, "no file");
  if (!segments) {
    std::fprintf(stderr, "%s: %s\n", args.binary.c_str(), segments.error().message.c_str());
    return 1;
  }
  const std::vector<uint64_t> addresses = Addresses(*segments, args.count);
  SymbolizerOptions options;
  options.lines = args.lines;
  const Clock::time_point start = Clock::now();
  Symbolizer symbolizer =
      Symbolizer::FromMapsLines(FakeMaps(args.binary, *segments), options).value();
  size_t named = 0;
  size_t frames = 0;
  for (uint64_t a : addresses) {
    std::span<const Frame> resolved = symbolizer.Resolve(a);
    frames += resolved.size();
    named += resolved[0].function.find("+0x") == std::string::npos ? 1 : 0;
  }
  const double cold = Seconds(start);
  const Clock::time_point warm_start = Clock::now();
  for (uint64_t a : addresses) frames -= symbolizer.Resolve(a).size() > 0 ? 0 : 1;
  const double warm = Seconds(warm_start);
  std::printf("binary=%s addresses=%zu lines=%d\n", args.binary.c_str(), addresses.size(),
              args.lines ? 1 : 0);
  std::printf("symbolizer cold: %.3f s (%.1f us/address), named %zu, frames %zu\n", cold,
              cold * 1e6 / static_cast<double>(addresses.size()), named, frames);
  std::printf("symbolizer warm (cached): %.4f s\n", warm);
  if (args.addr2line) {
    std::printf("addr2line -f -C -i: %.3f s\n", TimeAddr2line(args.binary, addresses));
  }
  if (args.check) Check(symbolizer, args.binary, addresses);
  return 0;
}

}  // namespace
}  // namespace memprof::report::symbolize

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <binary> [count] [--lines] [--addr2line] [--check]\n", argv[0]);
    return 2;
  }
  memprof::report::symbolize::Args args;
  args.binary = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--lines") {
      args.lines = true;
    } else if (arg == "--addr2line") {
      args.addr2line = true;
    } else if (arg == "--check") {
      args.check = true;
    } else {
      args.count = std::strtoull(argv[i], nullptr, 10);
    }
  }
  return memprof::report::symbolize::Run(args);
}
