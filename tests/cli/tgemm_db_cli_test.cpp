// Runs the real tgemm-db against a fixture database built through TuningDb: each command's
// output, and bad input (missing or corrupt file, bad arguments, untuned shape) by message
// and exit code.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/devices.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// The device, kernels and numbers the fixture holds; tests compare output against them.
const char* const kH200 = "NVIDIA H200";
const char* const kT4 = "Tesla T4";

KernelConfig config(int64_t label) { return testing::labelled_sgemm_config(label); }

using testing::device;

TrialResult trial(int64_t bm, TrialStatus status, double median_us, const std::string& error = "") {
  TrialResult t;
  t.config = config(bm);
  t.status = status;
  t.error = error;
  t.time_min_us = median_us * 0.9;
  t.time_median_us = median_us;
  t.time_max_us = median_us * 1.1;
  t.runs = status == TrialStatus::ok ? 25 : 0;
  t.tflops = status == TrialStatus::ok ? 2.0 * 4096.0 * 4096.0 * 4096.0 / (median_us * 1e6) : 0;
  t.max_rel_error = status == TrialStatus::ok ? 2e-7 : 0;
  return t;
}

class TgemmDbCli : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tgemm_db_cli_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++) + "_" + std::to_string(rd()));
    fs::create_directories(dir_);
    db_path_ = (dir_ / "tgemm.db").string();
    build_fixture();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // 4096^3 NN on the H200: three ok trials (bm 128 fastest), a wrong result and a failed
  // compile whose error has commas, quotes and two lines; 1024^3 NN on the H200 and the T4;
  // 512^3 NN on the H200 with only failures.
  void build_fixture() {
    TuningDb db(db_path_, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("tgemm-tune --shapes fixture.yaml", "tgemm 0.1.0", "sm_90");
    const int64_t h200 = db.upsert_device(device(kH200, "sm_90", 132));
    const int64_t t4 = db.upsert_device(device(kT4, "sm_75", 40));
    auto kernel = [&](int64_t bm) { return db.upsert_kernel(config(bm), "abc123"); };
    auto record = [&](int64_t problem, int64_t dev, const TrialResult& t) {
      db.record_trial(run, problem, kernel(t.config.get("SWIZZLE")), dev, std::nullopt, t);
    };
    const int64_t big =
        db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096));
    record(big, h200, trial(64, TrialStatus::ok, 2000));
    record(big, h200, trial(128, TrialStatus::ok, 1000));
    record(big, h200, trial(256, TrialStatus::ok, 1500));
    record(big, h200, trial(32, TrialStatus::wrong_result, 400, "max rel error 0.5 > bound 1e-5"));
    record(big, h200,
           trial(16, TrialStatus::compile_failed, 0,
                 "sgemm_simt: error: \"BM\" too small, see log\nsecond line of the log"));
    db.record_cublas_time(run, big, h200, 900);
    db.update_best(big, h200);

    const int64_t mid =
        db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1024));
    record(mid, h200, trial(64, TrialStatus::ok, 50));
    record(mid, t4, trial(64, TrialStatus::ok, 700));
    record(mid, t4, trial(128, TrialStatus::ok, 600));
    db.update_best(mid, h200);
    db.update_best(mid, t4);

    const int64_t small =
        db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 512, 512, 512));
    record(small, h200, trial(128, TrialStatus::crashed, 0, "illegal memory access"));
    db.update_best(small, h200);
    db.finish_run(run, "fixture");
  }

  // Runs tgemm-db with stdout and stderr captured to files in the temp folder.
  CommandResult run(const std::string& args) const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string tool = std::string(TGEMM_TOOLS_DIR) + "/tgemm-db";
    const std::string command =
        "'" + tool + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_bytes(out);
    result.err = read_bytes(err);
    return result;
  }
  CommandResult run_db(const std::string& args) const {
    return run("--db '" + db_path_ + "' " + args);
  }

  fs::path dir_;
  std::string db_path_;
};

