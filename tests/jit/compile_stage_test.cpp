// CompileStage on NVRTC (no GPU): batches queue into one pool and compile before they are
// collected, each config is one NVRTC program holding its helper entries, and the stats
// give the pool's throughput.
#include "tuner/compile/compile_stage.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "db/tuning_db.h"
#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/jit/cubin_resources.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::sgemm_config;

// Small tiles (fast compiles); deterministic split-K, so the cubin needs all three entries.
KernelConfig small_split(int64_t vec) {
  return sgemm_config({{"BM", 32},
                       {"BN", 32},
                       {"BK", 8},
                       {"TM", 4},
                       {"TN", 4},
                       {"WARP_N", 8},
                       {"VEC", vec},
                       {"SPLIT_K", 4},
                       {"SPLIT_MODE", 1},
                       {"STAGES", 1}});
}

class CompileStageTest : public ::testing::Test {
 protected:
  testing::TempDir dir_{"compile_stage"};
  TuningDb db_{dir_.file("t.db"), TuningDb::Mode::read_write};
  int64_t run_ = db_.begin_run("test", "test", "sm_75");
  const GemmTemplate& family_ = template_named("sgemm_simt");
  Problem variant_ = build_variant(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64));
};

// The pool works ahead of the caller: a batch compiles while the one before it is measured.
TEST_F(CompileStageTest, queued_batches_compile_before_they_are_collected) {
  CompileStage stage(db_, run_, arch_limits("sm_75"), 2);
  const auto first = stage.submit(family_, {small_split(1)}, variant_);
  const auto second = stage.submit(family_, {small_split(2), small_split(4)}, variant_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (stage.compiles_finished() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stage.compiles_finished(), 3u);

  const auto b = stage.collect(second, {});
  const auto a = stage.collect(first, {});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a[0].config, small_split(1));
  EXPECT_EQ(b[1].config, small_split(4));
  for (const auto* out : {&a[0], &b[0], &b[1]}) {
    EXPECT_TRUE(out->compiled.ok) << out->compiled.error;
    EXPECT_GT(out->binary_id, 0);
    EXPECT_FALSE(out->from_cache);
  }
  EXPECT_THROW(stage.collect(first, {}), Error);
}

// Longest first: a batch's heaviest compile (most unrolled work per thread) starts first, so the
// batch does not end on it with the other threads idle. One thread: stored in queue order.
TEST_F(CompileStageTest, queues_the_heaviest_compile_of_a_batch_first) {
  CompileStage stage(db_, run_, arch_limits("sm_75"), 1);
  const KernelConfig heavy = sgemm_config({{"BM", 64}, {"BN", 64}, {"BK", 16}});  // 8x8x16
  const auto out = stage.run(family_, {small_split(1), heavy}, variant_, {});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].compiled.ok && out[1].compiled.ok) << out[0].reason << out[1].reason;
  EXPECT_LT(out[1].binary_id, out[0].binary_id);
}

// One NVRTC program per config: its one stored binary holds the main kernel and the helpers
// (beta pre-pass, split-K reduction), none compiled on its own.
TEST_F(CompileStageTest, each_config_is_one_program_with_its_helper_entries) {
  CompileStage stage(db_, run_, arch_limits("sm_75"), 2);
  const auto out = stage.run(family_, {small_split(1), small_split(2)}, variant_, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(stage.stats().built, 2u);
  for (const CompileOutcome& o : out) {
    ASSERT_TRUE(o.compiled.ok) << o.compiled.error;
    const auto entries = family_.entries(o.config);
    ASSERT_EQ(entries.size(), 3u);
    for (const std::string& entry : entries)
      EXPECT_TRUE(read_cubin_resources(o.compiled.cubin, entry, "sm_75").found) << entry;
  }
}

// built / seconds is the pool's throughput, with each compile's wall and CPU time; a rerun
// served from the database adds nothing.
TEST_F(CompileStageTest, stats_count_fresh_compiles_over_the_pools_busy_time) {
  {
    CompileStage stage(db_, run_, arch_limits("sm_75"), 2);
    stage.run(family_, {small_split(1), small_split(2)}, variant_, {});
    const CompileStats s = stage.stats();
    EXPECT_EQ(s.built, 2u);
    EXPECT_EQ(s.compiled + s.pruned + s.failed, 2u);
    EXPECT_GT(s.seconds, 0);
    EXPECT_DOUBLE_EQ(s.configs_per_second(), 2 / s.seconds);
    // Per compile: the compiling thread's CPU time, within its wall time.
    EXPECT_GT(s.cpu_seconds_per_compile(), 0);
    EXPECT_LE(s.cpu_seconds_per_compile(), s.wall_seconds_per_compile() + 1e-3);
    EXPECT_DOUBLE_EQ(s.wall_seconds_per_compile(), s.compile_wall_seconds / 2);
    EXPECT_GE(s.wait_seconds_per_compile(), 0);
    EXPECT_LE(s.cpu_seconds_per_compile() + s.wait_seconds_per_compile(),
              s.wall_seconds_per_compile() + 2e-3);
  }
  CompileStage again(db_, run_, arch_limits("sm_75"), 2);
  again.run(family_, {small_split(1), small_split(2)}, variant_, {});
  const CompileStats s = again.stats();
  EXPECT_EQ(s.built, 0u);
  EXPECT_EQ(s.cached, 2u);
  EXPECT_EQ(s.seconds, 0);
  EXPECT_EQ(s.configs_per_second(), 0);
  EXPECT_EQ(s.cpu_seconds_per_compile(), 0);
  EXPECT_EQ(s.wall_seconds_per_compile(), 0);
  EXPECT_EQ(s.wait_seconds_per_compile(), 0);
}

}  // namespace
}  // namespace tgemm
