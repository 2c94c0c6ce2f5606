#include "cli/report/debian_packages.h"

#include <dirent.h>

#include <fstream>
#include <unordered_map>

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

}  // namespace

std::map<std::string, std::string> PackagesOwning(const std::vector<std::string>& paths,
                                                  const std::string& dpkg_info_dir) {
  std::unordered_map<std::string, std::string> wanted;  // alias -> the path asked for
  for (const std::string& path : paths) {
    for (std::string& alias : Aliases(path)) wanted.emplace(std::move(alias), path);
  }
  std::map<std::string, std::string> owners;
  for (const std::string& file : ListFiles(dpkg_info_dir)) {
    if (owners.size() == paths.size()) break;
    std::ifstream list(dpkg_info_dir + "/" + file);
    for (std::string line; std::getline(list, line);) {
      auto it = wanted.find(line);
      if (it != wanted.end()) owners.try_emplace(it->second, PackageOfList(file));
    }
  }
  return owners;
}

std::string DebugPackageOf(const std::string& package) { return package + "-dbgsym"; }

}  // namespace memprof::report
