#ifndef MEMPROF_CLI_IO_TEXT_TABLE_H_
#define MEMPROF_CLI_IO_TEXT_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace memprof::cli {

// A plain-text table for people: columns separated by two spaces, each as
// wide as its widest cell; the last column is not padded.
class TextTable {
 public:
  enum class Align { kLeft, kRight };

  explicit TextTable(std::vector<std::string> header = {});

  // Alignment of column `column` (default left).
  void SetAlign(size_t column, Align align);
  // Control characters in a cell are spelled out ("\n", "\t", "\x1b",
  // "\u009b"): a process's command line (a `python3 -c` script) is text
  // anyone on the host chose, and must neither break the table's lines nor
  // reach the terminal as escape sequences.
  void AddRow(std::vector<std::string> row);
  void Print(std::ostream& out) const;

 private:
  std::vector<size_t> Widths() const;
  void PrintRow(std::ostream& out, const std::vector<std::string>& row,
                const std::vector<size_t>& widths) const;

  std::vector<std::vector<std::string>> rows_;
  std::vector<Align> align_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_TEXT_TABLE_H_
