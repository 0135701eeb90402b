// tgemm-tune as a user runs it: compile-only tuning fills the database and resumes, and
// every bad input gets a clear message and a non-zero exit without losing rows.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>

#include "src/core/device_info.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/template_registry.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::read_bytes;
using testing::run_tool;
using testing::TempDir;

const std::string kQuick = TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";

class TuneCli : public ::testing::Test {
 protected:
  TempDir dir_{"tune_cli"};
  std::string db_ = dir_.file("t.db");
  std::string compile_only(const std::string& strategy = "random", const std::string& extra = "") {
    return "--compile-only --arch sm_75 --shapes " + kQuick + " --db " + db_ + " --strategy " +
           strategy + " --budget 6 --jobs 2 " + extra;
  }
};

// The number after "configs: " in the summary line.
int64_t configs_tried(const std::string& output) {
  const auto at = output.find("configs: ");
  return at == std::string::npos ? -1 : std::stoll(output.substr(at + 9));
}

TEST_F(TuneCli, compile_only_fills_database_then_rerun_compiles_nothing) {
  auto first = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // At most each f32 family's budget of 6 plus the shipped default kernels that are legal
  // on sm_75.
  const int64_t tried = configs_tried(first.output);
  const int64_t families = int64_t(all_templates().size());
  EXPECT_GE(tried, 7) << first.output;
  EXPECT_LE(tried, 6 * (families - 1) + 4 + int64_t(shipped_default_kernels().size()))
      << first.output;
  EXPECT_EQ(query_int(db_, "select count(*) from binaries where arch = 'sm_75'"), tried);
  EXPECT_GT(
      query_int(db_, "select count(*) from binaries where status = 'ok' and length(cubin) > 0"), 0);
  EXPECT_EQ(query_int(db_, "select count(*) from problems"), 3);
  EXPECT_EQ(query_int(db_, "select count(*) from runs"), 1);

  auto second = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find(fmt::format("0 compiled, {} from cache", tried)), std::string::npos)
      << second.output;
  EXPECT_EQ(query_int(db_, "select count(*) from binaries"), tried);
  EXPECT_EQ(query_int(db_, "select count(*) from runs"), 2);
}

// The summary gives the compile pool's throughput beside its counts; a rerun compiles nothing.
TEST_F(TuneCli, summary_reports_configs_per_second_of_compiling) {
  auto first = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto at = first.output.find(" configs/s with 2 job(s))");
  ASSERT_NE(at, std::string::npos) << first.output;
  const double rate = std::stod(first.output.substr(first.output.rfind(", ", at) + 2));
  EXPECT_GT(rate, 0) << first.output;

  auto second = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("(0.0 s, 0.0 configs/s with 2 job(s))"), std::string::npos)
      << second.output;
}

// Each fresh compile's wall time, its CPU time and its time waiting for a core, averaged,
// follow the throughput (the two within the wall); a rerun that compiles nothing has none.
TEST_F(TuneCli, summary_reports_wall_and_cpu_seconds_per_compile) {
  auto first = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto at = first.output.find("job(s)); per compile ");
  ASSERT_NE(at, std::string::npos) << first.output;
  double wall = 0, cpu = 0, wait = 0;
  ASSERT_EQ(std::sscanf(first.output.c_str() + at,
                        "job(s)); per compile %lf s wall: %lf s CPU, %lf s waiting for a core",
                        &wall, &cpu, &wait),
            3)
      << first.output;
  EXPECT_GT(cpu, 0) << first.output;
  EXPECT_GE(wait, 0) << first.output;
  EXPECT_LE(cpu + wait, wall + 0.02) << first.output;

  auto second = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("per compile"), std::string::npos) << second.output;
}

