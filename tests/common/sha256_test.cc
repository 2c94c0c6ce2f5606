#include "common/sha256.h"

#include <gtest/gtest.h>

namespace memprof {
namespace {

TEST(Sha256Test, KnownVectors) {
  Sha256 empty;
  EXPECT_EQ(empty.FinalHex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 abc;
  abc.Update("abc");
  EXPECT_EQ(abc.FinalHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  Sha256 parts;
  parts.Update("heap_v2/");
  parts.Update("524288\n");
  Sha256 whole;
  whole.Update("heap_v2/524288\n");
  EXPECT_EQ(parts.FinalHex(), whole.FinalHex());
}

}  // namespace
}  // namespace memprof
