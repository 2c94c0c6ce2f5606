#ifndef MEMPROF_TESTS_DOCS_DOC_LINKS_H_
#define MEMPROF_TESTS_DOCS_DOC_LINKS_H_

#include <string>
#include <string_view>
#include <vector>

namespace memprof::docs {

// What a document cites inside the repository: the target of a relative
// markdown link ("[x](architecture.md#layers)" gives "architecture.md"), or a
// repository path in backticks whose first folder is one of the repository's
// own ("`agent/core/agent.cc`"). Links to the web, anchors within the page
// and paths with a placeholder (<pid>, *, {a,b}, ...) are left out.
struct Citation {
  int line;
  std::string target;
  bool relative_to_document;  // a markdown link: resolved from the document's folder
};

std::vector<Citation> FindCitations(std::string_view markdown);

}  // namespace memprof::docs

#endif  // MEMPROF_TESTS_DOCS_DOC_LINKS_H_
