// docs/contract.md keeps up with the code: its tables list every RPC of the
// proto, every MEMPROF_* and MEMPROFCTL_* variable the sources name and every
// exit code memprofctl defines, and nothing that is gone (contract_check.h
// says how each is found). The checker is tested first on small texts, so
// that the test of the tree cannot pass by finding nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/docs/contract_check.h"

namespace memprof::docs {
namespace {

namespace fs = std::filesystem;

// --- Reading the sources ---------------------------------------------------

TEST(ContractScanTest, LiteralsAreReadAndCommentsAreNot) {
  const SourceText text = ScanSource(
      "// getenv(\"MEMPROF_IN_A_COMMENT\")\n"
      "/* \"MEMPROF_IN_A_BLOCK\" */ const char* a = getenv(\"MEMPROF_A\");\n"
      "auto b = R\"x(raw \"quoted\" MEMPROF_B)x\"; char q = '\"'; int n = 10'000;\n"
      "auto c = \"escaped \\\" quote\"; auto d = u8\"MEMPROF_D\";\n");
  EXPECT_EQ(text.literals, (std::vector<std::string>{"MEMPROF_A", "raw \"quoted\" MEMPROF_B",
                                                     "escaped \\\" quote", "MEMPROF_D"}));
  EXPECT_EQ(text.code.find("IN_A_"), std::string::npos) << text.code;
  EXPECT_NE(text.code.find("10'000"), std::string::npos) << text.code;
}

TEST(ContractScanTest, RpcsOfEveryServiceButNotOfComments) {
  const std::set<std::string> rpcs = RpcNames(
      "service A {\n"
      "  rpc Status(StatusRequest) returns (StatusResponse);\n"
      "  // rpc Gone(GoneRequest) returns (GoneResponse);\n"
      "  rpc Dump (DumpRequest) returns (stream DumpChunk);\n"
      "}\n"
      "/* rpc Old(X) returns (Y); */\n"
      "service B { rpc Purge(PurgeRequest) returns (PurgeResponse); }\n");
  EXPECT_EQ(rpcs, (std::set<std::string>{"Dump", "Purge", "Status"}));
}

TEST(ContractScanTest, VariablesAreTheMemprofNamesInLiterals) {
  const SourceText text = ScanSource(
      "inline constexpr char kListenEnv[] = \"MEMPROF_LISTEN\";\n"
      "config.fork = Get(getenv, \"MEMPROF_FORK\");\n"
      "->envname(\"MEMPROF_PID\");\n"
      "constexpr TlsKey kCa{\"MEMPROFCTL_TLS_CA\", \"tls-ca\"};\n"
      "warn(\"set MEMPROF_TLS_KEY (its key) and MEMPROF_TLS_CA, or MEMPROF_TLS_*\");\n"
      "if (name.starts_with(\"MEMPROF_\")) {}  // a prefix, not a variable\n"
      "// MEMPROF_ONLY_IN_A_COMMENT\n"
      "#ifndef MEMPROF_AGENT_CONFIG_H_\n"
      "x = \"XMEMPROF_EMBEDDED MEMPROF_lower TCMALLOC_SAMPLE_PARAMETER\";\n");
  EXPECT_EQ(EnvironmentVariableNames(text),
            (std::set<std::string>{"MEMPROFCTL_TLS_CA", "MEMPROF_FORK", "MEMPROF_LISTEN",
                                   "MEMPROF_PID", "MEMPROF_TLS_CA", "MEMPROF_TLS_KEY"}));
}

TEST(ContractScanTest, ExitCodesAreTheValuesOfTheKExitConstants) {
  const SourceText text = ScanSource(
      "inline constexpr int kExitOk = 0;\n"
      "inline constexpr int kExitPartial = 6;  // kExitOld = 9;\n"
      "if (code == kExitOk) return kExitUsage;\n"
      "const char* s = \"kExitFake = 7;\";\n");
  EXPECT_EQ(ExitCodes(text), (std::set<std::string>{"0", "6"}));
}

// --- Reading the contract --------------------------------------------------

TEST(ContractMarkdownTest, TablesOfASectionUpToTheNextHeadingOfItsLevel) {
  const std::string doc =
      "## 2. Names\n"
      "### Exit codes\n"
      "| code | meaning |\n"
      "|---|---|\n"
      "| `0` | success |\n"
      "| `2`, `3` | usage \\| target, `a|b` |\n"
      "#### A sub-heading stays in the section\n"
      "```\n"
      "| `9` | in a code block |\n"
      "```\n"
      "| `4` | after the sub-heading |\n"
      "|---|---|\n"
      "| `5` | under a header row that looks like a body row |\n"
      "### Next\n"
      "| `7` | not in the section |\n";
  const MarkdownSection section = SectionTables(doc, "Exit codes");
  ASSERT_TRUE(section.found);
  EXPECT_EQ(section.headings, 1);
  ASSERT_EQ(section.tables.size(), 2u);
  EXPECT_EQ(section.tables[0].line, 3);
  ASSERT_EQ(section.tables[0].rows.size(), 2u);
  EXPECT_EQ(section.tables[0].rows[1],
            (std::vector<std::string>{"`2`, `3`", "usage | target, `a|b`"}));
  EXPECT_EQ(FirstCellNames(section.tables[0]), (std::set<std::string>{"0", "2", "3"}));
  EXPECT_EQ(FirstCellNames(section.tables[1]), (std::set<std::string>{"5"}));
  EXPECT_FALSE(SectionTables(doc, "Missing").found);
}

// --- The check -------------------------------------------------------------

// A contract with the three tables, for the product of kSources below.
constexpr char kContract[] =
    "## 2. The contract\n"
    "### The RPCs of `memprof.v1.MemoryProfile`\n"
    "| RPC | what it does |\n"
    "|---|---|\n"
    "| `Status` | who the process is |\n"
    "| `Purge` | unused pages back |\n"
    "### Environment variables the code reads\n"
    "| variable | read by | what it does |\n"
    "|---|---|---|\n"
    "| `MEMPROF_LISTEN` | agent | TCP |\n"
    "| `MEMPROFCTL_TLS_CA`, `MEMPROFCTL_TLS_KEY` | CLI | TLS files |\n"
    "| `MALLOC_CONF` | agent | not ours, not checked |\n"
    "### Exit codes\n"
    "| code | meaning |\n"
    "|---|---|\n"
    "| `0` | success |\n"
    "| `6` | partial failure |\n"
    "## 3. Rules\n";

constexpr char kProto[] =
    "service MemoryProfile {\n"
    "  rpc Status(StatusRequest) returns (StatusResponse);\n"
    "  rpc Purge(PurgeRequest) returns (PurgeResponse);\n"
    "}\n";

std::vector<SourceFile> Sources(const std::string& extra = "") {
  return {{"agent/agent_config.h", "inline constexpr char kListenEnv[] = \"MEMPROF_LISTEN\";\n"},
          {"cli/app/client_settings.cc",
           "constexpr TlsKey kCa{\"MEMPROFCTL_TLS_CA\", \"tls-ca\"};\n"
           "constexpr TlsKey kKey{\"MEMPROFCTL_TLS_KEY\", \"tls-key\"};\n"},
          {"cli/io/exit_codes.h",
           "inline constexpr int kExitOk = 0;\ninline constexpr int kExitPartial = 6;\n"},
          {"cli/new.cc", extra}};
}

std::string Joined(const std::vector<std::string>& problems) {
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  return all;
}

TEST(ContractCheckTest, ACompleteContractPasses) {
  const auto problems = CheckContract(kContract, CollectProductNames(kProto, Sources()));
  EXPECT_TRUE(problems.empty()) << Joined(problems);
}

TEST(ContractCheckTest, ANewVariableWithoutARowFails) {
  const auto problems = CheckContract(
      kContract,
      CollectProductNames(kProto, Sources("const char* v = std::getenv(\"MEMPROF_NEW_KNOB\");")));
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0],
            "no row for variable `MEMPROF_NEW_KNOB` under \"Environment variables the code "
            "reads\" (named in cli/new.cc)");
}

