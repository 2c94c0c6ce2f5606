// memprofctl report on a target that runs from a stripped binary, as
// distributions ship them: without its debug file the frames are named
// module+0xOFFSET and stderr says which file lacks symbols and how to get
// them; the debug file is then found by build ID (under --sysroot), by
// .gnu_debuglink, and from Debian's real debuginfod server on loopback. Our
// pprof output keeps what the real pprof needs to finish the job elsewhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/http_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr char kAllocator[] = "PlainTargetAllocate";

class StrippedBinaryTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_TRUE(test_support::CanRun(test_support::Objcopy(), &objcopy_));
    fs::create_directories(files_.File("bin"));
    ASSERT_TRUE(Objcopy({"--only-keep-debug", kPlainTarget, debug_file_}));
    ASSERT_TRUE(Objcopy({"--strip-all", kPlainTarget, binary_}));
    build_id_ = BuildIdOf(binary_);
    ASSERT_EQ(build_id_.size(), 40u) << "no GNU build ID in " << binary_;
  }

  bool Objcopy(std::vector<std::string> args) {
    args.insert(args.begin(), objcopy_);
    CommandResult r = RunCommand(args, {});
    EXPECT_EQ(r.exit_code, 0) << r;
    return r.exit_code == 0;
  }

  std::string BuildIdOf(const std::string& path) {
    CommandResult r = RunCommand({"/usr/bin/readelf", "-n", path}, {});
    std::smatch match;
    static const std::regex kBuildId("Build ID: ([0-9a-f]+)");
    return std::regex_search(r.out, match, kBuildId) ? match[1].str() : "";
  }

  // `binary` running with the agent preloaded, every 4 KiB sampled.
  TargetProcess* StartStripped(const std::string& binary) {
    TargetOptions options;
    options.argv = {binary};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:12"}};
    return Start(options);
  }

  // The stripped `binary` running with the agent, every 4 KiB sampled; its
  // dump, once a report with `env` and `args` names the target's allocator.
  std::string DumpOf(const std::string& binary, std::vector<std::string> args,
                     std::map<std::string, std::string> env = {}) {
    TargetProcess* target = StartStripped(binary);
    if (target == nullptr) return "";
    const std::string dump = files_.File("plain.heap");
    args.insert(args.begin(), {"report", dump});
    bool named = WaitUntil(
        [&] {
          if (CliFor(*target, "dump", {"--out", dump}).exit_code != 0) return false;
          last_ = Cli(args, env);
          return last_.out.find(kAllocator) != std::string::npos;
        },
        seconds(60));
    EXPECT_TRUE(named) << last_;
    return dump;
  }

  // `report` of `dump`: stdout names the allocator, and the summary on
  // stderr does not mention the binary (its symbols were found).
  void ExpectNamed(const std::string& dump, std::vector<std::string> args,
                   std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), {"report", dump});
    CommandResult r = Cli(args, env);
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_NE(r.out.find(kAllocator), std::string::npos) << r;
    EXPECT_EQ(r.out.find("plain_target+0x"), std::string::npos) << r;
    EXPECT_EQ(r.err.find(build_id_), std::string::npos) << r;
    args.insert(args.end(), {"--format", "json"});
    CommandResult as_json = Cli(args, env);
    ASSERT_EQ(as_json.exit_code, 0) << as_json;
    for (const auto& module : nlohmann::json::parse(as_json.out)["symbolization"]["modules"]) {
      EXPECT_NE(module["build_id"], build_id_) << module.dump(2);
    }
  }

  test_support::TempDir files_;
  std::string objcopy_;
  const std::string binary_ = files_.File("bin/plain_target");
  const std::string debug_file_ = files_.File("plain_target.debug");
  std::string build_id_;
  CommandResult last_;
};

