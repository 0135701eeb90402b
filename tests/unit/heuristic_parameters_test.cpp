// Each factor of ModelParameters and SelectorParameters changes what it says it changes: a
// prediction moves, or a choice flips, when it alone is set another way.
#include "src/model/heuristic_parameters.h"

#include <gtest/gtest.h>

#include "src/dispatch/kernel_selector.h"
#include "src/templates/template_registry.h"
#include "tests/common/h200_model.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/trial_records.h"

namespace tgemm {
namespace {

using testing::sgemm_config;

Problem nn(int64_t m, int64_t n, int64_t k) {
  return Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k);
}

// One prediction of `config` on `p` with the parameters `set` changes from the defaults.
template <typename Set>
double predicted(const KernelConfig& config, const Problem& p, Set set,
                 const char* family = "sgemm_simt") {
  ModelParameters params;
  set(params);
  return testing::h200_model(family, {}, params).predict_us(config, p);
}

double predicted(const KernelConfig& config, const Problem& p, const char* family = "sgemm_simt") {
  return predicted(
      config, p, [](ModelParameters&) {}, family);
}

const KernelConfig kTile = sgemm_config({{"BM", 64}, {"BN", 64}, {"TM", 4}, {"TN", 4}});

TEST(ModelParameters, launch_us_is_paid_once_per_launch) {
  const Problem p = nn(256, 256, 256);
  const size_t launches = template_named("sgemm_simt").plan_launch(kTile, p, 132).count;
  const double more = predicted(kTile, p, [](ModelParameters& m) { m.launch_us += 10; });
  EXPECT_NEAR(more - predicted(kTile, p), 10.0 * double(launches), 1e-9);
}

TEST(ModelParameters, a_slower_l2_makes_the_tile_loads_the_bound) {
  const Problem p = nn(4096, 4096, 4096);
  EXPECT_GT(predicted(kTile, p, [](ModelParameters& m) { m.l2_over_dram = 0.05; }),
            1.5 * predicted(kTile, p));
}

TEST(ModelParameters, more_warps_to_hide_latency_slow_a_config_of_few_warps) {
  const Problem p = nn(4096, 4096, 4096);
  EXPECT_GT(predicted(kTile, p, [](ModelParameters& m) { m.warps_to_hide_latency = 256; }),
            1.2 * predicted(kTile, p));
  EXPECT_DOUBLE_EQ(predicted(kTile, p, [](ModelParameters& m) { m.warps_to_hide_latency = 1; }),
                   predicted(kTile, p, [](ModelParameters& m) { m.warps_to_hide_latency = 2; }));
}

TEST(ModelParameters, spill_factor_scales_only_a_config_whose_registers_are_capped) {
  // 128x128 tiles of 8x8 per thread want ~120 registers; four blocks of 256 threads per SM
  // cap them at 64.
  const KernelConfig capped = sgemm_config({{"BM", 128}, {"BN", 128}, {"MIN_BLOCKS", 4}});
  const Problem p = nn(4096, 4096, 4096);
  const auto spill = [](double f) { return [f](ModelParameters& m) { m.spill_factor = f; }; };
  EXPECT_DOUBLE_EQ(predicted(capped, p, spill(6)), 2 * predicted(capped, p, spill(3)));
  EXPECT_DOUBLE_EQ(predicted(kTile, p, spill(6)), predicted(kTile, p, spill(3)));
}

TEST(ModelParameters, partial_cost_prices_the_split_k_partials_only) {
  KernelConfig split = kTile;
  split.set("SPLIT_K", 8);
  const Problem p = nn(2048, 2048, 2048);
  const auto cost = [](double c) { return [c](ModelParameters& m) { m.partial_cost = c; }; };
  EXPECT_GT(predicted(split, p, cost(6)), predicted(split, p, cost(3)) + 1.0);
  EXPECT_DOUBLE_EQ(predicted(kTile, p, cost(6)), predicted(kTile, p, cost(3)));
}

TEST(ModelParameters, narrow_copy_cost_is_the_gap_between_copy_widths) {
  KernelConfig wide = sgemm_config(), narrow = sgemm_config();
  wide.set("VEC", 4);
  narrow.set("VEC", 1);
  const Problem p = nn(1760, 128, 1760);
  const auto free_copies = [](ModelParameters& m) { m.narrow_copy_cost = 0; };
  EXPECT_NEAR(predicted(narrow, p, free_copies) / predicted(wide, p, free_copies), 1.0, 1e-9);
  EXPECT_GT(predicted(narrow, p) / predicted(wide, p), 1.08);
}

TEST(ModelParameters, serial_read_us_prices_each_partial_a_last_block_reads) {
  const KernelConfig last_block_sums = KernelConfig::from_params_text(
      "gemv_simt",
      "SIDE=1,ROWS=8,VEC=4,WARPS=8,KB=512,LW=4,SPLIT_MODE=2,PREFETCH=1,STAGES=0,KLANES=8,"
      "CLUSTER=1");
  const Problem p = nn(512, 8, 500000);
  const int64_t reads =
      template_named("gemv_simt").describe(last_block_sums, p).serial_partial_reads;
  ASSERT_GT(reads, 0);
  const double doubled = predicted(
      last_block_sums, p, [](ModelParameters& m) { m.serial_read_us *= 2; }, "gemv_simt");
  EXPECT_NEAR(doubled - predicted(last_block_sums, p, "gemv_simt"), 0.032 * double(reads), 1e-6);
}

TEST(ModelParameters, fixed_steps_weigh_most_on_short_k_slices) {
  const auto steps = [](double s) { return [s](ModelParameters& m) { m.fixed_steps = s; }; };
  const double short_k = predicted(kTile, nn(4096, 4096, 64), steps(40)) /
                         predicted(kTile, nn(4096, 4096, 64), steps(4));
  const double long_k = predicted(kTile, nn(4096, 4096, 8192), steps(40)) /
                        predicted(kTile, nn(4096, 4096, 8192), steps(4));
  EXPECT_GT(short_k, 2.0);
  EXPECT_LT(long_k, 1.1);
}

// A tuned problem whose best kernel ran `us` microseconds.
BestEntry best(const Problem& p, const KernelConfig& config, double us) {
  BestEntry e;
  e.problem = p;
  e.device_name = "NVIDIA H200";
  e.arch = "sm_90";
  e.config = config;
  e.template_hash = "abc";
  e.trial.status = TrialStatus::ok;
  e.trial.time_median_us = us;
  return e;
}

KernelChoice choose(const std::vector<BestEntry>& tuned, const std::vector<TrialRecord>& trials,
                    const Problem& here, SelectorParameters params,
                    std::vector<DefaultKernel> defaults = {}) {
  return KernelSelector(tuned, std::move(defaults), "sm_90", 132, trials, {}, params).choose(here);
}

TEST(SelectorParameters, good_there_bounds_which_neighbour_configs_are_evidence) {
  // On the neighbour the small tiles ran 1.6x slower than its best; carried to a 40-row
  // problem, where the big tiles waste most of their rows, they are predicted faster.
  const KernelConfig fast = sgemm_config({{"BM", 128}, {"VEC", 4}}),
                     small = sgemm_config({{"BM", 32}, {"VEC", 4}});
  const Problem there = nn(2048, 1024, 1024), here = nn(40, 1024, 1024);
  const std::vector<TrialRecord> trials = {testing::ok_trial_record(there, fast, 100),
                                           testing::ok_trial_record(there, small, 160)};
  SelectorParameters lenient;
  lenient.good_there = 2;
  EXPECT_EQ(choose({best(there, fast, 100)}, trials, here, {}).config, fast)
      << choose({best(there, fast, 100)}, trials, here, {}).config.canonical_name();
  EXPECT_EQ(choose({best(there, fast, 100)}, trials, here, lenient).config, small)
      << choose({best(there, fast, 100)}, trials, here, lenient).config.canonical_name();
}

TEST(SelectorParameters, far_penalty_and_alignment_penalty_set_the_distance_factor) {
  const Problem here = nn(4096, 4096, 4096), far = nn(1024, 1024, 1024);
  Problem misaligned = far;
  misaligned.align_a = 4;
  SelectorParameters none, doubled;
  none.far_penalty = 0;
  doubled.far_penalty = 0.1;
  EXPECT_DOUBLE_EQ(carried_distance_factor(far, here, none), 1.0);
  const double excess = carried_distance_factor(far, here) - 1;
  EXPECT_GT(excess, 0.0);
  EXPECT_NEAR(carried_distance_factor(far, here, doubled) - 1, 2 * excess, 1e-12);
  SelectorParameters alike;
  alike.alignment_penalty = 0;
  EXPECT_GT(carried_distance_factor(misaligned, here), carried_distance_factor(far, here));
  EXPECT_DOUBLE_EQ(carried_distance_factor(misaligned, here, alike),
                   carried_distance_factor(far, here, alike));
}

TEST(SelectorParameters, neighbours_bounds_how_many_tuned_shapes_lend_their_records) {
  // The nearest tuned shape ran its config at 20 TFLOP/s; the second nearest ran another at 45.
  const KernelConfig near_best = sgemm_config({{"BM", 128}, {"BN", 64}}),
                     far_best = sgemm_config({{"BM", 64}, {"BN", 128}});
  const Problem near = nn(4096, 4096, 4096), far = nn(2048, 2048, 2048),
                here = nn(4000, 4000, 4000);
  const std::vector<BestEntry> tuned = {best(near, near_best, near.flops() / 20e6),
                                        best(far, far_best, far.flops() / 45e6)};
  const std::vector<TrialRecord> trials = {
      testing::ok_trial_record(near, near_best, near.flops() / 20e6),
      testing::ok_trial_record(far, far_best, far.flops() / 45e6)};
  SelectorParameters one;
  one.neighbours = 1;
  EXPECT_EQ(choose(tuned, trials, here, {}).config, far_best);
  EXPECT_EQ(choose(tuned, trials, here, one).config, near_best);
}

TEST(SelectorParameters, unmeasured_margin_guards_a_split_sibling_never_run_nearby) {
  const KernelConfig split64 = sgemm_config(
      {{"BM", 32}, {"BN", 32}, {"TM", 4}, {"TN", 4}, {"SPLIT_K", 64}, {"MIN_BLOCKS", 2}});
  KernelConfig split256 = split64;
  split256.set("SPLIT_K", 256);
  const KernelConfig other256 =
      sgemm_config({{"BM", 16}, {"BN", 64}, {"TM", 4}, {"TN", 4}, {"VEC", 1}, {"SPLIT_K", 256}});
  const Problem there = nn(64, 64, 16384), here = nn(64, 64, 131072);
  const std::vector<TrialRecord> trials = {testing::ok_trial_record(there, split64, 15.0),
                                           testing::ok_trial_record(there, other256, 40.0)};
  const std::vector<BestEntry> tuned = {best(there, split64, 15.0)};
  SelectorParameters wary;
  wary.unmeasured_margin = 100;
  EXPECT_EQ(choose(tuned, trials, here, {}).config, split256);
  EXPECT_EQ(choose(tuned, trials, here, wary).config, split64);
}

// A streaming kernel's bytes move at the rate its warps per SM reach: the GEMV tuned for a
// long side keeps few warps per SM on a short one (on the H200, 1760x16x1760 served
// 7680x16x2560's fastest GEMV ran 26.9 us against 15.5 for its best), so a config that keeps
// the SMs busy there wins, though a little slower on the neighbour; were a few warps enough to
// stream at the full rate, the one faster on the neighbour would.
TEST(SelectorParameters, stream_warps_per_sm_sets_where_a_streaming_rate_saturates) {
  const auto gemv = [](const char* params) {
    return KernelConfig::from_params_text("gemv_simt", params);
  };
  const KernelConfig few_warps =
      gemv("SIDE=1,ROWS=16,VEC=4,WARPS=4,KB=512,LW=4,SPLIT_MODE=2,PREFETCH=1,STAGES=0,KLANES=8");
  const KernelConfig many_warps =
      gemv("SIDE=1,ROWS=16,VEC=4,WARPS=8,KB=256,LW=2,SPLIT_MODE=2,PREFETCH=1,STAGES=0,KLANES=16");
  const Problem there = nn(7680, 16, 2560), here = nn(1760, 16, 1760);
  const std::vector<TrialRecord> trials = {testing::ok_trial_record(there, few_warps, 50),
                                           testing::ok_trial_record(there, many_warps, 56)};
  const std::vector<BestEntry> tuned = {best(there, few_warps, 50)};
  SelectorParameters saturated;
  saturated.stream_warps_per_sm = 1;
  EXPECT_EQ(choose(tuned, trials, there, {}).config, few_warps);
  const KernelChoice c = choose(tuned, trials, here, {});
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, many_warps);
  EXPECT_EQ(choose(tuned, trials, here, saturated).config, few_warps);
}

