// The dispatcher's choice of kernel: exact -> nearest -> default -> cuBLAS, on plain entries
// and on a fixture database written through TuningDb.
#include "src/dispatch/kernel_selector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "src/model/performance_model.h"
#include "src/templates/template_registry.h"
#include "tests/common/h200_model.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/trial_records.h"

namespace tgemm {
namespace {

KernelConfig simt(int64_t bm, int64_t vec, int64_t split_k = 1) {
  return testing::sgemm_config({{"BM", bm}, {"VEC", vec}, {"SPLIT_K", split_k}});
}

// A tuned problem whose best kernel ran at `tflops`.
BestEntry entry(int64_t m, int64_t n, int64_t k, KernelConfig config, Op a = Op::N, Op b = Op::N,
                double tflops = 40) {
  BestEntry e;
  e.problem = Problem::packed(GemmTypes{}, a, b, m, n, k);
  e.device_name = "NVIDIA H200";
  e.arch = "sm_90";
  e.config = std::move(config);
  e.template_hash = "abc";
  e.trial.status = TrialStatus::ok;
  e.trial.time_median_us = e.problem.flops() / (tflops * 1e6);
  return e;
}

std::vector<DefaultKernel> defaults() {
  return {{"sm_90", GemmTypes{}, simt(256, 4)},
          {"*", GemmTypes{}, simt(64, 4)},
          {"*", GemmTypes{}, simt(32, 1)}};
}

TEST(KernelSelector, exact_key_wins) {
  KernelSelector s({entry(4096, 4096, 4096, simt(128, 4)), entry(4000, 4096, 4096, simt(64, 4))},
                   defaults(), "sm_90");
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096));
  EXPECT_EQ(c.path, Selection::exact);
  EXPECT_EQ(c.config, simt(128, 4));
  EXPECT_EQ(c.template_hash, "abc");
}

// A database is input: a best or a trial whose parameters its family's space refuses (VEC=0,
// which the host side divides by) is never used, and the rest of the database still is.
TEST(KernelSelector, skips_entries_whose_config_the_space_refuses) {
  const KernelConfig zero_vec = simt(128, 0);
  const Problem tuned = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096);
  const Problem other = Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048);
  KernelSelector s({entry(4096, 4096, 4096, zero_vec), entry(2048, 2048, 2048, simt(64, 4))},
                   defaults(), "sm_90", 132,
                   {testing::ok_trial_record(tuned, zero_vec, 1.0),
                    testing::ok_trial_record(other, simt(64, 4), 2.0)});
  const KernelChoice c = s.choose(tuned);
  EXPECT_NE(c.config, zero_vec);
  EXPECT_NE(c.path, Selection::exact);
  EXPECT_EQ(s.choose(other).config, simt(64, 4));
  EXPECT_NE(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4000, 4096, 4096)).config,
            zero_vec);
}

// Seen on the H200: the defaults always tried made a 16-slice split-K kernel the fastest on
// 128^3 (8 K tiles of 16). It was measured correct there, so it is served there, while a
// shape nobody tuned never gets a split with empty slices. (Here: 8 K tiles of 8.)
TEST(KernelSelector, exact_serves_a_measured_best_that_splits_k_finer_than_its_tiles) {
  const KernelConfig split = simt(64, 1, 16);
  ASSERT_EQ(split.get("BK"), 8);
  KernelSelector s({entry(128, 128, 64, split), entry(256, 256, 256, simt(64, 4))}, defaults(),
                   "sm_90", 132);
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 128, 128, 64));
  EXPECT_EQ(c.path, Selection::exact);
  EXPECT_EQ(c.config, split);
  EXPECT_FALSE(can_run(split, Problem::packed(GemmTypes{}, Op::N, Op::N, 120, 128, 64), "sm_90"));
  EXPECT_NE(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 120, 128, 64)).config, split);
}

// Only tuned shapes of the same layout compete, the nearest in log space: the TN entry at
// 3000^3 is nearer to 2900^3 than either NN one but never serves it. (Which NN neighbour wins
// is the predicted time's business: see the tests below.)
TEST(KernelSelector, nearest_in_log_space_of_same_layout) {
  const Problem big = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096);
  const Problem small = Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256);
  const Problem far = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 8192, 64);
  // 256^3 at 3 TFLOP/s (11 us), as on the H200: small shapes do not reach big ones' rates.
  KernelSelector s(
      {entry(4096, 4096, 4096, simt(128, 4)), entry(256, 256, 256, simt(64, 4), Op::N, Op::N, 3),
       entry(64, 8192, 64, simt(32, 2), Op::N, Op::N, 1),
       entry(3000, 3000, 3000, simt(32, 4), Op::T, Op::N)},
      defaults(), "sm_90", 132);
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2900, 2900, 2900));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_TRUE(c.tuned_key == big.key() || c.tuned_key == small.key()) << c.tuned_key;
  EXPECT_NE(c.config, simt(32, 4));
  auto near_small = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 300, 200, 256));
  EXPECT_EQ(near_small.tuned_key, small.key());
  EXPECT_EQ(near_small.config, simt(64, 4));
  EXPECT_NE(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 300, 200, 256)).tuned_key,
            far.key());
}

TEST(KernelSelector, nearest_skips_kernels_that_cannot_run_the_problem) {
  KernelSelector s({entry(1024, 1024, 1024, simt(128, 4)), entry(64, 64, 63, simt(64, 1))}, {},
                   "sm_90");
  // k = 1023: lda is odd, so the VEC=4 kernel tuned at 1024^3 cannot load A.
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1023));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, simt(64, 1));
}

// A recorded trial of `config` on m x n x k (NN) at `tflops`.
TrialRecord trial(int64_t m, int64_t n, int64_t k, const KernelConfig& config, double tflops) {
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k);
  TrialRecord r = testing::ok_trial_record(p, config, p.flops() / (tflops * 1e6));
  r.template_hash = "abc";
  return r;
}

// An exact entry is evidence for the families its problem tried. Seen on the H200 (issue 45): a
// time budget left three problems with gemm_mma trials only, and their exact entries were
// served at 0.26-0.49x cuBLAS where their tuned neighbours' wgmma kernels ran far faster. A
// family the neighbours offer that the problem never tried takes it when predicted faster than
// its measured best; one it tried, however slow or failed, leaves the exact entry served.
KernelConfig warp_line() {
  return KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=128,BN=256,BK=8,WM=64,WN=64,TM=16,TN=8,STAGES=4,VEC=4,SPLIT_K=1,TAIL_SPLIT=1,"
      "SWIZZLE=8,MIN_BLOCKS=1,PACK_B=0");
}

struct UntriedFamily {
  std::vector<BestEntry> tuned;
  std::vector<TrialRecord> trials;
  Problem here = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096);

  // Neighbours at 2048^3 and 8192^3 whose best is the warp family's at 45 TFLOP/s; 4096^3 tuned
  // with sgemm_simt only, its best at `simt_tflops`.
  explicit UntriedFamily(double simt_tflops) {
    for (int64_t size : {2048, 8192}) {
      tuned.push_back(entry(size, size, size, warp_line(), Op::N, Op::N, 45));
      trials.push_back(trial(size, size, size, warp_line(), 45));
      trials.push_back(trial(size, size, size, simt(128, 4), 20));
    }
    tuned.push_back(entry(4096, 4096, 4096, simt(128, 4), Op::N, Op::N, simt_tflops));
    trials.push_back(trial(4096, 4096, 4096, simt(128, 4), simt_tflops));
  }
  KernelChoice choose() const {
    return KernelSelector(tuned, {}, "sm_90", 132, trials).choose(here);
  }
};

