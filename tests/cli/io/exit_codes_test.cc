#include "cli/io/exit_codes.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

TEST(ExitCodesTest, EachErrorCodeMapsToTheDocumentedExitCode) {
  EXPECT_EQ(ExitCodeFor(ErrorCode::kInternal), 1);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kDataLoss), 1);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kResourceExhausted), 1);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kCancelled), 1);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kNotFound), 3);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kUnavailable), 3);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kPermissionDenied), 4);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kFailedPrecondition), 5);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kPartialFailure), 6);
}

TEST(ExitCodesTest, HelpTableListsEveryCode) {
  const std::string help = ExitCodeHelp();
  for (const char* line : {"  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  6 ", "  130 "}) {
    EXPECT_NE(help.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace memprof::cli