// Not a terminal: progress comes as whole plain lines (no carriage returns); --quiet leaves
// only the results on stdout, and cannot be combined with a log level.
TEST_F(TuneCli, progress_is_plain_lines_off_a_terminal_and_quiet_silences_it) {
  auto plain = run_tool("tgemm-tune", compile_only());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("compile sgemm_simt f32 NN for sm_75: "), std::string::npos)
      << plain.output;
  EXPECT_EQ(plain.output.find('\r'), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find(" info "), std::string::npos) << plain.output;

  auto quiet = run_tool("tgemm-tune", compile_only("random", "--quiet"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("compile sgemm_simt"), std::string::npos) << quiet.output;
  EXPECT_EQ(quiet.output.find(" info "), std::string::npos) << quiet.output;
  EXPECT_NE(quiet.output.find("configs: "), std::string::npos) << quiet.output;

  auto both = run_tool("tgemm-tune", compile_only("random", "--quiet --log-level debug"));
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
}

TEST_F(TuneCli, missing_shapes_option_is_a_usage_error) {
  auto r = run_tool("tgemm-tune", "--compile-only --db " + db_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--shapes"), std::string::npos) << r.output;
}

TEST_F(TuneCli, shapes_file_that_does_not_exist_is_named) {
  auto r =
      run_tool("tgemm-tune", "--compile-only --shapes " + dir_.file("nope.yaml") + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("nope.yaml"), std::string::npos) << r.output;
}

TEST_F(TuneCli, malformed_yaml_is_named_with_its_line) {
  auto bad = dir_.write("bad.yaml", "shapes:\n  - [1, 2, 3]\n  - [4, 5\n");
  auto r = run_tool("tgemm-tune", "--compile-only --shapes " + bad + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("bad.yaml"), std::string::npos) << r.output;
}

TEST_F(TuneCli, zero_dimension_is_rejected) {
  auto bad = dir_.write("zero.yaml", "shapes:\n  - [0, 2, 3]\n");
  auto r = run_tool("tgemm-tune", "--compile-only --shapes " + bad + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("zero.yaml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m"), std::string::npos);
}

TEST_F(TuneCli, unknown_arch_strategy_and_bad_jobs_are_rejected) {
  auto arch =
      run_tool("tgemm-tune", "--compile-only --arch sm_61 --shapes " + kQuick + " --db " + db_);
  EXPECT_EQ(arch.exit_code, 1);
  EXPECT_NE(arch.output.find("unknown arch 'sm_61'"), std::string::npos) << arch.output;
  auto strategy = run_tool("tgemm-tune", compile_only("annealing"));
  EXPECT_EQ(strategy.exit_code, 1);
  EXPECT_NE(strategy.output.find("annealing"), std::string::npos) << strategy.output;
  auto jobs = run_tool("tgemm-tune", compile_only("random", "--jobs 0"));
  EXPECT_NE(jobs.exit_code, 0);
  EXPECT_NE(jobs.output.find("--jobs"), std::string::npos) << jobs.output;
}

TEST_F(TuneCli, rejects_negative_and_absurd_budgets) {
  // A missing shapes file: before the budget was checked these failed only on the file.
  const std::string rest = " --compile-only --shapes " + dir_.file("nope.yaml") + " --db " + db_;
  for (const std::string budget :
       {"-5", "99999999999999999999", "1000001", "1e3", "0x10", "", "12abc"}) {
    auto r = run_tool("tgemm-tune", "--budget '" + budget + "'" + rest);
    EXPECT_NE(r.exit_code, 0) << budget;
    EXPECT_NE(r.output.find("--budget"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("a whole number from 0 (the whole space) to 1000000"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("nope.yaml"), std::string::npos) << r.output;
  }
  // The limit itself and 0 pass the check (and then fail on the missing file).
  for (const std::string budget : {"0", "1000000", "7"}) {
    auto r = run_tool("tgemm-tune", "--budget " + budget + rest);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("nope.yaml"), std::string::npos) << r.output;
  }
}

TEST_F(TuneCli, space_with_no_legal_config_is_rejected) {
  auto space = dir_.write("empty_space.yaml",
                          "template: sgemm_simt\nparameters:\n  BM: [64]\n  BN: [64]\n  BK: [8]\n"
                          "  TM: [4]\n  TN: [4]\n  WARP_N: [8]\n  VEC: [4]\n  PAD_A: [0]\n"
                          "  PAD_B: [0]\n  STAGES: [2]\n  SPLIT_K: [1]\n  SWIZZLE: [1]\n"
                          "constraints:\n  - {expr: \"BM > 64\", reason: \"BM must exceed 64\"}\n");
  auto r = run_tool("tgemm-tune", compile_only("random", "--space " + space));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no legal config"), std::string::npos) << r.output;
}

TEST_F(TuneCli, tuning_without_gpu_asks_for_compile_only) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  auto r = run_tool("tgemm-tune", "--shapes " + kQuick + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--compile-only"), std::string::npos);
}

TEST_F(TuneCli, unwritable_database_path_is_named) {
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kQuick + " --db " +
                                      dir_.file("no/such/dir/t.db"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no/such/dir/t.db"), std::string::npos) << r.output;
}

TEST_F(TuneCli, corrupt_database_is_refused_and_left_untouched) {
  auto path = dir_.write("corrupt.db", std::string(4096, 'x'));
  auto before = read_bytes(path);
  auto r =
      run_tool("tgemm-tune", "--compile-only --arch sm_75 --budget 2 --strategy random --shapes " +
                                 kQuick + " --db " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("corrupt.db"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(path), before);
}

TEST_F(TuneCli, failed_run_keeps_existing_rows) {
  ASSERT_EQ(run_tool("tgemm-tune", compile_only()).exit_code, 0);
  const int64_t binaries = query_int(db_, "select count(*) from binaries");
  auto bad = dir_.write("neg.yaml", "shapes:\n  - [16, -4, 16]\n");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + bad + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(query_int(db_, "select count(*) from binaries"), binaries);
  EXPECT_EQ(query_int(db_, "select count(*) from problems"), 3);
}

// The issue's own CI command, with every default (strategy, budget, jobs) as a user gets them.
TEST(TuneCliDefaults, compile_only_quick_set_for_sm_75_fills_the_database) {
  TempDir dir("tune_defaults");
  const std::string db = dir.file("tgemm.db");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kQuick + " --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t binaries = query_int(db, "select count(*) from binaries where arch = 'sm_75'");
  EXPECT_GE(binaries, 200);  // the default budget of 200 plus the shipped defaults
  EXPECT_GT(query_int(db, "select count(*) from binaries where status = 'ok'"), binaries / 2);
  EXPECT_EQ(query_int(db, "select count(*) from binaries where status = 'compile_failed'"), 0);
  // Pruned configs carry their reason.
  EXPECT_EQ(query_int(db,
                      "select count(*) from binaries where status = 'resource_exceeded' and "
                      "length(reason) = 0"),
            0);
}

TEST(TuneCliDefaults, database_of_a_newer_schema_is_refused_untouched) {
  TempDir dir("tune_newer");
  const std::string db = dir.file("newer.db");
  {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    sqlite3_exec(handle, "create table x(y); pragma user_version = 99;", nullptr, nullptr, nullptr);
    sqlite3_close(handle);
  }
  const std::string before = read_bytes(db);
  auto r = run_tool("tgemm-tune",
                    "--compile-only --arch sm_75 --budget 1 --shapes " + kQuick + " --db " + db);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("newer.db"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("99"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(db), before);
}

TEST(TuneCliDefaults, unknown_key_and_dtype_in_shapes_file_are_rejected) {
  TempDir dir("tune_keys");
  auto key = dir.write("key.yaml", "shapes:\n  - {m: 8, n: 8, k: 8, mm: 3}\n");
  auto r = run_tool("tgemm-tune", "--compile-only --shapes " + key + " --db " + dir.file("t.db"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("mm"), std::string::npos) << r.output;
  auto dtype = dir.write("dtype.yaml", "defaults: {dtype: f64}\nshapes:\n  - [8, 8, 8]\n");
  r = run_tool("tgemm-tune", "--compile-only --shapes " + dtype + " --db " + dir.file("t.db"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("f64"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tgemm
