#include "agent/sampler/dlopen_search.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>

namespace memprof::agent {
namespace {

// The caller's DT_RUNPATH, else its DT_RPATH; nullptr if it has neither.
const char* SearchPathOf(const link_map* map) {
  const char* strtab = nullptr;
  ElfW(Xword) runpath = 0;
  ElfW(Xword) rpath = 0;
  bool has_runpath = false;
  bool has_rpath = false;
  for (const ElfW(Dyn)* d = map->l_ld; d != nullptr && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
    if (d->d_tag == DT_RUNPATH) {
      has_runpath = true;
      runpath = d->d_un.d_val;
    }
    if (d->d_tag == DT_RPATH) {
      has_rpath = true;
      rpath = d->d_un.d_val;
    }
  }
  if (strtab == nullptr || (!has_runpath && !has_rpath)) return nullptr;
  return strtab + (has_runpath ? runpath : rpath);
}

// The directory of the caller's file ($ORIGIN), into `out`.
bool OriginOf(const link_map* map, char* out, size_t size) {
  if (map->l_name != nullptr && map->l_name[0] != '\0') {
    const size_t n = std::strlen(map->l_name);
    if (n >= size) return false;
    std::memcpy(out, map->l_name, n + 1);
  } else {
    const ssize_t n = readlink("/proc/self/exe", out, size - 1);  // the program
    if (n <= 0) return false;
    out[n] = '\0';
  }
  char* slash = std::strrchr(out, '/');
  if (slash == nullptr) return false;
  *slash = '\0';
  return true;
}

// `dir` (one element of the path, `length` bytes) + "/" + file, with a
// leading $ORIGIN or ${ORIGIN} replaced; false if it does not fit.
bool JoinPath(const char* dir, size_t length, const char* origin, const char* file, char* out,
              size_t size) {
  size_t n = 0;
  auto put = [&](const char* s, size_t len) {
    if (n + len >= size) return false;
    std::memcpy(out + n, s, len);
    n += len;
    return true;
  };
  for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
    const size_t t = std::strlen(token);
    if (length >= t && std::strncmp(dir, token, t) == 0) {
      if (!put(origin, std::strlen(origin))) return false;
      dir += t;
      length -= t;
      break;
    }
  }
  if (!put(dir, length) || !put("/", 1) || !put(file, std::strlen(file) + 1)) return false;
  return true;
}

}  // namespace

void* DlopenInCallersPath(DlopenFn real_dlopen, const char* file, int flags, const void* caller) {
  if (file == nullptr || std::strchr(file, '/') != nullptr) return nullptr;
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(caller, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return nullptr;
  }
  const char* path = SearchPathOf(map);
  char origin[PATH_MAX];
  if (path == nullptr || !OriginOf(map, origin, sizeof(origin))) return nullptr;
  char candidate[PATH_MAX];
  while (*path != '\0') {
    const char* end = std::strchr(path, ':');
    const size_t length = end != nullptr ? static_cast<size_t>(end - path) : std::strlen(path);
    if (length > 0 && JoinPath(path, length, origin, file, candidate, sizeof(candidate)) &&
        access(candidate, F_OK) == 0) {
      if (void* handle = real_dlopen(candidate, flags)) return handle;
    }
    path += length;
    if (*path == ':') ++path;
  }
  return nullptr;
}

}  // namespace memprof::agent
