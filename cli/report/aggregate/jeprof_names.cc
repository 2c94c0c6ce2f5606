#include "cli/report/aggregate/jeprof_names.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <iterator>

#include "common/path.h"

namespace memprof::report::aggregate {
namespace {

bool IsPerlSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsPerlWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Names with parentheses that are not argument lists. jeprof's regexes take
// them for ones and drop them ("demo::(anonymous namespace)::Serve()" becomes
// "demo::::Serve"); pprof keeps them (reservedNames in its profile/prune.go),
// and so do we.
constexpr std::string_view kReservedNames[] = {"(anonymous namespace)", "operator()"};
static_assert(kReservedNames[0].front() == '(' && kReservedNames[1].front() == 'o' &&
                  std::size(kReservedNames) == 2,
              "ReservedNameAt looks only at names starting with '(' or 'o'");

// The length of the reserved name that starts at `at`, or 0. A name must
// start a word: "my_operator()" holds an empty argument list.
size_t ReservedNameAt(std::string_view text, size_t at) {
  // Called for every character of every name: most are no reserved name's
  // first ('(' or 'o').
  if (text[at] != '(' && text[at] != 'o') return 0;
  if (at > 0 && IsPerlWord(text[at - 1])) return 0;
  for (std::string_view name : kReservedNames) {
    if (text.substr(at).starts_with(name)) return name.size();
  }
  return 0;
}

// Where the innermost group opened at `open_at` closes, or npos when another
// group opens first (or none closes). Reserved names inside are plain text.
size_t InnermostGroupEnd(std::string_view text, size_t open_at, char open, char close) {
  for (size_t j = open_at + 1; j < text.size();) {
    if (const size_t reserved = ReservedNameAt(text, j); reserved > 0) {
      j += reserved;
    } else if (text[j] == open || text[j] == close) {
      return text[j] == close ? j : std::string_view::npos;
    } else {
      ++j;
    }
  }
  return std::string_view::npos;
}

// One pass of Perl's `s/<open>[^<open><close>]*<close>(\s*const)?//g`: removes
// every innermost group, left to right, except reserved names. Returns
// whether anything matched.
bool RemoveInnermostGroups(std::string& text, char open, char close, bool with_const) {
  std::string out;
  bool matched = false;
  size_t i = 0;
  while (i < text.size()) {
    if (const size_t reserved = ReservedNameAt(text, i); reserved > 0) {
      out.append(text, i, reserved);
      i += reserved;
      continue;
    }
    const size_t j = text[i] == open ? InnermostGroupEnd(text, i, open, close) : std::string::npos;
    if (j == std::string::npos) {
      out += text[i++];
      continue;
    }
    size_t end = j + 1;
    if (with_const) {
      size_t k = end;
      while (k < text.size() && IsPerlSpace(text[k])) ++k;
      if (text.compare(k, 5, "const") == 0) end = k + 5;
    }
    i = end;
    matched = true;
  }
  text = std::move(out);
  return matched;
}

// Whether a qualifier starts at `at`: `word::`, or the anonymous namespace
// (which jeprof's `\w+::` cannot see, having dropped it already).
bool QualifierAt(std::string_view text, size_t at) {
  if (text.substr(at).starts_with("(anonymous namespace)::")) return true;
  size_t end = at;
  while (end < text.size() && IsPerlWord(text[end])) ++end;
  return end > at && text.substr(end).starts_with("::");
}

// Perl's `s/^.*\s+(\w+::)/$1/`: cut up to the last blank that is followed
// by a qualifier (drops a return type such as "void* ").
void RemoveLeadingType(std::string& text) {
  for (size_t q = text.size(); q-- > 1;) {
    if (IsPerlSpace(text[q - 1]) && QualifierAt(text, q)) {
      text.erase(0, q);
      return;
    }
  }
}

// jeprof's %skip list for heap profiles (RemoveUninterestingFrames).
constexpr std::string_view kAllocatorEntryPoints[] = {"calloc",
                                                      "cfree",
                                                      "malloc",
                                                      "newImpl",
                                                      "void* newImpl",
                                                      "free",
                                                      "memalign",
                                                      "posix_memalign",
                                                      "aligned_alloc",
                                                      "pvalloc",
                                                      "valloc",
                                                      "realloc",
                                                      "mallocx",
                                                      "rallocx",
                                                      "xallocx",
                                                      "dallocx",
                                                      "sdallocx",
                                                      "sdallocx_noflags",
                                                      "tc_calloc",
                                                      "tc_cfree",
                                                      "tc_malloc",
                                                      "tc_free",
                                                      "tc_memalign",
                                                      "tc_posix_memalign",
                                                      "tc_pvalloc",
                                                      "tc_valloc",
                                                      "tc_realloc",
                                                      "tc_new",
                                                      "tc_delete",
                                                      "tc_newarray",
                                                      "tc_deletearray",
                                                      "tc_new_nothrow",
                                                      "tc_newarray_nothrow",
                                                      "do_malloc",
                                                      "::do_malloc",
                                                      "::do_malloc_or_cpp_alloc",
                                                      "DoSampledAllocation",
                                                      "simple_alloc::allocate",
                                                      "__malloc_alloc_template::allocate",
                                                      "__builtin_delete",
                                                      "__builtin_new",
                                                      "__builtin_vec_delete",
                                                      "__builtin_vec_new",
                                                      "operator new",
                                                      "operator new[]",
                                                      "malloc_zone_malloc",
                                                      "malloc_zone_calloc",
                                                      "malloc_zone_valloc",
                                                      "malloc_zone_realloc",
                                                      "malloc_zone_memalign",
                                                      "malloc_zone_free",
                                                      "__start_google_malloc",
                                                      "__stop_google_malloc",
                                                      "__start_malloc_hook",
                                                      "__stop_malloc_hook"};

bool InSkipList(std::string_view name) {
  for (std::string_view entry : kAllocatorEntryPoints) {
    if (entry == name) return true;
  }
  return false;
}

}  // namespace

std::string ShortFunctionName(std::string_view full_name) {
  std::string name(full_name);
  while (RemoveInnermostGroups(name, '(', ')', true)) {
  }
  while (RemoveInnermostGroups(name, '<', '>', false)) {
  }
  RemoveLeadingType(name);
  return name;
}

bool IsAllocatorEntryPoint(std::string_view short_name) {
  // jeprof also lists every name with a leading '_' (Mach-O symbols).
  if (InSkipList(short_name)) return true;
  if (short_name.starts_with('_') && InSkipList(short_name.substr(1))) return true;
  // jeprof's $skip_regexp: "TCMalloc|^tcmalloc::".
  return short_name.find("TCMalloc") != std::string_view::npos ||
         short_name.starts_with("tcmalloc::");
}

bool IsAllocatorModule(std::string_view module) {
  const std::string_view name = PathBasename(module);
  return name.starts_with("libjemalloc") || name.starts_with("libtcmalloc");
}

std::string JeprofAddress(uint64_t address) {
  char buffer[24];
  int length = std::snprintf(buffer, sizeof(buffer), "%016" PRIx64, address);
  return std::string(buffer, static_cast<size_t>(length));
}

}  // namespace memprof::report::aggregate
