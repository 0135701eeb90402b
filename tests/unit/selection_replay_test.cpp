// Offline replay of the dispatcher's choice: the row for a problem tuned only in the truth
// database names the kernel picked from the source database and its time in the truth.
#include "tuner/report/selection_replay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

KernelConfig simt(int64_t bm) { return testing::sgemm_config({{"BM", bm}}); }

// Writes one problem's trials (config, µs) on an H200 into `path`.
void record(const std::string& path, int64_t size,
            const std::vector<std::pair<KernelConfig, double>>& trials) {
  TuningDb db(path, TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("test", "tgemm", "sm_90");
  DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.arch = "sm_90";
  dev.sm_count = 132;
  const int64_t device = db.upsert_device(dev);
  const int64_t problem =
      db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, size, size, size));
  for (const auto& [config, us] : trials) {
    TrialResult t;
    t.config = config;
    t.status = TrialStatus::ok;
    t.time_min_us = t.time_median_us = t.time_max_us = us;
    t.runs = 10;
    db.record_trial(run, problem, db.upsert_kernel(config, "h"), device, std::nullopt, t);
  }
  db.update_best(problem, device);
  db.finish_run(run, "fixture");
}

TEST(SelectionReplay, reports_the_pick_from_source_timed_in_truth) {
  const fs::path dir = fs::temp_directory_path() / ("tgemm_replay_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string source = (dir / "source.db").string(), truth = (dir / "truth.db").string();
  record(source, 2048, {{simt(128), 400}, {simt(64), 600}});   // 128-row tiles measured faster
  record(truth, 4096, {{simt(128), 3500}, {simt(64), 3300}});  // ... but not at 4096^3
  TuningDb src(source, TuningDb::Mode::read_only), tru(truth, TuningDb::Mode::read_only);
  const auto rows = replay_selection(src, tru);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].path, Selection::nearest);
  EXPECT_EQ(rows[0].chosen, simt(128).canonical_name());
  EXPECT_DOUBLE_EQ(rows[0].best_us, 3300);
  EXPECT_DOUBLE_EQ(rows[0].chosen_us, 3500);
  EXPECT_EQ(rows[0].device_name, "NVIDIA H200");
  fs::remove_all(dir);
}

TEST(SelectionReplay, leave_one_out_never_picks_a_problem_from_itself) {
  const fs::path dir = fs::temp_directory_path() / ("tgemm_loo_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "both.db").string();
  record(path, 2048, {{simt(128), 400}, {simt(64), 600}});
  record(path, 4096, {{simt(128), 3500}, {simt(64), 3300}});
  TuningDb db(path, TuningDb::Mode::read_only);
  const auto with_self = replay_selection(db, db);
  ASSERT_EQ(with_self.size(), 2u);
  for (const auto& row : with_self) EXPECT_EQ(row.path, Selection::exact);
  const auto rows = replay_selection(db, db, /*leave_one_out=*/true);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.path, Selection::nearest) << row.problem_key;
    EXPECT_GT(row.chosen_us, 0) << row.problem_key;
  }
  fs::remove_all(dir);
}

// The H200 database of session 25 (benchmarks/h200/fp32.db.gz: the FP32 sets, the 3xTF32
// GEMVs and six long-K GEMVs), each tuned problem left out in turn: what tgemm-bench --untuned
// measures, replayed from the recorded trials. Issue 9 asks untuned shapes to stay within 10 %
// of their tuned time on average and none below 0.8; the session-25 fixes (a stream tail's
// partials in the model, long-K neighbours in the database) brought 512^3 and 512x8x500000 from
// 0.80 to 0.98 here. Choices never measured on their problem are not counted.
TEST(SelectionReplay, h200_database_serves_each_shape_left_out_near_its_best) {
  testing::TempDir dir("selection_replay");
  const std::string db_path = dir.file("s25.db");
  const std::string cmd = "gunzip -c " TGEMM_SOURCE_DIR "/benchmarks/h200/fp32.db.gz > " + db_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  TuningDb db(db_path, TuningDb::Mode::read_only);
  std::map<std::string, double> ratio;  // problem key -> best / chosen
  double log_sum = 0;
  for (const ReplayRow& row : replay_selection(db, db, /*leave_one_out=*/true)) {
    if (row.chosen_us <= 0) continue;
    ratio[row.problem_key] = row.best_us / row.chosen_us;
    log_sum += std::log(ratio[row.problem_key]);
  }
  ASSERT_GE(ratio.size(), 25u);
  EXPECT_GE(std::exp(log_sum / double(ratio.size())), 0.94);
  for (const auto& [key, r] : ratio) EXPECT_GE(r, 0.8) << key;
  for (const char* key :
       {"f32_NN_m512_n8_k500000_b0_a16.16.16", "f32_NN_m512_n512_k512_b0_a16.16.16"}) {
    ASSERT_TRUE(ratio.count(key)) << key << " was served a kernel never measured on it";
    EXPECT_GE(ratio.at(key), 0.95) << key;
  }
}

}  // namespace
}  // namespace tgemm
