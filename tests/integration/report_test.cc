// memprofctl report on dumps of real targets, against jeprof on the same files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/occurrences.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

// jeprof's "Total: ..." line and the name in its first table row.
struct TextSummary {
  std::string total;
  std::string top_function;
  std::string top_flat;
};

TextSummary Summarize(const std::string& text) {
  TextSummary summary;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("Total:")) {
      // jeprof's "MB" is 2^20 bytes: our MiB.
      summary.total = line.ends_with(" MB") ? line.substr(0, line.size() - 3) + " MiB" : line;
      continue;
    }
    if (summary.total.empty() || !summary.top_function.empty()) continue;
    std::istringstream fields(line);
    std::string flat, flat_pct, sum_pct, cum, cum_pct, name;
    if (fields >> flat >> flat_pct >> sum_pct >> cum >> cum_pct >> name && flat != "flat") {
      summary.top_flat = flat;
      // jeprof names dynamic symbols as nm -D spells them, with the symbol
      // version ("OPENSSL_LH_insert@@OPENSSL_3.0.0"); the function is the same.
      summary.top_function = name.substr(0, name.find('@'));
    }
  }
  return summary;
}

class ReportTest : public IntegrationTest {
 protected:
  // plain_target sampling every 4 KiB: its two allocating functions show up
  // in the first dumps.
  TargetProcess* StartSampled() {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:12"}};
    return Start(options);
  }

  std::string Dump(const TargetProcess& target, const std::string& name) {
    const std::string path = dir().File(name);
    CommandResult r = CliFor(target, "dump", {"--out", path});
    EXPECT_EQ(r.exit_code, 0) << r;
    return path;
  }

  // jeprof with `args`; when it cannot run, a failure naming the package.
  CommandResult Jeprof(std::vector<std::string> args) {
    std::string jeprof;
    if (auto can_run = test_support::CanRun(test_support::Jeprof(), &jeprof); !can_run) {
      CommandResult r;
      r.err = can_run.message();
      return r;
    }
    std::vector<std::string> argv = {jeprof};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {});
  }
};

// The first report a new user reads (`bash dev.sh demo`): a threaded
// program whose own frames are named. Its stacks end in libc's and
// libstdc++'s thread entry points, unnamed without debug packages, which
// hide nothing: no hint on stderr. -v lists them, and the JSON has the figures.
TEST_F(ReportTest, AThreadedTargetWhoseOwnFramesAreNamedGetsNoDebugPackageHint) {
  TargetOptions options;
  options.argv = {kMemprofctl, "run", "--", kDemoTarget};
  TargetProcess* demo = Start(options);
  ASSERT_NE(demo, nullptr);
  ASSERT_EQ(CliFor(*demo, "activate", {"--for", "5m"}).exit_code, 0);
  const std::string dump = dir().File("demo.heap");
  CommandResult report;
  WaitUntil(
      [&] {
        if (CliFor(*demo, "dump", {"--out", dump, "--force"}).exit_code != 0) return false;
        report = Cli({"report", dump, "--top", "10"});
        return report.out.find("SessionRegistry::LeakSession") != std::string::npos;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(300));
  ASSERT_EQ(report.exit_code, 0) << report;
  EXPECT_NE(report.out.find("SessionRegistry::LeakSession"), std::string::npos) << report;
  EXPECT_EQ(report.err.find("apt-get install"), std::string::npos) << report;
  EXPECT_EQ(report.err.find("no symbol names"), std::string::npos) << report;
  EXPECT_EQ(report.err.find("DEBUGINFOD_URLS"), std::string::npos) << report;

  CommandResult as_json = Cli({"report", dump, "--format", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json;
  const nlohmann::json symbolization = nlohmann::json::parse(as_json.out)["symbolization"];
  EXPECT_LT(symbolization["hidden_share"].get<double>(), 0.05) << symbolization.dump(2);
  EXPECT_DOUBLE_EQ(symbolization["hint_share"].get<double>(), 0.05);

  CommandResult verbose = Cli({"report", dump, "--top", "10", "-v"});
  ASSERT_EQ(verbose.exit_code, 0) << verbose;
  if (symbolization["complete"] == false) {
    EXPECT_NE(verbose.err.find("libc.so.6"), std::string::npos) << verbose;
  }
}

TEST_F(ReportTest, TextTotalsAndTopFunctionEqualJeprofs) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string dump = Dump(*t, "report.heap");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, {"--show-bytes"}, {"--inuse-objects"}}) {
    std::vector<std::string> ours_args = {"report", dump};
    ours_args.insert(ours_args.end(), flags.begin(), flags.end());
    CommandResult ours = Cli(ours_args);
    ASSERT_EQ(ours.exit_code, 0) << ours;
    std::vector<std::string> jeprof_args = {"--text"};
    for (const std::string& f : flags) jeprof_args.push_back(f == "--show-bytes" ? "--show_bytes" : "--inuse_objects");
    jeprof_args.push_back(kPlainTarget);
    jeprof_args.push_back(dump);
    CommandResult jeprof = Jeprof(jeprof_args);
    ASSERT_EQ(jeprof.exit_code, 0) << jeprof;
    TextSummary a = Summarize(ours.out);
    TextSummary b = Summarize(jeprof.out);
    ASSERT_FALSE(a.total.empty()) << ours.out;
    EXPECT_EQ(a.total, b.total) << "ours:\n" << ours.out << "\njeprof:\n" << jeprof.out;
    EXPECT_EQ(a.top_function, b.top_function) << ours.out << "\n" << jeprof.out;
    EXPECT_EQ(a.top_flat, b.top_flat) << ours.out << "\n" << jeprof.out;
  }
}

