// gperf_profile_writer: writes the two heap profiles gperftools (Debian's
// libtcmalloc) produces, for the `memprofctl report` tests of that format.
// It allocates known amounts through noinline functions with telling names
// and keeps them live, then writes
//   <out>.heapprofile  GetHeapProfile() of the heap profiler (exact counts),
//   <out>.heapsample   MallocExtension::GetHeapSample() (tcmalloc's sampler,
//                      "heap_v2/<period>"; needs TCMALLOC_SAMPLE_PARAMETER).
// Usage: gperf_profile_writer <out prefix>. Exits 0 when both are written.
#include <gperftools/heap-profiler.h>
#include <gperftools/malloc_extension.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kBigBlocks = 64;
constexpr size_t kBigBlockBytes = size_t{1} << 20;  // GperfWriterAllocBig: 64 MiB
constexpr int kSmallBlocks = 4096;
constexpr size_t kSmallBlockBytes = 4096;  // GperfWriterAllocSmall: 16 MiB

constexpr int kChurnBlocks = 1000;
constexpr size_t kChurnBlockBytes = 1000;

void* big_blocks[kBigBlocks];
void* small_blocks[kSmallBlocks];

// Touched so the memory is really there.
extern "C" __attribute__((noinline)) int GperfWriterAllocBig() {
  for (void*& block : big_blocks) {
    block = malloc(kBigBlockBytes);
    if (block == nullptr) return -1;
    memset(block, 0xab, kBigBlockBytes);
  }
  return 0;
}

extern "C" __attribute__((noinline)) int GperfWriterAllocSmall() {
  for (void*& block : small_blocks) {
    block = malloc(kSmallBlockBytes);
    if (block == nullptr) return -1;
    memset(block, 0xcd, kSmallBlockBytes);
  }
  return 0;
}

// Allocated and freed again: only the heap profiler's accumulated counts
// ("[objects: bytes]") see it, 1000 objects of 1000 bytes.
extern "C" __attribute__((noinline)) int GperfWriterChurn() {
  for (int i = 0; i < kChurnBlocks; ++i) {
    char* volatile block = static_cast<char*>(malloc(kChurnBlockBytes));
    if (block == nullptr) return -1;
    block[0] = 1;
    free(block);
  }
  return 0;
}

bool WriteFile(const std::string& path, const char* text, size_t size) {
  FILE* file = fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  bool ok = fwrite(text, 1, size, file) == size;
  return fclose(file) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gperf_profile_writer <out prefix>\n");
    return 2;
  }
  const std::string prefix = argv[1];
  HeapProfilerStart(prefix.c_str());
  if (GperfWriterAllocBig() != 0 || GperfWriterAllocSmall() != 0 ||
      GperfWriterChurn() != 0) {
    fprintf(stderr, "gperf_profile_writer: out of memory\n");
    return 1;
  }
  char* profile = GetHeapProfile();
  HeapProfilerStop();
  std::string sample;
  MallocExtension::instance()->GetHeapSample(&sample);
  bool ok = profile != nullptr && WriteFile(prefix + ".heapprofile", profile, strlen(profile)) &&
            WriteFile(prefix + ".heapsample", sample.data(), sample.size());
  free(profile);
  for (void* block : big_blocks) free(block);
  for (void* block : small_blocks) free(block);
  if (!ok) perror("gperf_profile_writer: writing the profiles");
  return ok ? 0 : 1;
}