TEST(KernelSelector, an_untried_family_predicted_faster_than_the_exact_best_serves_it) {
  const KernelChoice c = UntriedFamily(10).choose();
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, warp_line());
  EXPECT_NE(c.rule.find("never tried sgemm_warp"), std::string::npos) << c.rule;
}

TEST(KernelSelector, an_exact_best_faster_than_an_untried_familys_prediction_is_served) {
  const KernelChoice c = UntriedFamily(80).choose();
  EXPECT_EQ(c.path, Selection::exact);
  EXPECT_EQ(c.config, simt(128, 4));
  EXPECT_NE(c.rule.find("faster than sgemm_warp"), std::string::npos) << c.rule;
}

TEST(KernelSelector, an_exact_best_whose_problem_tried_the_neighbours_family_is_served) {
  UntriedFamily db(10);
  TrialRecord failed = trial(4096, 4096, 4096, warp_line(), 45);
  failed.trial.status = TrialStatus::wrong_result;
  db.trials.push_back(failed);
  const KernelChoice c = db.choose();
  EXPECT_EQ(c.path, Selection::exact);
  EXPECT_EQ(c.config, simt(128, 4));
  EXPECT_NE(c.rule.find("tuned on this problem"), std::string::npos) << c.rule;
}

// The vendor library as a contender (src/core/vendor_call.h): where its call won the race on a
// problem, that problem is served by it; its time is no evidence for other shapes, where our own
// fastest kernel of that problem stands for it.
LtAlgoConfig lt_algo() {
  LtAlgoConfig algo;
  algo.algo_id = 66;
  algo.tile_id = 18;
  algo.stages_id = 9;
  return algo;
}

BestEntry vendor_entry(int64_t size, const KernelConfig& call, double tflops,
                       const KernelConfig& ours, double our_tflops) {
  BestEntry e = entry(size, size, size, call, Op::N, Op::N, tflops);
  e.template_hash = "cuBLAS 13.0.0";
  e.tgemm_best = e.trial;
  e.tgemm_best->config = ours;
  e.tgemm_best->time_median_us = e.problem.flops() / (our_tflops * 1e6);
  e.tgemm_best_hash = "abc";
  return e;
}

TEST(KernelSelector, a_vendor_call_that_won_its_problem_serves_it_with_its_algorithm) {
  const KernelConfig call = cublaslt_call(lt_algo());
  const Problem here = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096);
  std::vector<TrialRecord> trials = {testing::ok_trial_record(here, call, 2000),
                                     trial(4096, 4096, 4096, simt(128, 4), 20)};
  trials[0].template_hash = "cuBLAS 13.0.0";
  const KernelChoice c = KernelSelector({vendor_entry(4096, call, 60, simt(128, 4), 20)},
                                        defaults(), "sm_90", 132, trials)
                             .choose(here);
  EXPECT_EQ(c.path, Selection::exact);
  EXPECT_EQ(c.config, call);
  EXPECT_EQ(lt_algo_of(c.config), lt_algo());
  EXPECT_EQ(c.template_hash, "cuBLAS 13.0.0");
  EXPECT_NE(c.rule.find("cuBLASLt (cublasLtMatmul, algorithm 66"), std::string::npos) << c.rule;
  EXPECT_NE(c.rule.find("fastest tuned on this problem"), std::string::npos) << c.rule;
}

TEST(KernelSelector, a_neighbours_vendor_best_is_never_carried_but_its_own_fastest_kernel_is) {
  for (bool with_trials : {false, true}) {
    std::vector<BestEntry> tuned = {
        vendor_entry(2048, cublas_default_call(), 60, warp_line(), 45),
        vendor_entry(8192, cublaslt_call(lt_algo()), 60, warp_line(), 45)};
    std::vector<TrialRecord> trials;
    if (with_trials)
      for (const BestEntry& e : tuned) {
        trials.push_back(testing::ok_trial_record(e.problem, e.config, e.trial.time_median_us));
        trials.push_back(trial(e.problem.m, e.problem.n, e.problem.k, warp_line(), 45));
      }
    const KernelChoice c =
        KernelSelector(tuned, {}, "sm_90", 132, trials)
            .choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 4096, 4096));
    EXPECT_EQ(c.path, Selection::nearest) << with_trials;
    EXPECT_EQ(c.config, warp_line()) << with_trials;
  }
}

TEST(KernelSelector, a_vendor_best_yields_to_an_untried_family_predicted_faster) {
  // 4096^3 tried only cuBLAS and sgemm_simt; its neighbours' sgemm_warp is predicted far faster.
  UntriedFamily db(10);
  db.tuned.back() = vendor_entry(4096, cublas_default_call(), 12, simt(128, 4), 10);
  db.trials.push_back(testing::ok_trial_record(db.here, cublas_default_call(),
                                               db.tuned.back().trial.time_median_us));
  const KernelChoice c = db.choose();
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, warp_line());
  EXPECT_NE(c.rule.find("cuBLAS (cublasGemmEx"), std::string::npos) << c.rule;
}

TEST(KernelSelector, transfers_the_measured_config_with_the_best_predicted_time) {
  const KernelConfig fast = simt(128, 4), slow = simt(64, 4), narrow = simt(64, 1);
  std::vector<BestEntry> tuned = {entry(2048, 2048, 2048, fast), entry(8192, 8192, 8192, fast)};
  std::vector<TrialRecord> trials = {
      trial(2048, 2048, 2048, fast, 40), trial(2048, 2048, 2048, slow, 30),
      trial(2048, 2048, 2048, narrow, 20), trial(8192, 8192, 8192, fast, 42),
      trial(8192, 8192, 8192, slow, 32)};
  KernelSelector s(tuned, defaults(), "sm_90", 132, trials);
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4000, 4000, 4000));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, fast);
  // 4001^3 is misaligned: of everything measured nearby only the VEC=1 kernel can load it.
  auto odd = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4001, 4001, 4001));
  EXPECT_EQ(odd.path, Selection::nearest);
  EXPECT_EQ(odd.config, narrow);
  EXPECT_EQ(odd.tuned_key, Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048).key());
}

// A config that ran 3x slower than the best on the neighbour is not transferred even where
// the padded-work ratio favours its smaller tiles: that ratio cannot tell memory-bound from
// compute-bound work (replayed on the H200 databases of sessions 3 to 5, leaving this rule
// out served the naive kernel to 1x4096x4096). Only configs that can run here compete.
TEST(KernelSelector, does_not_transfer_a_config_that_was_slow_on_the_neighbour) {
  const KernelConfig fast = simt(128, 4), small_tiles = simt(32, 4);
  std::vector<BestEntry> tuned = {entry(2048, 1024, 1024, fast)};
  std::vector<TrialRecord> trials = {trial(2048, 1024, 1024, fast, 30),
                                     trial(2048, 1024, 1024, small_tiles, 10)};
  KernelSelector s(tuned, defaults(), "sm_90", 132, trials);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 40, 1024, 1024));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, fast);
}

