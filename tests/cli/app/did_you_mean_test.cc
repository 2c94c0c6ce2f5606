#include "cli/app/did_you_mean.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

using Words = std::vector<std::string>;

TEST(EditDistanceTest, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("stats", "stats"), 0u);
  EXPECT_EQ(EditDistance("stat", "stats"), 1u);     // insertion
  EXPECT_EQ(EditDistance("statss", "stats"), 1u);   // deletion
  EXPECT_EQ(EditDistance("dumb", "dump"), 1u);      // substitution
  EXPECT_EQ(EditDistance("--pdi", "--pid"), 1u);    // swap of neighbours
  EXPECT_EQ(EditDistance("--jsno", "--json"), 1u);  // swap at the end
  EXPECT_EQ(EditDistance("stat", "status"), 2u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);  // optimal string alignment, not full Damerau
}

const Words kCommands = {"list",    "status", "activate", "deactivate", "dump",
                         "profile", "stats",  "doctor",   "purge",      "exporter",
                         "report",  "run",    "help",     "version"};

TEST(NearestWordsTest, FindsTheClosestCommand) {
  EXPECT_EQ(NearestWords("stat", kCommands), Words{"stats"});
  EXPECT_EQ(NearestWords("stauts", kCommands), (Words{"status", "stats"}));  // a swap, a deletion
  EXPECT_EQ(NearestWords("lsit", kCommands), Words{"list"});
  EXPECT_EQ(NearestWords("reprot", kCommands), Words{"report"});
  EXPECT_EQ(NearestWords("deactivte", kCommands), Words{"deactivate"});
  EXPECT_EQ(NearestWords("versoin", kCommands), Words{"version"});
}

TEST(NearestWordsTest, SuggestsNothingFarAway) {
  EXPECT_EQ(NearestWords("frobnicate", kCommands), Words{});
  EXPECT_EQ(NearestWords("ls", kCommands), Words{});  // 2 edits from list: too many for 2 letters
  EXPECT_EQ(NearestWords("x", kCommands), Words{});
  EXPECT_EQ(NearestWords("", kCommands), Words{});
}

TEST(NearestWordsTest, IgnoresLeadingDashes) {
  const Words options = {"-h", "--help", "--pid", "--all", "--json", "-o", "--out", "--out-dir"};
  EXPECT_EQ(NearestWords("--pdi", options), Words{"--pid"});
  EXPECT_EQ(NearestWords("-json", options), Words{"--json"});
  EXPECT_EQ(NearestWords("--out-dri", options), Words{"--out-dir"});
  EXPECT_EQ(NearestWords("-j", options), Words{});  // one letter: anything is one edit away
}

TEST(NearestWordsTest, ReturnsEveryTieInOrderAndAtMostThree) {
  EXPECT_EQ(NearestWords("--outs", {"--out", "--outx", "--outs-dir"}), (Words{"--out", "--outx"}));
  EXPECT_EQ(NearestWords("abcd", {"abce", "abcf", "abcg", "abch"}),
            (Words{"abce", "abcf", "abcg"}));
  EXPECT_EQ(NearestWords("--pid", {"--pid", "--pid"}), Words{"--pid"});
}

TEST(DidYouMeanTest, PhrasesTheSuggestions) {
  EXPECT_EQ(DidYouMean("stat", kCommands), "; did you mean 'stats'?");
  EXPECT_EQ(DidYouMean("--outs", {"--out", "--outx"}), "; did you mean '--out' or '--outx'?");
  EXPECT_EQ(DidYouMean("abcd", {"abce", "abcf", "abcg"}),
            "; did you mean 'abce', 'abcf' or 'abcg'?");
  EXPECT_EQ(DidYouMean("frobnicate", kCommands), "");
}

}  // namespace
}  // namespace memprof::cli