// What the shipped defaults alone serve `p` with on an H200 under `params`.
KernelConfig default_for(const Problem& p, SelectorParameters params) {
  return choose({}, {}, p, params, shipped_default_kernels()).config;
}

// The defaults' sizing rule on a 1000^3 problem: 128x128 tiles launch 64 blocks, 64x128 ones
// 128 on 132 SMs.
TEST(SelectorParameters, full_wave_decides_which_default_lines_count_as_filling_the_gpu) {
  const Problem p = nn(1000, 1000, 1000);
  const auto pick = [&](SelectorParameters params) { return default_for(p, params); };
  EXPECT_EQ(pick({}).get("BM"), 64);
  SelectorParameters strict;
  strict.full_wave = 1.0;  // 128 of 132 is short of a wave now
  EXPECT_NE(pick(strict), pick({}));
  SelectorParameters lax;
  lax.full_wave = 0.2;  // 32 blocks count as a wave: the first well-filled line, 128x256
  EXPECT_EQ(pick(lax).get("BN"), 256);
}

TEST(SelectorParameters, good_fill_and_clearly_better_fill_rank_the_default_lines) {
  // 35 rows fill three 16-row tiles best of the lines; with any fill good enough the first
  // line that launches a wave takes it, and with no later line clearly better the first of
  // the lines that waste more than good_fill allows.
  const Problem p = nn(35, 8457, 2560);
  const auto pick = [&](SelectorParameters params) { return default_for(p, params); };
  EXPECT_EQ(pick({}).get("BM"), 16);
  SelectorParameters any_fill;
  any_fill.good_fill = 0;  // the first line that launches a wave, whatever it wastes
  EXPECT_NE(pick(any_fill).get("BM"), 16);
  SelectorParameters first_fullest;
  first_fullest.good_fill = 1.01;           // no line is good enough at once
  first_fullest.clearly_better_fill = 1e9;  // and no later line clearly better: the first
  EXPECT_NE(pick(first_fullest).get("BM"), 16);
}

}  // namespace
}  // namespace tgemm
