// A tuning database is input: a value in it that no tuner writes (a zero the host side divides
// by, a negative or infinite time, a best pointing at another problem's trial, a second row of
// one device) is skipped with a warning naming the row, never shown or served as a result.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The output without the warning lines (which name the value they skipped).
std::string without_warnings(const std::string& output) {
  std::string kept, line;
  std::istringstream lines(output);
  while (std::getline(lines, line))
    if (!contains(line, "[warning]")) kept += line + "\n";
  return kept;
}

void execute(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message << "\n" << sql;
}

// --- a parameter the host side divides by ---------------------------------------------------

// The H200 database of session 25 with the best kernel of 256^3 (sgemm_warp, VEC=1) given VEC=0:
// its modulo by the copy width took tgemm-db explain down with SIGFPE.
class ZeroParameter : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                                "/benchmarks/h200/fp32.db.gz' > '" + db_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    kernel_ = query_int(db_,
                        "SELECT t.kernel_id FROM best b JOIN trials t ON t.id = b.trial_id JOIN "
                        "problems p ON p.id = b.problem_id JOIN kernels k ON k.id = t.kernel_id "
                        "WHERE p.m = 256 AND p.n = 256 AND p.k = 256 AND p.layout = 'NN' AND "
                        "k.template = 'sgemm_warp' AND k.params LIKE '%,VEC=1,%'");
    ASSERT_GT(kernel_, 0);
    execute(db_, fmt::format("UPDATE kernels SET params = replace(params, ',VEC=1,', ',VEC=0,') "
                             "WHERE id = {}",
                             kernel_));
  }
  void expect_skipped_once(const testing::CliResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string warning = fmt::format(
        "kernels row {} (on sm_90): VEC=0 is out of range (1 to 2147483647); skipped", kernel_);
    const size_t at = r.output.find(warning);
    EXPECT_NE(at, std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(warning, at + 1), std::string::npos) << "warned twice\n" << r.output;
  }
  TempDir dir_{"zero_parameter"};
  std::string db_ = dir_.file("s25.db");
  int64_t kernel_ = 0;
};

TEST_F(ZeroParameter, explain_skips_the_row_instead_of_dying) {
  const auto r = run_tool("tgemm-db", "--db " + db_ + " explain --m 256 --n 256 --k 256");
  expect_skipped_once(r);
  EXPECT_FALSE(contains(r.output, "_vec0_")) << r.output;
}

TEST_F(ZeroParameter, replay_skips_the_row_instead_of_dying) {
  const auto r = run_tool("tgemm-db", "--db " + db_ + " replay --leave-one-out");
  expect_skipped_once(r);
  EXPECT_TRUE(contains(r.output, "geometric mean of best / chosen")) << r.output;
  EXPECT_FALSE(contains(r.output, "_vec0_")) << r.output;
}

TEST_F(ZeroParameter, list_and_best_never_show_it) {
  auto r = run_tool("tgemm-db", "--db " + db_ + " list");
  expect_skipped_once(r);
  EXPECT_FALSE(contains(r.output, "_vec0_")) << r.output;
  r = run_tool("tgemm-db", "--db " + db_ + " best --m 256 --n 256 --k 256");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_FALSE(contains(r.output, "_vec0_")) << r.output;
}

// --- values no tuner writes -------------------------------------------------------------------

// 64^3 and 128^3 on the "Test GPU", two ok trials each (10 and 20 us, then 30 and 40 us).
class WrongValues : public ::testing::Test {
 protected:
  void SetUp() override {
    TuningDb db(db_, TuningDb::Mode::read_write);
    DeviceInfo device;
    device.name = "Test GPU";
    device.arch = "sm_90";
    device.sm_count = 132;
    const int64_t run = db.begin_run("test", "tgemm test", "sm_90");
    const int64_t device_id = db.upsert_device(device);
    double us = 10;
    for (int64_t n : {64, 128}) {
      const int64_t problem =
          db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n));
      for (int64_t label : {1, 2}) {
        TrialResult t;
        t.config = testing::labelled_sgemm_config(label);
        t.status = TrialStatus::ok;
        t.time_min_us = t.time_median_us = t.time_max_us = us;
        us += 10;
        t.runs = 10;
        t.tflops = 2.0 * double(n * n * n) / (t.time_median_us * 1e6);
        t.max_rel_error = 1e-7;
        db.record_trial(run, problem, db.upsert_kernel(t.config, "hash"), device_id, std::nullopt,
                        t);
      }
      db.update_best(problem, device_id);
      db.record_cublas_time(run, problem, device_id, 15);
    }
    db.finish_run(run, "seeded");
  }
  testing::CliResult db_tool(const std::string& args) {
    return run_tool("tgemm-db", "--db " + db_ + " " + args);
  }
  // Every line of `list` with `part`.
  int list_lines_with(const std::string& part) {
    const auto r = db_tool("list");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    int count = 0;
    for (size_t at = r.output.find(part); at != std::string::npos; at = r.output.find(part, at + 1))
      ++count;
    return count;
  }
  TempDir dir_{"wrong_values"};
  std::string db_ = dir_.file("tgemm.db");
};

