#ifndef MEMPROF_CLI_APP_CONFIG_FILE_H_
#define MEMPROF_CLI_APP_CONFIG_FILE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// memprofctl's config file: `key = "value"` lines, `#` comments, no
// sections (docs/user-guide.md, "The TLS files from the environment or a config file").
// Each line is read by CLI11's TOML config reader; this class adds what CLI11
// does not check: one known key per line, one value, no key twice, and the
// file and line in every error. Every error is a usage error (exit 2).
class ConfigFile {
 public:
  struct Setting {
    std::string value;
    int line = 0;
  };

  // Reads and checks `path`; `keys` are the valid keys.
  [[nodiscard]] static Result<ConfigFile> Load(const std::string& path,
                                               const std::vector<std::string>& keys);
  // Checks `text` as the contents of `path` (Load without the reading).
  [[nodiscard]] static Result<ConfigFile> Parse(const std::string& path, const std::string& text,
                                                const std::vector<std::string>& keys);

  const std::string& path() const { return path_; }
  // The setting of `key`, or nullptr when the file does not set it.
  const Setting* Find(std::string_view key) const;
  // "KEY (PATH:LINE)": where a setting came from, for messages.
  std::string Origin(std::string_view key) const;

 private:
  std::string path_;
  std::map<std::string, Setting, std::less<>> settings_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_CONFIG_FILE_H_