// Seen on the H200 (session 6): 6144x4x2048 left out of deepbench was served the split-K
// FFMA kernel measured on its N = 16 neighbours (42.8 us) although the GEMV line tuned for it
// runs 29.2 us: that line cannot run N = 16, so no neighbour measured it. A default never
// measured nearby is now predicted by the model, scaled by its own record on this GPU.
TEST(KernelSelector, predicts_a_default_never_measured_nearby_from_its_own_record) {
  const KernelConfig ffma = simt(64, 2, 16);
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt", "SIDE=1,ROWS=4,VEC=2,WARPS=8,KB=512,LW=2,SPLIT_MODE=1");
  // Four FFMA shapes nearer than the GEMV's own (the selector weighs four neighbours).
  std::vector<BestEntry> tuned = {entry(4096, 16, 4096, ffma), entry(7680, 16, 2560, ffma),
                                  entry(4096, 16, 2048, ffma), entry(6144, 16, 4096, ffma),
                                  entry(8192, 4, 65536, gemv)};
  std::vector<TrialRecord> trials = {
      trial(4096, 16, 4096, ffma, 11), trial(7680, 16, 2560, ffma, 11),
      trial(4096, 16, 2048, ffma, 11), trial(6144, 16, 4096, ffma, 11)};
  // 2.1 GB of A streamed in 600 us: 3.6 TB/s.
  const Problem stream = Problem::packed(GemmTypes{}, Op::N, Op::N, 8192, 4, 65536);
  trials.push_back(testing::ok_trial_record(stream, gemv, 600));
  std::vector<DefaultKernel> table = defaults();
  table.push_back({"*", GemmTypes{}, gemv});
  KernelSelector s(tuned, table, "sm_90", 132, trials);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 6144, 4, 2048));
  EXPECT_EQ(c.path, Selection::fallback_default);
  EXPECT_EQ(c.config, gemv);
  // Where the neighbours' own kernels are predicted faster, they still win.
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 6144, 16, 2048)).config, ffma);
}

// Seen on the H200 (session 11): decode16-up left out was served a default whose NT build
// spills (172 us against 68); the tuner had recorded that build as resource_exceeded on the
// other NT shapes. A config whose build for the problem's layout and types failed is not served
// untuned, neither as a default nor carried from a neighbour.
TEST(KernelSelector, never_serves_untuned_a_config_whose_build_failed_for_the_variant) {
  const KernelConfig ffma = simt(64, 2, 16);
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt", "SIDE=1,ROWS=4,VEC=2,WARPS=8,KB=512,LW=2,SPLIT_MODE=1");
  const Problem stream = Problem::packed(GemmTypes{}, Op::N, Op::N, 8192, 4, 65536);
  const Problem spilled = Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 4, 2048);
  std::vector<TrialRecord> trials = {trial(4096, 16, 4096, ffma, 11),
                                     testing::ok_trial_record(stream, gemv, 600),
                                     testing::ok_trial_record(spilled, gemv, 1)};
  trials.back().trial.status = TrialStatus::resource_exceeded;
  std::vector<DefaultKernel> table = defaults();
  table.push_back({"*", GemmTypes{}, gemv});
  const std::vector<BestEntry> tuned = {entry(4096, 16, 4096, ffma), entry(8192, 4, 65536, gemv)};
  const Problem here = Problem::packed(GemmTypes{}, Op::N, Op::N, 6144, 4, 2048);
  EXPECT_NE(KernelSelector(tuned, table, "sm_90", 132, trials).choose(here).config, gemv);
  // The same failure in another layout says nothing of this one's build.
  trials.back().problem = Problem::packed(GemmTypes{}, Op::T, Op::N, 2048, 4, 2048);
  EXPECT_EQ(KernelSelector(tuned, table, "sm_90", 132, trials).choose(here).config, gemv);
}

// A selector whose one tuned NN shape `there` recorded each (config, us), the first its best.
KernelSelector recorded_on(const Problem& there,
                           const std::vector<std::pair<KernelConfig, double>>& records) {
  std::vector<TrialRecord> trials;
  for (const auto& [config, us] : records) {
    trials.push_back(testing::ok_trial_record(there, config, us));
    trials.back().template_hash = "abc";
  }
  return KernelSelector({entry(there.m, there.n, there.k, records.front().first)}, defaults(),
                        "sm_90", 132, trials);
}

// Seen on the H200 (session 10): 512x8x500000 left out of deepbench was served a split-K
// sgemm_simt (1507 us) over the GEMV that its N = 16 neighbour ran fastest (294 us for the
// shape's own best). The GEMV's K slices, grid blocks already, were counted again as loop
// steps, so its carried time came out ~100x too long. A streaming kernel carries by its bytes.
TEST(KernelSelector, carries_a_streaming_kernel_by_the_bytes_it_reads) {
  const KernelConfig ffma = testing::sgemm_config(
      {{"BM", 64}, {"BN", 16}, {"BK", 16}, {"TM", 4}, {"TN", 4}, {"WARP_N", 4}, {"SPLIT_K", 16}});
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt",
      "SIDE=1,ROWS=16,VEC=4,WARPS=8,KB=512,LW=4,SPLIT_MODE=0,PREFETCH=1,STAGES=0,KLANES=8");
  const KernelSelector s = recorded_on(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 16, 4096),
                                       {{gemv, 36}, {ffma, 44}});
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 512, 8, 500000));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, gemv);
}

// Session 11, the H200's records on 4096x16x4096 (34.0 and 39.6 us): on 7680x16x2560 the first
// keeps 18 warps per SM and runs 57.9 us, the second 11 and runs 48.8 (its K slices are fewer:
// each block streams more). Bytes stream at a rate linear in the warps in flight up to ~12 per
// SM; under sqrt(warps / 16) the two came out level and the slower one was served.
TEST(KernelSelector, streaming_rate_grows_with_the_warps_in_flight_up_to_a_dozen_per_sm) {
  const auto gemv = [](const char* kb) {
    return KernelConfig::from_params_text(
        "gemv_simt", std::string("SIDE=1,ROWS=16,VEC=4,WARPS=8,KB=") + kb +
                         ",LW=4,SPLIT_MODE=2,PREFETCH=1,STAGES=0,KLANES=8,CLUSTER=1");
  };
  const KernelConfig slices_of_512 = gemv("512"), slices_of_1024 = gemv("1024");
  const KernelSelector s = recorded_on(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 16, 4096),
                                       {{slices_of_512, 34.0}, {slices_of_1024, 39.6}});
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 7680, 16, 2560));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, slices_of_1024);
}