TEST_F(TgemmDbCli, list_prints_header_and_one_line_per_problem_and_device) {
  const CommandResult r = run_db("list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // header, 3 best entries, 1 pair without an ok trial
  for (const char* column :
       {"problem", "device", "best kernel", "us", "TFLOP/s", "cuBLAS us", "vs cuBLAS", "trials"})
    EXPECT_TRUE(contains(lines[0], column)) << column;
  const std::string big_key = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096).key();
  // Ordered by device, then shape: H200 1024, H200 4096, T4 1024.
  EXPECT_TRUE(contains(lines[1], kH200) && contains(lines[1], "m1024")) << lines[1];
  EXPECT_TRUE(contains(lines[2], big_key)) << lines[2];
  EXPECT_TRUE(contains(lines[2], config(128).canonical_name())) << lines[2];
  EXPECT_TRUE(contains(lines[2], "1000.00")) << lines[2];
  EXPECT_TRUE(contains(lines[2], "900.00")) << lines[2];
  EXPECT_TRUE(contains(lines[2], "0.900")) << lines[2];
  EXPECT_TRUE(contains(lines[2], "137.44")) << lines[2];
  EXPECT_TRUE(lines[2].ends_with(" 5")) << lines[2];  // all five trials, failures too
  EXPECT_TRUE(contains(lines[3], kT4) && contains(lines[3], config(128).canonical_name()))
      << lines[3];
  EXPECT_TRUE(contains(lines[4], "m512") && contains(lines[4], "(no ok trial)")) << lines[4];
}

