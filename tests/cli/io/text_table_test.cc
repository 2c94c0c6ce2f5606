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

}  // namespace
}  // namespace memprof::cli