// Seen on the H200 (session 22): 4096x16x4096 left out of the S21 database was served an FFMA
// split-K kernel carried from 7680x16x2560 (43.8 us against 31.7 for its best). Its best, a
// GEMV, ran 45.2 us there, where its 300 blocks of two per SM take 1.14 waves; carried by its
// bytes alone it came out slower than the FFMA kernel. That last partial wave is now counted
// there, and 4096x16x4096's 256 blocks need none.
TEST(KernelSelector, a_streaming_kernels_last_partial_wave_does_not_carry_to_a_shape_it_fits) {
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt",
      "SIDE=1,ROWS=16,VEC=4,WARPS=8,KB=512,LW=4,SPLIT_MODE=1,PREFETCH=1,STAGES=0,KLANES=8");
  const KernelConfig ffma = testing::sgemm_config({{"BM", 64},
                                                   {"BN", 16},
                                                   {"BK", 8},
                                                   {"TM", 4},
                                                   {"TN", 4},
                                                   {"WARP_N", 4},
                                                   {"VEC", 2},
                                                   {"SPLIT_K", 16},
                                                   {"SPLIT_MODE", 1},
                                                   {"MIN_BLOCKS", 2}});
  const KernelSelector s = recorded_on(Problem::packed(GemmTypes{}, Op::N, Op::N, 7680, 16, 2560),
                                       {{gemv, 45.2}, {ffma, 50.5}});
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 16, 4096));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, gemv);
}

// Replayed on the H200 databases (S17, S18) and measured (S20-A): 1024^3 left out was served a
// split-4 config of 2048^3 whose carried time beat 1000^3's best by 3 % (it ran 85 us, 1000^3's
// best 62). The far neighbour now pays 6 % for its distance, the near one 0.2 %.
TEST(KernelSelector, carried_times_pay_for_the_neighbours_distance) {
  const auto nn = [](int64_t m, int64_t n, int64_t k) {
    return Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k);
  };
  const Problem here = nn(1024, 1024, 1024);
  EXPECT_DOUBLE_EQ(carried_distance_factor(here, here), 1.0);
  EXPECT_LT(carried_distance_factor(nn(1000, 1000, 1000), here), 1.003);
  const double far = carried_distance_factor(nn(2048, 2048, 2048), here);
  EXPECT_GT(far, 1.055);
  EXPECT_LT(far, 1.065);
  EXPECT_DOUBLE_EQ(carried_distance_factor(here, nn(2048, 2048, 2048)), far);
  // Another alignment is as far as a shape twice as large in M, N and K and more.
  Problem misaligned = nn(1024, 1024, 1024);
  misaligned.align_b = 4;
  EXPECT_GT(carried_distance_factor(misaligned, here), far);
}

TEST(KernelSelector, counts_whole_waves_when_transferring) {
  // On 1024x1024x4096 the 64x128 tiles (128 blocks, one wave) beat the 128x128 ones
  // (64 blocks) by a little; on 2048x1024x4096 the 64x128 tiles need two waves of 132 SMs
  // (256 blocks) and the 128x128 ones still one (128 blocks): the prediction flips.
  const KernelConfig big = simt(128, 4), small = simt(64, 4);
  std::vector<BestEntry> tuned = {entry(1024, 1024, 4096, small)};
  std::vector<TrialRecord> trials = {trial(1024, 1024, 4096, small, 30),
                                     trial(1024, 1024, 4096, big, 28)};
  KernelSelector s(tuned, defaults(), "sm_90", 132, trials);
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 1000, 1024, 4096)).config, small);
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 1024, 4096)).config, big);
}

// Seen replaying the held-out shapes (session 6): 1536^3 NT was served the split-K 16 kernel
// of its 2048x4096x11008 neighbour (281 us, 1.34x its tuned time; the whole-K kernel below ran
// 225) because neither the model nor the work ratio charged a slice's fixed steps and partial
// sums, which dominate a slice of 96. The recorded times of that neighbour on the H200.
TEST(KernelSelector, a_split_k_kernel_of_a_long_k_neighbour_loses_on_a_short_k) {
  const KernelConfig whole = KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=128,BN=64,BK=8,WM=32,WN=64,TM=8,TN=8,STAGES=3,VEC=1,SPLIT_K=1,SWIZZLE=8,"
      "MIN_BLOCKS=1,PACK_B=0");
  const KernelConfig sliced = KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=64,BN=128,BK=8,WM=64,WN=32,TM=8,TN=8,STAGES=4,VEC=4,SPLIT_K=16,SWIZZLE=8,"
      "MIN_BLOCKS=1,PACK_B=0");
  const Problem there = Problem::packed(GemmTypes{}, Op::N, Op::T, 2048, 4096, 11008);
  BestEntry best = entry(2048, 4096, 11008, whole, Op::N, Op::T);
  best.trial.time_median_us = 4196.0;
  std::vector<TrialRecord> trials = {testing::ok_trial_record(there, whole, 4196.0),
                                     testing::ok_trial_record(there, sliced, 4326.0)};
  KernelSelector s({best}, {}, "sm_90", 132, trials);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::T, 1536, 1536, 1536));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, whole);
}

// Seen on the H200 (session 13): 64x64x131072 was served its neighbours' 64 K slices (106 us)
// where 256 run it in 61. A neighbour's split-K best offers its other split depths (those the
// family ran with here), each predicted from it; the deeper one wins on a K eight times longer.
TEST(KernelSelector, deepens_a_neighbours_split_for_a_longer_k) {
  const KernelConfig split64 = testing::sgemm_config(
      {{"BM", 32}, {"BN", 32}, {"TM", 4}, {"TN", 4}, {"SPLIT_K", 64}, {"MIN_BLOCKS", 2}});
  KernelConfig split256 = split64;
  split256.set("SPLIT_K", 256);
  const Problem there = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 16384);
  BestEntry best = entry(64, 64, 16384, split64);
  best.trial.time_median_us = 15.0;
  // 256 slices ran elsewhere here (a config of other tiles), so the family knows the depth.
  const KernelConfig other256 = testing::sgemm_config(
      {{"BM", 16}, {"BN", 64}, {"TM", 4}, {"TN", 4}, {"VEC", 1}, {"SPLIT_K", 256}});
  std::vector<TrialRecord> trials = {testing::ok_trial_record(there, split64, 15.0),
                                     testing::ok_trial_record(there, other256, 40.0)};
  KernelSelector s({best}, {}, "sm_90", 132, trials);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 131072));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, split256);
  EXPECT_EQ(c.template_hash, "");  // never built: compiled from the current template
  // On the neighbour's own K the measured config stays.
  const auto same = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 16000));
  EXPECT_EQ(same.config, split64);
}

// The S20 H200 database without 1760x128x1760: its neighbour 3072x128x1024 (a shorter K) measured
// this 16-slice sgemm_simt config at 49.3 us; the model favoured its 4-slice sibling (known from
// another config) by far more than unmeasured_margin, and on the H200 that sibling ran 45.6 us
// against a best of 32.9. A longer K here is no reason to split less deeply than the neighbour.
TEST(KernelSelector, never_offers_a_shallower_split_for_a_longer_k) {
  const KernelConfig split16 = KernelConfig::from_params_text(
      "sgemm_simt",
      "BM=128,BN=32,BK=32,TM=4,TN=4,WARP_N=8,VEC=4,PAD_A=4,PAD_B=4,STAGES=2,SPLIT_K=16,"
      "SPLIT_MODE=1,SWIZZLE=8,MIN_BLOCKS=1");
  const KernelConfig other4 = simt(64, 4, 4);  // the family ran 4 slices here: split16's sibling
  const Problem there = Problem::packed(GemmTypes{}, Op::N, Op::N, 3072, 128, 1024);
  BestEntry best = entry(3072, 128, 1024, split16);
  best.trial.time_median_us = 49.3;
  std::vector<TrialRecord> trials = {
      testing::ok_trial_record(there, split16, 49.3),
      testing::ok_trial_record(Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256), other4,
                               11.6)};
  KernelSelector s({best}, {}, "sm_90", 132, trials);
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 1760, 128, 1760)).config, split16);
}

