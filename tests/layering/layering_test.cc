// The layering of the source tree, checked on every #include line
// (include_rules.h says which rules), and the rules themselves checked on
// includes that break them, so that the tree's test cannot pass vacuously.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/layering/include_rules.h"

namespace memprof::layering {
namespace {

namespace fs = std::filesystem;

TEST(IncludeRulesTest, CommonIncludesOnlyCommon) {
  EXPECT_EQ(CheckInclude("common/fd.cc", "common/fd.h"), std::nullopt);
  EXPECT_EQ(CheckInclude("common/fd.cc", "<string>"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "cli/io/logging.h"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "agent/core/agent.h"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "<grpcpp/grpcpp.h>"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "<spdlog/spdlog.h>"), std::nullopt);
}

TEST(IncludeRulesTest, AgentNeverIncludesCli) {
  EXPECT_EQ(CheckInclude("agent/core/agent.cc", "common/fd.h"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/service/dump_reactor.h", "memprof/v1/memory_profile.pb.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("agent/core/agent.cc", "cli/client/target.h"), std::nullopt);
  EXPECT_NE(CheckInclude("agent/service/remote_server.cc", "cli/client/target.h"), std::nullopt);
}

TEST(IncludeRulesTest, TheCoreAndSharedIncludeNoHeavyLibrary) {
  for (const char* file : {"agent/core/agent.cc", "agent/shared/owned_fd.h"}) {
    for (const char* heavy :
         {"<grpcpp/grpcpp.h>", "<grpc/grpc.h>", "<google/protobuf/message.h>",
          "<spdlog/spdlog.h>", "<openssl/ssl.h>", "memprof/v1/memory_profile.pb.h"}) {
      const auto why = CheckInclude(file, heavy);
      ASSERT_NE(why, std::nullopt) << file << " may not include " << heavy;
      EXPECT_NE(why->find("no gRPC, protobuf, spdlog or OpenSSL"), std::string::npos) << *why;
    }
  }
  EXPECT_EQ(CheckInclude("agent/core/agent.cc", "<sys/socket.h>"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/core/agent_api.cc", "memprof/agent.h"), std::nullopt);
}

TEST(IncludeRulesTest, OnlyTheServiceAndTheModuleIncludeTheGeneratedProto) {
  constexpr const char* kProto = "memprof/v1/memory_profile.grpc.pb.h";
  EXPECT_EQ(CheckInclude("agent/service/memory_profile_service.h", kProto), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/module/module_entry.cc", kProto), std::nullopt);
  EXPECT_NE(CheckInclude("agent/heap/dump_streamer.h", kProto), std::nullopt);
  EXPECT_NE(CheckInclude("agent/allocators/allocator.h", kProto), std::nullopt);
  EXPECT_NE(CheckInclude("agent/heap/dump_streamer.cc", "<grpcpp/alarm.h>"), std::nullopt);
  EXPECT_NE(CheckInclude("agent/allocators/allocator.cc", "<openssl/evp.h>"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/heap/dump_streamer.cc", "<spdlog/spdlog.h>"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/service/tls_material.cc", "<openssl/evp.h>"), std::nullopt);
}

TEST(IncludeRulesTest, AgentFoldersIncludeOnlyLowerRanksOfTheirSide) {
  EXPECT_EQ(CheckInclude("agent/heap/dump_streamer.h", "agent/allocators/allocator.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("agent/module/agent_server.cc", "agent/service/remote_server.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("agent/heap/capture_keeper.h", "agent/shared/owned_fd.h"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/core/agent.h", "agent/shared/module_abi.h"), std::nullopt);
  EXPECT_NE(CheckInclude("agent/allocators/allocator.cc", "agent/heap/purge.h"), std::nullopt);
  EXPECT_NE(CheckInclude("agent/heap/dump_streamer.cc", "agent/service/status_mapping.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("agent/shared/agent_config.h", "agent/core/agent.h"), std::nullopt);
  const auto across = CheckInclude("agent/core/agent.cc", "agent/heap/heap_engine.h");
  ASSERT_NE(across, std::nullopt);
  EXPECT_NE(across->find("share only agent/shared/"), std::string::npos) << *across;
  EXPECT_NE(CheckInclude("agent/module/module_entry.cc", "agent/core/module_loader.h"),
            std::nullopt);
}

TEST(IncludeRulesTest, UnknownAgentFolderMustBeGivenAPlace) {
  const auto why = CheckInclude("agent/newpart/x.cc", "common/fd.h");
  ASSERT_NE(why, std::nullopt);
  EXPECT_NE(why->find("no place in the agent's ranks"), std::string::npos) << *why;
  const auto to = CheckInclude("agent/heap/x.cc", "agent/newpart/x.h");
  ASSERT_NE(to, std::nullopt);
  EXPECT_NE(to->find("no place in the agent's ranks"), std::string::npos) << *to;
  const auto top = CheckInclude("agent/agent.cc", "common/fd.h");
  ASSERT_NE(top, std::nullopt);
  EXPECT_NE(top->find("no source file at its top level"), std::string::npos) << *top;
}

TEST(IncludeRulesTest, ReportEngineIncludesNoOtherCliFolderNorGrpcNorCli11) {
  EXPECT_EQ(CheckInclude("cli/report/pprof/pprof_writer.cc", "cli/report/model/profile.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/report_pipeline.cc", "common/result.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/report_pipeline.cc", "cli/io/logging.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/aggregate/aggregate.cc", "<CLI/CLI.hpp>"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/aggregate/aggregate.cc", "<grpcpp/grpcpp.h>"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/aggregate/aggregate.cc", "memprof/v1/memory_profile.pb.h"),
            std::nullopt);
}

TEST(IncludeRulesTest, ReportStagesIncludeOnlyStagesBeforeThem) {
  // Down the data flow: allowed.
  EXPECT_EQ(CheckInclude("cli/report/parse/heap_v2_parser.h", "cli/report/model/profile.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/aggregate/unsample.h", "cli/report/parse/heap_v2_parser.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/render/text_report.h", "cli/report/aggregate/aggregate.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/render/svg_report.cc", "cli/report/render/xml_text.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/merge/address_space.h", "cli/report/symbolize/memory_map.h"),
            std::nullopt);
  EXPECT_EQ(
      CheckInclude("cli/report/pprof/location_table.cc", "cli/report/aggregate/jeprof_names.h"),
      std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/trend/trend_report.cc", "cli/report/render/report_format.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/report_pipeline.cc", "cli/report/render/json_report.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/trend_pipeline.cc", "cli/report/trend/trend_report.h"),
            std::nullopt);
  // Back up the data flow: refused.
  EXPECT_NE(CheckInclude("cli/report/parse/heap_v2_parser.cc", "cli/report/render/text_report.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/parse/heap_v2_parser.cc", "cli/report/aggregate/unsample.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/aggregate/aggregate.cc", "cli/report/render/report_format.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/model/profile.h", "cli/report/parse/heap_v2_parser.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/render/json_report.cc", "cli/report/trend/trend.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/render/json_report.cc", "cli/report/report_pipeline.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/trend/trend.cc", "cli/report/profile_loader.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/symbolize/symbolizer.cc", "cli/report/aggregate/aggregate.h"),
            std::nullopt);
  // Siblings include neither each other.
  EXPECT_NE(CheckInclude("cli/report/render/svg_report.cc", "cli/report/pprof/pprof_writer.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/pprof/pprof_writer.cc", "cli/report/render/text_report.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/aggregate/aggregate.cc", "cli/report/merge/profile_merge.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/merge/profile_merge.cc", "cli/report/aggregate/unsample.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/symbolize/symbolizer.cc", "cli/report/model/profile.h"),
            std::nullopt);
  const auto why = CheckInclude("cli/report/parse/heap_v2_parser.cc", "cli/report/render/x.h");
  ASSERT_NE(why, std::nullopt);
  EXPECT_NE(why->find("before it in the data flow"), std::string::npos) << *why;
}

TEST(IncludeRulesTest, PipelineFilesIncludeOnlyThoseBelowThem) {
  EXPECT_EQ(CheckInclude("cli/report/allocation_report.h", "cli/report/report_request.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/trend_pipeline.h", "cli/report/report_request.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/report_pipeline.cc", "cli/report/report_pipeline.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/report_pipeline.cc", "cli/report/trend_pipeline.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/report/symbolization_report.cc", "cli/report/debian_packages.h"),
            std::nullopt);
  // Back up: a pipeline that includes the one that picks it.
  for (const char* file : {"cli/report/allocation_report.h", "cli/report/trend_pipeline.h",
                           "cli/report/report_request.h"}) {
    const auto why = CheckInclude(file, "cli/report/report_pipeline.h");
    ASSERT_NE(why, std::nullopt) << file;
    EXPECT_NE(why->find("includes only those below it"), std::string::npos) << *why;
  }
  EXPECT_NE(CheckInclude("cli/report/allocation_report.cc", "cli/report/trend_pipeline.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/report/report_request.h", "cli/report/profile_loader.h"),
            std::nullopt);
  const auto unknown = CheckInclude("cli/report/new_pipeline.cc", "cli/report/report_request.h");
  ASSERT_NE(unknown, std::nullopt);
  EXPECT_NE(unknown->find("no place in the report pipeline's file order"), std::string::npos)
      << *unknown;
}

TEST(IncludeRulesTest, UnknownReportFolderMustBeGivenAPlace) {
  struct Case {
    const char* file;
    const char* included;
    const char* unranked;  // the folder the message must name
  };
  for (const Case& c : {
           Case{"cli/report/newstage/x.cc", "cli/report/parse/heap_v2_parser.h", "newstage"},
           // Even its own headers, so that a new folder cannot go unranked.
           Case{"cli/report/newstage/x.cc", "cli/report/newstage/x.h", "newstage"},
           Case{"cli/report/render/text_report.cc", "cli/report/newstage/x.h", "newstage"},
           Case{"cli/report/report_pipeline.cc", "cli/report/newstage/x.h", "newstage"},
           // The folder the stages replaced.
           Case{"cli/report/analysis/aggregate.cc", "cli/report/model/profile.h", "analysis"},
       }) {
    const auto why = CheckInclude(c.file, c.included);
    ASSERT_NE(why, std::nullopt) << c.file << " includes " << c.included;
    const std::string expected = "cli/report/" + std::string(c.unranked) +
                                 "/ has no place in the report engine's stage order";
    EXPECT_NE(why->find(expected), std::string::npos) << *why;
  }
}

TEST(IncludeRulesTest, CliFoldersIncludeOnlyFoldersBelowThem) {
  EXPECT_EQ(CheckInclude("cli/targets/target_selection.cc", "cli/client/profile_client.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/collect/periodic_dump.cc", "cli/report/report_pipeline.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/main.cc", "cli/app/cli_app.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/client/target.cc", "cli/targets/target_spec.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/io/logging.cc", "cli/commands/dump_command.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/collect/stats_watch.cc", "cli/commands/command.h"), std::nullopt);
  EXPECT_NE(CheckInclude("cli/collect/stats_watch.cc", "cli/exporter/http_server.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/exporter/target_metrics.cc", "cli/collect/run_end.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/commands/dump_command.cc", "cli/app/cli_app.h"), std::nullopt);
}

TEST(IncludeRulesTest, UnknownCliFolderMustBeGivenAPlace) {
  const auto why = CheckInclude("cli/newthing/x.cc", "cli/io/logging.h");
  ASSERT_NE(why, std::nullopt);
  EXPECT_NE(why->find("no place in the layer order"), std::string::npos) << *why;
}

TEST(IncludeRulesTest, CommandsNeverIncludeEachOther) {
  EXPECT_EQ(CheckInclude("cli/commands/dump_command.cc", "cli/commands/dump_command.h"),
            std::nullopt);
  EXPECT_EQ(CheckInclude("cli/commands/dump_command.cc", "cli/commands/target_flags.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/commands/profile_command.cc", "cli/commands/dump_command.h"),
            std::nullopt);
  // The registry is not a command: it names them all, one line each.
  EXPECT_EQ(CheckInclude("cli/commands/command_registry.cc", "cli/commands/dump_command.h"),
            std::nullopt);
  EXPECT_NE(CheckInclude("cli/commands/dump_command.h", "cli/commands/report_command.h"),
            std::nullopt);
}

// Every #include of a file, with its line number: "x.h" as x.h, <x> as <x>.
struct IncludeLine {
  int line;
  std::string included;
};

std::vector<IncludeLine> ReadIncludes(const fs::path& path) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*("([^"]+)"|<[^>]+>))re");
  std::ifstream in(path);
  std::vector<IncludeLine> includes;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    std::smatch m;
    if (!std::regex_search(text, m, kInclude)) continue;
    includes.push_back({line, m[2].matched ? m[2].str() : m[1].str()});
  }
  return includes;
}

bool IsSource(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".c";
}

TEST(LayeringTest, EveryIncludeInTheTreeFollowsTheLayers) {
  const fs::path root = MEMPROF_SOURCE_DIR;
  size_t files = 0;
  std::vector<std::string> violations;
  for (const char* top : {"common", "agent", "cli"}) {
    ASSERT_TRUE(fs::is_directory(root / top)) << (root / top);
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file() || !IsSource(entry.path())) continue;
      ++files;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      for (const IncludeLine& inc : ReadIncludes(entry.path())) {
        if (auto why = CheckInclude(rel, inc.included)) {
          violations.push_back(rel + ":" + std::to_string(inc.line) + ": " + *why);
        }
      }
    }
  }
  EXPECT_GT(files, 100u) << "the walk found too few sources under " << root;
  std::string all;
  for (const std::string& v : violations) all += v + "\n";
  EXPECT_TRUE(violations.empty()) << violations.size() << " layering violations:\n" << all;
}

TEST(LayeringTest, AgentHasNoSourceAtItsTopLevel) {
  const fs::path agent = fs::path(MEMPROF_SOURCE_DIR) / "agent";
  for (const auto& entry : fs::directory_iterator(agent)) {
    EXPECT_FALSE(entry.is_regular_file() && IsSource(entry.path()))
        << entry.path() << ": every agent source belongs to the folder (library) of its part";
  }
}

}  // namespace
}  // namespace memprof::layering
