#include "cli/io/text_table.h"

#include <algorithm>
#include <utility>

namespace memprof::cli {
namespace {

// "\x1b" (kind 'x', 2 digits) or "\u009b" (kind 'u', 4 digits).
std::string Escaped(char kind, unsigned value, int digits) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string text = {'\\', kind};
  for (int digit = digits - 1; digit >= 0; --digit) text += kHex[(value >> (4 * digit)) & 0xf];
  return text;
}

// The cell with what a terminal would act on spelled out (see AddRow).
std::string Printable(const std::string& cell) {
  std::string out;
  for (size_t i = 0; i < cell.size(); ++i) {
    const auto byte = static_cast<unsigned char>(cell[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += Escaped('x', byte, 2);
    } else if (byte == 0xc2 && i + 1 < cell.size() &&
               static_cast<unsigned char>(cell[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(cell[i + 1]) <= 0x9f) {
      out += Escaped('u', static_cast<unsigned char>(cell[++i]), 4);  // a C1 control in UTF-8
    } else {
      out += cell[i];
    }
  }
  return out;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) {
  if (!header.empty()) AddRow(std::move(header));
}

void TextTable::SetAlign(size_t column, Align align) {
  if (align_.size() <= column) align_.resize(column + 1, Align::kLeft);
  align_[column] = align;
}

void TextTable::AddRow(std::vector<std::string> row) {
  for (std::string& cell : row) cell = Printable(cell);
  rows_.push_back(std::move(row));
}

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