// Splitting where the neighbour did not is not offered: on the H200 sets the model favours
// split-K 4 siblings of the whole-K bests of 1000^3-like shapes, which ran 1.2-1.3x slower.
TEST(KernelSelector, offers_no_split_sibling_of_a_whole_k_best) {
  const KernelConfig whole =
      testing::sgemm_config({{"BM", 32}, {"BN", 32}, {"TM", 4}, {"TN", 4}, {"MIN_BLOCKS", 2}});
  const KernelConfig other256 = testing::sgemm_config(
      {{"BM", 16}, {"BN", 64}, {"TM", 4}, {"TN", 4}, {"VEC", 1}, {"SPLIT_K", 256}});
  const Problem there = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 16384);
  BestEntry best = entry(64, 64, 16384, whole);
  best.trial.time_median_us = 60.0;
  std::vector<TrialRecord> trials = {testing::ok_trial_record(there, whole, 60.0),
                                     testing::ok_trial_record(there, other256, 400.0)};
  KernelSelector s({best}, {}, "sm_90", 132, trials);
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 131072)).config, whole);
}

// Seen replaying the held-out shapes (session 6): 2560^3 TT was served sgemm_warp PACK_B=0
// (962 us) over PACK_B=1 (859): PACK_B=0's measured / predicted came mostly from NN shapes,
// where it is fast, though on every NT shape it ran 7-15 % slower. A default is now scaled by
// its records on the layouts sharing the most operands with the problem's.
TEST(KernelSelector, scales_a_default_by_its_records_on_the_nearest_layout) {
  const KernelConfig nn_fast = simt(128, 4), nt_fast = simt(128, 2);  // the model: one time
  const PerformanceModel model = testing::h200_model("sgemm_simt");
  const auto record = [&](Op b, int64_t size, const KernelConfig& c, double scale) {
    const Problem p = Problem::packed(GemmTypes{}, Op::N, b, size, size, size);
    TrialRecord r = testing::ok_trial_record(p, c, scale * model.predict_us(c, p));
    r.template_hash = "abc";
    return r;
  };
  std::vector<BestEntry> tuned = {entry(2048, 2048, 2048, nn_fast),
                                  entry(4096, 4096, 4096, nn_fast),
                                  entry(2048, 2048, 2048, nt_fast, Op::N, Op::T)};
  std::vector<TrialRecord> trials = {
      record(Op::N, 2048, nn_fast, 0.7), record(Op::N, 4096, nn_fast, 0.7),
      record(Op::T, 2048, nn_fast, 1.2), record(Op::T, 2048, nt_fast, 1.0)};
  KernelSelector s(tuned, {{"sm_90", GemmTypes{}, nn_fast}, {"sm_90", GemmTypes{}, nt_fast}},
                   "sm_90", 132, trials);
  // TT, nobody tuned: the NT shape is its neighbour; nn_fast, a default, competes by its NT
  // record (1.2x the model), not its NN ones (0.7x).
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::T, Op::T, 2560, 2560, 2560));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, nt_fast);
}

// Seen on the H200 (session 11): decode-qkvo (1x4096x4096 NT) left out was served a 43 us
// default, as the line that runs it at 21.5 us (SIDE=0, B along K) had no record on this GPU;
// its transposed twin (SIDE=1, A along K) had one on 4096x1x4096 NN, and now counts for it.
TEST(KernelSelector, scales_a_default_by_its_transposed_twins_record) {
  const std::string params =
      "ROWS=1,VEC=4,WARPS=8,KB=256,LW=4,SPLIT_MODE=2,PREFETCH=1,STAGES=0,KLANES=8,CLUSTER=1";
  const KernelConfig small_n = KernelConfig::from_params_text("gemv_simt", "SIDE=1," + params);
  const KernelConfig small_m = KernelConfig::from_params_text("gemv_simt", "SIDE=0," + params);
  // The line served before: it ran at twice its predicted time on a 4-row problem.
  const KernelConfig four_rows = KernelConfig::from_params_text(
      "gemv_simt",
      "SIDE=0,ROWS=4,VEC=2,WARPS=8,KB=128,LW=2,SPLIT_MODE=0,PREFETCH=1,STAGES=0,KLANES=32,"
      "CLUSTER=1");
  const PerformanceModel model = testing::h200_model("gemv_simt");
  const Problem there = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 1, 4096);
  const Problem four = Problem::packed(GemmTypes{}, Op::N, Op::T, 4, 4096, 4096);
  std::vector<TrialRecord> records = {
      testing::ok_trial_record(there, small_n, model.predict_us(small_n, there)),
      testing::ok_trial_record(four, four_rows, 2 * model.predict_us(four_rows, four))};
  for (TrialRecord& r : records) r.template_hash = "abc";
  std::vector<DefaultKernel> table = defaults();
  table.push_back({"*", GemmTypes{}, four_rows});
  table.push_back({"*", GemmTypes{}, small_m});
  KernelSelector s({entry(4096, 1, 4096, small_n), entry(4, 4096, 4096, four_rows, Op::N, Op::T)},
                   table, "sm_90", 132, records);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 4096, 4096));
  EXPECT_EQ(c.config, small_m);
}

// A GEMV config runs one loop where the large operand is stored along N and another where it
// is stored along K (KernelDescription::code_path): its records on one say nothing of the other.
// Seen in session 21's replay: a 16-row line measured only on NN (B along N), at 0.67x the
// model there, was served to the NT decode shapes (B along K) over their neighbours' bests.
TEST(KernelSelector, scales_a_default_only_by_its_records_on_the_loop_it_runs) {
  const std::string rest = ",ROWS=16,VEC=4,LW=1,SPLIT_MODE=0,PREFETCH=1,STAGES=0,CLUSTER=1";
  const KernelConfig along_n =
      KernelConfig::from_params_text("gemv_simt", "SIDE=0,WARPS=4,KB=256,KLANES=32" + rest);
  const KernelConfig along_k =
      KernelConfig::from_params_text("gemv_simt", "SIDE=0,WARPS=8,KB=512,KLANES=8" + rest);
  const PerformanceModel model = testing::h200_model("gemv_simt");
  const Problem nn = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 4096);
  const Problem nt = Problem::packed(GemmTypes{}, Op::N, Op::T, 16, 4096, 4096);
  std::vector<TrialRecord> records = {
      testing::ok_trial_record(nn, along_n, 0.67 * model.predict_us(along_n, nn)),
      testing::ok_trial_record(nt, along_k, model.predict_us(along_k, nt))};
  for (TrialRecord& r : records) r.template_hash = "abc";
  std::vector<DefaultKernel> table = defaults();
  table.push_back({"*", GemmTypes{}, along_n});
  KernelSelector s({entry(16, 4096, 4096, along_n), entry(16, 4096, 4096, along_k, Op::N, Op::T)},
                   table, "sm_90", 132, records);
  const Problem deeper = Problem::packed(GemmTypes{}, Op::N, Op::T, 16, 4096, 8192);
  ASSERT_TRUE(can_run(along_n, deeper, "sm_90"));
  const auto c = s.choose(deeper);
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.config, along_k);
  EXPECT_EQ(template_named("gemv_simt").describe(along_n, deeper).code_path, "along K");
  EXPECT_EQ(template_named("gemv_simt").describe(along_n, nn).code_path, "along L");
}

