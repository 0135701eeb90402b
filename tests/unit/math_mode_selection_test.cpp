// The opt-in 3xTF32 path of plain f32 calls (MathMode::f32_via_3xtf32): the tuned f32x3
// kernel of the same shape serves only when it was measured faster than the tuned f32 one;
// otherwise, and always without the mode, the f32 path. On fake and replayed tuned entries.
#include <gtest/gtest.h>

#include "db/tuning_db.h"
#include "src/dispatch/kernel_selector.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::TempDir;

GemmTypes f32x3_types() {
  GemmTypes t;
  t.compute = ComputeType::f32x3;
  return t;
}

const KernelConfig kFfma = testing::sgemm_config();
// gemm_naive computes f32x3 problems (in f32): it stands in for the tensor-core family here.
const KernelConfig kTensor{"gemm_naive", {{"BLOCK_X", 16}, {"BLOCK_Y", 8}}};

BestEntry tuned(GemmTypes types, KernelConfig config, double median_us, int64_t size = 4096) {
  BestEntry e;
  e.problem = Problem::packed(types, Op::N, Op::N, size, size, size);
  e.device_name = "NVIDIA H200";
  e.arch = "sm_90";
  e.config = std::move(config);
  e.template_hash = "hash-" + e.config.template_name;
  e.trial.config = e.config;
  e.trial.status = TrialStatus::ok;
  e.trial.time_median_us = median_us;
  return e;
}

Problem f32_problem(int64_t size = 4096) {
  return Problem::packed(GemmTypes{}, Op::N, Op::N, size, size, size);
}

TEST(MathModeSelection, a_faster_f32x3_kernel_serves_the_f32_call_under_the_mode_only) {
  const KernelSelector s({tuned(GemmTypes{}, kFfma, 2800), tuned(f32x3_types(), kTensor, 1500)}, {},
                         "sm_90", 132);
  Problem served;
  const auto fast = s.faster_3xtf32(f32_problem(), &served);
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->path, Selection::exact);
  EXPECT_EQ(fast->config, kTensor);
  EXPECT_EQ(fast->template_hash, "hash-gemm_naive");
  EXPECT_EQ(fast->tuned_key, Problem::packed(f32x3_types(), Op::N, Op::N, 4096, 4096, 4096).key());
  EXPECT_EQ(served.types, f32x3_types());
  EXPECT_EQ(served.m, 4096);
  // Without the mode the dispatcher asks choose(), which never crosses types.
  const KernelChoice plain = s.choose(f32_problem());
  EXPECT_EQ(plain.path, Selection::exact);
  EXPECT_EQ(plain.config, kFfma);
}

TEST(MathModeSelection, a_slower_or_equal_f32x3_kernel_leaves_the_f32_path) {
  for (double f32x3_us : {2800.0, 4000.0}) {
    const KernelSelector s(
        {tuned(GemmTypes{}, kFfma, 2800), tuned(f32x3_types(), kTensor, f32x3_us)}, {}, "sm_90");
    EXPECT_FALSE(s.faster_3xtf32(f32_problem())) << f32x3_us;
    EXPECT_EQ(s.choose(f32_problem()).config, kFfma);
  }
}

TEST(MathModeSelection, a_missing_f32x3_or_f32_entry_leaves_the_f32_path) {
  const KernelSelector no_f32x3({tuned(GemmTypes{}, kFfma, 2800)}, {}, "sm_90");
  EXPECT_FALSE(no_f32x3.faster_3xtf32(f32_problem()));
  // Another shape's f32x3 kernel is no measurement of this one.
  const KernelSelector other_shape(
      {tuned(GemmTypes{}, kFfma, 2800), tuned(f32x3_types(), kTensor, 10, 2048)}, {}, "sm_90");
  EXPECT_FALSE(other_shape.faster_3xtf32(f32_problem()));
  // Nothing says how fast FFMA is here: no claim that 3xTF32 beat it.
  const KernelSelector no_f32({tuned(f32x3_types(), kTensor, 1500)}, {}, "sm_90");
  EXPECT_FALSE(no_f32.faster_3xtf32(f32_problem()));
}

TEST(MathModeSelection, only_plain_f32_problems_and_kernels_that_run_are_switched) {
  const KernelSelector s({tuned(GemmTypes{}, kFfma, 2800), tuned(f32x3_types(), kTensor, 1500)}, {},
                         "sm_90");
  GemmTypes tf32;
  tf32.compute = ComputeType::tf32;
  EXPECT_FALSE(s.faster_3xtf32(Problem::packed(tf32, Op::N, Op::N, 4096, 4096, 4096)));
  EXPECT_FALSE(s.faster_3xtf32(Problem::packed(f32x3_types(), Op::N, Op::N, 4096, 4096, 4096)));
  // An f32x3 entry whose kernel refuses f32x3 (a damaged or foreign row) is not launched.
  const KernelSelector refusing(
      {tuned(GemmTypes{}, kFfma, 2800), tuned(f32x3_types(), kFfma, 1500)}, {}, "sm_90");
  EXPECT_FALSE(refusing.faster_3xtf32(f32_problem()));
}

// The rule on entries read back from a tuning database, as the dispatcher gets them.
TEST(MathModeSelection, replayed_from_a_tuning_database) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    DeviceInfo gpu;
    gpu.name = "NVIDIA H200";
    gpu.arch = "sm_90";
    gpu.sm_count = 132;
    const int64_t device = db.upsert_device(gpu);
    auto record = [&](const BestEntry& e) {
      const int64_t problem = db.upsert_problem(e.problem);
      db.record_trial(0, problem, db.upsert_kernel(e.config, e.template_hash), device, std::nullopt,
                      e.trial);
      db.update_best(problem, device);
    };
    record(tuned(GemmTypes{}, kFfma, 2800));  // 4096^3: f32x3 faster
    record(tuned(f32x3_types(), kTensor, 1500));
    record(tuned(GemmTypes{}, kFfma, 100, 512));  // 512^3: f32x3 slower
    record(tuned(f32x3_types(), kTensor, 140, 512));
    record(tuned(GemmTypes{}, kFfma, 900, 2048));  // 2048^3: no f32x3 tuned
  }
  auto records = open_tuning_records(path);
  const KernelSelector s(records->best_entries("NVIDIA H200", "sm_90"), {}, "sm_90", 132,
                         records->trials("NVIDIA H200", "sm_90"));
  const auto fast = s.faster_3xtf32(f32_problem());
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->config, kTensor);
  EXPECT_FALSE(s.faster_3xtf32(f32_problem(512)));
  EXPECT_FALSE(s.faster_3xtf32(f32_problem(2048)));
  EXPECT_EQ(s.choose(f32_problem(2048)).config, kFfma);
}

}  // namespace
}  // namespace tgemm