TEST_F(ReportTest, BaseShowsWhatGrewAsJeprofDoes) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string before = Dump(*t, "before.heap");
  // PlainTargetLeak keeps 400 KiB/s: wait until the next dump has grown.
  const uint64_t size_before = StatusJson(*t)["rss_bytes"].get<uint64_t>();
  ASSERT_TRUE(WaitUntil(
      [&] { return StatusJson(*t)["rss_bytes"].get<uint64_t>() > size_before + (1u << 20); },
      seconds(30)));
  const std::string after = Dump(*t, "after.heap");
  CommandResult ours = Cli({"report", after, "--base", before, "--show-bytes"});
  ASSERT_EQ(ours.exit_code, 0) << ours;
  CommandResult jeprof =
      Jeprof({"--text", "--show_bytes", "--base=" + before, kPlainTarget, after});
  ASSERT_EQ(jeprof.exit_code, 0) << jeprof;
  EXPECT_EQ(Summarize(ours.out).total, Summarize(jeprof.out).total)
      << "ours:\n" << ours.out << "\njeprof:\n" << jeprof.out;
  EXPECT_NE(ours.out.find("PlainTargetLeak"), std::string::npos) << ours.out;
}

TEST_F(ReportTest, EveryFormatWritesAPrivateFileAtomically) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string dump = Dump(*t, "formats.heap");
  for (const char* format : {"text", "collapsed", "pprof", "svg", "json"}) {
    const std::string out = dir().File(std::string("report.") + format);
    CommandResult r = Cli({"report", dump, "--format", format, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r;
    struct stat st {};
    ASSERT_EQ(::stat(out.c_str(), &st), 0) << format;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << format;
    const std::string data = ReadFile(out);
    if (std::string(format) == "pprof") {
      EXPECT_EQ(data.substr(0, 2), std::string("\x1f\x8b", 2)) << "gzip";
    } else {
      EXPECT_NE(data.find("PlainTarget"), std::string::npos) << format;
    }
  }
  const std::vector<std::string> expected = {"formats.heap",     "report.collapsed", "report.json",
                                             "report.pprof",     "report.svg",       "report.text"};
  std::vector<std::string> entries = NonSocketEntries();
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, expected) << "no temp files";
}

