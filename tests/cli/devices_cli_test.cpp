// tgemm-tune --devices without a GPU: the refusals (--device with --devices, bad lists, a GPU
// that is not there), `all` compiling only like a plain --compile-only run, and the sessions
// of several GPUs run as threads of one process into one database (compile-only, so they run
// here), which must lose nothing against one session.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"
#include "tuner/input/problem_set.h"
#include "tuner/session/device_split.h"
#include "tuner/session/multi_device_run.h"
#include "tuner/session/tuning_session.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::query_text;
using testing::run_tool;
using testing::TempDir;

const std::string kTinySpace = TGEMM_SOURCE_DIR "/tests/data/spaces/tiny_sgemm_simt.yaml";

// Two layouts, four shapes of one and one of the other: whole variants would not balance, so
// both GPUs' shares hold NN (cubins both sessions compile and store at once).
const char* const kShapes = R"(defaults: {dtype: f32, layout: NN}
shapes:
  - [128, 128, 128]
  - [96, 160, 64]
  - [64, 64, 64]
  - [32, 32, 32]
  - {m: 128, n: 64, k: 32, layout: TN}
)";

std::string compile_args(const std::string& shapes, const std::string& db) {
  return "--compile-only --arch sm_75 --strategy random --budget 3 --jobs 2 --log-level warn "
         "--space " +
         kTinySpace + " --shapes " + shapes + " --db " + db;
}

TuneOptions compile_options(const std::string& shapes, const std::string& db) {
  TuneOptions opt;
  opt.shapes_path = shapes;
  opt.space_paths = {kTinySpace};
  opt.db_path = db;
  opt.arch = "sm_75";
  opt.strategy = "random";  // a few configs per variant, the same in every session
  opt.budget = 3;
  opt.jobs = 2;
  opt.compile_only = true;
  opt.quiet = true;
  opt.worker_path = TGEMM_TOOLS_DIR "/tgemm-worker";
  opt.command_line = "test";
  return opt;
}

// What must not differ between one session and several into one file.
void expect_same_rows(const std::string& many, const std::string& one) {
  EXPECT_EQ(query_text(many, "PRAGMA integrity_check"), "ok");
  for (const char* sql :
       {"SELECT count(*) FROM problems", "SELECT count(*) FROM kernels",
        "SELECT count(*) FROM binaries", "SELECT count(*) FROM binaries WHERE status = 'ok'",
        "SELECT count(DISTINCT cache_key) FROM binaries"})
    EXPECT_EQ(query_int(many, sql), query_int(one, sql)) << sql;
  EXPECT_EQ(query_int(many, "SELECT count(*) FROM runs WHERE finished_at IS NULL"), 0);
}

TEST(DevicesCli, refuses_device_together_with_devices) {
  TempDir dir("devices_both");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const auto r =
      run_tool("tgemm-tune", compile_args(shapes, dir.file("t.db")) + " --device 1 --devices 0,1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--device 1 and --devices 0,1 cannot be used together: --devices "
                          "lists every GPU to tune on (--devices 1 for that GPU alone)"),
            std::string::npos)
      << r.output;
}

TEST(DevicesCli, rejects_bad_device_lists_naming_the_option) {
  TempDir dir("devices_bad");
  const std::string shapes = dir.write("s.yaml", kShapes);
  for (const char* bad : {"0,0", "x", "0,", "-1"}) {
    const auto r =
        run_tool("tgemm-tune", compile_args(shapes, dir.file("t.db")) + " --devices=" + bad);
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("tgemm-tune: error: --devices"), std::string::npos) << r.output;
  }
}

TEST(DevicesCli, rejects_a_gpu_that_is_not_there_naming_what_there_is) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir("devices_missing");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const auto r = run_tool("tgemm-tune", compile_args(shapes, dir.file("t.db")) + " --devices 0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--devices: GPU 0 does not exist; this machine has no GPU (no CUDA "
                          "driver/device"),
            std::string::npos)
      << r.output;
}

TEST(DevicesCli, all_without_a_gpu_compiles_only_like_a_plain_run) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir("devices_all");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const std::string plain = dir.file("plain.db"), all = dir.file("all.db");
  auto r = run_tool("tgemm-tune", compile_args(shapes, plain));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_tool("tgemm-tune", compile_args(shapes, all) + " --devices all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("devices:"), std::string::npos) << "one plain session: " << r.output;
  expect_same_rows(all, plain);
  EXPECT_EQ(query_int(all, "SELECT count(*) FROM runs"), 1);
}

