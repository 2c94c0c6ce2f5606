#include "tests/docs/doc_links.h"

#include <array>
#include <regex>
#include <string>

namespace memprof::docs {
namespace {

// The repository's top-level folders: a backticked path that starts with one
// of them names a file of the repository.
constexpr std::string_view kRepositoryFolders[] = {"agent/", "cli/",   "common/", "proto/",
                                                   "tests/", "docs/",  "cmake/",  "packaging/",
                                                   ".ci/",   "debian/"};

bool HasPlaceholder(std::string_view path) {
  return path.find_first_of("<>*{}$ ") != std::string_view::npos || path.find("...") != path.npos;
}

bool IsRepositoryPath(std::string_view path) {
  for (std::string_view folder : kRepositoryFolders) {
    if (path.substr(0, folder.size()) == folder) return !HasPlaceholder(path);
  }
  return false;
}

bool IsExternal(std::string_view target) {
  return target.empty() || target.front() == '#' || target.find("://") != target.npos ||
         target.substr(0, 7) == "mailto:";
}

void LinksOfLine(const std::string& text, int line, std::vector<Citation>& out) {
  static const std::regex kLink(R"re(\]\(([^)\s]+)\))re");
  for (std::sregex_iterator it(text.begin(), text.end(), kLink), end; it != end; ++it) {
    std::string target = (*it)[1].str();
    if (IsExternal(target)) continue;
    target = target.substr(0, target.find('#'));
    if (!HasPlaceholder(target)) out.push_back({line, target, true});
  }
}

void PathsOfLine(const std::string& text, int line, std::vector<Citation>& out) {
  static const std::regex kCode(R"re(`([^`\s]+)`)re");
  for (std::sregex_iterator it(text.begin(), text.end(), kCode), end; it != end; ++it) {
    std::string path = (*it)[1].str();
    // "file.cc:123" and "file.cc::Function" name the file.
    path = path.substr(0, path.find(':'));
    if (IsRepositoryPath(path)) out.push_back({line, path, false});
  }
}

}  // namespace

std::vector<Citation> FindCitations(std::string_view markdown) {
  std::vector<Citation> out;
  bool fenced = false;
  int line = 0;
  size_t start = 0;
  while (start <= markdown.size()) {
    const size_t end = std::min(markdown.find('\n', start), markdown.size());
    const std::string text(markdown.substr(start, end - start));
    ++line;
    if (text.rfind("```", 0) == 0) fenced = !fenced;
    if (!fenced) {
      LinksOfLine(text, line, out);
      PathsOfLine(text, line, out);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace memprof::docs
