#include "tests/integration/harness/exporter_fixture.h"

#include <fstream>
#include <regex>

#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {

CommandResult PromtoolCheck(const std::string& promtool, const std::string& exposition,
                            const std::string& scratch_file) {
  {
    std::ofstream out(scratch_file, std::ios::binary | std::ios::trunc);
    out << exposition;
  }
  // promtool reads the exposition on stdin; RunCommand gives children /dev/null.
  return RunCommand({"/bin/sh", "-c", "exec \"$0\" check metrics < \"$1\"", promtool, scratch_file},
                    {});
}

void ExporterTest::ExpectPromtoolAccepts(const std::string& exposition) {
  std::string promtool;
  ASSERT_TRUE(test_support::CanRun(test_support::Promtool(), &promtool));
  CommandResult r = PromtoolCheck(promtool, exposition, dir().File("exposition.prom"));
  EXPECT_EQ(r.exit_code, 0) << r << "\n--- exposition ---\n" << exposition;
}

std::unique_ptr<Subprocess> ExporterTest::StartExporter(std::vector<std::string> args) {
  args.insert(args.begin(), {kMemprofctl, "exporter"});
  auto p = Subprocess::Spawn(SpawnOptions{args, {{"MEMPROF_SOCKET_DIR", SocketDir()}}, -1});
  EXPECT_TRUE(p.has_value()) << p.error().message;
  return p ? std::move(*p) : nullptr;
}

std::string ExporterTest::AwaitListening(Subprocess& exporter) {
  const std::regex serving("serving http://([0-9.]+:[0-9]+)/metrics");
  std::smatch m;
  std::string err;
  WaitUntil(
      [&] {
        err = exporter.StderrText();
        return std::regex_search(err, m, serving) || exporter.HasExited();
      },
      std::chrono::seconds(30));
  return std::regex_search(err, m, serving) ? m[1].str() : "";
}

}  // namespace memprof::integration