// The GNU build ID of `binary` in hex, or "": its note section, cut out by
// objcopy (a 16-byte note header, "GNU\0" included, then the ID's bytes).
std::string BuildIdOf(const std::string& objcopy, const std::string& binary,
                      const std::string& scratch) {
  const CommandResult cut = RunCommand(
      {objcopy, "-O", "binary", "--only-section=.note.gnu.build-id", binary, scratch}, {});
  const std::string note = cut.exit_code == 0 ? ReadFile(scratch) : "";
  if (note.size() <= 16) return "";
  std::string hex;
  for (size_t i = 16; i < note.size(); ++i) {
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[static_cast<unsigned char>(note[i]) >> 4];
    hex += kDigits[static_cast<unsigned char>(note[i]) & 0xf];
  }
  return hex;
}

// Debian's debug packages hold zlib'd DWARF. report keeps a plain copy of
// each such file in the user's cache and reads that from then on, with the
// same report; --no-cache reads the file as it is and writes nothing. The
// target is looked up under a root (--sysroot) where it is stripped and its
// symbols and DWARF are in such a file, found by build ID.
TEST_F(ReportTest, ACompressedDebugFileIsCopiedIntoTheUsersCacheUnlessNoCache) {
  namespace fs = std::filesystem;
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string dump = Dump(*t, "cache.heap");
  std::string objcopy;
  ASSERT_TRUE(test_support::CanRun(test_support::Objcopy(), &objcopy));
  const std::string root = dir().File("root");
  const std::string binary = root + kPlainTarget;
  fs::create_directories(fs::path(binary).parent_path());
  ASSERT_EQ(RunCommand({objcopy, "--strip-all", kPlainTarget, binary}, {}).exit_code, 0);
  const std::string id = BuildIdOf(objcopy, kPlainTarget, dir().File("build-id.note"));
  ASSERT_GT(id.size(), 2u);
  const std::string debug =
      root + "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  fs::create_directories(fs::path(debug).parent_path());
  ASSERT_EQ(
      RunCommand(
          {objcopy, "--only-keep-debug", "--compress-debug-sections=zlib", kPlainTarget, debug}, {})
          .exit_code,
      0);
  const std::string cache = dir().File("cache");
  const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", cache}};

  CommandResult as_is = Cli({"report", dump, "--sysroot", root, "--no-cache"}, env);
  ASSERT_EQ(as_is.exit_code, 0) << as_is;
  EXPECT_NE(as_is.out.find("PlainTargetLeak"), std::string::npos) << as_is.out;
  EXPECT_FALSE(fs::exists(cache));

  CommandResult first = Cli({"report", dump, "--sysroot", root}, env);
  ASSERT_EQ(first.exit_code, 0) << first;
  EXPECT_EQ(first.out, as_is.out);
  const std::string copy = cache + "/memprof/debug-files/" + id + ".debug";
  ASSERT_TRUE(fs::is_regular_file(copy));
  EXPECT_EQ(fs::weakly_canonical(ReadFile(copy + ".origin")), fs::weakly_canonical(debug));

  // The installed file loses its symbols and DWARF: a report that still
  // names the leak read the copy.
  ASSERT_EQ(RunCommand({objcopy, "--only-keep-debug", binary, debug}, {}).exit_code, 0);
  CommandResult from_copy = Cli({"report", dump, "--sysroot", root}, env);
  ASSERT_EQ(from_copy.exit_code, 0) << from_copy;
  EXPECT_EQ(from_copy.out, as_is.out);
  CommandResult without = Cli({"report", dump, "--sysroot", root, "--no-cache"}, env);
  ASSERT_EQ(without.exit_code, 0) << without;
  EXPECT_EQ(without.out.find("PlainTargetLeak"), std::string::npos) << without.out;
}

