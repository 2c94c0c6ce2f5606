#include "cli/report/debian_packages.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "common/path.h"
#include "common/text_file.h"

namespace memprof::report {
namespace {

constexpr std::string_view kListSuffix = ".list";

// The spellings of `path` dpkg may list it under.
std::vector<std::string> Aliases(const std::string& path) {
  std::vector<std::string> aliases = {path};
  if (path.starts_with("/usr/")) {
    aliases.push_back(path.substr(4));
  } else {
    aliases.push_back("/usr" + path);
  }
  return aliases;
}

// "libssl3:amd64.list" -> "libssl3"; "" when not a file list.
std::string PackageOfList(const std::string& file) {
  if (!file.ends_with(kListSuffix)) return "";
  std::string package = file.substr(0, file.size() - kListSuffix.size());
  return package.substr(0, package.find(':'));
}

std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> files;
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) return files;
  while (dirent* entry = ::readdir(stream)) {
    if (std::string_view(entry->d_name).ends_with(kListSuffix)) files.push_back(entry->d_name);
  }
  ::closedir(stream);
  return files;
}

// Letters and digits only, lower case: "libLLVM-14" -> "libllvm14".
std::string Folded(std::string_view name) {
  std::string folded;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return folded;
}

// What a shared library's package is likely called after, folded: its file
// name up to ".so" ("libmpfr.so.6.2.0" -> "libmpfr", which Debian ships as
// libmpfr6). "" for a file name without ".so".
std::string LibraryStem(const std::string& path) {
  const std::string_view name = PathBasename(path);
  const size_t so = name.find(".so");
  return so == std::string_view::npos ? std::string() : Folded(name.substr(0, so));
}

// The lists in the order to read them: first those of packages named like
// one of the libraries (Debian names a library's package after its soname),
// then the rest. The search stops once every path is found, so the usual
// case reads a few lists instead of a thousand.
std::vector<std::string> ListsInSearchOrder(const std::string& dir,
                                            const std::vector<std::string>& paths) {
  std::vector<std::string> stems;
  for (const std::string& path : paths) {
    if (std::string stem = LibraryStem(path); !stem.empty()) stems.push_back(std::move(stem));
  }
  std::vector<std::string> files = ListFiles(dir);
  std::stable_partition(files.begin(), files.end(), [&](const std::string& file) {
    const std::string package = Folded(PackageOfList(file));
    return std::any_of(stems.begin(), stems.end(),
                       [&](const std::string& stem) { return package.starts_with(stem); });
  });
  return files;
}

// Looks strings up by string_view: a list's lines are not copied.
struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
};

}  // namespace

std::map<std::string, std::string> PackagesOwning(const std::vector<std::string>& paths,
                                                  const std::string& dpkg_info_dir) {
  // alias -> the path asked for
  std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>> wanted;
  for (const std::string& path : paths) {
    for (std::string& alias : Aliases(path)) wanted.emplace(std::move(alias), path);
  }
  std::map<std::string, std::string> owners;
  for (const std::string& file : ListsInSearchOrder(dpkg_info_dir, paths)) {
    if (owners.size() == paths.size()) break;
    const Result<std::string> text = ReadTextFile(dpkg_info_dir + "/" + file);
    if (!text) continue;
    std::string_view rest = *text;
    while (!rest.empty()) {
      const size_t end = std::min(rest.find('\n'), rest.size());
      auto it = wanted.find(rest.substr(0, end));
      rest.remove_prefix(std::min(end + 1, rest.size()));
      if (it != wanted.end()) owners.try_emplace(it->second, PackageOfList(file));
    }
  }
  return owners;
}

std::string DebugPackageOf(const std::string& package) { return package + "-dbgsym"; }

}  // namespace memprof::report
