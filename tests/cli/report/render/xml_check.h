#ifndef MEMPROF_TESTS_CLI_REPORT_RENDER_XML_CHECK_H_
#define MEMPROF_TESTS_CLI_REPORT_RENDER_XML_CHECK_H_

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/shell.h"

namespace memprof::report::render::testing {

namespace xml_check_internal {

inline bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
         c == '.' || static_cast<unsigned char>(c) >= 0x80;
}

// "" if every '&' in `text` starts a predefined or numeric entity.
inline std::string EntityError(std::string_view text) {
  for (size_t at = text.find('&'); at != std::string_view::npos; at = text.find('&', at + 1)) {
    size_t end = text.find(';', at);
    if (end == std::string_view::npos) return "unterminated entity";
    std::string_view name = text.substr(at + 1, end - at - 1);
    bool numeric = name.size() > 1 && name[0] == '#' &&
                   name.find_first_not_of("0123456789", 1) == std::string_view::npos;
    if (!numeric && name != "amp" && name != "lt" && name != "gt" && name != "quot" &&
        name != "apos") {
      return "unknown entity &" + std::string(name) + ";";
    }
  }
  return "";
}

// Checks the inside of a start tag after its name: name="value" pairs.
inline std::string AttributesError(std::string_view attributes) {
  size_t at = 0;
  while (true) {
    while (at < attributes.size() && std::isspace(static_cast<unsigned char>(attributes[at]))) ++at;
    if (at == attributes.size()) return "";
    size_t name_start = at;
    while (at < attributes.size() && IsNameChar(attributes[at])) ++at;
    if (at == name_start || at + 1 >= attributes.size() || attributes[at] != '=') {
      return "bad attribute near '" + std::string(attributes.substr(name_start, 20)) + "'";
    }
    char quote = attributes[at + 1];
    if (quote != '"' && quote != '\'') return "unquoted attribute";
    size_t end = attributes.find(quote, at + 2);
    if (end == std::string_view::npos) return "unterminated attribute";
    std::string_view value = attributes.substr(at + 2, end - at - 2);
    if (value.find('<') != std::string_view::npos) return "'<' in an attribute";
    if (std::string error = EntityError(value); !error.empty()) return error;
    at = end + 1;
  }
}

}  // namespace xml_check_internal

// A minimal XML well-formedness check that needs nothing installed (xmllint
// checks the same files too): one root element, balanced and properly
// nested tags, quoted attributes without '<', known entities only; CDATA,
// comments and the declaration are skipped. Returns "" when well formed,
// else what is wrong and where.
inline std::string XmlWellFormednessError(const std::string& xml) {
  using namespace xml_check_internal;
  std::vector<std::string> open;
  int roots = 0;
  size_t at = 0;
  while (at < xml.size()) {
    size_t tag = xml.find('<', at);
    std::string_view text(xml.data() + at, (tag == std::string::npos ? xml.size() : tag) - at);
    if (std::string error = EntityError(text); !error.empty())
      return error + " at " + std::to_string(at);
    if (open.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      return "text outside the root element at " + std::to_string(at);
    }
    if (tag == std::string::npos) break;
    auto skip_to = [&](const char* end) {
      size_t found = xml.find(end, tag);
      return found == std::string::npos ? std::string::npos : found + std::string_view(end).size();
    };
    size_t next = std::string::npos;
    if (xml.compare(tag, 9, "<![CDATA[") == 0) {
      next = skip_to("]]>");
    } else if (xml.compare(tag, 4, "<!--") == 0) {
      next = skip_to("-->");
    } else if (xml.compare(tag, 2, "<?") == 0) {
      next = skip_to("?>");
    } else {
      size_t close = xml.find('>', tag);
      if (close == std::string::npos) return "unterminated tag at " + std::to_string(tag);
      std::string_view body(xml.data() + tag + 1, close - tag - 1);
      bool closing = body.starts_with('/');
      bool empty = body.ends_with('/');
      if (closing) body.remove_prefix(1);
      if (empty) body.remove_suffix(1);
      size_t name_end = 0;
      while (name_end < body.size() && IsNameChar(body[name_end])) ++name_end;
      std::string name(body.substr(0, name_end));
      if (name.empty()) return "bad tag at " + std::to_string(tag);
      if (closing) {
        if (open.empty() || open.back() != name)
          return "mismatched </" + name + "> at " + std::to_string(tag);
        open.pop_back();
      } else {
        if (std::string error = AttributesError(body.substr(name_end)); !error.empty()) {
          return error + " in <" + name + "> at " + std::to_string(tag);
        }
        if (open.empty()) ++roots;
        if (!empty) open.push_back(name);
      }
      next = close + 1;
    }
    if (next == std::string::npos) return "unterminated markup at " + std::to_string(tag);
    at = next;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return roots == 1 ? "" : "expected one root element, got " + std::to_string(roots);
}

struct XmllintResult {
  bool ok = false;
  std::string output;
};

// `xmllint --noout <path>` (libxml2-utils): a real XML parser's verdict.
// `xmllint` is its path, from the shared tool check.
inline XmllintResult RunXmllint(const std::string& xmllint, const std::string& path) {
  test_support::ShellOutput run = test_support::RunShellCommand(
      test_support::Quote(xmllint) + " --noout " + test_support::Quote(path) + " 2>&1");
  return {run.ok() && run.text.empty(), run.text};
}

}  // namespace memprof::report::render::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_RENDER_XML_CHECK_H_
