#include "cli/report/report_request.h"

namespace memprof::report {

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = {"text", "collapsed", "pprof", "svg", "json"};
  return names;
}

std::optional<Format> ParseFormat(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "collapsed") return Format::kCollapsed;
  if (name == "pprof") return Format::kPprof;
  if (name == "svg") return Format::kSvg;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view FormatExtension(Format format) {
  switch (format) {
    case Format::kText: return "txt";
    case Format::kCollapsed: return "collapsed";
    case Format::kPprof: return "pb.gz";
    case Format::kSvg: return "svg";
    case Format::kJson: return "json";
  }
  return "txt";
}

}  // namespace memprof::report
