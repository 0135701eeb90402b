// tgemm-tune end to end on a GPU: a config whose kernel faults is recorded `crashed` while
// the run finishes with the good config as the best, and the same command run again
// measures nothing twice; tgemm-bench --untuned over what was tuned. Skips cleanly without a
// GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

TEST(TuneGpu, faulting_kernel_is_crashed_and_a_rerun_measures_nothing) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("tune_gpu");
  const std::string db = dir.file("t.db");
  const std::string args = testing::tiny_tune_args("fault_sgemm_simt", db, "--timeout 20");
  auto first = run_tool("tgemm-tune", args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // Our kernels' trials; cuBLAS and cuBLASLt's algorithms race beside them (vendor_call.h).
  const std::string ours =
      "select count(*) from trials t join kernels k on k.id = t.kernel_id where k.library = "
      "'tgemm'";
  // The FAULT=1 config crashes once per shape; every other config of ours (the space's good
  // one and the proven candidates measured before it, all built from the same source) is ok.
  const int64_t mine = query_int(db, ours);
  EXPECT_EQ(query_int(db, ours + " and t.status = 'crashed'"), 2) << first.output;
  EXPECT_EQ(query_int(db, ours + " and t.status = 'ok'"), mine - 2) << first.output;
  EXPECT_EQ(query_int(db, ours + " and t.status = 'ok' and k.canonical_name like '%_fault0'"),
            mine - 2);
  EXPECT_EQ(query_int(db, "select count(*) from tgemm_best_kernels where kernel like '%_fault0'"),
            2);
  const int64_t all = query_int(db, "select count(*) from trials");
  // The worker restarts after a crash when trials remain (the last trial's crash needs none).
  EXPECT_TRUE(std::regex_search(first.output, std::regex("worker restarts: [12];")))
      << first.output;

  auto second = run_tool("tgemm-tune", args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find(fmt::format("trials: 0 run, {} already recorded", mine)),
            std::string::npos)
      << second.output;
  EXPECT_EQ(query_int(db, ours), mine);
  EXPECT_EQ(query_int(db, "select count(*) from trials"), all);  // nothing timed twice
}

// Trials measured under another driver are stale: tgemm-db stale lists them, the next
// tgemm-tune measures them again in place (same rows, the current driver recorded).
TEST(TuneGpu, trials_of_another_driver_are_listed_stale_and_measured_again) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("tune_stale_gpu");
  const std::string db = dir.file("t.db");
  const std::string args = testing::tiny_tune_args("tiny_sgemm_simt", db);
  auto first = run_tool("tgemm-tune", args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const int64_t trials = query_int(db, "select count(*) from trials");
  const int64_t ours = query_int(db,
                                 "select count(*) from trials t join kernels k on k.id = "
                                 "t.kernel_id where k.library = 'tgemm'");
  ASSERT_GT(ours, 0);
  const int64_t driver = query_int(db, "select max(driver_version) from trials");
  EXPECT_GT(driver, 0) << "each trial records its driver";
  EXPECT_EQ(query_int(db, "select count(*) from trials where nvrtc_version is null"), 0);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "update trials set driver_version = 1", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  auto stale = run_tool("tgemm-db", "--db " + db + " stale");
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("measured under CUDA driver 1,"), std::string::npos) << stale.output;
  EXPECT_NE(stale.output.find(fmt::format("{0} of {0} trial(s) stale", trials)), std::string::npos)
      << stale.output;

  auto second = run_tool("tgemm-tune", args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find(fmt::format("{} stale re-measured", ours)), std::string::npos)
      << second.output;
  EXPECT_EQ(query_int(db, "select count(*) from trials"), trials);
  EXPECT_EQ(query_int(db,
                      "select count(*) from trials t join kernels k on k.id = t.kernel_id where "
                      "k.library = 'tgemm' and t.driver_version = 1"),
            0);
  // The vendor calls raced again with the problems they belong to.
  EXPECT_EQ(query_int(db,
                      "select count(*) from trials t join kernels k on k.id = t.kernel_id "
                      "where k.library = 'cublas' and t.driver_version = 1"),
            0);
  EXPECT_EQ(query_int(db, "select count(*) from best"),
            query_int(db, "select count(*) from problems"));
}