TEST_F(TgemmDbCli, best_prints_config_times_and_cublas_ratio) {
  const CommandResult r = run_db("best --m 4096 --n 4096 --k 4096");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "kernel:        " + config(128).canonical_name())) << r.out;
  EXPECT_TRUE(contains(r.out, "parameters:    BM=128,BN=128,BK=8")) << r.out;
  EXPECT_TRUE(contains(r.out, "device:        NVIDIA H200 (sm_90)")) << r.out;
  EXPECT_TRUE(
      contains(r.out, "time:          1000.00 us median (min 900.00, max 1100.00, 25 runs)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "TFLOP/s:       137.44")) << r.out;
  EXPECT_TRUE(contains(r.out, "cuBLAS:        900.00 us (vs cuBLAS 0.900")) << r.out;
  EXPECT_TRUE(contains(r.out, "trials:        5")) << r.out;
}

TEST_F(TgemmDbCli, best_shows_the_f32x3_kernel_and_sgemm_errors_against_fp64) {
  {
    TuningDb db(db_path_, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("tgemm-tune --shapes f32x3.yaml", "tgemm 0.1.0", "sm_90");
    const int64_t h200 = db.upsert_device(device(kH200, "sm_90", 132));
    GemmTypes f32x3;
    f32x3.compute = ComputeType::f32x3;
    const int64_t problem =
        db.upsert_problem(Problem::packed(f32x3, Op::N, Op::N, 4096, 4096, 4096));
    TrialResult t = trial(128, TrialStatus::ok, 700);
    t.max_rel_error = 3.25e-6;
    db.record_trial(run, problem, db.upsert_kernel(config(128), "abc123"), h200, std::nullopt, t);
    db.record_cublas_time(run, problem, h200, 1400, 2.5e-6);
    db.record_cublas_time(run, problem, h200, 1350);  // a comparison: the error stays
    db.update_best(problem, h200);
  }
  CommandResult r = run_db("best --m 4096 --n 4096 --k 4096 --dtype f32x3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "cuBLAS:        1350.00 us")) << r.out;
  EXPECT_TRUE(contains(r.out, "error vs FP64: tgemm 3.25e-06, cuBLAS SGEMM 2.5e-06")) << r.out;
  // f32 problems measured no SGEMM error: no such line.
  r = run_db("best --m 4096 --n 4096 --k 4096 --dtype f32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "error vs FP64")) << r.out;
}

TEST_F(TgemmDbCli, best_answers_per_device_and_filters_by_device) {
  CommandResult r = run_db("best --m 1024 --n 1024 --k 1024 --dtype f32 --layout NN");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "device:        NVIDIA H200")) << r.out;
  EXPECT_TRUE(contains(r.out, "device:        Tesla T4")) << r.out;
  EXPECT_TRUE(contains(r.out, "cuBLAS:        not measured")) << r.out;

  r = run_db("best --m 1024 --n 1024 --k 1024 --device 'Tesla T4'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, kH200)) << r.out;
  EXPECT_TRUE(contains(r.out, "kernel:        " + config(128).canonical_name())) << r.out;
  EXPECT_TRUE(contains(r.out, "600.00 us median")) << r.out;
}

TEST_F(TgemmDbCli, best_for_untuned_shape_exits_3) {
  CommandResult r = run_db("best --m 4096 --n 4096 --k 4095");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "nothing tuned for f32 NN m=4096 n=4096 k=4095")) << r.err;
  EXPECT_TRUE(contains(r.err, db_path_)) << r.err;

  // Known shape, other layout or device; and a shape whose trials all failed.
  EXPECT_EQ(run_db("best --m 4096 --n 4096 --k 4096 --layout TN").exit_code, 3);
  r = run_db("best --m 4096 --n 4096 --k 4096 --device 'Tesla T4'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "on device 'Tesla T4'")) << r.err;
  EXPECT_EQ(run_db("best --m 512 --n 512 --k 512").exit_code, 3);
}

TEST_F(TgemmDbCli, show_lists_trials_fastest_first_then_failures_with_errors) {
  const CommandResult r = run_db("show --m 4096 --n 4096 --k 4096");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;  // title, header, five trials
  EXPECT_TRUE(contains(lines[0], "on NVIDIA H200 (sm_90): 5 trials")) << lines[0];
  EXPECT_TRUE(contains(lines[1], "status") && contains(lines[1], "error")) << lines[1];
  EXPECT_TRUE(contains(lines[2], config(128).canonical_name()) && contains(lines[2], "1000.00"));
  EXPECT_TRUE(contains(lines[3], config(256).canonical_name()) && contains(lines[3], "1500.00"));
  EXPECT_TRUE(contains(lines[4], config(64).canonical_name()) && contains(lines[4], "2000.00"));
  const std::string failures = lines[5] + "\n" + lines[6];
  EXPECT_TRUE(contains(failures, "wrong_result")) << failures;
  EXPECT_TRUE(contains(failures, "max rel error 0.5 > bound 1e-5")) << failures;
  EXPECT_TRUE(contains(failures, "compile_failed")) << failures;
  EXPECT_TRUE(contains(failures, "\"BM\" too small, see log")) << failures;
  EXPECT_FALSE(contains(r.out, "second line of the log")) << "a table row shows the first line";
}

TEST_F(TgemmDbCli, show_includes_shapes_whose_trials_all_failed) {
  const CommandResult r = run_db("show --m 512 --n 512 --k 512");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "crashed")) << r.out;
  EXPECT_TRUE(contains(r.out, "illegal memory access")) << r.out;
  EXPECT_EQ(run_db("show --m 8 --n 8 --k 8").exit_code, 3);
}

TEST_F(TgemmDbCli, export_csv_has_header_and_quotes_fields) {
  const CommandResult r = run_db("export --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two-line fields are quoted, so split records on quotes-aware lines: count data rows by
  // trial ids at the start of a record instead.
  const auto lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines[0].starts_with("trial_id,device,arch,problem_key,dtype,layout,m,n,k,"))
      << lines[0];
  EXPECT_TRUE(contains(lines[0], ",kernel,params,status,error,min_us,median_us,")) << lines[0];
  EXPECT_EQ(lines.size(), 1u + 9u + 1u);  // header, nine trials, one continued error line
  EXPECT_TRUE(contains(r.out,
                       ",\"sgemm_simt: error: \"\"BM\"\" too small, see log\nsecond line of the "
                       "log\","))
      << r.out;
  EXPECT_TRUE(contains(r.out, ",\"" + config(128).params_text() + "\","))
      << "commas inside a field are quoted";
  EXPECT_TRUE(contains(r.out, ",NVIDIA H200,sm_90,")) << r.out;
}

