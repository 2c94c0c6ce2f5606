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
  EXPECT_NE(CheckInclude("common/fd.cc", "agent/agent.h"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "<grpcpp/grpcpp.h>"), std::nullopt);
  EXPECT_NE(CheckInclude("common/fd.cc", "<spdlog/spdlog.h>"), std::nullopt);
}

TEST(IncludeRulesTest, AgentNeverIncludesCli) {
  EXPECT_EQ(CheckInclude("agent/agent.cc", "common/fd.h"), std::nullopt);
  EXPECT_EQ(CheckInclude("agent/agent.cc", "memprof/v1/memory_profile.pb.h"), std::nullopt);
  EXPECT_NE(CheckInclude("agent/agent.cc", "cli/client/target.h"), std::nullopt);
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

}  // namespace
}  // namespace memprof::layering