// Seen on the H200 (session 25): with long-K GEMVs tuned, 64x64x131072 had only GEMV shapes
// among its nearest, whose tuned bests cannot run N = 64; the FFMA configs they recorded (the
// shipped lines every tune times) served it at 93.9 us where a config of 2560x64x2560 runs 53.6.
// The nearest shape whose best can run the problem now joins such neighbours.
TEST(KernelSelector, neighbours_of_another_kind_are_joined_by_the_nearest_whose_best_runs_here) {
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt",
      "SIDE=1,ROWS=8,VEC=4,WARPS=8,KB=1024,LW=2,SPLIT_MODE=0,PREFETCH=1,STAGES=0,KLANES=16");
  const KernelConfig incidental = simt(64, 4, 16);
  const KernelConfig tiled =
      testing::sgemm_config({{"BM", 64}, {"BN", 64}, {"VEC", 4}, {"SPLIT_K", 256}});
  std::vector<BestEntry> tuned;
  std::vector<TrialRecord> trials;
  const int64_t gemv_shapes[][3] = {
      {512, 8, 500000}, {1024, 8, 250000}, {256, 8, 1000000}, {2048, 8, 131072}};
  for (const auto& s : gemv_shapes) {
    tuned.push_back(entry(s[0], s[1], s[2], gemv));
    trials.push_back(trial(s[0], s[1], s[2], gemv, 14));
    trials.push_back(trial(s[0], s[1], s[2], incidental, 10));
  }
  tuned.push_back(entry(2560, 64, 2560, tiled));
  trials.push_back(trial(2560, 64, 2560, tiled, 23));
  trials.push_back(trial(2560, 64, 2560, incidental, 8));
  const KernelSelector s(tuned, defaults(), "sm_90", 132, trials);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 131072));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.tuned_key, Problem::packed(GemmTypes{}, Op::N, Op::N, 2560, 64, 2560).key());
  EXPECT_EQ(c.config, tiled);
}

// A layout nobody tuned takes its neighbours from the layouts sharing the most operands with
// it: TN from NN (B alike), not from NT's nearer shape.
TEST(KernelSelector, a_layout_nobody_tuned_borrows_the_nearest_layouts_bests) {
  const Problem nn = Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048);
  KernelSelector s(
      {entry(2048, 2048, 2048, simt(128, 4)), entry(1800, 1800, 1800, simt(64, 4), Op::N, Op::T)},
      {}, "sm_90", 132);
  auto c = s.choose(Problem::packed(GemmTypes{}, Op::T, Op::N, 1900, 1900, 1900));
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.tuned_key, nn.key());
  EXPECT_EQ(c.config, simt(128, 4));
  // With its own layout tuned, that one alone.
  KernelSelector own(
      {entry(2048, 2048, 2048, simt(128, 4)), entry(500, 500, 500, simt(32, 4), Op::T, Op::N)}, {},
      "sm_90", 132);
  EXPECT_EQ(own.choose(Problem::packed(GemmTypes{}, Op::T, Op::N, 1900, 1900, 1900)).config,
            simt(32, 4));
}

// TT shares no operand's storage with NN: with only NN tuned it takes the defaults (the GPU
// suite's dispatcher fixture, S16-A, expected this when the borrowing took any layout).
TEST(KernelSelector, a_layout_sharing_no_operand_with_any_tuned_one_takes_the_defaults) {
  KernelSelector s({entry(2048, 2048, 2048, simt(128, 4))}, defaults(), "sm_90", 132);
  const auto c = s.choose(Problem::packed(GemmTypes{}, Op::T, Op::T, 1900, 1900, 1900));
  EXPECT_EQ(c.path, Selection::fallback_default);
  EXPECT_TRUE(c.tuned_key.empty()) << c.tuned_key;
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::T, 1900, 1900, 1900)).path,
            Selection::nearest);
}

TEST(KernelSelector, other_types_get_defaults_then_cublas) {
  GemmTypes tf32;
  tf32.compute = ComputeType::tf32;
  KernelSelector s({entry(2048, 2048, 2048, simt(128, 4))}, defaults(), "sm_90", 132);
  EXPECT_NE(s.choose(Problem::packed(tf32, Op::N, Op::N, 64, 64, 64)).path, Selection::nearest);
  KernelSelector none({entry(2048, 2048, 2048, simt(128, 4))}, {}, "sm_90", 132);
  EXPECT_EQ(none.choose(Problem::packed(tf32, Op::N, Op::N, 64, 64, 64)).path, Selection::cublas);
  // A misaligned problem that no measured kernel can load: a default that can.
  EXPECT_EQ(s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2047, 2047, 2047)).path,
            Selection::fallback_default);
}

// FP8 untuned: on sm_90 the shipped fp8 lines serve every layout (each FP8 pair and output; NN,
// TN and TT through packed operands); an arch without FP8 kernels goes to the vendor path
// (cuBLASLt's FP8 call, or a NOT_SUPPORTED status where it has none).
TEST(DefaultKernels, fp8_is_served_by_the_tma_family_on_sm_90_only) {
  KernelSelector hopper({}, shipped_default_kernels(), "sm_90", 132);
  for (const char* types : {"e4m3", "e5m2_e4m3"})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        const auto chosen =
            hopper.choose(Problem::packed(gemm_types(types, "f32"), a, b, 4096, 4096, 4096));
        EXPECT_EQ(chosen.path, Selection::fallback_default)
            << types << to_string(a) << to_string(b);
        EXPECT_EQ(chosen.config.template_name, "gemm_tma_wgmma") << types;
      }
  KernelSelector ampere({}, shipped_default_kernels(), "sm_80", 108);
  EXPECT_EQ(ampere.choose(Problem::packed(gemm_types("e4m3"), Op::N, Op::T, 4096, 4096, 4096)).path,
            Selection::cublas);
}

