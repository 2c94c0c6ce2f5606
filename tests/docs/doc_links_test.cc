// Every document of the repository (docs/ and README.md) cites only files
// that are there: its relative links and the repository paths it names in
// backticks. And the finder itself, on citations that must fail.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/docs/doc_links.h"

namespace memprof::docs {
namespace {

namespace fs = std::filesystem;

TEST(DocLinksTest, FindsRelativeLinksAndBacktickedRepositoryPaths) {
  const auto found = FindCitations(
      "See [layers](architecture.md#layers) and `agent/core/agent.cc:12`.\n"
      "[web](https://example.com) [here](#top) `build/cli/memprofctl` `/proc/<pid>/maps`\n"
      "```\n[in a code block](missing.md)\n```\n"
      "`tests/<unit>_test.cc` and [up](../README.md)\n");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].target, "architecture.md");
  EXPECT_TRUE(found[0].relative_to_document);
  EXPECT_EQ(found[1].target, "agent/core/agent.cc");
  EXPECT_FALSE(found[1].relative_to_document);
  EXPECT_EQ(found[2].target, "../README.md");
  EXPECT_EQ(found[2].line, 6);
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file, a folder, or a unit named without its extension
// ("common/cgroup_memory" for its .h and .cc).
bool Exists(const fs::path& path) {
  if (fs::exists(path)) return true;
  for (const char* extension : {".h", ".cc", ".c"}) {
    if (fs::exists(path.string() + extension)) return true;
  }
  return false;
}

std::vector<fs::path> Documents(const fs::path& root) {
  std::vector<fs::path> documents = {root / "README.md"};
  for (const auto& entry : fs::recursive_directory_iterator(root / "docs")) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") {
      documents.push_back(entry.path());
    }
  }
  return documents;
}

TEST(DocLinksTest, EveryCitedFileExists) {
  const fs::path root = MEMPROF_DOCS_SOURCE_DIR;
  std::vector<std::string> missing;
  size_t citations = 0;
  for (const fs::path& document : Documents(root)) {
    for (const Citation& c : FindCitations(ReadAll(document))) {
      ++citations;
      const fs::path base = c.relative_to_document ? document.parent_path() : root;
      if (!Exists(base / c.target)) {
        missing.push_back(fs::relative(document, root).string() + ":" + std::to_string(c.line) +
                          ": " + c.target);
      }
    }
  }
  EXPECT_GT(citations, 50u) << "too few citations found under " << root;
  std::string all;
  for (const std::string& m : missing) all += m + "\n";
  EXPECT_TRUE(missing.empty()) << missing.size() << " citations of missing files:\n" << all;
}

}  // namespace
}  // namespace memprof::docs