TEST(ContractCheckTest, ANewRpcWithoutARowFails) {
  const std::string proto =
      std::string(kProto) + "service Other { rpc Snapshot(SnapshotRequest) returns (Snap); }\n";
  const auto problems = CheckContract(kContract, CollectProductNames(proto, Sources()));
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0],
            "no row for RPC `Snapshot` under \"The RPCs of `memprof.v1.MemoryProfile`\" (an rpc "
            "of the proto)");
}

TEST(ContractCheckTest, ANewExitCodeWithoutARowFails) {
  const auto problems = CheckContract(
      kContract, CollectProductNames(kProto, Sources("inline constexpr int kExitBusy = 7;")));
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0], "no row for exit code `7` under \"Exit codes\" (defined in cli/new.cc)");
}

TEST(ContractCheckTest, ARowForWhatIsGoneFails) {
  std::vector<SourceFile> sources = Sources();
  sources[0].text.clear();                                  // MEMPROF_LISTEN no longer read
  sources[2].text = "inline constexpr int kExitOk = 0;\n";  // 6 gone
  const auto problems = CheckContract(
      kContract, CollectProductNames("service S { rpc Status(A) returns (B); }", sources));
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                "a row for RPC `Purge` under \"The RPCs of `memprof.v1.MemoryProfile`\", but the "
                "proto has no such rpc",
                "a row for variable `MEMPROF_LISTEN` under \"Environment variables the code "
                "reads\", but no source under agent/, cli/ or common/ names it",
                "a row for exit code `6` under \"Exit codes\", but no kExit... constant has that "
                "value"}))
      << Joined(problems);
}