TEST(DefaultKernels, are_sized_to_fill_the_gpu) {
  KernelSelector s({}, shipped_default_kernels(), "sm_90", 132);
  auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k)).config;
  };
  EXPECT_EQ(pick(4096, 4096, 4096).get("BM"), 128);  // 1024 blocks of 128x128
  auto mid = pick(1000, 1000, 1000);                 // 64 big tiles: too few
  EXPECT_EQ(mid.template_name, "sgemm_warp");        // one wave of 64x128 tiles
  EXPECT_EQ(mid.get("BM"), 64);
  EXPECT_EQ(mid.get("BN"), 128);
  EXPECT_EQ(mid.get("SPLIT_K"), 1);
  auto odd = pick(1023, 1023, 1023);  // misaligned: the same 64x128 tiles, 4-byte copies
  EXPECT_EQ(odd.template_name, "sgemm_warp");
  EXPECT_EQ(odd.get("BN"), 128);
  EXPECT_EQ(odd.get("VEC"), 1);
  EXPECT_EQ(pick(512, 512, 512).get("SPLIT_K"), 4);  // 64 small tiles: 4 slices fill the GPU
  auto gemv = pick(1, 4096, 4096);  // one row: the GEMV family, one row per block strip
  EXPECT_EQ(gemv.template_name, "gemv_simt");
  EXPECT_EQ(gemv.get("SIDE"), 0);
  EXPECT_EQ(gemv.get("ROWS"), 1);
  EXPECT_EQ(gemv.get("VEC"), 4);
  auto few_rows = pick(35, 8457, 2560);  // 35 rows fill 48 better than 64; ldb = 8457: VEC=1
  EXPECT_EQ(few_rows.get("BM"), 16);
  EXPECT_EQ(few_rows.get("VEC"), 1);
  auto thin = pick(4096, 16, 4096);  // 16 columns: the 16-wide GEMV, A read along K
  EXPECT_EQ(thin.template_name, "gemv_simt");
  EXPECT_EQ(thin.get("ROWS"), 16);
  EXPECT_EQ(thin.get("KLANES"), 8);
  EXPECT_EQ(pick(4096, 17, 4096).template_name, "sgemm_simt");  // past 16: the GEMM tiles
  auto column = pick(4096, 1, 4096);  // one column: GEMV on A, whatever B's alignment
  EXPECT_EQ(column.template_name, "gemv_simt");
  EXPECT_EQ(column.get("SIDE"), 1);
  EXPECT_EQ(column.get("ROWS"), 1);
  auto long_k = pick(512, 8, 500000);  // eight columns: GEMV on A, vector loads
  EXPECT_EQ(long_k.template_name, "gemv_simt");
  EXPECT_EQ(long_k.get("ROWS"), 8);
  EXPECT_EQ(long_k.get("VEC"), 4);
  EXPECT_EQ(pick(2048, 32, 2048).get("BN"), 32);  // filled exactly by 32-wide tiles
  // Without an SM count every line counts as filling the GPU: the first well-filled tile.
  KernelSelector unsized({}, shipped_default_kernels(), "sm_90");
  auto unsized_pick = [&](int64_t m, int64_t n, int64_t k) {
    return unsized.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k)).config;
  };
  EXPECT_EQ(unsized_pick(1, 4096, 4096).template_name, "gemv_simt");
  EXPECT_EQ(unsized_pick(1000, 1000, 1000).get("BM"), 128);
}

// sm_90's aligned 16-bit and tf32 problems go to the TMA-fed family (small ones to its split-K
// line; tf32 NN with B packed K-major first); misaligned ones to gemm_wgmma's PACK=1 lines.
TEST(DefaultKernels, wgmma_lines_serve_aligned_tensor_problems_on_sm_90) {
  KernelSelector s({}, shipped_default_kernels(), "sm_90", 132);
  auto pick = [&](DType t, int64_t m, int64_t n, int64_t k) {
    GemmTypes types{t, t, t, t == DType::f32 ? ComputeType::tf32 : ComputeType::f32};
    return s.choose(Problem::packed(types, Op::N, Op::N, m, n, k)).config;
  };
  EXPECT_EQ(pick(DType::f16, 4096, 4096, 4096).template_name, "gemm_tma_wgmma");
  EXPECT_EQ(pick(DType::bf16, 8192, 8192, 8192).template_name, "gemm_tma_wgmma");
  EXPECT_EQ(pick(DType::f32, 4096, 4096, 4096).template_name, "gemm_tma_wgmma");  // tf32
  // 1024^3: 64 128x128 tiles, too few for 132 SMs; four k-slices of the split-K line fill it.
  // 512^3: its 16 tiles in four slices launch 64 blocks, as many as the wgmma 64x64 line's;
  // the earlier line wins the tie.
  for (int64_t size : {1024, 512}) {
    const KernelConfig c = pick(DType::f16, size, size, size);
    EXPECT_EQ(c.template_name, "gemm_tma_wgmma") << size;
    EXPECT_EQ(c.get_or("SPLIT_K", 0), 4) << c.canonical_name();
  }
  EXPECT_EQ(pick(DType::f16, 4097, 4097, 4097).get("PACK"), 1);  // misaligned
  KernelSelector ampere({}, shipped_default_kernels(), "sm_80", 108);
  EXPECT_EQ(
      ampere
          .choose(Problem::packed(GemmTypes{DType::f16, DType::f16, DType::f16, ComputeType::f32},
                                  Op::N, Op::N, 4096, 4096, 4096))
          .config.template_name,
      "gemm_mma");
}

// Untuned misaligned f16/bf16 on sm_90: wgmma PACK=1, sized to fill the GPU (1023^3 has 64
// 128x128 tiles and 128 64x128 ones, fewer than 132 SMs: the 64x64 line).
TEST(DefaultKernels, untuned_misaligned_16_bit_problems_on_sm_90_get_wgmma_pack_1) {
  KernelSelector s({}, shipped_default_kernels(), "sm_90", 132);
  auto pick = [&](const char* types, int64_t m, int64_t n, int64_t k, Op b = Op::N) {
    Problem p = Problem::packed(gemm_types(types), Op::N, b, m, n, k);
    p.align_a = p.align_b = p.align_c = 2;
    const KernelChoice c = s.choose(p);
    EXPECT_EQ(c.path, Selection::fallback_default);
    return c.config;
  };
  for (const char* types : {"f16", "bf16"}) {
    SCOPED_TRACE(types);
    // 128x64 tiles: 128 blocks, a wave short of four of the 132 SMs, count as filling it.
    const KernelConfig mid = pick(types, 1023, 1023, 1023);
    EXPECT_EQ(mid.template_name, "gemm_wgmma");
    EXPECT_EQ(mid.get("PACK"), 1);
    EXPECT_EQ(mid.get("BM"), 128);
    EXPECT_EQ(mid.get("BN"), 64);
    // Far short of a wave (64 blocks of 128x64), the 64x64 line.
    const KernelConfig small = pick(types, 513, 1023, 1023);
    EXPECT_EQ(small.get("BM"), 64);
    EXPECT_EQ(small.get("BN"), 64);
    for (const KernelConfig& big : {pick(types, 4097, 4097, 4097), pick(types, 5124, 9124, 2560),
                                    pick(types, 4097, 4097, 4097, Op::T)}) {
      EXPECT_EQ(big.template_name, "gemm_wgmma");
      EXPECT_EQ(big.get("PACK"), 1);
      EXPECT_EQ(big.get("BM"), 128);
      EXPECT_EQ(big.get("BN"), 128);  // faster than 128x256 with PACK=1 on the H200
    }
  }
  // f32 out takes the same Hopper tiles as 16-bit out (before its lines, mma.sync's).
  for (const char* types : {"f16_out_f32", "bf16_out_f32"}) {
    Problem p = Problem::packed(parse_gemm_types(types), Op::N, Op::N, 1023, 1023, 1023);
    p.align_a = p.align_b = 2;
    const KernelConfig c = s.choose(p).config;
    EXPECT_EQ(c.template_name, "gemm_wgmma") << types;
    EXPECT_EQ(c.get("PACK"), 1) << types;
  }
}