TEST_F(ReportTest, DumpWithAFormatSymbolizesRightAwayAndLeavesOnlyTheReport) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  // The raw profile lives in an unnamed scratch file in $TMPDIR meanwhile.
  const std::map<std::string, std::string> env = {{"TMPDIR", SocketDir()}};
  const std::string svg = dir().File("now.svg");
  CommandResult r = Cli({"dump", "--pid", std::to_string(t->pid()), "--format", "svg", "--out", svg},
                        env);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(ReadFile(svg).find("PlainTargetAllocate"), std::string::npos);
  CommandResult text =
      Cli({"dump", "--pid", std::to_string(t->pid()), "--format", "text", "--out", "-"}, env);
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_TRUE(text.out.starts_with("Total:")) << text.out;
  EXPECT_NE(text.out.find("PlainTarget"), std::string::npos) << text.out;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"now.svg"}) << "scratch files left";
  ExpectCliError(CliFor(*t, "dump", {"--format", "png", "--out", dir().File("x")}), 2,
                 "unknown dump format 'png'");
  EXPECT_FALSE(FileExists(dir().File("x")));
}

TEST_F(ReportTest, MalformedDumpIsRejectedWithTheLineAndNothingIsWritten) {
  const std::string bad = dir().File("bad.heap");
  ASSERT_TRUE(WriteFile(bad, "heap_v2/524288\n  t*: 1: 10 [0: 0]\n@ 0xZZ\n"));
  const std::string out = dir().File("bad.txt");
  ExpectCliError(Cli({"report", bad, "-o", out}), 2, "bad.heap:3:");
  EXPECT_FALSE(FileExists(out));
  ExpectCliError(Cli({"report", dir().File("missing.heap")}), 2, "missing.heap");
  ExpectCliError(Cli({"report", bad, "--format", "png"}), 2, "png");
}

// A heap_v2 dump of `stacks` distinct two-frame stacks (some 9 MiB for
// 150,000), its one mapping a file that does not exist.
std::string SyntheticDump(int stacks) {
  std::ostringstream out;
  out << "heap_v2/524288\n  t*: " << stacks << ": " << stacks * 64 << " [0: 0]\n";
  for (int i = 0; i < stacks; ++i) {
    out << "@ 0x401000 0x" << std::hex << (0x402000 + i * 16) << std::dec
        << "\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n";
  }
  out << "\nMAPPED_LIBRARIES:\n00400000-00900000 r-xp 00000000 08:02 1 /nonexistent/big\n";
  return out.str();
}

// A report over 8 MiB of input or more runs itself again with glibc's heap
// on huge pages, decided before the executable's constructors
// (cli/app/huge_page_heap.h, cli/main.cc). The dynamic loader's log
// (LD_DEBUG) shows each start: two, the second with the environment the
// user gave (LD_DEBUG itself reaches it); one when the user's GLIBC_TUNABLES
// already says how to use huge pages. The output is the same every way.
TEST_F(ReportTest, ABigDumpIsReportedByASecondStartWithTheSameEnvironment) {
  const std::string big = dir().File("big.heap");
  ASSERT_TRUE(WriteFile(big, SyntheticDump(150000)));
  ASSERT_GE(std::filesystem::file_size(big), 8u << 20);
  // The loader logs the executable's .preinit_array, where the decision is
  // taken, once per start.
  const auto starts = [](const CommandResult& r) {
    return test_support::CountOccurrences(r.err, "calling preinit: ");
  };
  CommandResult twice =
      Cli({"report", big}, {{"LD_DEBUG", "libs"}, {"GLIBC_TUNABLES", "glibc.malloc.perturb=0"}});
  ASSERT_EQ(twice.exit_code, 0) << twice.err.substr(0, 4000);
  EXPECT_EQ(starts(twice), 2u) << twice.err.substr(0, 4000);
  CommandResult once =
      Cli({"report", big}, {{"LD_DEBUG", "libs"}, {"GLIBC_TUNABLES", "glibc.malloc.hugetlb=0"}});
  ASSERT_EQ(once.exit_code, 0) << once.err.substr(0, 4000);
  EXPECT_EQ(starts(once), 1u) << once.err.substr(0, 4000);
  EXPECT_EQ(twice.out, once.out);
  EXPECT_EQ(Cli({"report", big}).out, once.out);
}

