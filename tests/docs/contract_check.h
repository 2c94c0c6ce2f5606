#ifndef MEMPROF_TESTS_DOCS_CONTRACT_CHECK_H_
#define MEMPROF_TESTS_DOCS_CONTRACT_CHECK_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace memprof::docs {

// docs/contract.md against the code, as pure functions of the texts so that
// the check itself is unit-tested. Section 2 of the contract has three
// tables that must list, one name per row, what the code defines:
//
//   "The RPCs of memprof.v1.MemoryProfile"   every `rpc Name(` of the proto
//   "Environment variables the code reads"   every MEMPROF_* and MEMPROFCTL_*
//                                            name in a string literal of
//                                            agent/, cli/ or common/
//   "Exit codes"                             every `kExit... = N;` constant
//
// A name "has a row" when the first cell of a row of the one table under that
// heading holds it in backticks (`Purge`, `MEMPROF_LISTEN`, `3`); one cell may
// hold several. A row whose first cell names what the code no longer defines
// is a problem too. Other names in the environment table (MALLOC_CONF,
// TMPDIR, ...) are not checked either way.

inline constexpr std::string_view kRpcHeading = "The RPCs of `memprof.v1.MemoryProfile`";
inline constexpr std::string_view kEnvironmentHeading = "Environment variables the code reads";
inline constexpr std::string_view kExitCodeHeading = "Exit codes";

// One C or C++ file as the compiler's first phase sees it: the contents of
// its string literals (raw strings too), and its code with comments removed
// and every literal emptied.
struct SourceText {
  std::vector<std::string> literals;
  std::string code;
};
SourceText ScanSource(std::string_view source);

// The RPC names of every service in a .proto file (comments ignored).
std::set<std::string> RpcNames(std::string_view proto);

// The environment variable names a source spells in its string literals:
// every MEMPROF_X or MEMPROFCTL_X, X of capitals, digits and underscores,
// wherever it stands in the literal (getenv("MEMPROF_FORK"), a constant, a
// help text naming it). A name that ends in "_" is a prefix, not a variable
// (env_snapshot.cc copies every "MEMPROF_" variable).
std::set<std::string> EnvironmentVariableNames(const SourceText& source);

// The exit codes a source defines: the value of every `kExitName = N;`.
std::set<std::string> ExitCodes(const SourceText& source);

// The tables under the heading whose text is `heading` (any level), up to the
// next heading of the same or a higher level. A table is a run of lines that
// start with '|', of which the second is the |---| row (as on GitHub); it is
// kept as its body rows, each row its cells, trimmed. A run without the
// |---| row is no table (GitHub shows it as text): a blank line inside a
// table leaves its second half so.
struct MarkdownTable {
  int line = 0;  // of its header row, counted from 1
  std::vector<std::vector<std::string>> rows;
};
struct MarkdownSection {
  bool found = false;
  int headings = 0;  // how many headings have that text
  std::vector<MarkdownTable> tables;
  std::vector<int> stray_rows;  // the first line of each run of '|' lines that is no table
};
MarkdownSection SectionTables(std::string_view markdown, std::string_view heading);

// The names in backticks in the first cell of every row of `table`.
std::set<std::string> FirstCellNames(const MarkdownTable& table);

// What the product defines, with where (for the messages).
struct ProductNames {
  std::set<std::string> rpcs;
  std::vector<std::pair<std::string, std::string>> variables;   // name, file
  std::vector<std::pair<std::string, std::string>> exit_codes;  // code, file
};

// One source file: its path (for messages) and its text.
struct SourceFile {
  std::string path;
  std::string text;
};
ProductNames CollectProductNames(std::string_view proto, const std::vector<SourceFile>& sources);

// Every way in which `contract` (the text of docs/contract.md) misses or
// outlives `names`; empty when the three tables are complete and current.
std::vector<std::string> CheckContract(std::string_view contract, const ProductNames& names);

}  // namespace memprof::docs

#endif  // MEMPROF_TESTS_DOCS_CONTRACT_CHECK_H_
