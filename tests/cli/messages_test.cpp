// Bad arguments and inputs to the tools, as a hostile but realistic user gives them: each
// message names the argument or file and what is allowed, and nothing prints a 300-digit
// limit, a wrapped integer or a bare exception name.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::CliResult;
using testing::run_tool;
using testing::TempDir;

const std::string kQuick = TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Signs of a limit or a value that the user never wrote: DBL_MAX's digits, a wrapped int64,
// an exception class name.
void expect_no_garbage(const CliResult& r) {
  EXPECT_FALSE(has(r.output, "1.79769")) << r.output;
  EXPECT_FALSE(has(r.output, "179769313")) << r.output;
  EXPECT_FALSE(has(r.output, "9223372036854775808")) << r.output;
  EXPECT_FALSE(has(r.output, "bad_alloc")) << r.output;
  EXPECT_LT(r.output.size(), 400u) << r.output;
}

class Messages : public ::testing::Test {
 protected:
  TempDir dir_{"messages"};
  std::string db_ = dir_.file("t.db");
  CliResult tune(const std::string& args) {
    return run_tool("tgemm-tune", "--compile-only --arch sm_75 --db " + db_ + " " + args);
  }
};

TEST_F(Messages, tune_device_minus_one_names_the_allowed_values) {
  const CliResult r = tune("--shapes " + kQuick + " --device -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--device")) << r.output;
  EXPECT_TRUE(has(r.output, "'-1'")) << r.output;
  EXPECT_TRUE(has(r.output, "CUDA device ordinal")) << r.output;
  expect_no_garbage(r);
}

TEST_F(Messages, tune_timeout_must_be_a_finite_positive_number_of_seconds) {
  for (const char* bad : {"0", "-1", "nan", "inf", "1e308", "1e-9", "ten"}) {
    const CliResult r = tune("--shapes " + kQuick + " --timeout " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(has(r.output, "--timeout")) << r.output;
    EXPECT_TRUE(has(r.output, std::string("'") + bad + "'")) << r.output;
    EXPECT_TRUE(has(r.output, "3600")) << r.output;  // says what is allowed
    expect_no_garbage(r);
  }
  // A good value gets past the options to the next check.
  const CliResult good = tune("--timeout 0.5 --shapes " + dir_.file(""));
  EXPECT_TRUE(has(good.output, "is a directory")) << good.output;
}

TEST_F(Messages, tune_unknown_option_is_reported_before_missing_shapes) {
  const CliResult r = run_tool("tgemm-tune", "--frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--frobnicate")) << r.output;
  const CliResult with_bad_value = run_tool("tgemm-tune", "--frobnicate --jobs 0");
  EXPECT_TRUE(has(with_bad_value.output, "--frobnicate")) << with_bad_value.output;
}

TEST_F(Messages, tune_jobs_and_seed_name_their_range) {
  CliResult r = tune("--shapes " + kQuick + " --jobs 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--jobs")) << r.output;
  EXPECT_TRUE(has(r.output, "1024")) << r.output;
  r = tune("--shapes " + kQuick + " --seed -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--seed")) << r.output;
  expect_no_garbage(r);
}

TEST_F(Messages, shapes_that_is_a_directory_is_named_as_one) {
  const CliResult r = tune("--shapes " + dir_.file(""));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "is a directory")) << r.output;
  EXPECT_FALSE(has(r.output, "empty")) << r.output;
}

TEST_F(Messages, shapes_from_dev_zero_is_not_a_regular_file) {
  const CliResult r = tune("--shapes /dev/zero");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "/dev/zero")) << r.output;
  EXPECT_TRUE(has(r.output, "not a regular file")) << r.output;
  expect_no_garbage(r);
}

TEST_F(Messages, deeply_nested_shapes_name_the_depth_limit) {
  const std::string deep =
      dir_.write("deep.yaml", "shapes: " + std::string(10000, '[') + std::string(10000, ']'));
  const CliResult r = tune("--shapes " + deep);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "deep.yaml")) << r.output;
  EXPECT_TRUE(has(r.output, "nested deeper than")) << r.output;
  EXPECT_FALSE(has(r.output, "bad file")) << r.output;
}

TEST_F(Messages, huge_shape_file_names_the_size_limit) {
  const std::string big =
      dir_.write("big.yaml", "shapes:\n  - [1, 1, 1]\n#" + std::string(17 << 20, 'x') + "\n");
  const CliResult r = tune("--shapes " + big);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "big.yaml")) << r.output;
  EXPECT_TRUE(has(r.output, "16 MiB")) << r.output;
}

TEST_F(Messages, space_that_is_a_directory_or_a_device_is_named) {
  CliResult r = tune("--shapes " + kQuick + " --space " + dir_.file(""));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "is a directory")) << r.output;
  r = tune("--shapes " + kQuick + " --space /dev/zero");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "not a regular file")) << r.output;
  expect_no_garbage(r);
}

TEST_F(Messages, bench_checks_its_options_like_tune) {
  CliResult r = run_tool("tgemm-bench", "--shapes " + kQuick + " --device -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--device")) << r.output;
  EXPECT_TRUE(has(r.output, "CUDA device ordinal")) << r.output;
  expect_no_garbage(r);
  for (const char* bad : {"0", "nan", "1e308"}) {
    r = run_tool("tgemm-bench", "--shapes " + kQuick + " --max-ms " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(has(r.output, "--max-ms")) << r.output;
    expect_no_garbage(r);
  }
  r = run_tool("tgemm-bench", "--frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--frobnicate")) << r.output;
  r = run_tool("tgemm-bench", "--shapes " + dir_.file(""));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.output, "is a directory")) << r.output;
}

TEST_F(Messages, db_reports_an_unknown_option_before_the_missing_subcommand) {
  CliResult r = run_tool("tgemm-db", "--frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--frobnicate")) << r.output;
  r = run_tool("tgemm-db", "best --frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--frobnicate")) << r.output;
}

TEST_F(Messages, dispatch_bench_reports_an_unknown_option) {
  const CliResult r = run_tool("tgemm-dispatch-bench", "--frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "--frobnicate")) << r.output;
}

TEST_F(Messages, worker_device_minus_one_names_the_allowed_values) {
  const CliResult r = run_tool("tgemm-worker", "--device -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(has(r.output, "CUDA device ordinal")) << r.output;
  expect_no_garbage(r);
}

}  // namespace
}  // namespace tgemm
