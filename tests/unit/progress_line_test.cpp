// Progress that tells the truth: counts never pass their totals, durations are never
// negative or overflowed, an ETA appears only when it can be extrapolated, and the line
// degrades to periodic plain lines (or none) when stderr is not a terminal.
#include "tuner/report/progress_line.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

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

TEST(ProgressLine, done_never_exceeds_total) {
  // The compile stage once reported 136/68: configs recounted from the cache.
  EXPECT_EQ(format_progress({"compile", 136, 68, 10}), "compile: 68/68, 10s elapsed");
}

TEST(ProgressLine, eta_only_once_it_can_be_extrapolated) {
  EXPECT_EQ(format_progress({"x", 0, 100, 30}), "x: 0/100, 30s elapsed");
  EXPECT_EQ(format_progress({"x", 1, 100, 0.01}), "x: 1/100, 0s elapsed");
  EXPECT_EQ(format_progress({"x", 25, 100, 10}), "x: 25/100, 10s elapsed, ETA 30s");
  EXPECT_EQ(format_progress({"x", 100, 100, 10}), "x: 100/100, 10s elapsed");
  // An ETA that would overflow says so instead of printing a wrapped number.
  EXPECT_EQ(format_progress({"x", 1, size_t(1) << 62, 100}).find("-"), std::string::npos);
}

TEST(ProgressLine, best_so_far_with_its_ratio_to_cublas) {
  EXPECT_EQ(format_progress({"4096^3 (f32 NN)", 3, 10, 0.5, 42.1, 0.83}),
            "4096^3 (f32 NN): 3/10, 1s elapsed, best 42.10 TFLOP/s (0.83x cuBLAS)");
  EXPECT_EQ(format_progress({"p", 3, 10, 0.5, 42.1, 0}), "p: 3/10, 1s elapsed, best 42.10 TFLOP/s");
}

// What a ProgressLine wrote into a temporary file.
std::string written(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += char(c);
  return out;
}

TEST(ProgressLine, plain_mode_writes_whole_lines_and_the_last_state) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(ProgressLine::Mode::plain, f, std::chrono::hours(1));
    for (size_t i = 1; i <= 5; ++i) line.update({"x", i, 5, 0});
  }
  // The first update, then (the interval not passed) only the final state at the end.
  EXPECT_EQ(written(f), "x: 1/5, 0s elapsed\nx: 5/5, 0s elapsed\n");
  std::fclose(f);
}

TEST(ProgressLine, in_place_mode_redraws_one_line_and_quiet_writes_nothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(ProgressLine::Mode::in_place, f);
    line.update({"x", 1, 2, 0});
    line.update({"x", 2, 2, 0});
  }
  EXPECT_EQ(written(f), "\r\033[Kx: 1/2, 0s elapsed\r\033[Kx: 2/2, 0s elapsed\n");
  std::fclose(f);
  std::FILE* g = std::tmpfile();
  ASSERT_NE(g, nullptr);
  {
    ProgressLine line(ProgressLine::Mode::quiet, g);
    line.update({"x", 1, 2, 0});
  }
  EXPECT_EQ(written(g), "");
  std::fclose(g);
}

}  // namespace
}  // namespace tgemm
