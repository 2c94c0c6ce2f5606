#include "agent/core/user_change.h"

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

constexpr uid_t kUnchanged = static_cast<uid_t>(-1);
constexpr uid_t kBind = 105;
constexpr uid_t kOther = 106;
constexpr UserIds kRoot{0, 0, 0};

TEST(UserChangeTest, SetuidAsRootSetsEveryId) {
  EXPECT_EQ(AfterSetuid(kRoot, kBind, true), (UserIds{kBind, kBind, kBind}));
}

TEST(UserChangeTest, SetuidWithoutPrivilegeSetsOnlyTheEffectiveId) {
  const UserIds now{kBind, kOther, kBind};
  EXPECT_EQ(AfterSetuid(now, kBind, false), (UserIds{kBind, kBind, kBind}));
  EXPECT_EQ(AfterSetuid(UserIds{kBind, kBind, kOther}, kOther, false),
            (UserIds{kBind, kOther, kOther}));
}

TEST(UserChangeTest, SetreuidSetsTheSavedIdWhenTheRealIdChanges) {
  EXPECT_EQ(AfterSetreuid(kRoot, kBind, kBind), (UserIds{kBind, kBind, kBind}));
  EXPECT_EQ(AfterSetreuid(kRoot, kBind, kUnchanged), (UserIds{kBind, 0, 0}));
}

TEST(UserChangeTest, SetreuidOfTheEffectiveIdAloneKeepsTheSavedIdWhenItIsTheRealOne) {
  // seteuid-like: the effective id becomes the real one, saved unchanged.
  EXPECT_EQ(AfterSetreuid(UserIds{kBind, 0, 0}, kUnchanged, kBind), (UserIds{kBind, kBind, 0}));
  // Another effective id than the real one: saved follows it.
  EXPECT_EQ(AfterSetreuid(UserIds{0, 0, 0}, kUnchanged, kBind), (UserIds{0, kBind, kBind}));
}

TEST(UserChangeTest, SetresuidChangesWhatItIsGiven) {
  EXPECT_EQ(AfterSetresuid(kRoot, kUnchanged, kBind, kUnchanged), (UserIds{0, kBind, 0}));
  EXPECT_EQ(AfterSetresuid(kRoot, kBind, kBind, kBind), (UserIds{kBind, kBind, kBind}));
}

TEST(UserChangeTest, DroppingRootForGoodMakesTheNewUserTheHeir) {
  EXPECT_EQ(SocketHeirOf(kRoot, UserIds{kBind, kBind, kBind}, 0), kBind);
}

TEST(UserChangeTest, ATemporarySwitchHasNoHeir) {
  // varnishd's manager: setresuid(-1, uid, -1), root stays the saved id.
  EXPECT_EQ(SocketHeirOf(kRoot, UserIds{0, kBind, 0}, 0), std::nullopt);
  EXPECT_EQ(SocketHeirOf(kRoot, UserIds{kBind, kBind, 0}, 0), std::nullopt);
}

TEST(UserChangeTest, NoHeirWithoutThePrivilegeToChown) {
  EXPECT_EQ(SocketHeirOf(UserIds{0, kBind, 0}, UserIds{kBind, kBind, kBind}, 0), std::nullopt);
}

TEST(UserChangeTest, NoHeirWhileTheOwnerKeepsAnId) {
  // Published as kBind by a process that is root again for a moment.
  EXPECT_EQ(SocketHeirOf(UserIds{kBind, 0, kBind}, UserIds{kBind, kOther, kBind}, kBind),
            std::nullopt);
  EXPECT_EQ(SocketHeirOf(UserIds{kBind, 0, kBind}, UserIds{kOther, kOther, kOther}, kBind),
            kOther);
}

}  // namespace
}  // namespace memprof::agent