TEST_F(TgemmDbCli, export_json_is_an_array_of_every_trial) {
  const fs::path file = dir_ / "trials.json";
  const CommandResult r = run_db("export --format json --output '" + file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string json = read_bytes(file);
  sqlite3* mem = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &mem), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(mem,
                         "SELECT json_valid(?1), json_array_length(?1), "
                         "json_extract(?1, '$[1].kernel'), json_extract(?1, '$[1].median_us')",
                         -1, &stmt, nullptr),
      SQLITE_OK);
  sqlite3_bind_text(stmt, 1, json.c_str(), -1, SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1) << json;
  EXPECT_EQ(sqlite3_column_int(stmt, 1), 9);
  EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2)),
            config(128).canonical_name());
  EXPECT_DOUBLE_EQ(sqlite3_column_double(stmt, 3), 1000.0);
  sqlite3_finalize(stmt);
  sqlite3_close(mem);
}

TEST_F(TgemmDbCli, queries_leave_the_database_file_unchanged) {
  const std::string before = read_bytes(db_path_);
  for (const char* args : {"list", "best --m 4096 --n 4096 --k 4096",
                           "show --m 4096 --n 4096 --k 4096", "export --format csv"})
    EXPECT_EQ(run_db(args).exit_code, 0) << args;
  EXPECT_EQ(read_bytes(db_path_), before);
}

// The fixture's kernels carry the source hash "abc123", not this build's: all stale.
TEST_F(TgemmDbCli, stale_lists_each_best_entry_with_its_reason_and_counts_trials) {
  const CommandResult r = run_db("stale");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "the device code of 'sgemm_simt' changed since it was tuned"))
      << r.out;
  EXPECT_TRUE(contains(r.out, kT4)) << r.out;
  EXPECT_TRUE(contains(r.out, "9 of 9 trial(s) stale")) << r.out;
  EXPECT_EQ(lines_of(r.out).size(), 1u + 3u + 1u) << "header, three bests, the count";
}

TEST_F(TgemmDbCli, prune_writes_a_smaller_copy_without_run_failures_and_leaves_the_input) {
  const std::string before = read_bytes(db_path_);
  const std::string out = (dir_ / "pruned.db").string();
  const CommandResult r = run_db("prune '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The wrong result and the crash go; the build that failed to compile stays, as evidence.
  EXPECT_TRUE(contains(r.out, "dropped 2 failed trial(s)")) << r.out;
  EXPECT_EQ(read_bytes(db_path_), before);
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM trials"), 7);
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM trials WHERE status != 'ok'"), 1);
  EXPECT_EQ(testing::query_int(out,
                               "SELECT count(*) FROM trials WHERE status = 'compile_failed' "
                               "AND binary_id IS NULL"),
            1);
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM best"),
            testing::query_int(db_path_, "SELECT count(*) FROM best"));
  const CommandResult best = run("--db '" + out + "' best --m 4096 --n 4096 --k 4096");
  EXPECT_EQ(best.exit_code, 0) << best.err;
}

