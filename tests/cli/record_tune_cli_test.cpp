// The record-then-tune loop on a machine without a GPU: the problems a program's calls
// recorded (through the recorder the dispatcher calls) are exactly what tgemm-tune
// --compile-only then builds. Serving them exactly is tests/gpu (dispatcher_gpu_test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/dispatch/problem_recorder.h"
#include "tests/cli/cli_runner.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

using testing::exhaustive_tune_args;
using testing::query_int;
using testing::run_tool;
using testing::TempDir;

TEST(RecordTuneCli, compile_only_tuning_builds_every_recorded_problem_for_sm_90) {
  TempDir dir("record_tune");
  const std::string shapes = dir.file("recorded.yaml");
  const std::string db = dir.file("t.db");
  // A program's calls: a decode and a prefill projection, each called several times.
  const Problem decode = Problem::packed(GemmTypes{}, Op::N, Op::T, 16, 96, 64);
  const Problem prefill = Problem::packed(GemmTypes{}, Op::N, Op::T, 128, 96, 64);
  ProblemRecorder recorder;
  recorder.start(shapes);
  for (int call = 0; call < 5; ++call) {
    recorder.note(decode);
    recorder.note(prefill);
  }
  recorder.note(decode);
  recorder.stop();
  const std::vector<NamedProblem> recorded = load_problem_set(shapes);
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0].calls, 6);
  EXPECT_EQ(recorded[1].calls, 5);

  auto tune = run_tool("tgemm-tune", exhaustive_tune_args(shapes, "tiny_sgemm_simt", db,
                                                          "--compile-only --arch sm_90 --jobs 2"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_EQ(query_int(db, "select count(*) from problems"), 2);
  for (const Problem& p : {decode, prefill})
    EXPECT_EQ(query_int(db, "select count(*) from problems where key = '" + p.key() + "'"), 1)
        << p.key();
  EXPECT_GT(query_int(db, "select count(*) from binaries where arch = 'sm_90' and status = 'ok'"),
            0);
}

}  // namespace
}  // namespace tgemm
