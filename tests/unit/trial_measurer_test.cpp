// TrialMeasurer against the fake worker and a scratch database: a compiled kernel is measured
// once and recorded (cuBLAS prepared first), a recorded one is skipped without asking the
// worker, a failed compile is recorded without it, a problem the worker cannot prepare gets a
// note instead of trials, and a past deadline stops a problem that has a best.
#include "tuner/session/trial_measurer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tests/common/fake_worker.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::evaluated;
using testing::FakeWorkerDir;
using testing::kFixtures;
using testing::prepared_ok;
using testing::TempDir;

class TrialMeasurerTest : public ::testing::Test {
 protected:
  TrialMeasurerTest()
      : db_(dir_.file("tgemm.db"), TuningDb::Mode::read_write),
        compile_(db_, 0, arch_limits("sm_90"), 1),
        client_(kFixtures + "fake_worker.sh", 0, std::chrono::milliseconds(5000)) {
    device_.name = "NVIDIA H200";
    device_.arch = "sm_90";
    device_id_ = db_.upsert_device(device_);
    recorder_.emplace(db_, 0, &device_, device_id_, this_build(0));
    measurer_.emplace(compile_, &client_, *recorder_, arch_limits("sm_90"), true);
    state_.named = &problem_;
    state_.problem_id = recorder_->problem_id(problem_.problem);
    worker_.answer("prepare", prepared_ok());
    worker_.answer("evaluate", evaluated(TrialStatus::ok));
  }
  CompileOutcome outcome(int64_t label, BinaryStatus status = BinaryStatus::ok) {
    CompileOutcome o;
    o.config = testing::labelled_sgemm_config(label);
    o.kernel_id = db_.upsert_kernel(o.config, family_.source().hash);
    o.status = status;
    o.compiled.ok = status == BinaryStatus::ok;
    o.compiled.cubin = {'c', 'u', char('0' + label)};
    o.compiled.cache_key = "key" + std::to_string(label);
    o.compiled.arch = "sm_90";
    o.binary_id = db_.store_binary(0, o.kernel_id, o.compiled, status, "");
    return o;
  }
  std::vector<TrialResult> measure(const std::vector<CompileOutcome>& outcomes) {
    Deadline none;
    return measurer_->measure_on(family_, outcomes, &state_, &none);
  }
  // The worker's requests so far, one type a line.
  std::string asked() const { return worker_.read("log"); }

  FakeWorkerDir worker_;
  TempDir dir_;
  TuningDb db_;
  CompileStage compile_;
  WorkerClient client_;
  DeviceInfo device_;
  int64_t device_id_ = 0;
  std::optional<TrialRecorder> recorder_;
  std::optional<TrialMeasurer> measurer_;
  const GemmTemplate& family_ = template_named("sgemm_simt");
  const NamedProblem problem_{"square", Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256)};
  ProblemState state_;
};

TEST_F(TrialMeasurerTest, measures_a_kernel_once_after_preparing_cublas_and_records_it) {
  const CompileOutcome o = outcome(1);
  const auto results = measure({o});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TrialStatus::ok);
  EXPECT_EQ(asked(), "prepare\nevaluate\n");
  EXPECT_DOUBLE_EQ(state_.cublas_us, 11);
  EXPECT_DOUBLE_EQ(state_.best_us, 5.5);
  EXPECT_TRUE(state_.ran_any);
  EXPECT_TRUE(state_.vendor_timed);
  ASSERT_EQ(state_.ok_outcomes.size(), 1u);
  EXPECT_EQ(db_.trials().size(), 1u);
  // Measured again: the recorded trial is skipped without asking the worker.
  EXPECT_TRUE(measure({o}).empty());
  EXPECT_EQ(asked(), "prepare\nevaluate\n");
  EXPECT_EQ(recorder_->counts().skipped, 1u);
  // The table's line: the best with cuBLAS's time, not timed again when told not to.
  const ShapeReport report = measurer_->finish(state_, false);
  ASSERT_TRUE(report.best);
  EXPECT_EQ(report.best->config, o.config);
  EXPECT_DOUBLE_EQ(report.cublas_us, 11);
  EXPECT_EQ(asked(), "prepare\nevaluate\n");
}

TEST_F(TrialMeasurerTest, a_failed_compile_is_recorded_without_asking_the_worker) {
  const auto results = measure({outcome(2, BinaryStatus::compile_failed)});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TrialStatus::compile_failed);
  EXPECT_EQ(asked(), "");
  EXPECT_EQ(db_.trials().size(), 1u);
  EXPECT_EQ(measurer_->finish(state_, true).note, "no config ran correctly");
}

TEST_F(TrialMeasurerTest, a_problem_the_worker_cannot_prepare_gets_a_note_and_no_trial) {
  CublasTiming refused;
  refused.error = "out of memory";
  worker_.answer("prepare", WorkerResponse{PrepareResponse{refused}, false});
  EXPECT_TRUE(measure({outcome(3)}).empty());
  EXPECT_EQ(state_.note, "cannot prepare problem: out of memory");
  EXPECT_TRUE(db_.trials().empty());
  EXPECT_TRUE(measure({outcome(4)}).empty());  // not asked again
  EXPECT_EQ(asked(), "prepare\n");
  EXPECT_EQ(measurer_->finish(state_, true).note, "cannot prepare problem: out of memory");
}

TEST_F(TrialMeasurerTest, a_past_deadline_stops_a_problem_with_a_best_but_not_one_without) {
  Deadline past;
  past.at = 0;  // long gone
  // No best yet: the first kernel is measured anyway (one run only).
  EXPECT_EQ(measurer_->measure_on(family_, {outcome(5), outcome(6)}, &state_, &past).size(), 1u);
  EXPECT_DOUBLE_EQ(state_.best_us, 5.5);
  EXPECT_EQ(measurer_->measure_on(family_, {outcome(7)}, &state_, &past).size(), 0u);
  EXPECT_EQ(asked(), "prepare\nevaluate\n");
}

}  // namespace
}  // namespace tgemm
