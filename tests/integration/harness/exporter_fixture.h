#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_EXPORTER_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_EXPORTER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"

namespace memprof::integration {

// `promtool check metrics` on `exposition` (written to `scratch_file`).
CommandResult PromtoolCheck(const std::string& promtool, const std::string& exposition,
                            const std::string& scratch_file);

// The tests of `memprofctl exporter`: the real exporter, started in the
// background on this test's socket directory.
class ExporterTest : public IntegrationTest {
 protected:
  // promtool's verdict on `exposition` (a failure naming the package when
  // promtool cannot run).
  void ExpectPromtoolAccepts(const std::string& exposition);

  // `memprofctl exporter ARGS` (nullptr and a failure if it cannot start).
  std::unique_ptr<Subprocess> StartExporter(std::vector<std::string> args);

  // The "IP:PORT" the exporter printed once it listens (readiness through
  // its stderr pipe, with a deadline); "" if it did not.
  std::string AwaitListening(Subprocess& exporter);
};

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_EXPORTER_FIXTURE_H_
