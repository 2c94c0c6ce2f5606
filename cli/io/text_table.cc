#include "cli/io/text_table.h"

#include <algorithm>
#include <utility>

namespace memprof::cli {

TextTable::TextTable(std::vector<std::string> header) {
  if (!header.empty()) rows_.push_back(std::move(header));
}

void TextTable::SetAlign(size_t column, Align align) {
  if (align_.size() <= column) align_.resize(column + 1, Align::kLeft);
  align_[column] = align;
}

void TextTable::AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::vector<size_t> TextTable::Widths() const {
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  return widths;
}

void TextTable::PrintRow(std::ostream& out, const std::vector<std::string>& row,
                         const std::vector<size_t>& widths) const {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += "  ";
    const size_t pad = widths[i] - row[i].size();
    const bool right = i < align_.size() && align_[i] == Align::kRight;
    if (right) line.append(pad, ' ');
    line += row[i];
    if (!right && i + 1 < row.size()) line.append(pad, ' ');
  }
  out << line << '\n';
}

void TextTable::Print(std::ostream& out) const {
  const std::vector<size_t> widths = Widths();
  for (const auto& row : rows_) PrintRow(out, row, widths);
}

}  // namespace memprof::cli
