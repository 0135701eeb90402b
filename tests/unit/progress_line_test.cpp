// Progress that tells the truth: durations are never negative or overflowed.
#include "tuner/report/progress_line.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tgemm {
namespace {

TEST(ProgressLine, durations_are_sane_or_unknown) {
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(-3), "0s");
  EXPECT_EQ(format_duration(36000), "600m00s");
  EXPECT_EQ(format_duration(1e300), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
}

}  // namespace
}  // namespace tgemm
