#include "cli/io/byte_size.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

TEST(ByteSizeTest, AcceptsBytesAndBinaryUnits) {
  EXPECT_EQ(ParseByteSize("4096").value(), 4096u);
  EXPECT_EQ(ParseByteSize("4096B").value(), 4096u);
  EXPECT_EQ(ParseByteSize("64KiB").value(), 65536u);
  EXPECT_EQ(ParseByteSize("512KiB").value(), 524288u);
  EXPECT_EQ(ParseByteSize("1MiB").value(), 1048576u);
  EXPECT_EQ(ParseByteSize("1GiB").value(), uint64_t{1} << 30);
  EXPECT_EQ(ParseByteSize("3mib").value(), 3u << 20) << "binary units in any letter case";
  EXPECT_EQ(ParseByteSize("0").value(), 0u) << "bounds are the caller's business";
}

// Every rejection says what is wrong and lists the valid forms.
void ExpectRejected(const std::string& text, const std::string& why) {
  auto r = ParseByteSize(text);
  ASSERT_FALSE(r) << text << " was accepted as " << *r;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message.rfind("invalid size '" + text + "': " + why, 0), 0u)
      << r.error().message;
  EXPECT_NE(r.error().message.find("valid forms: a whole number of bytes, optionally with a "
                                   "binary unit: 4096, 64KiB, 512KiB, 1MiB (units B, KiB, MiB, "
                                   "GiB)"),
            std::string::npos)
      << r.error().message;
}

TEST(ByteSizeTest, RejectsWhatIsNotAWholeSize) {
  ExpectRejected("", "empty");
  ExpectRejected("abc", "expected a number");
  ExpectRejected("MiB", "expected a number");
  ExpectRejected("-5", "a size cannot be negative or signed");
  ExpectRejected("+5", "a size cannot be negative or signed");
  ExpectRejected("1.5MiB", "fractions are not accepted");
  ExpectRejected("1,5MiB", "fractions are not accepted");
  ExpectRejected("5 MiB", "unknown unit ' MiB'");
  ExpectRejected("1e6", "unknown unit 'e6'");
  ExpectRejected("99999999999999999999", "number too large");
  ExpectRejected("17179869184GiB", "number too large");
}

TEST(ByteSizeTest, RejectsUnitsThatCouldMean1000Or1024) {
  ExpectRejected("64KB", "unit 'KB' is ambiguous (1000 or 1024?); write KiB for the binary unit");
  ExpectRejected("64k", "unit 'k' is ambiguous (1000 or 1024?); write KiB");
  ExpectRejected("1M", "unit 'M' is ambiguous (1000 or 1024?); write MiB");
  ExpectRejected("1gb", "unit 'gb' is ambiguous (1000 or 1024?); write GiB");
}

TEST(ByteSizeTest, NearestPowerOfTwoRoundsToTheCloserOneAndTiesUp) {
  EXPECT_EQ(NearestPowerOfTwo(0), 1u);
  EXPECT_EQ(NearestPowerOfTwo(1), 1u);
  EXPECT_EQ(NearestPowerOfTwo(3), 4u);  // tie between 2 and 4
  EXPECT_EQ(NearestPowerOfTwo(5), 4u);
  EXPECT_EQ(NearestPowerOfTwo(1000), 1024u);
  EXPECT_EQ(NearestPowerOfTwo(1500), 1024u);
  EXPECT_EQ(NearestPowerOfTwo(1536), 2048u);  // tie
  EXPECT_EQ(NearestPowerOfTwo(100000), 131072u);
  EXPECT_EQ(NearestPowerOfTwo(uint64_t{1} << 40), uint64_t{1} << 40);
  EXPECT_EQ(NearestPowerOfTwo(UINT64_MAX), uint64_t{1} << 63);
}

TEST(ByteSizeTest, SampleIntervalIsRoundedAndReportsIt) {
  auto exact = ParseSampleInterval("1MiB");
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->bytes, 1048576u);
  EXPECT_FALSE(exact->rounded());
  auto rounded = ParseSampleInterval("1000");
  ASSERT_TRUE(rounded);
  EXPECT_EQ(rounded->requested_bytes, 1000u);
  EXPECT_EQ(rounded->bytes, 1024u);
  EXPECT_TRUE(rounded->rounded());
  EXPECT_EQ(ParseSampleInterval("1").value().bytes, 1u);
  EXPECT_EQ(ParseSampleInterval("1GiB").value().bytes, uint64_t{1} << 30);
}

TEST(ByteSizeTest, SampleIntervalOutsideOneByteToOneGibIsRejected) {
  for (const char* text : {"0", "0KiB", "2GiB", "1073741825"}) {
    auto r = ParseSampleInterval(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("a sample interval must be between 1 B and 1 GiB"),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("valid forms:"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace memprof::cli
