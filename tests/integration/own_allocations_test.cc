// Nothing of ours in the host's profile (docs/contract.md rule 13): the agent's
// threads, gRPC's, and the agent code that runs on host threads (the preload
// constructor, fork handlers) allocate without being sampled. With every
// allocation sampled (lg_prof_sample:0) and the agent busy serving, the
// host's heap profile names none of the agent's, gRPC's or protobuf's
// functions.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

class OwnAllocationsTest : public IntegrationTest {};

// The first frame of `stack` (a collapsed line) that belongs to the agent or
// to the libraries it brings, or "".
std::string OurFrame(const std::string& line) {
  for (const char* ours : {"memprof::agent", "memprof_agent", "grpc", "gpr_", "google::protobuf",
                           "absl::", "upb_", "CRYPTO_", "spdlog::"}) {
    const size_t at = line.find(ours);
    if (at == std::string::npos) continue;
    const size_t begin = line.rfind(';', at);
    const size_t end = line.find(';', at);
    return line.substr(begin == std::string::npos ? 0 : begin + 1,
                       end == std::string::npos ? std::string::npos : end - begin - 1);
  }
  return "";
}

TEST_F(OwnAllocationsTest, TheAgentsWorkIsNotSampledIntoTheHostsProfile) {
  TargetOptions options;
  options.argv = {kPlainTarget};
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:0"}};
  TargetProcess* target = Start(options);
  ASSERT_NE(target, nullptr);
  // Keep gRPC busy: every kind of call, dumps streamed, statistics read.
  for (int round = 0; round < 3; ++round) {
    for (std::vector<std::string> call :
         {std::vector<std::string>{"status"}, {"stats"}, {"stats", "--json"}, {"activate"},
          {"dump", "--force", "--out", dir().File("busy.heap")}}) {
      CommandResult r = CliFor(*target, call[0], {call.begin() + 1, call.end()});
      ASSERT_EQ(r.exit_code, 0) << r;
    }
  }
  const std::string dump = dir().File("final.heap");
  ASSERT_EQ(CliFor(*target, "dump", {"--out", dump}).exit_code, 0);
  CommandResult collapsed = Cli({"report", dump, "--format", "collapsed"});
  ASSERT_EQ(collapsed.exit_code, 0) << collapsed;
  EXPECT_NE(collapsed.out.find("PlainTargetAllocate"), std::string::npos)
      << "the host's own allocations are there\n" << collapsed.out;
  std::istringstream lines(collapsed.out);
  std::vector<std::string> ours;
  for (std::string line; std::getline(lines, line);) {
    if (std::string frame = OurFrame(line); !frame.empty()) ours.push_back(line);
  }
  std::string shown;
  for (size_t i = 0; i < ours.size() && i < 10; ++i) shown += ours[i] + "\n";
  EXPECT_TRUE(ours.empty()) << ours.size() << " stacks of the agent's own in the host's profile:\n"
                            << shown;
}

}  // namespace
}  // namespace memprof::integration
