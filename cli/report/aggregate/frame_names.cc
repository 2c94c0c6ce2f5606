#include "cli/report/aggregate/frame_names.h"

namespace memprof::report::aggregate {

std::string FrameLineSuffix(const Frame& frame) {
  if (frame.file.empty() || frame.line <= 0) return "";
  return " " + frame.file + ":" + std::to_string(frame.line);
}

std::vector<std::string> RootFirstFrameNames(const Location& location, bool lines) {
  std::vector<std::string> names;
  names.reserve(location.frames.size());
  for (size_t i = location.frames.size(); i-- > 0;) {
    const std::string& function = location.frames[i].function;
    std::string name =
        function.empty() ? UnnamedFrameName(location.frames[i], location.address) : function;
    if (i + 1 < location.frames.size()) name += "[inline]";
    if (lines) name += FrameLineSuffix(location.frames[i]);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace memprof::report::aggregate
