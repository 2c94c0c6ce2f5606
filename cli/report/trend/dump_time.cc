#include "cli/report/trend/dump_time.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/path.h"

namespace memprof::report::trend {
namespace {

constexpr size_t kStampSize = 16;  // "20261122T211530Z"

bool Digits(std::string_view text) {
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int Number(std::string_view digits) {
  int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

std::optional<double> ParseStamp(std::string_view stamp) {
  if (stamp.size() != kStampSize || stamp[8] != 'T' || stamp[15] != 'Z') return std::nullopt;
  if (!Digits(stamp.substr(0, 8)) || !Digits(stamp.substr(9, 6))) return std::nullopt;
  std::tm utc{};
  utc.tm_year = Number(stamp.substr(0, 4)) - 1900;
  utc.tm_mon = Number(stamp.substr(4, 2)) - 1;
  utc.tm_mday = Number(stamp.substr(6, 2));
  utc.tm_hour = Number(stamp.substr(9, 2));
  utc.tm_min = Number(stamp.substr(11, 2));
  utc.tm_sec = Number(stamp.substr(13, 2));
  if (utc.tm_mon > 11 || utc.tm_mday < 1 || utc.tm_mday > 31 || utc.tm_hour > 23 ||
      utc.tm_min > 59 || utc.tm_sec > 60) {
    return std::nullopt;
  }
  return static_cast<double>(timegm(&utc));
}

// "name-1" -> "name": the attempt suffix DumpFileName adds on a clash.
std::string_view WithoutAttempt(std::string_view stem) {
  const size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == stem.size()) return stem;
  return Digits(stem.substr(dash + 1)) ? stem.substr(0, dash) : stem;
}

}  // namespace

std::string_view SourceName(DumpTime::Source source) {
  return source == DumpTime::Source::kFileName ? "file name" : "mtime";
}

std::optional<double> TimeFromDumpFileName(std::string_view path) {
  const std::string_view name = PathBasename(path);
  std::string_view stem = name.substr(0, name.find('.'));
  for (std::string_view candidate : {stem, WithoutAttempt(stem)}) {
    if (candidate.size() <= kStampSize || candidate[candidate.size() - kStampSize - 1] != '-') {
      continue;
    }
    if (auto time = ParseStamp(candidate.substr(candidate.size() - kStampSize))) return time;
  }
  return std::nullopt;
}

Result<DumpTime> ReadDumpTime(const std::string& path) {
  if (auto time = TimeFromDumpFileName(path)) return DumpTime{*time, DumpTime::Source::kFileName};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Fail(ErrorCode::kNotFound, path + ": " + std::strerror(errno));
  }
  const double seconds =
      static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
  return DumpTime{seconds, DumpTime::Source::kModified};
}

}  // namespace memprof::report::trend
