// TrialRecorder on a scratch database: a trial recorded under this build counts as recorded,
// one of another build as stale (measured again), the best is the fastest current trial, and
// vendor calls and cuBLAS's time are stored for the problem.
#include "tuner/session/trial_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::TempDir;

TrialResult ok_trial(const KernelConfig& config, double us) {
  TrialResult t;
  t.config = config;
  t.status = TrialStatus::ok;
  t.time_min_us = t.time_median_us = t.time_max_us = us;
  t.runs = 10;
  return t;
}

class TrialRecorderTest : public ::testing::Test {
 protected:
  TrialRecorderTest() : db_(dir_.file("tgemm.db"), TuningDb::Mode::read_write) {
    device_.name = "NVIDIA H200";
    device_.arch = "sm_90";
    device_.driver_version = 13000;
    device_id_ = db_.upsert_device(device_);
    run_id_ = db_.begin_run("test", "tgemm", "sm_90");
  }
  TrialRecorder recorder(const DeviceInfo* device) {
    return TrialRecorder(db_, run_id_, device, device_id_, this_build(13000));
  }
  // A compiled outcome of the sgemm_simt config labelled `label`, under this build's hash.
  CompileOutcome outcome(int64_t label) {
    CompileOutcome o;
    o.config = testing::labelled_sgemm_config(label);
    o.kernel_id = db_.upsert_kernel(o.config, family_.source().hash);
    CompiledKernel c;
    c.ok = true;
    c.cubin = {'c', 'u', char('0' + label)};
    c.cache_key = "key" + std::to_string(label);
    c.arch = "sm_90";
    o.binary_id = db_.store_binary(run_id_, o.kernel_id, c, BinaryStatus::ok, "");
    return o;
  }

  TempDir dir_;
  TuningDb db_;
  DeviceInfo device_;
  int64_t device_id_ = 0, run_id_ = 0;
  const GemmTemplate& family_ = template_named("sgemm_simt");
  const Problem problem_ = Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256);
};

TEST_F(TrialRecorderTest, a_trial_recorded_under_this_build_is_current_and_counted_as_skipped) {
  TrialRecorder r = recorder(&device_);
  const int64_t problem = r.problem_id(problem_);
  const CompileOutcome o = outcome(1);
  EXPECT_FALSE(r.has_current_trial(problem, o.kernel_id, family_));
  r.record(problem, o, ok_trial(o.config, 5));
  EXPECT_TRUE(r.has_current_trial(problem, o.kernel_id, family_));
  EXPECT_EQ(r.counts().skipped, 1u);
  EXPECT_EQ(r.counts().stale, 0u);
  EXPECT_EQ(r.counts().total(), 1u);
  EXPECT_EQ(r.counts().by_status.at(TrialStatus::ok), 1u);
  ASSERT_EQ(db_.trials().size(), 1u);
  EXPECT_EQ(db_.trials()[0].measured_with, (MeasuredWith{this_build(13000).nvrtc_version, 13000}));
}

TEST_F(TrialRecorderTest, a_trial_of_another_driver_is_stale_counted_and_measured_again) {
  TrialRecorder r = recorder(&device_);
  const int64_t problem = r.problem_id(problem_);
  const CompileOutcome o = outcome(2);
  db_.record_trial(run_id_, problem, o.kernel_id, device_id_, o.binary_id, ok_trial(o.config, 5),
                   {this_build(13000).nvrtc_version, 12080});
  EXPECT_FALSE(r.has_current_trial(problem, o.kernel_id, family_));
  EXPECT_EQ(r.counts().stale, 1u);
  EXPECT_EQ(r.counts().skipped, 0u);
  EXPECT_EQ(r.counts().total(), 0u);  // counts what this run measured
}

TEST_F(TrialRecorderTest, the_best_is_the_fastest_current_trial_with_cublas_time) {
  TrialRecorder r = recorder(&device_);
  const int64_t problem = r.problem_id(problem_);
  EXPECT_FALSE(r.best(problem, problem_));
  const CompileOutcome slow = outcome(3), fast = outcome(4);
  r.record(problem, slow, ok_trial(slow.config, 9));
  r.record(problem, fast, ok_trial(fast.config, 4));
  r.record_cublas_time(problem, 6, std::nullopt);
  const auto best = r.best(problem, problem_);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config, fast.config);
  EXPECT_DOUBLE_EQ(best->trial.time_median_us, 4);
  EXPECT_DOUBLE_EQ(best->cublas_median_us, 6);
  // Compile only: no device, no best.
  TrialRecorder compile_only = recorder(nullptr);
  EXPECT_FALSE(compile_only.best(problem, problem_));
}

TEST_F(TrialRecorderTest, vendor_calls_are_trials_under_the_cublas_version) {
  TrialRecorder r = recorder(&device_);
  const int64_t problem = r.problem_id(problem_);
  r.record_vendor_trials(problem, {ok_trial(cublas_default_call(), 3)});
  const auto trials = db_.trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_TRUE(is_vendor_call(trials[0].trial.config));
  EXPECT_EQ(trials[0].template_hash, cublas_version());
  EXPECT_EQ(r.counts().total(), 0u);  // raced beside the kernels, not counted among them
}

}  // namespace
}  // namespace tgemm
