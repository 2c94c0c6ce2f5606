#include "tests/layering/include_rules.h"

#include <array>
#include <utility>

namespace memprof::layering {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The folder right under cli/ ("io", "report", ...), "main" for cli/main.cc,
// or "" outside cli/.
std::string_view CliFolder(std::string_view path) {
  if (!StartsWith(path, "cli/")) return "";
  std::string_view rest = path.substr(4);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return "main";
  return rest.substr(0, slash);
}

// Rank in the CLI's layer order; a folder may include strictly lower ranks
// (and itself). -1: unknown (a new folder must be given a place here).
int Rank(std::string_view folder) {
  static constexpr std::array<std::pair<std::string_view, int>, 12> kRanks{{
      {"report", 0},
      {"io", 1},
      {"launch", 2},
      {"client", 3},
      {"attach", 3},
      {"targets", 4},
      {"collect", 5},
      {"exporter", 5},
      {"doctor", 5},
      {"commands", 6},
      {"app", 7},
      {"main", 8},
  }};
  for (const auto& [name, rank] : kRanks) {
    if (name == folder) return rank;
  }
  return -1;
}

bool IsHeavyDependency(std::string_view included) {
  return StartsWith(included, "<grpc") || StartsWith(included, "<CLI/") ||
         StartsWith(included, "memprof/v1/");
}

std::optional<std::string> Violation(std::string_view file, std::string_view included,
                                     std::string_view why) {
  return std::string(file) + " includes " + std::string(included) + ": " + std::string(why);
}

// "cli/commands/dump_command.h" -> "dump" (the command a file belongs to),
// "" for files of commands/ that are not a command.
std::string_view CommandOf(std::string_view path) {
  constexpr std::string_view kDir = "cli/commands/";
  if (!StartsWith(path, kDir)) return "";
  std::string_view name = path.substr(kDir.size());
  const size_t end = name.find("_command.");
  return end == std::string_view::npos ? "" : name.substr(0, end);
}

// The folder right under cli/report/ ("parse", ...) of a path in the report
// engine, "" for the pipeline files at the top of cli/report/ (report_pipeline.cc, ...).
std::string_view ReportFolder(std::string_view path) {
  constexpr std::string_view kDir = "cli/report/";
  std::string_view rest = path.substr(kDir.size());
  const size_t slash = rest.find('/');
  return slash == std::string_view::npos ? "" : rest.substr(0, slash);
}

// Rank in the report engine's data flow; a folder may include strictly lower
// ranks (and itself). -1: unknown (a new folder must be given a place here).
//   {model, symbolize} < parse < {aggregate, merge} < {render, pprof} < trend < the pipeline
int ReportRank(std::string_view folder) {
  static constexpr std::array<std::pair<std::string_view, int>, 9> kRanks{{
      {"model", 0},      // the profile every stage passes on
      {"symbolize", 0},  // addresses to frames, on common/ only
      {"parse", 1},
      {"aggregate", 2},
      {"merge", 2},  // several profiles into one
      {"render", 3},
      {"pprof", 3},  // the other output: pprof's proto
      {"trend", 4},  // a series of aggregations, fitted, in render's number format
      {"", 5},       // the files at the top of cli/report/: the pipeline
  }};
  for (const auto& [name, rank] : kRanks) {
    if (name == folder) return rank;
  }
  return -1;
}

// The pipeline files at the top of cli/report/ have an order of their own:
// the request comes first, the pipelines that serve one kind of request next,
// and report_pipeline, which picks among them, last. By file name without
// its extension; -1: unknown (a new pipeline file must be given a place here).
int PipelineRank(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  name = name.substr(0, name.find('.'));
  static constexpr std::array<std::pair<std::string_view, int>, 10> kRanks{{
      {"report_request", 0},  // what a report is asked for: below every pipeline
      {"leave_to_exit", 0},
      {"debian_packages", 0},
      {"dump_process_check", 0},
      {"profile_loader", 0},
      {"report_symbolizer", 1},     // a request's symbolizer, on the loader's threads
      {"symbolization_report", 1},  // names the Debian packages
      {"allocation_report", 2},
      {"trend_pipeline", 2},
      {"report_pipeline", 3},  // picks among the pipelines above
  }};
  for (const auto& [file, rank] : kRanks) {
    if (file == name) return rank;
  }
  return -1;
}

// Between two pipeline files: only a lower one, or a file's own header.
std::optional<std::string> CheckPipelineFiles(std::string_view file, std::string_view included) {
  const int from = PipelineRank(file);
  const int to = PipelineRank(included);
  if (from < 0 || to < 0) {
    return Violation(file, included,
                     std::string(from < 0 ? file : included) +
                         " has no place in the report pipeline's file order "
                         "(tests/layering/include_rules.cc)");
  }
  const auto stem = [](std::string_view path) { return path.substr(0, path.rfind('.')); };
  if (to >= from && stem(file) != stem(included)) {
    return Violation(file, included,
                     "a pipeline file includes only those below it: report_request and the "
                     "loaders < report_symbolizer and symbolization_report < the allocation "
                     "and trend pipelines < report_pipeline");
  }
  return std::nullopt;
}

std::string ReportFolderName(std::string_view folder) {
  return folder.empty() ? "cli/report/'s pipeline files"
                        : "cli/report/" + std::string(folder) + "/";
}

// Inside the report engine: each folder includes only those before it in the
// data flow. A folder with no rank fails on every include of the engine, its
// own headers too, so a new stage cannot go unranked.
std::optional<std::string> CheckReportEngine(std::string_view file, std::string_view included) {
  const std::string_view from = ReportFolder(file);
  const std::string_view to = ReportFolder(included);
  const int from_rank = ReportRank(from);
  const int to_rank = ReportRank(to);
  if (from_rank < 0 || to_rank < 0) {
    return Violation(file, included,
                     ReportFolderName(from_rank < 0 ? from : to) +
                         " has no place in the report engine's stage order "
                         "(tests/layering/include_rules.cc)");
  }
  if (from == to) return from.empty() ? CheckPipelineFiles(file, included) : std::nullopt;
  if (to_rank >= from_rank) {
    return Violation(file, included,
                     ReportFolderName(from) +
                         " may include only the report engine's folders before it in the data "
                         "flow: {model, symbolize} < parse < {aggregate, merge} < {render, pprof} "
                         "< trend < the pipeline files");
  }
  return std::nullopt;
}

std::optional<std::string> CheckCli(std::string_view file, std::string_view included) {
  const std::string_view from = CliFolder(file);
  const std::string_view to = CliFolder(included);
  if (from == "report" && (IsHeavyDependency(included) || (!to.empty() && to != "report"))) {
    return Violation(file, included,
                     "the report engine depends on common/ only (no other CLI folder, no gRPC, "
                     "no CLI11)");
  }
  if (from == "report" && to == "report") return CheckReportEngine(file, included);
  if (to.empty() || to == from) {
    const std::string_view mine = CommandOf(file);
    const std::string_view theirs = CommandOf(included);
    if (!mine.empty() && !theirs.empty() && theirs != mine) {
      return Violation(file, included,
                       "a command never includes another command; move what they share down "
                       "a layer");
    }
    return std::nullopt;
  }
  const int from_rank = Rank(from);
  const int to_rank = Rank(to);
  if (from_rank < 0 || to_rank < 0) {
    return Violation(file, included,
                     "cli/" + std::string(from_rank < 0 ? from : to) +
                         "/ has no place in the layer order (tests/layering/include_rules.cc)");
  }
  if (to_rank >= from_rank) {
    return Violation(file, included,
                     "cli/" + std::string(from) + "/ may include only folders below it");
  }
  return std::nullopt;
}


// --- agent/ -----------------------------------------------------------------

// The headers that must never reach the always-loaded core: each maps a
// library (and its threads, allocations and symbols) into every host.
enum Heavy : unsigned {
  kNoHeavy = 0,
  kSpdlog = 1u << 0,
  kGrpc = 1u << 1,      // <grpc/...>, <grpcpp/...>
  kProtobuf = 1u << 2,  // <google/protobuf/...>
  kProto = 1u << 3,     // "memprof/v1/...": the generated service code
  kOpenssl = 1u << 4,
  kAllHeavy = kSpdlog | kGrpc | kProtobuf | kProto | kOpenssl,
};

// Which heavy library an include names, or kNoHeavy.
unsigned HeavyKind(std::string_view included) {
  if (StartsWith(included, "<spdlog/")) return kSpdlog;
  if (StartsWith(included, "<grpc/") || StartsWith(included, "<grpcpp/")) return kGrpc;
  if (StartsWith(included, "<google/protobuf/")) return kProtobuf;
  if (StartsWith(included, "memprof/v1/")) return kProto;
  if (StartsWith(included, "<openssl/")) return kOpenssl;
  return kNoHeavy;
}

// An agent folder: its side (the core and the module are two worlds that
// share only shared/), its rank on that side (a folder includes lower ranks
// and itself), and the heavy libraries it may name.
enum class Side { kShared, kCore, kModule };
struct AgentFolder {
  std::string_view name;
  Side side;
  int rank;
  unsigned heavy;
};

constexpr std::array<AgentFolder, 9> kAgentFolders{{
    {"include", Side::kShared, 0, kNoHeavy},  // the public C header
    {"shared", Side::kShared, 0, kNoHeavy},
    {"core", Side::kCore, 1, kNoHeavy},
    {"logging", Side::kModule, 1, kSpdlog},
    {"sampler", Side::kModule, 1, kNoHeavy},  // runs inside the host's malloc
    {"allocators", Side::kModule, 2, kSpdlog},
    {"heap", Side::kModule, 3, kSpdlog},
    {"service", Side::kModule, 4, kAllHeavy},
    {"module", Side::kModule, 5, kAllHeavy},
}};

const AgentFolder* FindAgentFolder(std::string_view name) {
  for (const AgentFolder& folder : kAgentFolders) {
    if (folder.name == name) return &folder;
  }
  return nullptr;
}

// The folder right under agent/ ("core", "heap", ...), or "" for a file at
// agent/'s top level.
std::string_view AgentFolderOf(std::string_view path) {
  std::string_view rest = path.substr(std::string_view("agent/").size());
  const size_t slash = rest.find('/');
  return slash == std::string_view::npos ? "" : rest.substr(0, slash);
}

std::string HeavyNames(unsigned heavy) {
  if (heavy == kNoHeavy) return "no gRPC, protobuf, spdlog or OpenSSL header";
  if (heavy == kSpdlog) return "of the heavy libraries only spdlog";
  return "any library";
}

bool MayInclude(const AgentFolder& from, const AgentFolder& to) {
  if (to.name == from.name || to.side == Side::kShared) return true;
  return from.side == Side::kModule && to.side == Side::kModule && to.rank < from.rank;
}

std::optional<std::string> CheckAgent(std::string_view file, std::string_view included) {
  if (StartsWith(included, "cli/")) return Violation(file, included, "agent/ never includes cli/");
  const std::string from_name(AgentFolderOf(file));
  const AgentFolder* from = FindAgentFolder(from_name);
  if (from == nullptr) {
    return Violation(file, included,
                     from_name.empty()
                         ? std::string("agent/ has no source file at its top level; put it in "
                                       "the folder of its part")
                         : "agent/" + from_name +
                               "/ has no place in the agent's ranks "
                               "(tests/layering/include_rules.cc)");
  }
  if (const unsigned heavy = HeavyKind(included); (heavy & ~from->heavy) != 0) {
    return Violation(file, included,
                     "agent/" + from_name + "/ includes " + HeavyNames(from->heavy) +
                         (from->side == Side::kModule ? ""
                                                      : " (it is loaded into every host)"));
  }
  if (!StartsWith(included, "agent/")) return std::nullopt;
  const std::string to_name(AgentFolderOf(included));
  const AgentFolder* to = FindAgentFolder(to_name);
  if (to == nullptr) {
    return Violation(file, included,
                     "agent/" + to_name + "/ has no place in the agent's ranks "
                                          "(tests/layering/include_rules.cc)");
  }
  if (!MayInclude(*from, *to)) {
    return Violation(file, included,
                     from->side != to->side
                         ? "the core and the module share only agent/shared/"
                         : "agent/" + from_name + "/ may include only agent folders below it");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CheckInclude(std::string_view file, std::string_view included) {
  if (StartsWith(file, "common/")) {
    const bool system = StartsWith(included, "<");
    if ((!system && !StartsWith(included, "common/")) || IsHeavyDependency(included) ||
        StartsWith(included, "<spdlog/")) {
      return Violation(file, included, "common/ includes only common/ and light system headers");
    }
    return std::nullopt;
  }
  if (StartsWith(file, "agent/")) return CheckAgent(file, included);
  if (StartsWith(file, "cli/")) return CheckCli(file, included);
  return std::nullopt;
}

}  // namespace memprof::layering