TEST_F(WrongValues, negative_times_are_never_a_best) {
  execute(db_, "UPDATE trials SET time_median_us = -1, time_min_us = -1, tflops = -3 WHERE id = 1");
  const auto r = db_tool("list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "-1.00")) << r.output;
  EXPECT_FALSE(contains(r.output, "-3.00")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "trials row 1: a median time of -1 us is not a positive finite "
                       "time; skipped"))
      << r.output;
  const auto best = db_tool("best --m 64 --n 64 --k 64");
  EXPECT_NE(best.exit_code, 0) << best.output;
  EXPECT_FALSE(contains(best.output, "-1.00")) << best.output;
  const auto show = db_tool("show --m 64 --n 64 --k 64");
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_FALSE(contains(show.output, "-1.00")) << show.output;
  EXPECT_TRUE(contains(show.output, "20.00")) << show.output;
}

TEST_F(WrongValues, infinite_figures_are_never_printed) {
  execute(db_,
          "UPDATE trials SET time_max_us = 9e999 WHERE id = 1; "
          "UPDATE trials SET tflops = -9e999 WHERE id = 3; "
          "UPDATE cublas_times SET median_us = 9e999");
  for (const char* args : {"list", "best --m 64 --n 64 --k 64", "show --m 128 --n 128 --k 128"}) {
    const std::string shown = without_warnings(db_tool(args).output);
    EXPECT_FALSE(contains(shown, "inf")) << args << "\n" << shown;
    EXPECT_FALSE(contains(shown, "nan")) << args << "\n" << shown;
  }
  EXPECT_TRUE(contains(db_tool("list").output, "cuBLAS")) << "the table stays";
}

TEST_F(WrongValues, a_best_pointing_at_another_problems_trial_is_skipped) {
  // 64^3's best row now names 128^3's fastest trial (30 us).
  execute(db_, "UPDATE best SET trial_id = 3 WHERE problem_id = 1");
  const auto r = db_tool("list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "best row of problems row 1 on devices row 1: its trial, trials "
                       "row 3, is another problem's or device's; skipped"))
      << r.output;
  for (size_t at = r.output.find("f32_NN_m64_n64_k64"); at != std::string::npos;
       at = r.output.find("f32_NN_m64_n64_k64", at + 1))
    EXPECT_FALSE(contains(r.output.substr(at, r.output.find('\n', at) - at), "30.00")) << r.output;
  const auto best = db_tool("best --m 64 --n 64 --k 64");
  EXPECT_FALSE(contains(best.output, "30.00")) << best.output;
}

TEST_F(WrongValues, a_repeated_device_row_lists_nothing_twice) {
  // A second row of the same GPU (another SM count slips past the UNIQUE key) with a copy of
  // every trial and best.
  execute(db_,
          "INSERT INTO devices (name, arch, sm_count, l2_bytes, clock_khz, memory_clock_khz, "
          "driver_version, runtime_version, smem_per_block_optin, smem_per_sm, regs_per_sm, "
          "max_threads_per_block) SELECT name, arch, sm_count + 1, l2_bytes, clock_khz, "
          "memory_clock_khz, driver_version, runtime_version, smem_per_block_optin, smem_per_sm, "
          "regs_per_sm, max_threads_per_block FROM devices WHERE id = 1; "
          "INSERT INTO trials (run_id, problem_id, kernel_id, device_id, status, error, "
          "time_min_us, time_median_us, time_max_us, runs, tflops, max_rel_error) SELECT run_id, "
          "problem_id, kernel_id, 2, status, error, time_min_us, time_median_us, time_max_us, "
          "runs, tflops, max_rel_error FROM trials; "
          "INSERT INTO best (problem_id, device_id, trial_id) SELECT b.problem_id, 2, t2.id FROM "
          "best b JOIN trials t ON t.id = b.trial_id JOIN trials t2 ON t2.problem_id = "
          "t.problem_id AND t2.kernel_id = t.kernel_id AND t2.device_id = 2");
  EXPECT_EQ(list_lines_with("f32_NN_m64_n64_k64"), 1);
  EXPECT_EQ(list_lines_with("f32_NN_m128_n128_k128"), 1);
  const auto r = db_tool("list");
  EXPECT_TRUE(contains(r.output,
                       "devices row 2: device 'Test GPU' (sm_90) repeats devices row 1; "
                       "skipped"))
      << r.output;
}

// A trial whose figures are no measurement is left out of the export, as out of every read,
// with a warning; the JSON stays valid.
TEST_F(WrongValues, json_export_is_valid_json_with_infinite_values) {
  execute(db_, "UPDATE trials SET time_max_us = 9e999, tflops = -9e999 WHERE id = 2");
  const std::string out = dir_.file("trials.json");
  const auto r = db_tool("export --format json --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "trials row 2")) << r.output;
  const std::string text = testing::read_bytes(out);
  nlohmann::json json;
  ASSERT_NO_THROW(json = nlohmann::json::parse(text)) << text;
  ASSERT_EQ(json.size(), 3u);
  for (const auto& trial : json) EXPECT_NE(trial["trial_id"], 2) << trial;
}

TEST_F(WrongValues, merge_says_which_bests_it_does_not_keep) {
  // 64^3's best trial (10 us) has time 0 in this input: no measurement, so no best.
  execute(db_, "UPDATE trials SET time_median_us = 0 WHERE id = 1");
  const std::string out = dir_.file("merged.db");
  const auto r = run_tool("tgemm-db", "merge " + out + " " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 best row(s) not kept")) << r.output;
  // The other ok trial of 64^3 (20 us) is its best in the merged file.
  EXPECT_EQ(query_int(out,
                      "SELECT t.time_median_us FROM best b JOIN trials t ON t.id = "
                      "b.trial_id WHERE b.problem_id = 1"),
            20);
}

}  // namespace
}  // namespace tgemm
