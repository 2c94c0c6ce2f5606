#include "cli/targets/stale_socket.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kSocketMade = system_clock::time_point(seconds(1795467662));

SocketEvidence LiveLooking() {
  SocketEvidence e;
  e.process_started = kSocketMade - seconds(30);
  e.socket_changed = kSocketMade;
  return e;
}

TEST(ClassifySocketTest, AMissingProcessIsGoneWhateverElseIsKnown) {
  SocketEvidence e = LiveLooking();
  e.process_gone = true;
  e.agent_answered = true;  // cannot happen together; gone still wins
  EXPECT_EQ(ClassifySocket(e), StaleReason::kProcessGone);
}

TEST(ClassifySocketTest, AnAnsweringAgentIsNeverStale) {
  SocketEvidence e = LiveLooking();
  e.agent_answered = true;
  e.process_started = kSocketMade + seconds(3600);  // a clock stepped forward
  EXPECT_EQ(ClassifySocket(e), StaleReason::kNone);
}

TEST(ClassifySocketTest, ARefusedConnectionMeansNobodyListens) {
  SocketEvidence e = LiveLooking();
  e.connection_refused = true;
  EXPECT_EQ(ClassifySocket(e), StaleReason::kNobodyListens);
}

TEST(ClassifySocketTest, AProcessClearlyYoungerThanTheSocketHoldsAReusedPid) {
  SocketEvidence e = LiveLooking();
  e.process_started = kSocketMade + kStartTimeSlack + seconds(1);
  EXPECT_EQ(ClassifySocket(e), StaleReason::kPidReused);
}

TEST(ClassifySocketTest, StartTimesWithinTheSlackAreNotReuse) {
  SocketEvidence e = LiveLooking();
  for (auto started : {kSocketMade - seconds(1), kSocketMade, kSocketMade + seconds(1),
                       kSocketMade + kStartTimeSlack}) {
    e.process_started = started;
    EXPECT_EQ(ClassifySocket(e), StaleReason::kNone);
  }
}

TEST(ClassifySocketTest, AnUnknownStartTimeProvesNothing) {
  SocketEvidence e = LiveLooking();
  e.process_started = std::nullopt;
  EXPECT_EQ(ClassifySocket(e), StaleReason::kNone);
}

TEST(ClassifySocketTest, EveryReasonIsDescribed) {
  EXPECT_EQ(DescribeStaleReason(StaleReason::kNone, 9), "");
  EXPECT_EQ(DescribeStaleReason(StaleReason::kProcessGone, 9), "process 9 no longer exists");
  EXPECT_NE(DescribeStaleReason(StaleReason::kPidReused, 9).find("pid 9 now belongs to"),
            std::string::npos);
  EXPECT_NE(DescribeStaleReason(StaleReason::kNobodyListens, 9).find("nobody listens"),
            std::string::npos);
}

TEST(WhyNotRemovableTest, OnlyOwnLocalSocketsOrAnyAsRoot) {
  SocketEntry entry;
  entry.socket_file.owner = 1000;
  EXPECT_EQ(WhyNotRemovable(entry, 1000), "");
  EXPECT_EQ(WhyNotRemovable(entry, 0), "");
  EXPECT_EQ(WhyNotRemovable(entry, 1001),
            "it belongs to uid 1000; that user or root can remove it");
  entry.in_container = true;
  EXPECT_EQ(WhyNotRemovable(entry, 0), "it is inside the container's own socket directory");
  EXPECT_EQ(WhyNotRemovable(entry, 1000), "it is inside the container's own socket directory");
}

class RemoveSocketTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string path_ = dir_.File("42.sock");

  static SocketFileInfo Identity(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return SocketFileInfo{st.st_uid, st.st_dev, st.st_ino, {}};
  }
};

TEST_F(RemoveSocketTest, RemovesTheSocketItWasShown) {
  testing::MakeSocketFile(path_);
  ASSERT_TRUE(RemoveSocketIfUnchanged(path_, Identity(path_)));
  EXPECT_FALSE(testing::FileExists(path_));
}

TEST_F(RemoveSocketTest, AlreadyGoneIsFine) {
  testing::MakeSocketFile(path_);
  const SocketFileInfo found = Identity(path_);
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  EXPECT_TRUE(RemoveSocketIfUnchanged(path_, found));
}

TEST_F(RemoveSocketTest, ASocketReCreatedAtThePathIsLeftAlone) {
  testing::MakeSocketFile(path_);
  const SocketFileInfo found = Identity(path_);
  // Keep the old inode alive under another name, so the new one cannot
  // reuse its number.
  ASSERT_EQ(::link(path_.c_str(), dir_.File("old").c_str()), 0);
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  testing::MakeSocketFile(path_);  // the agent re-created its socket
  auto removed = RemoveSocketIfUnchanged(path_, found);
  ASSERT_FALSE(removed);
  EXPECT_EQ(removed.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(removed.error().message, path_ + " was replaced since it was found; left alone");
  EXPECT_TRUE(testing::FileExists(path_));
}

TEST_F(RemoveSocketTest, ASymlinkAtThePathIsNeitherFollowedNorRemoved) {
  const std::string real = dir_.File("real.sock");
  testing::MakeSocketFile(real);
  ASSERT_EQ(::symlink(real.c_str(), path_.c_str()), 0);
  // Even when told the identity of the socket it points to.
  EXPECT_FALSE(RemoveSocketIfUnchanged(path_, Identity(real)));
  EXPECT_TRUE(testing::FileExists(path_));
  EXPECT_TRUE(testing::FileExists(real));
}

TEST_F(RemoveSocketTest, ASymlinkedDirectoryIsNotFollowed) {
  testing::MakeSocketFile(path_);
  const std::string link = dir_.File("linkdir");
  ASSERT_EQ(::symlink(dir_.path().c_str(), link.c_str()), 0);
  auto removed = RemoveSocketIfUnchanged(link + "/42.sock", Identity(path_));
  ASSERT_FALSE(removed);
  EXPECT_NE(removed.error().message.find("cannot remove " + link + "/42.sock"), std::string::npos)
      << removed.error().message;
  EXPECT_TRUE(testing::FileExists(path_));
}

}  // namespace
}  // namespace memprof::cli