// A dump cut anywhere, most likely in its maps section (most of the file),
// is refused with exit 2 and where it ends; no report is written.
TEST_F(ReportTest, TruncatedDumpIsAUsageErrorThatSaysWhereItEnds) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string text = ReadFile(Dump(*t, "whole.heap"));
  const size_t maps = text.find("MAPPED_LIBRARIES:\n") + std::string("MAPPED_LIBRARIES:\n").size();
  const size_t first_map_end = text.find('\n', maps) + 1;  // the executable's first mapping
  const size_t in_a_stack = text.find("\n@ ") + 5;  // in the first stack's addresses
  const std::string out = dir().File("report.txt");
  struct Cut {
    size_t at;
    std::string what;
  };
  for (const Cut& cut : {Cut{first_map_end + 10, "input ends in the middle of this line"},
                         Cut{first_map_end, "lies above the last mapping of the MAPPED_LIBRARIES"},
                         Cut{in_a_stack, "input ends in the middle of this line"}}) {
    const std::string path = dir().File("cut.heap");
    ASSERT_TRUE(WriteFile(path, text.substr(0, cut.at)));
    CommandResult r = Cli({"report", path, "-o", out});
    ExpectCliError(r, 2, cut.what);
    EXPECT_NE(r.err.find("truncated at byte " + std::to_string(cut.at) + " (line "),
              std::string::npos)
        << r;
    EXPECT_FALSE(FileExists(out));
  }
}

// The user guide pipes dumps through gzip: report, --base and several
// dumps read them as they are.
TEST_F(ReportTest, GzippedDumpsAreReadAsTheyAre) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string dump = Dump(*t, "d.heap");
  CommandResult gzip = RunCommand({"/bin/gzip", "-k", dump}, {});
  ASSERT_EQ(gzip.exit_code, 0) << gzip;
  CommandResult plain = Cli({"report", dump, "--format", "collapsed"});
  CommandResult gzipped = Cli({"report", dump + ".gz", "--format", "collapsed"});
  ASSERT_EQ(gzipped.exit_code, 0) << gzipped;
  EXPECT_EQ(gzipped.out, plain.out);
  CommandResult diff = Cli({"report", dump + ".gz", "--base", dump + ".gz", "--format", "json"});
  EXPECT_EQ(diff.exit_code, 0) << diff;
  CommandResult both = Cli({"report", dump + ".gz", dump, "--format", "json"});
  EXPECT_EQ(both.exit_code, 0) << both;
}

// --pid reads the dump's binaries through /proc/<pid>: a pid that has exited
// (3) or that is another process (2) would give wrong names, and is refused;
// --alloc-space on a dump without allocation counts says how to get them.
TEST_F(ReportTest, PidMustBeTheDumpsProcessAndAllocSpaceNeedsAccumulatedCounts) {
  TargetProcess* t = StartSampled();
  ASSERT_NE(t, nullptr);
  DumpUntilJeprofNames(*t, kPlainTarget, "PlainTargetLeak");
  const std::string dump = Dump(*t, "d.heap");
  const std::string out = dir().File("r.txt");
  // A pid that certainly has no process: a shell we started and reaped.
  const std::string dead = std::to_string(std::stoi(RunCommand({"/bin/sh", "-c", "echo $$"}, {}).out));
  ExpectCliError(Cli({"report", dump, "--pid", dead, "-o", out}), 3,
                 "--pid " + dead + ": no process with pid " + dead + " (it has exited?)");
  const std::string self = std::to_string(getpid());
  ExpectCliError(Cli({"report", dump, "--pid", self, "-o", out}), 2,
                 "--pid " + self + ": process " + self + " is not the one the dump came from");
  ExpectCliError(Cli({"report", dump, "--alloc-space", "-o", out}), 5,
                 "--alloc-space: " + dump + " has no allocation counts (they are all zero): "
                 "jemalloc keeps them only when started with prof_accum:true");
  EXPECT_FALSE(FileExists(out));
  CommandResult own = Cli({"report", dump, "--pid", std::to_string(t->pid()), "-o", out});
  EXPECT_EQ(own.exit_code, 0) << own;
  EXPECT_NE(ReadFile(out).find("PlainTarget"), std::string::npos);
}

}  // namespace
}  // namespace memprof::integration