// Untuned deep K on few tiles (128x128x65536): no unsplit tf32 or f32x3 line fills the GPU,
// so the 64-way split of 64x64 tiles serves it on sm_90 (256 blocks), and 16 ways serve a
// problem that 16 already fills; an aligned square keeps its unsplit wgmma line.
// Deep K with a 16-bit output (issue 45: 512x512x65536 bf16 ran 64 tiles on 132 SMs): on
// sm_90 an untuned call takes a split-K line of gemm_tma_wgmma, whose slices reduce in an f32
// workspace whatever C's type.
TEST(DefaultKernels, untuned_deep_k_16_bit_output_problems_split_k_on_sm_90) {
  KernelSelector hopper({}, shipped_default_kernels(), "sm_90", 132);
  for (const char* types : {"bf16", "f16"}) {
    SCOPED_TRACE(types);
    const KernelChoice c =
        hopper.choose(Problem::packed(gemm_types(types), Op::N, Op::N, 512, 512, 65536));
    EXPECT_EQ(c.path, Selection::fallback_default);
    EXPECT_EQ(c.config.template_name, "gemm_tma_wgmma") << c.config.canonical_name();
    EXPECT_GT(c.config.get_or("SPLIT_K", 1), 1) << c.config.canonical_name();
  }
}

TEST(DefaultKernels, untuned_deep_k_tf32_and_f32x3_problems_split_k) {
  KernelSelector hopper({}, shipped_default_kernels(), "sm_90", 132);
  KernelSelector ampere({}, shipped_default_kernels(), "sm_80", 108);
  for (const char* types : {"tf32", "f32x3"}) {
    SCOPED_TRACE(types);
    auto pick = [&](const KernelSelector& s, int64_t m, int64_t n, int64_t k) {
      const KernelChoice c = s.choose(Problem::packed(gemm_types(types), Op::N, Op::N, m, n, k));
      EXPECT_EQ(c.path, Selection::fallback_default);
      return c.config;
    };
    const KernelConfig deep = pick(hopper, 128, 128, 65536);
    EXPECT_EQ(deep.template_name, "gemm_mma");
    EXPECT_EQ(deep.get("SPLIT_K"), 64);
    EXPECT_EQ(deep.get("BM"), 64);
    EXPECT_EQ(deep.get("BN"), 64);
    EXPECT_EQ(pick(hopper, 128, 256, 65536).get("SPLIT_K"), 16);  // 8 tiles: 32 blocks split 4
    const KernelConfig square = pick(hopper, 4096, 4096, 4096);
    // tf32 on the TMA family (B packed K-major); f32x3 on gemm_wgmma, the one that splits it.
    EXPECT_EQ(square.template_name, std::string(types) == "tf32" ? "gemm_tma_wgmma" : "gemm_wgmma");
    EXPECT_EQ(square.get("SPLIT_K"), 1);
    EXPECT_EQ(pick(ampere, 128, 128, 65536).get("SPLIT_K"), 64);
  }
}

TEST(KernelSelector, split_k_kernel_not_used_when_k_has_fewer_tiles_than_slices) {
  EXPECT_FALSE(
      can_run(simt(128, 4, 16), Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64), "sm_90"));
  EXPECT_TRUE(
      can_run(simt(128, 4, 16), Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 4096), "sm_90"));
}

TEST(KernelSelector, defaults_prefer_own_arch_then_any_then_cublas) {
  KernelSelector on90({}, defaults(), "sm_90");
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 512, 512, 512);
  EXPECT_EQ(on90.choose(p).path, Selection::fallback_default);
  EXPECT_EQ(on90.choose(p).config, simt(256, 4));
  KernelSelector on80({}, defaults(), "sm_80");
  EXPECT_EQ(on80.choose(p).config, simt(64, 4));
  EXPECT_EQ(on80.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 7, 7, 7)).config, simt(32, 1));
  KernelSelector none({}, {}, "sm_80");
  EXPECT_EQ(none.choose(p).path, Selection::cublas);
  // No f16 kernel exists yet: cuBLAS.
  EXPECT_EQ(on90.choose(Problem::packed(gemm_types("f16"), Op::N, Op::N, 64, 64, 64)).path,
            Selection::cublas);
}

TEST(DefaultKernels, shipped_table_parses_and_covers_unaligned_f32) {
  const auto& table = shipped_default_kernels();
  ASSERT_FALSE(table.empty());
  KernelSelector s({}, table, "sm_75");
  for (int k : {1, 2, 3, 1023, 4096}) {
    auto c = s.choose(Problem::packed(GemmTypes{}, Op::T, Op::N, 17, 33, k));
    EXPECT_EQ(c.path, Selection::fallback_default) << k;
  }
}

TEST(DefaultKernels, malformed_line_names_its_number) {
  try {
    parse_default_kernels("# comment\n* f32 sgemm_simt BM=1\nsm_90 f32 sgemm_simt\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_default_kernels("sm_9x f32 sgemm_simt BM=1"), Error);
  EXPECT_THROW(parse_default_kernels("* f99 sgemm_simt BM=1"), Error);
}

// The same chain over what a tuner wrote: entries read back through TuningDb::best_entries.
TEST(KernelSelector, chooses_from_fixture_database) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tgemm_selector_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "fixture.db").string();
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("test", "tgemm", "sm_90");
    DeviceInfo dev;
    dev.name = "NVIDIA H200";
    dev.arch = "sm_90";
    dev.sm_count = 132;
    const int64_t device = db.upsert_device(dev);
    auto add = [&](int64_t m, int64_t n, int64_t k, const KernelConfig& cfg, double us) {
      const int64_t problem =
          db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k));
      const int64_t kernel = db.upsert_kernel(cfg, "hash1");
      TrialResult t;
      t.config = cfg;
      t.status = TrialStatus::ok;
      t.time_min_us = t.time_median_us = t.time_max_us = us;
      t.runs = 10;
      db.record_trial(run, problem, kernel, device, std::nullopt, t);
      db.update_best(problem, device);
    };
    add(2048, 2048, 2048, simt(128, 4), 500);
    add(2048, 2048, 2048, simt(64, 4), 400);  // faster: the best
    add(128, 128, 128, simt(32, 1), 10);
    db.finish_run(run, "fixture");
  }
  TuningDb ro(path, TuningDb::Mode::read_only);
  KernelSelector s(ro.best_entries("", "NVIDIA H200", "sm_90"), defaults(), "sm_90");
  auto exact = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048));
  EXPECT_EQ(exact.path, Selection::exact);
  EXPECT_EQ(exact.config, simt(64, 4));
  EXPECT_EQ(exact.template_hash, "hash1");
  auto near = s.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 100, 120, 140));
  EXPECT_EQ(near.path, Selection::nearest);
  EXPECT_TRUE(near.config == simt(32, 1) || near.config == simt(64, 4) ||
              near.config == simt(128, 4));
  // Every recorded trial is a candidate: the slower 2048^3 kernel is read back too.
  KernelSelector with_trials(ro.best_entries("", "NVIDIA H200", "sm_90"), defaults(), "sm_90", 132,
                             ro.trials("", "NVIDIA H200"));
  EXPECT_EQ(with_trials.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048)).config,
            simt(64, 4));
  EXPECT_EQ(with_trials.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2000, 2000, 2000)).path,
            Selection::nearest);
  KernelSelector other(ro.best_entries("", "Tesla T4", "sm_75"), defaults(), "sm_75");
  EXPECT_EQ(other.choose(Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048)).path,
            Selection::fallback_default);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tgemm
