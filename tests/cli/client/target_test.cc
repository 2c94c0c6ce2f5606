#include "cli/client/target.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memprof::cli {
namespace {

TEST(ProcessTitleTest, JoinsTheArgumentsWithOneSpace) {
  EXPECT_EQ(ProcessTitle({"/usr/sbin/named", "-u", "bind"}), "/usr/sbin/named -u bind");
  EXPECT_EQ(ProcessTitle({}), "");
}

// A program that rewrites its title (setproctitle) pads the old argument
// space with spaces or NULs, which /proc/<pid>/cmdline shows as trailing
// spaces and empty arguments.
TEST(ProcessTitleTest, DropsTheTitlePadding) {
  EXPECT_EQ(ProcessTitle({"postgres: checkpointer                                "}),
            "postgres: checkpointer");
  EXPECT_EQ(ProcessTitle({"nginx: worker process", "", "", ""}), "nginx: worker process");
  EXPECT_EQ(ProcessTitle({"  redis-server *:6379  ", "   "}), "redis-server *:6379");
  EXPECT_EQ(ProcessTitle({"", " "}), "");
}

}  // namespace
}  // namespace memprof::cli
