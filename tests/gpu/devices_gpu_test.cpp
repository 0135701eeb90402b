// tgemm-tune --devices on the GPUs there are: `--devices 0` is a plain one-GPU run (one best
// per problem, no per-GPU line), and with two or more GPUs `--devices all` shares the
// problems out, each GPU measuring its own, into one consistent database. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::query_text;
using testing::run_tool;
using testing::TempDir;

TEST(DevicesGpu, devices_0_tunes_like_device_0_with_one_best_per_problem) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("devices_gpu");
  const std::string db = dir.file("t.db");
  const auto r = run_tool("tgemm-tune",
                          testing::tiny_tune_args("tiny_sgemm_simt", db, "--devices 0 --jobs 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("devices:"), std::string::npos) << "a plain session: " << r.output;
  EXPECT_NE(r.output.find("trials: "), std::string::npos) << r.output;
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM problems"), 2);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM best"), 2) << r.output;
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT problem_id || '/' || device_id) FROM best"), 2);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE command_line LIKE '%share)'"), 0);
}

TEST(DevicesGpu, devices_all_on_several_gpus_measures_every_problem_once) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than two CUDA devices";
  TempDir dir("devices_all_gpu");
  const std::string db = dir.file("t.db");
  const std::string shapes = dir.write("s.yaml", R"(defaults: {dtype: f32, layout: NN}
shapes:
  - [128, 128, 128]
  - [96, 160, 64]
  - {m: 128, n: 64, k: 32, layout: NT}
  - {m: 64, n: 64, k: 64, layout: NT}
)");
  const auto r = run_tool("tgemm-tune", "--shapes " + shapes +
                                            " --space " TGEMM_SOURCE_DIR
                                            "/tests/data/spaces/tiny_sgemm_simt.yaml --strategy "
                                            "exhaustive --budget 0 --devices all --db " +
                                            db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("devices: 2 GPU(s)"), std::string::npos) << r.output;
  EXPECT_EQ(query_text(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE command_line LIKE '%share)'"), 2);
  // One best per problem: identical GPUs share a device row and split the configs, so each
  // problem's trials come from both and one best is chosen from all of them.
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT problem_id) FROM best"), 4) << r.output;
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM best"),
            query_int(db, "SELECT count(DISTINCT problem_id || '/' || device_id) FROM trials"));
  // The exhaustive sample measured once: no (problem, kernel) twice, both GPUs measuring.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM trials"),
            query_int(db, "SELECT count(DISTINCT problem_id || '/' || kernel_id) FROM trials"));
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT run_id) FROM trials"), 2);
  // The best is the fastest ok trial of all (chosen again once both shares were in).
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM best b JOIN trials t ON t.id = b.trial_id "
                      "WHERE t.time_median_us > (SELECT min(u.time_median_us) FROM trials u "
                      "WHERE u.problem_id = b.problem_id AND u.status = 'ok')"),
            0);
}

}  // namespace
}  // namespace tgemm