// Three tuned square shapes; --untuned serves each from the other two (nearest) and leaves
// the database as it was.
TEST(TuneGpu, bench_untuned_serves_each_shape_from_the_others_and_keeps_the_database) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("bench_untuned_gpu");
  const std::string db = dir.file("t.db");
  const std::string shapes = TGEMM_SOURCE_DIR "/tests/data/shapes/three_squares.yaml";
  auto tune = run_tool("tgemm-tune", "--shapes " + shapes +
                                         " --space " TGEMM_SOURCE_DIR
                                         "/tests/data/spaces/tiny_sgemm_simt.yaml --strategy "
                                         "exhaustive --budget 0 --db " +
                                         db);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const int64_t trials = query_int(db, "select count(*) from trials");
  ASSERT_GT(trials, 0);

  const std::string csv = dir.file("bench.csv");
  auto bench = run_tool(
      "tgemm-bench", "--db " + db + " --shapes " + shapes + " --untuned --max-ms 20 --csv " + csv);
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("geometric mean tuned / untuned time"), std::string::npos)
      << bench.output;
  std::ifstream in(csv);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Every row: tuned path exact, untuned path nearest, and our own best (ours) exact.
  auto count = [&](const std::string& cell) {
    size_t n = 0;
    for (size_t at = text.find(cell); at != std::string::npos; at = text.find(cell, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(",exact,"), 6u) << text;
  EXPECT_EQ(count(",nearest,"), 3u) << text;
  EXPECT_EQ(query_int(db, "select count(*) from trials"), trials);
  EXPECT_EQ(query_int(db, "select count(*) from best"), 3);
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_EQ(entry.path().filename().string().find("tgemm-bench-untuned"), std::string::npos)
        << "scratch copy left behind: " << entry.path();
}

// Fused epilogues in tgemm-bench: each result checked against the epilogue's reference, timed
// against cuBLASLt's fused call with the unfused pair beside it where cuBLASLt has the epilogue,
// and against cuBLAS then the epilogue's pass where it has not (SiLU).
TEST(TuneGpu, bench_times_fused_epilogues_against_cublaslt_and_the_unfused_pair) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("bench_epilogue_gpu");
  const std::string csv = dir.file("bench.csv");
  auto bench = run_tool("tgemm-bench", "--db " + dir.file("none.db") +
                                           " --shapes " TGEMM_SOURCE_DIR
                                           "/tests/data/shapes/epilogue_bench.yaml --max-ms 20 "
                                           "--csv " +
                                           csv);
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_EQ(bench.output.find("WRONG RESULT"), std::string::npos) << bench.output;
  EXPECT_NE(bench.output.find("silu-f32: "), std::string::npos) << bench.output;  // no fused peer
  std::ifstream in(csv);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << bench.output;
  // The last cell: the unfused pair's time where the fused call is the peer, else empty.
  auto last_cell = [](const std::string& row) { return row.substr(row.rfind(',') + 1); };
  EXPECT_EQ(last_cell(rows[0]), "unfused_us");
  EXPECT_FALSE(last_cell(rows[1]).empty()) << rows[1];
  EXPECT_FALSE(last_cell(rows[2]).empty()) << rows[2];
  EXPECT_TRUE(last_cell(rows[3]).empty()) << rows[3];
}

// A time budget bounds the run however much one batch asks: on the comparison space (123
// configs) over deepbench's 16 shapes, a first batch alone measures for minutes, so the
// measuring must stop at the deadline too, not only the asking.
TEST(TuneGpu, a_time_budget_stops_measuring_at_its_deadline) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("tune_time_budget_gpu");
  const std::string db = dir.file("t.db");
  auto tune = run_tool("tgemm-tune", "--shapes " TGEMM_SOURCE_DIR
                                     "/configs/shapes/deepbench.yaml --space " TGEMM_SOURCE_DIR
                                     "/tests/data/spaces/comparison/sgemm_warp.yaml "
                                     "--strategy model --budget 10s --jobs 16 --db " +
                                         db);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::smatch spent;
  ASSERT_TRUE(std::regex_search(tune.output, spent,
                                std::regex(R"(time budget 10 s: ([0-9.]+) s spent exploring)")))
      << tune.output;
  // The slack: the compiles of the batches in flight and the trial running at the deadline.
  EXPECT_LT(std::stod(spent[1]), 25.0) << tune.output;
  EXPECT_GT(query_int(db, "select count(*) from trials where status = 'ok'"), 0) << tune.output;
  EXPECT_LT(query_int(db, "select count(*) from trials"), 123 * 16) << tune.output;
  // Every shape still gets a best: one past the deadline measures on until it has one.
  EXPECT_EQ(query_int(db, "select count(distinct problem_id) from best"), 16) << tune.output;
}

}  // namespace
}  // namespace tgemm
