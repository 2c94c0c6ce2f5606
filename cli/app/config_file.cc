#include "cli/app/config_file.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "common/text_file.h"

namespace memprof::cli {
namespace {

std::string Trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return std::string(text.substr(begin, end - begin + 1));
}

std::string ValidKeys(const std::vector<std::string>& keys) {
  std::string text;
  for (const std::string& key : keys) text += (text.empty() ? "" : ", ") + key;
  return "(valid keys: " + text + ")";
}

// One line as CLI11's TOML reader sees it: nothing for a blank line or a
// comment, else the items it found.
std::vector<CLI::ConfigItem> ReadLine(const std::string& line) {
  std::istringstream in(line);
  return CLI::ConfigTOML().from_config(in);
}

}  // namespace

Result<ConfigFile> ConfigFile::Load(const std::string& path, const std::vector<std::string>& keys) {
  auto text = ReadTextFile(path);
  if (!text) return Fail(ErrorCode::kInvalidArgument, "config file: " + text.error().message);
  return Parse(path, *text, keys);
}

Result<ConfigFile> ConfigFile::Parse(const std::string& path, const std::string& text,
                                     const std::vector<std::string>& keys) {
  ConfigFile file;
  file.path_ = path;
  std::istringstream in(text);
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    const std::string line = Trimmed(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (line.front() == '[') {
      return Fail(
          ErrorCode::kInvalidArgument,
          where + "sections are not used; write the keys at the top level " + ValidKeys(keys));
    }
    const std::vector<CLI::ConfigItem> items = ReadLine(line);
    if (line.find('=') == std::string::npos || items.size() != 1) {
      return Fail(ErrorCode::kInvalidArgument,
                  where + "expected KEY = \"VALUE\", found '" + line + "' " + ValidKeys(keys));
    }
    const CLI::ConfigItem& item = items.front();
    const std::string key = item.fullname();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return Fail(ErrorCode::kInvalidArgument,
                  where + "unknown key '" + key + "' " + ValidKeys(keys));
    }
    if (item.inputs.size() != 1 || item.inputs.front().empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  where + key + " needs one value, a path in quotes: " + key + " = \"/path\"");
    }
    if (const Setting* earlier = file.Find(key)) {
      return Fail(ErrorCode::kInvalidArgument,
                  where + key + " is already set on line " + std::to_string(earlier->line));
    }
    file.settings_.emplace(key, Setting{item.inputs.front(), number});
  }
  return file;
}

const ConfigFile::Setting* ConfigFile::Find(std::string_view key) const {
  auto it = settings_.find(key);
  return it == settings_.end() ? nullptr : &it->second;
}

std::string ConfigFile::Origin(std::string_view key) const {
  const Setting* setting = Find(key);
  return std::string(key) + " (" + path_ + ":" + std::to_string(setting ? setting->line : 0) + ")";
}

}  // namespace memprof::cli