TEST_F(StrippedBinaryTest, WithoutDebugInfoFramesAreModuleOffsetsAndStderrSaysWhy) {
  TargetProcess* target = StartStripped(binary_);
  ASSERT_NE(target, nullptr);
  const std::string dump = files_.File("plain.heap");
  ASSERT_EQ(CliFor(*target, "dump", {"--out", dump}).exit_code, 0);
  CommandResult r = Cli({"report", dump});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(plain_target\+0x[0-9a-f]+\n)"))) << r;
  EXPECT_FALSE(std::regex_search(r.out, std::regex(R"(% 0x[0-9a-f]{8,})"))) << "bare address:\n" << r;
  EXPECT_NE(r.err.find("of the profile is allocated at or called through frames no symbol names"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find(binary_ + " (build ID " + build_id_ + "): "), std::string::npos) << r;
  EXPECT_NE(r.err.find("exported symbols only, no debug info"), std::string::npos) << r;
  EXPECT_NE(r.err.find("DEBUGINFOD_URLS="), std::string::npos) << r;
  CommandResult as_json = Cli({"report", dump, "--format", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json;
  const nlohmann::json symbolization = nlohmann::json::parse(as_json.out)["symbolization"];
  EXPECT_EQ(symbolization["complete"], false);
  bool listed = false;
  for (const auto& module : symbolization["modules"]) {
    if (module["path"] != binary_) continue;
    listed = true;
    EXPECT_EQ(module["build_id"], build_id_);
    EXPECT_EQ(module["debug_info"], false);
    EXPECT_GT(module["share"].get<double>(), 0.5) << "the target's own allocations dominate";
    EXPECT_EQ(module["package"], "") << "not from a Debian package";
  }
  EXPECT_TRUE(listed) << symbolization.dump(2);
}

// libdw loads libdebuginfod (and libcurl behind it) when a debug file is not
// found locally; memprofctl lets it only when a server is configured
// (cli/debuginfod_gate.cc). The dynamic loader's own log says what it
// loaded; with a server configured (nobody listening) it is loaded, so the
// check can fail.
TEST_F(StrippedBinaryTest, LibdebuginfodIsLoadedOnlyWhenAServerIsConfigured) {
  TargetProcess* target = StartStripped(binary_);
  ASSERT_NE(target, nullptr);
  const std::string dump = files_.File("plain.heap");
  ASSERT_EQ(CliFor(*target, "dump", {"--out", dump}).exit_code, 0);
  constexpr char kLoaded[] = "file=libdebuginfod.so";
  CommandResult without = Cli({"report", dump}, {{"LD_DEBUG", "files"}});
  ASSERT_EQ(without.exit_code, 0) << without;
  EXPECT_EQ(without.err.find(kLoaded), std::string::npos) << without;
  EXPECT_NE(without.out.find("plain_target+0x"), std::string::npos) << without;
  const uint16_t port = test_support::FreeLoopbackPort();
  ASSERT_NE(port, 0);
  CommandResult with =
      Cli({"report", dump}, {{"LD_DEBUG", "files"},
                             {"DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(port)},
                             {"DEBUGINFOD_CACHE_PATH", files_.File("debuginfod-cache")}});
  ASSERT_EQ(with.exit_code, 0) << with;
  EXPECT_NE(with.err.find(kLoaded), std::string::npos) << with;
  EXPECT_EQ(with.out, without.out);
}

// Debian's layout: /usr/lib/debug/.build-id/xx/yyyy.debug, here inside a
// copy of the target's root given with --sysroot.
TEST_F(StrippedBinaryTest, DebugFileByBuildIdUnderTheSysroot) {
  const std::string root = files_.File("root");
  const fs::path in_root = root + binary_;
  fs::create_directories(in_root.parent_path());
  fs::copy_file(binary_, in_root);
  const fs::path debug = fs::path(root) / "usr/lib/debug/.build-id" / build_id_.substr(0, 2) /
                         (build_id_.substr(2) + ".debug");
  fs::create_directories(debug.parent_path());
  fs::copy_file(debug_file_, debug);
  const std::string dump = DumpOf(binary_, {"--sysroot", root});
  ASSERT_FALSE(dump.empty());
  ExpectNamed(dump, {"--sysroot", root});
}

TEST_F(StrippedBinaryTest, DebugFileByDebuglinkNextToTheBinary) {
  ASSERT_TRUE(Objcopy({"--add-gnu-debuglink=" + debug_file_, binary_}));
  fs::rename(debug_file_, files_.File("bin/plain_target.debug"));
  const std::string dump = DumpOf(binary_, {});
  ASSERT_FALSE(dump.empty());
  ExpectNamed(dump, {});
}

// Debian's own debuginfod server (package debuginfod) serving the debug
// file from a directory, over loopback; the client's cache is this test's.
TEST_F(StrippedBinaryTest, DebugFileFromARealDebuginfodServer) {
  std::string debuginfod;
  ASSERT_TRUE(test_support::CanRun(test_support::Debuginfod(), &debuginfod));
  const std::string served = files_.File("served");
  fs::create_directories(served);
  fs::rename(debug_file_, served + "/plain_target.debug");
  const uint16_t port = test_support::FreeLoopbackPort();
  ASSERT_NE(port, 0);
  test_support::SpawnOptions spawn;
  spawn.argv = {debuginfod, "-F", served, "-p", std::to_string(port), "-d",
                files_.File("debuginfod.sqlite")};
  auto server = test_support::Subprocess::Spawn(spawn);
  ASSERT_TRUE(server.has_value()) << server.error().message;
  const std::string host_port = "127.0.0.1:" + std::to_string(port);
  // Ready once its first scan has indexed the file.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return test_support::HttpGet(host_port, "/buildid/" + build_id_ + "/debuginfo").status ==
               200;
      },
      seconds(60)))
      << (*server)->StderrText();
  const std::map<std::string, std::string> env = {
      {"DEBUGINFOD_URLS", "http://" + host_port},
      {"DEBUGINFOD_CACHE_PATH", files_.File("debuginfod-cache")}};
  const std::string dump = DumpOf(binary_, {}, env);
  ASSERT_FALSE(dump.empty());
  ExpectNamed(dump, {}, env);
  // Without the server, the same dump has no names for the binary.
  CommandResult r = Cli({"report", dump});
  EXPECT_NE(r.err.find(build_id_), std::string::npos) << r;
}

// The pprof we write for a stripped binary leaves its frames unnamed but
// keeps the build ID and the addresses, so the real pprof, given the
// unstripped binary through PPROF_BINARY_PATH (on "another machine"),
// names them itself.
TEST_F(StrippedBinaryTest, PprofNamesTheFramesWithPprofBinaryPath) {
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  TargetProcess* target = StartStripped(binary_);
  ASSERT_NE(target, nullptr);
  const std::string dump = files_.File("plain.heap");
  const std::string profile = files_.File("plain.pb.gz");
  ASSERT_EQ(CliFor(*target, "dump", {"--out", dump}).exit_code, 0);
  CommandResult r = Cli({"report", dump, "--format", "pprof", "--out", profile});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string unstripped = files_.File("unstripped");
  fs::create_directories(unstripped);
  fs::copy_file(kPlainTarget, unstripped + "/plain_target");
  auto top = [&](const std::string& binary_path, const std::string& symbolize) {
    CommandResult result = RunCommand(
        {pprof, "-symbolize=" + symbolize, "-top", profile},
        {{"HOME", files_.path()}, {"PPROF_BINARY_PATH", binary_path}});
    EXPECT_EQ(result.exit_code, 0) << result;
    return result.out;
  };
  const std::string before = top(files_.File("empty"), "none");
  EXPECT_NE(before.find("Build ID: " + build_id_), std::string::npos) << before;
  EXPECT_NE(before.find("[plain_target]"), std::string::npos) << before;
  EXPECT_EQ(before.find(kAllocator), std::string::npos) << before;
  const std::string after = top(unstripped, "local");
  EXPECT_NE(after.find(kAllocator), std::string::npos) << after;
}

}  // namespace
}  // namespace memprof::integration
