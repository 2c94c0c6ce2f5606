// Replays files (or every file in directories) through LLVMFuzzerTestOneInput,
// so the fuzz entry point runs in every build, GCC included, over the seed
// corpus. Exit 0 when all inputs ran; a bug shows up as a crash or sanitizer
// report, as under libFuzzer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    std::filesystem::path arg = argv[i];
    if (!std::filesystem::is_directory(arg, error)) {
      if (!RunFile(arg)) return 1;
      ++inputs;
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(arg)) {
      if (!entry.is_regular_file()) continue;
      if (!RunFile(entry.path())) return 1;
      ++inputs;
    }
  }
  std::fprintf(stderr, "ran %zu inputs\n", inputs);
  return inputs > 0 ? 0 : 1;  // an empty corpus would test nothing
}