TEST(ContractCheckTest, ATableSplitByABlankLineFails) {
  // GitHub shows the rows after the blank line as text, so they are no rows.
  std::string contract = kContract;
  contract.insert(contract.find("| `MEMPROFCTL_TLS_CA`"), "\n");
  const auto problems = CheckContract(contract, CollectProductNames(kProto, Sources()));
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                "\"Environment variables the code reads\", line 12: table rows without a header "
                "and |---| row, which GitHub shows as text (a blank line inside a table splits it)",
                "no row for variable `MEMPROFCTL_TLS_CA` under \"Environment variables the code "
                "reads\" (named in cli/app/client_settings.cc)",
                "no row for variable `MEMPROFCTL_TLS_KEY` under \"Environment variables the code "
                "reads\" (named in cli/app/client_settings.cc)"}))
      << Joined(problems);
}

TEST(ContractCheckTest, TwoTablesUnderOneHeadingFail) {
  std::string contract = kContract;
  contract.insert(contract.find("| `MEMPROFCTL_TLS_CA`"),
                  "\n| variable | read by | what it does |\n|---|---|---|\n");
  const auto problems = CheckContract(contract, CollectProductNames(kProto, Sources()));
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0],
            "\"Environment variables the code reads\" must hold exactly one table; it holds 2 (at "
            "line 8 line 12)");
}

TEST(ContractCheckTest, AMissingSectionFails) {
  std::string contract = kContract;
  contract.replace(contract.find("### Exit codes"), 14, "### Exit statuses");
  const auto problems = CheckContract(contract, CollectProductNames(kProto, Sources()));
  ASSERT_EQ(problems.size(), 3u) << Joined(problems);
  EXPECT_EQ(problems[0], "no heading \"Exit codes\" in docs/contract.md");
  EXPECT_EQ(problems[1],
            "no row for exit code `0` under \"Exit codes\" (defined in cli/io/exit_codes.h)");
}

// --- The tree --------------------------------------------------------------

const fs::path kRoot = MEMPROF_DOCS_SOURCE_DIR;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every .h, .cc and .c file under agent/, cli/ and common/, at any depth.
std::vector<SourceFile> ProductSources() {
  std::vector<SourceFile> sources;
  for (const char* top : {"agent", "cli", "common"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc" && ext != ".c")) continue;
      sources.push_back(
          {fs::relative(entry.path(), kRoot).generic_string(), ReadText(entry.path())});
    }
  }
  return sources;
}

TEST(ContractTest, ContractListsEveryRpcVariableAndExitCodeOfTheTree) {
  const std::vector<SourceFile> sources = ProductSources();
  ASSERT_GT(sources.size(), 100u) << "the walk found too few sources under " << kRoot;
  const std::string proto = ReadText(kRoot / "proto/memprof/v1/memory_profile.proto");
  const ProductNames names = CollectProductNames(proto, sources);
  // What the tree certainly has, so that a checker that finds nothing fails.
  EXPECT_TRUE(names.rpcs.contains("Purge"));
  EXPECT_GE(names.rpcs.size(), 6u);
  std::set<std::string> variables;
  for (const auto& [name, file] : names.variables) variables.insert(name);
  EXPECT_TRUE(variables.contains("MEMPROF_TCMALLOC_LIB"));
  EXPECT_TRUE(variables.contains("MEMPROFCTL_CONFIG"));
  EXPECT_GE(variables.size(), 20u);
  std::set<std::string> codes;
  for (const auto& [code, file] : names.exit_codes) codes.insert(code);
  EXPECT_TRUE(codes.contains("0") && codes.contains("6"));
  EXPECT_GE(codes.size(), 7u);

  const std::vector<std::string> problems =
      CheckContract(ReadText(kRoot / "docs/contract.md"), names);
  EXPECT_TRUE(problems.empty()) << "docs/contract.md, section 2, is out of date:\n"
                                << Joined(problems);
}

}  // namespace
}  // namespace memprof::docs
