#include "tests/docs/contract_check.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

namespace memprof::docs {
namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The end of a quoted literal that starts after its opening quote at `i`:
// the index of its closing quote (or of the line's end, for a broken one).
size_t QuotedEnd(std::string_view s, size_t i, char quote) {
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
  return std::min(i, s.size());
}

// A raw string R"delim(...)delim" whose opening quote is at `quote`: its
// contents, and the index just past it.
std::pair<std::string, size_t> RawString(std::string_view s, size_t quote) {
  const size_t open = s.find('(', quote + 1);
  if (open == std::string_view::npos) return {"", s.size()};
  const std::string end = ")" + std::string(s.substr(quote + 1, open - quote - 1)) + "\"";
  const size_t close = s.find(end, open + 1);
  if (close == std::string_view::npos) return {std::string(s.substr(open + 1)), s.size()};
  return {std::string(s.substr(open + 1, close - open - 1)), close + end.size()};
}

// A preprocessing number from `i` (so that 10'000 is one number, not a
// character literal): digits, letters, '_', '.', digit separators, and a
// sign after an exponent.
size_t NumberEnd(std::string_view s, size_t i) {
  while (i < s.size()) {
    const char c = s[i];
    if ((c == '+' || c == '-') &&
        std::string_view("eEpP").find(s[i - 1]) != std::string_view::npos) {
      ++i;
    } else if (IsIdentifierChar(c) || c == '.' || c == '\'') {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

bool IsStringPrefix(std::string_view word) {
  return word == "u8" || word == "u" || word == "U" || word == "L";
}

bool IsRawPrefix(std::string_view word) {
  return word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
}

// MEMPROF_X or MEMPROFCTL_X, X of capitals, digits and '_', not ending in '_'.
bool IsVariableName(std::string_view token) {
  std::string_view rest;
  if (token.starts_with("MEMPROFCTL_")) {
    rest = token.substr(11);
  } else if (token.starts_with("MEMPROF_")) {
    rest = token.substr(8);
  } else {
    return false;
  }
  if (rest.empty() || rest.back() == '_') return false;
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_'; });
}

std::string Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  const size_t end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The cells of a table line: split at '|' outside code spans and not
// escaped, the outer pipes dropped.
std::vector<std::string> Cells(std::string_view line) {
  std::string trimmed = Trim(line);
  if (trimmed.starts_with('|')) trimmed.erase(0, 1);
  if (trimmed.ends_with('|') && !trimmed.ends_with("\\|")) trimmed.pop_back();
  std::vector<std::string> cells;
  std::string cell;
  bool in_code = false;
  for (size_t i = 0; i < trimmed.size(); ++i) {
    const char c = trimmed[i];
    if (c == '\\' && i + 1 < trimmed.size() && trimmed[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (c == '`') {
      in_code = !in_code;
      cell += c;
    } else if (c == '|' && !in_code) {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(Trim(cell));
  return cells;
}

bool IsDelimiterRow(std::string_view line) {
  static const std::regex kDelimiter(R"(^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$)");
  return std::regex_match(std::string(line), kDelimiter);
}

// A heading line outside code blocks: its level and text, or level 0.
std::pair<int, std::string> Heading(const std::string& line) {
  static const std::regex kHeading(R"(^(#{1,6})\s+(.*?)\s*#*\s*$)");
  std::smatch m;
  if (!std::regex_match(line, m, kHeading)) return {0, ""};
  return {static_cast<int>(m[1].length()), m[2].str()};
}

// Which lines are inside a fenced code block (the fences included).
std::vector<bool> FencedLines(const std::vector<std::string>& lines) {
  std::vector<bool> fenced(lines.size(), false);
  bool in_fence = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string trimmed = Trim(lines[i]);
    const bool fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
    fenced[i] = in_fence || fence;
    if (fence) in_fence = !in_fence;
  }
  return fenced;
}

// The tables of lines [begin, end): runs of lines, outside code blocks, that
// start with '|' and have the |---| row second.
void AddTables(const std::vector<std::string>& lines, const std::vector<bool>& fenced, size_t begin,
               size_t end, MarkdownSection& section) {
  const auto in_table = [&](size_t i) { return !fenced[i] && Trim(lines[i]).starts_with('|'); };
  for (size_t i = begin; i < end;) {
    if (!in_table(i)) {
      ++i;
      continue;
    }
    const size_t first = i;
    while (i < end && in_table(i)) ++i;
    if (i - first < 2 || !IsDelimiterRow(lines[first + 1])) {
      section.stray_rows.push_back(static_cast<int>(first) + 1);
      continue;
    }
    MarkdownTable table;
    table.line = static_cast<int>(first) + 1;
    for (size_t row = first + 2; row < i; ++row) table.rows.push_back(Cells(lines[row]));
    section.tables.push_back(std::move(table));
  }
}

void CompareNames(std::string_view heading, std::string_view kind,
                  const std::map<std::string, std::string>& defined,
                  const std::set<std::string>& documented, std::string_view defined_where,
                  std::vector<std::string>& problems) {
  for (const auto& [name, where] : defined) {
    if (!documented.contains(name)) {
      problems.push_back("no row for " + std::string(kind) + " `" + name + "` under \"" +
                         std::string(heading) + "\" (" + where + ")");
    }
  }
  for (const std::string& name : documented) {
    if (!defined.contains(name)) {
      problems.push_back("a row for " + std::string(kind) + " `" + name + "` under \"" +
                         std::string(heading) + "\", but " + std::string(defined_where));
    }
  }
}

// The names in the first cells of the section's one table; a problem when
// the heading or the table is missing or not alone.
std::set<std::string> DocumentedNames(std::string_view contract, std::string_view heading,
                                      std::vector<std::string>& problems) {
  const MarkdownSection section = SectionTables(contract, heading);
  const std::string quoted = "\"" + std::string(heading) + "\"";
  if (!section.found) {
    problems.push_back("no heading " + quoted + " in docs/contract.md");
    return {};
  }
  if (section.headings > 1) {
    problems.push_back(std::to_string(section.headings) + " headings " + quoted +
                       " in docs/contract.md; keep one");
  }
  for (const int line : section.stray_rows) {
    problems.push_back(quoted + ", line " + std::to_string(line) +
                       ": table rows without a header and |---| row, which GitHub shows as text "
                       "(a blank line inside a table splits it)");
  }
  if (section.tables.size() != 1) {
    std::string where;
    for (const MarkdownTable& table : section.tables) {
      where += " line " + std::to_string(table.line);
    }
    problems.push_back(quoted + " must hold exactly one table; it holds " +
                       std::to_string(section.tables.size()) +
                       (where.empty() ? "" : " (at" + where + ")"));
  }
  std::set<std::string> names;
  for (const MarkdownTable& table : section.tables) names.merge(FirstCellNames(table));
  return names;
}

}  // namespace

SourceText ScanSource(std::string_view s) {
  SourceText out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      i = std::min(s.find('\n', i), s.size());
    } else if (c == '/' && next == '*') {
      const size_t close = s.find("*/", i + 2);
      i = close == std::string_view::npos ? s.size() : close + 2;
      out.code += ' ';
    } else if (c == '"' || c == '\'') {
      const size_t end = QuotedEnd(s, i + 1, c);
      if (c == '"') out.literals.emplace_back(s.substr(i + 1, end - i - 1));
      out.code += std::string(2, c);
      i = end + 1;
    } else if (IsDigit(c)) {
      const size_t end = NumberEnd(s, i);
      out.code += s.substr(i, end - i);
      i = end;
    } else if (IsIdentifierChar(c)) {
      size_t end = i;
      while (end < s.size() && IsIdentifierChar(s[end])) ++end;
      const std::string_view word = s.substr(i, end - i);
      if (end < s.size() && s[end] == '"' && IsRawPrefix(word)) {
        auto [contents, after] = RawString(s, end);
        out.literals.push_back(std::move(contents));
        out.code += "\"\"";
        i = after;
      } else if (end < s.size() && (s[end] == '"' || s[end] == '\'') && IsStringPrefix(word)) {
        i = end;  // the literal itself is read next
      } else {
        out.code += word;
        i = end;
      }
    } else {
      out.code += c;
      ++i;
    }
  }
  return out;
}

std::set<std::string> RpcNames(std::string_view proto) {
  static const std::regex kRpc(R"(\brpc\s+([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  const std::string code = ScanSource(proto).code;
  std::set<std::string> names;
  for (std::sregex_iterator it(code.begin(), code.end(), kRpc), end; it != end; ++it) {
    names.insert((*it)[1]);
  }
  return names;
}

std::set<std::string> EnvironmentVariableNames(const SourceText& source) {
  std::set<std::string> names;
  for (const std::string& literal : source.literals) {
    for (size_t i = 0; i < literal.size();) {
      if (!IsIdentifierChar(literal[i])) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < literal.size() && IsIdentifierChar(literal[end])) ++end;
      const std::string_view token = std::string_view(literal).substr(i, end - i);
      if (IsVariableName(token)) names.emplace(token);
      i = end;
    }
  }
  return names;
}

std::set<std::string> ExitCodes(const SourceText& source) {
  static const std::regex kExit(R"(\bkExit[A-Za-z0-9_]*\s*=\s*([0-9]+)\s*[;,}])");
  std::set<std::string> codes;
  for (std::sregex_iterator it(source.code.begin(), source.code.end(), kExit), end; it != end;
       ++it) {
    codes.insert((*it)[1]);
  }
  return codes;
}

MarkdownSection SectionTables(std::string_view markdown, std::string_view heading) {
  const std::vector<std::string> lines = Lines(markdown);
  const std::vector<bool> fenced = FencedLines(lines);
  MarkdownSection section;
  int level = 0;  // of the heading being read; 0 when outside it
  size_t begin = 0;
  for (size_t i = 0; i <= lines.size(); ++i) {
    int found_level = 0;
    std::string text;
    if (i < lines.size()) {
      if (fenced[i]) continue;
      std::tie(found_level, text) = Heading(lines[i]);
      if (found_level == 0) continue;
    }
    // A heading, or the end: it closes the section being read if not deeper.
    if (level != 0 && (i == lines.size() || found_level <= level)) {
      AddTables(lines, fenced, begin, i, section);
      level = 0;
    }
    if (i < lines.size() && text == heading) {
      section.found = true;
      ++section.headings;
      level = found_level;
      begin = i + 1;
    }
  }
  return section;
}

std::set<std::string> FirstCellNames(const MarkdownTable& table) {
  static const std::regex kCode("`([^`]+)`");
  std::set<std::string> names;
  for (const std::vector<std::string>& row : table.rows) {
    if (row.empty()) continue;
    for (std::sregex_iterator it(row[0].begin(), row[0].end(), kCode), end; it != end; ++it) {
      names.insert(Trim((*it)[1].str()));
    }
  }
  return names;
}

ProductNames CollectProductNames(std::string_view proto, const std::vector<SourceFile>& sources) {
  ProductNames names;
  names.rpcs = RpcNames(proto);
  for (const SourceFile& file : sources) {
    const SourceText text = ScanSource(file.text);
    for (const std::string& name : EnvironmentVariableNames(text)) {
      names.variables.emplace_back(name, file.path);
    }
    for (const std::string& code : ExitCodes(text)) names.exit_codes.emplace_back(code, file.path);
  }
  return names;
}

std::vector<std::string> CheckContract(std::string_view contract, const ProductNames& names) {
  std::vector<std::string> problems;

  std::map<std::string, std::string> rpcs;
  for (const std::string& rpc : names.rpcs) rpcs.emplace(rpc, "an rpc of the proto");
  CompareNames(kRpcHeading, "RPC", rpcs, DocumentedNames(contract, kRpcHeading, problems),
               "the proto has no such rpc", problems);

  std::map<std::string, std::string> variables;
  for (const auto& [name, file] : names.variables) variables.emplace(name, "named in " + file);
  std::set<std::string> documented_variables;
  for (const std::string& name : DocumentedNames(contract, kEnvironmentHeading, problems)) {
    if (IsVariableName(name)) documented_variables.insert(name);
  }
  CompareNames(kEnvironmentHeading, "variable", variables, documented_variables,
               "no source under agent/, cli/ or common/ names it", problems);

  std::map<std::string, std::string> codes;
  for (const auto& [code, file] : names.exit_codes) codes.emplace(code, "defined in " + file);
  CompareNames(kExitCodeHeading, "exit code", codes,
               DocumentedNames(contract, kExitCodeHeading, problems),
               "no kExit... constant has that value", problems);
  return problems;
}

}  // namespace memprof::docs
