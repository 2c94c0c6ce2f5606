#include "tests/integration/harness/integration_fixture.h"

#include "common/sha256.h"
#include "tests/integration/harness/support_names.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"

namespace memprof::integration {

ShapeInfo DescribeShape(Shape shape) {
  switch (shape) {
    case Shape::kLinked:
      return {{kLinkedTarget}, {{"MALLOC_CONF", kProfilingReadyConf}}, kLinkedTarget,
              "LinkedTargetLeak", "LinkedTargetAllocate"};
    case Shape::kPreloaded:
      return {{kPlainTarget},
              {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}},
              kPlainTarget, "PlainTargetLeak", "PlainTargetAllocate"};
    case Shape::kRunPlain:
      // The user's own MALLOC_CONF is merged by `run` (a smaller sample
      // interval here, so samples land quickly).
      return {{kMemprofctl, "run", "--", kPlainTarget},
              {{"MALLOC_CONF", "lg_prof_sample:14"}}, kPlainTarget, "PlainTargetLeak",
              "PlainTargetAllocate"};
    case Shape::kRunGlibc:
      return {{kMemprofctl, "run", "--", kGlibcTarget}, {}, kGlibcTarget, "GlibcTargetLeak",
              "GlibcTargetAllocate"};
  }
  return {};
}

std::string ShapeName(const ::testing::TestParamInfo<Shape>& info) {
  switch (info.param) {
    case Shape::kLinked: return "Linked";
    case Shape::kPreloaded: return "Preloaded";
    case Shape::kRunPlain: return "RunPlain";
    case Shape::kRunGlibc: return "RunGlibc";
  }
  return "Unknown";
}

void IntegrationTest::SetUp() {
  auto dir = TempDir::Create("memprof-it");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  dir_.emplace(std::move(*dir));
}

TargetProcess* IntegrationTest::Start(TargetOptions options) {
  options.socket_dir = SocketDir();
  auto target = TargetProcess::Start(options);
  if (!target) {
    ADD_FAILURE() << "cannot start target " << JoinArgv(options.argv) << ": "
                  << target.error().message;
    return nullptr;
  }
  targets_.push_back(std::move(*target));
  return targets_.back().get();
}

TargetProcess* IntegrationTest::StartShape(Shape shape) {
  ShapeInfo info = DescribeShape(shape);
  TargetOptions options;
  options.argv = info.argv;
  options.env = info.env;
  return Start(options);
}

void ShapeTest::SetUp() {
  IntegrationTest::SetUp();
  ASSERT_FALSE(HasFatalFailure());
  shape_ = DescribeShape(GetParam());
  target_ = StartShape(GetParam());
  ASSERT_NE(target_, nullptr);
}

CommandResult IntegrationTest::Cli(std::vector<std::string> args,
                                   std::map<std::string, std::string> env,
                                   std::chrono::milliseconds timeout) {
  args.insert(args.begin(), kMemprofctl);
  env.try_emplace("MEMPROF_SOCKET_DIR", SocketDir());
  return RunCommand(args, env, timeout);
}

std::unique_ptr<Subprocess> IntegrationTest::SpawnCli(std::vector<std::string> args) {
  args.insert(args.begin(), kMemprofctl);
  auto p = Subprocess::Spawn(SpawnOptions{args, {{"MEMPROF_SOCKET_DIR", SocketDir()}}, -1});
  EXPECT_TRUE(p.has_value()) << p.error().message;
  return p ? std::move(*p) : nullptr;
}

TargetProcess* IntegrationTest::StartBigDumpTarget() {
  TargetOptions options;
  options.argv = {kManyStacksTarget, "--stacks", "3000", "--pad-frames", "96"};
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:0"}};
  options.ready_timeout = std::chrono::seconds(120);
  return Start(options);
}

TargetProcess* IntegrationTest::StartWithoutAgent() {
  TargetOptions options;
  options.argv = {kGlibcTarget};
  options.expect_agent = false;
  return Start(options);
}

CommandResult IntegrationTest::CliFor(const TargetProcess& target, const std::string& command,
                                      std::vector<std::string> args) {
  args.insert(args.begin(), {command, "--pid", std::to_string(target.pid())});
  return Cli(std::move(args));
}

void IntegrationTest::ExpectAll(const std::vector<BadCall>& calls,
                                const std::map<std::string, std::string>& env) {
  for (const BadCall& call : calls) {
    SCOPED_TRACE(JoinArgv(call.args));
    ExpectCliError(Cli(call.args, env), call.exit_code, call.message);
  }
}

nlohmann::json IntegrationTest::StatusJson(const TargetProcess& target) {
  CommandResult r = CliFor(target, "status", {"--json"});
  EXPECT_EQ(r.exit_code, 0) << r;
  return ParseJsonOutput(r);
}

std::string IntegrationTest::DumpUntilJeprofNames(const TargetProcess& target,
                                                  const std::string& binary,
                                                  const std::string& function,
                                                  std::chrono::milliseconds timeout) {
  std::string jeprof;
  if (auto can_run = test_support::CanRun(test_support::Jeprof(), &jeprof); !can_run) {
    ADD_FAILURE() << can_run.message();
    return "";
  }
  std::string path = dir_->File("until.heap");
  std::string text;
  WaitUntil(
      [&] {
        // The same file each round: --force replaces the last one.
        CommandResult dump = CliFor(target, "dump", {"--out", path, "--force"});
        if (dump.exit_code != 0) {
          ADD_FAILURE() << dump;
          return true;  // no point in retrying
        }
        CommandResult report = RunCommand({jeprof, "--text", binary, path}, {});
        text = report.out + report.err;
        return report.out.find(function) != std::string::npos;
      },
      timeout, std::chrono::milliseconds(200));
  ::unlink(path.c_str());
  return text;
}

std::vector<std::string> IntegrationTest::NonSocketEntries() const {
  std::vector<std::string> out;
  for (const std::string& name : dir_->List()) {
    if (!name.ends_with(".sock")) out.push_back(name);
  }
  return out;
}

nlohmann::json ParseJsonOutput(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON\n" << r;
  return j.is_discarded() ? nlohmann::json::object() : j;
}

void ExpectCliError(const CommandResult& r, int exit_code, const std::string& substring) {
  EXPECT_EQ(r.exit_code, exit_code) << r;
  EXPECT_EQ(r.out, "") << "an error must print nothing on stdout\n" << r;
  EXPECT_TRUE(r.err.starts_with("memprofctl: error: ")) << r;
  EXPECT_NE(r.err.find(substring), std::string::npos)
      << "stderr should mention \"" << substring << "\"\n" << r;
}

std::string Sha256Hex(const std::string& data) {
  Sha256 sha;
  sha.Update(data);
  return sha.FinalHex();
}

}  // namespace memprof::integration
