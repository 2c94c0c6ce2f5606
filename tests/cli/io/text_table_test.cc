#include "cli/io/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace memprof::cli {
namespace {

TEST(TextTableTest, PadsColumnsToTheWidestCellAndRightAligns) {
  TextTable table({"PID", "NAME", "X"});
  table.SetAlign(0, TextTable::Align::kRight);
  table.AddRow({"7", "longer-name", "a"});
  table.AddRow({"12345", "n", "b"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "  PID  NAME         X\n"
            "    7  longer-name  a\n"
            "12345  n            b\n");
}

// A command line is anyone's text: a `python3 -c` script's newlines, an
// escape sequence, a C1 control. Spelled out, one line per row, widths
// measured on what is printed.
TEST(TextTableTest, ControlCharactersAreSpelledOut) {
  TextTable table({"PID", "COMMAND"});
  table.AddRow({"7", "python3 -c import os\n\tos.fork()"});
  table.AddRow({"8", "evil \x1b[2J\r\x7f \xc2\x9b ok \xc3\xa9"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "PID  COMMAND\n"
            "7    python3 -c import os\\n\\tos.fork()\n"
            "8    evil \\x1b[2J\\r\\x7f \\u009b ok \xc3\xa9\n");
}

}  // namespace
}  // namespace memprof::cli