TEST(DevicesCli, without_a_gpu_and_without_compile_only_says_there_is_no_gpu) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir("devices_no_gpu");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const auto r = run_tool("tgemm-tune", "--space " + kTinySpace + " --shapes " + shapes +
                                            " --devices all --db " + dir.file("t.db"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no GPU to tune on"), std::string::npos) << r.output;
}

TEST(DevicesSessions, a_session_tunes_only_its_listed_problems) {
  TempDir dir("devices_listed");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const auto problems = load_problem_set(shapes);
  TuneOptions opt = compile_options(shapes, dir.file("t.db"));
  opt.problem_keys = {problems[3].problem.key(), problems[1].problem.key()};
  run_tuning_session(opt);
  EXPECT_EQ(query_int(opt.db_path, "SELECT count(*) FROM problems"), 2);
  EXPECT_EQ(query_int(opt.db_path, "SELECT count(*) FROM problems WHERE key = '" +
                                       problems[3].problem.key() + "'"),
            1);
}

// Two writers in one process, each session with its own connection (WAL, the busy timeout).
TEST(DevicesSessions, two_gpu_sessions_in_threads_on_one_database_lose_nothing) {
  TempDir dir("devices_run");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const std::string one = dir.file("one.db"), two = dir.file("two.db");
  run_tuning_session(compile_options(shapes, one));
  const auto problems = load_problem_set(shapes);
  const auto split = assign_problems(problems, 2);
  const auto holds_nn = [&](const std::vector<size_t>& share) {
    return std::any_of(share.begin(), share.end(),
                       [&](size_t i) { return problems[i].problem.layout() == "NN"; });
  };
  ASSERT_TRUE(holds_nn(split[0]) && holds_nn(split[1])) << "no variant in common";
  DeviceInfo a, b;  // two kinds: the problems are split
  a.ordinal = 0;
  b.ordinal = 1;
  a.name = "test GPU A";
  b.name = "test GPU B";
  a.arch = b.arch = "sm_75";
  TuneOptions opt = compile_options(shapes, two);
  opt.jobs = 3;
  run_on_devices(opt, {a, b});
  expect_same_rows(two, one);
  EXPECT_EQ(
      query_int(two, "SELECT count(*) FROM runs WHERE command_line = 'test (GPU 0''s share)'"), 1);
  EXPECT_EQ(
      query_int(two, "SELECT count(*) FROM runs WHERE command_line = 'test (GPU 1''s share)'"), 1);
}

// Identical GPUs take every problem and split the configs: each session compiles its own
// share (neither compiles everything), and together they build what one session builds.
TEST(DevicesSessions, identical_gpus_split_the_configs_not_the_problems) {
  TempDir dir("devices_same_kind");
  const std::string shapes = dir.write("s.yaml", kShapes);
  const std::string one = dir.file("one.db"), two = dir.file("two.db");
  TuneOptions single = compile_options(shapes, one);
  single.budget = 8;
  run_tuning_session(single);
  DeviceInfo a, b;
  a.ordinal = 0;
  b.ordinal = 1;
  a.name = b.name = "test GPU";
  a.arch = b.arch = "sm_75";
  TuneOptions opt = compile_options(shapes, two);
  opt.budget = 8;
  run_on_devices(opt, {a, b});
  expect_same_rows(two, one);
  const auto built_by = [&](int gpu) {
    return query_int(two,
                     "SELECT count(*) FROM binaries b JOIN runs r ON r.id = b.run_id "
                     "WHERE r.command_line = 'test (GPU " +
                         std::to_string(gpu) + "''s share)'");
  };
  const int64_t all = query_int(one, "SELECT count(*) FROM binaries");
  EXPECT_GT(built_by(0), 0);
  EXPECT_GT(built_by(1), 0);
  EXPECT_LT(built_by(0), all);
  EXPECT_EQ(built_by(0) + built_by(1), all);
  // Both GPUs worked on both layouts (a split of the problems gives one of them NN only).
  for (int gpu : {0, 1})
    EXPECT_EQ(query_int(two,
                        "SELECT count(DISTINCT b.op_a || b.op_b) FROM binaries b JOIN runs r "
                        "ON r.id = b.run_id WHERE r.command_line = 'test (GPU " +
                            std::to_string(gpu) + "''s share)'"),
              2)
        << "GPU " << gpu;
}

// --shard first, then --devices: the GPUs share the shard's problems only.
TEST(DevicesSessions, run_on_devices_tunes_only_the_shard) {
  TempDir dir("devices_shard");
  const std::string shapes = dir.write("s.yaml", kShapes);
  int in_first = 0;
  for (const auto& p : load_problem_set(shapes)) in_first += in_shard(p.problem.key(), {0, 2});
  ASSERT_GT(in_first, 1);
  ASSERT_LT(in_first, 5);
  TuneOptions opt = compile_options(shapes, dir.file("t.db"));
  opt.shard = {0, 2};
  DeviceInfo a, b;
  b.ordinal = 1;
  run_on_devices(opt, {a, b});
  EXPECT_EQ(query_int(opt.db_path, "SELECT count(*) FROM problems"), in_first);
  EXPECT_EQ(query_int(opt.db_path, "SELECT count(*) FROM runs"), 2);
}

}  // namespace
}  // namespace tgemm