TEST_F(TgemmDbCli, prune_stale_drops_the_stale_trials_too) {
  const std::string out = (dir_ / "pruned.db").string();
  const CommandResult r = run_db("prune --stale '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "9 stale trial(s)")) << r.out;
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM trials"), 0);
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM best"), 0);
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM problems"), 3) << "problems stay";
}

TEST_F(TgemmDbCli, vacuum_writes_a_copy_that_drops_nothing) {
  const std::string out = (dir_ / "compact.db").string();
  const CommandResult r = run_db("vacuum '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::query_int(out, "SELECT count(*) FROM trials"), 9);
  EXPECT_EQ(testing::query_int(out, "PRAGMA user_version"),
            testing::query_int(db_path_, "PRAGMA user_version"));
}

TEST_F(TgemmDbCli, prune_and_vacuum_refuse_an_existing_output_and_keep_it) {
  const fs::path out = dir_ / "taken.db";
  std::ofstream(out) << "precious";
  for (const char* cmd : {"prune", "vacuum"}) {
    const CommandResult r = run_db(std::string(cmd) + " '" + out.string() + "'");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_TRUE(contains(r.err, "database '" + out.string() + "' exists and is never overwritten"))
        << r.err;
    EXPECT_EQ(read_bytes(out), "precious");
  }
}

TEST_F(TgemmDbCli, missing_database_file_is_an_error_and_is_not_created) {
  const std::string missing = (dir_ / "absent.db").string();
  const CommandResult r = run("--db '" + missing + "' list");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tgemm-db: error: tuning database '" + missing + "' does not exist\n");
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(TgemmDbCli, corrupt_database_is_an_error_and_is_not_modified) {
  const fs::path corrupt = dir_ / "corrupt.db";
  std::string garbage(4096, '\0');
  std::mt19937 rng(7);
  for (char& c : garbage) c = char(rng() & 0xff);
  std::ofstream(corrupt, std::ios::binary) << garbage;
  const CommandResult r = run("--db '" + corrupt.string() + "' list");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(
      r.err.starts_with("tgemm-db: error: '" + corrupt.string() + "' is not a SQLite database"))
      << r.err;
  EXPECT_EQ(read_bytes(corrupt), garbage);
}

TEST_F(TgemmDbCli, unknown_export_format_is_an_error) {
  const CommandResult r = run_db("export --format xml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tgemm-db: error: unknown export format 'xml' (expected csv or json)\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(TgemmDbCli, zero_or_negative_dimension_is_an_error) {
  CommandResult r = run_db("best --m 0 --n 16 --k 16");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "tgemm-db: error: --m must be from 1 to 2147483647 (the kernels index it with a "
            "32-bit int), got 0\n");
  r = run_db("show --m 16 --n 16 --k -3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--k must be from 1 to 2147483647")) << r.err;
  EXPECT_TRUE(contains(r.err, "got -3")) << r.err;
}

// A number past int64's range is named as given, not clamped to 9223372036854775807.
TEST_F(TgemmDbCli, dimension_past_int64_is_named_as_given) {
  const CommandResult r = run_db("best --m 99999999999999999999 --n 16 --k 16");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--m must be from 1 to 2147483647")) << r.err;
  EXPECT_TRUE(contains(r.err, "got 99999999999999999999")) << r.err;
}

TEST_F(TgemmDbCli, dimension_of_2_pow_31_is_an_error_and_2_pow_31_minus_1_is_not) {
  CommandResult r = run_db("best --m 16 --n 2147483648 --k 16");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--n must be from 1 to 2147483647")) << r.err;
  r = run_db("best --m 16 --n 2147483647 --k 16");
  EXPECT_FALSE(contains(r.err, "must be from 1")) << r.err;
}

TEST_F(TgemmDbCli, unknown_dtype_or_layout_is_an_error) {
  CommandResult r = run_db("best --m 16 --n 16 --k 16 --dtype f64");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown dtype 'f64'")) << r.err;
  r = run_db("best --m 16 --n 16 --k 16 --layout NX");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown layout 'NX'")) << r.err;
}

TEST_F(TgemmDbCli, argument_errors_come_from_the_parser_with_nonzero_exit) {
  CommandResult r = run_db("best --m 16 --n 16");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "--k is required")) << r.err;
  r = run_db("best --m sixteen --n 16 --k 16");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "sixteen")) << r.err;
  r = run_db("");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "subcommand is required")) << r.err;
}

}  // namespace
}  // namespace tgemm

namespace {

TEST(TgemmDbReplay, missing_truth_database_is_named) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("tgemm_replay_cli_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/a.db";
  { tgemm::TuningDb create(db, tgemm::TuningDb::Mode::read_write); }
  const auto r = tgemm::testing::run_tool(
      "tgemm-db", "--db " + db + " replay --against " + dir + "/missing.db");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("missing.db"), std::string::npos) << r.output;
  const auto usage = tgemm::testing::run_tool("tgemm-db", "--db " + db + " replay");
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_NE(usage.output.find("--against FILE or --leave-one-out"), std::string::npos)
      << usage.output;
  const auto empty = tgemm::testing::run_tool("tgemm-db", "--db " + db + " replay --leave-one-out");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.output.find("no tuned problem"), std::string::npos) << empty.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
