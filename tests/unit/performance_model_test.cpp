// PerformanceModel: its pieces (waves, padding, registers, occupancy effect) and whole
// predictions that must order configs the way the hardware does: wave quantisation, split-K
// for skinny large-K shapes, memory-bound against compute-bound problems.
#include "src/model/performance_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/h200_model.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::h200_model;
using testing::sgemm_config;

Problem nn(int64_t m, int64_t n, int64_t k) {
  return Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k);
}

TEST(PerformanceModel, waves_round_up_over_resident_slots) {
  EXPECT_EQ(PerformanceModel::waves(132, 132), 1);
  EXPECT_EQ(PerformanceModel::waves(133, 132), 2);
  EXPECT_EQ(PerformanceModel::waves(1, 264), 1);
  EXPECT_EQ(PerformanceModel::waves(0, 132), 0);
}

TEST(PerformanceModel, useful_fraction_counts_padded_tiles_and_k_steps) {
  const TileShape t{128, 128, 8, 1, 1};
  EXPECT_DOUBLE_EQ(PerformanceModel::useful_fraction(t, nn(256, 256, 64)), 1.0);
  EXPECT_DOUBLE_EQ(PerformanceModel::useful_fraction(t, nn(100, 128, 64)), 100.0 / 128);
  EXPECT_DOUBLE_EQ(PerformanceModel::useful_fraction(t, nn(129, 129, 64)),
                   (129.0 / 256) * (129.0 / 256));
  // Four K slices of whole 8-deep steps: K=40 pads to 64.
  EXPECT_DOUBLE_EQ(PerformanceModel::useful_fraction({128, 128, 8, 4, 1}, nn(128, 128, 40)),
                   40.0 / 64);
}

TEST(PerformanceModel, registers_grow_with_the_thread_tile_and_staging) {
  const int small = PerformanceModel::estimated_registers({64, 64, 8, 1, 1}, 256);    // 4x4
  const int large = PerformanceModel::estimated_registers({128, 128, 8, 1, 1}, 256);  // 8x8
  const int deep = PerformanceModel::estimated_registers({128, 128, 32, 1, 1}, 256);
  EXPECT_LT(small, large);
  EXPECT_GE(large, 64 + 16);  // the accumulators and the fragments at least
  EXPECT_GT(deep, large);     // BK=32 stages four times the elements per thread
}

TEST(PerformanceModel, few_resident_warps_lose_rate) {
  const PerformanceModel model{ModelContext{}};  // 16 warps hide the latencies
  EXPECT_DOUBLE_EQ(model.occupancy_efficiency(4), 0.5);
  EXPECT_NEAR(model.occupancy_efficiency(8), 0.707, 0.001);
  EXPECT_DOUBLE_EQ(model.occupancy_efficiency(16), 1.0);
  EXPECT_DOUBLE_EQ(model.occupancy_efficiency(64), 1.0);
  EXPECT_DOUBLE_EQ(model.occupancy_efficiency(0), 0.0);
}

TEST(PerformanceModel, one_tile_row_past_a_full_wave_costs_another_wave) {
  const PerformanceModel model = h200_model();
  // 128x128 tiles of 256 threads, ~112 registers each: two blocks per SM, 264 resident.
  const KernelConfig c = sgemm_config();
  const double full = model.predict_us(c, nn(128 * 24, 128 * 11, 4096));      // 264 tiles
  const double over = model.predict_us(c, nn(128 * 24 + 1, 128 * 11, 4096));  // 275 tiles
  // The 11 extra tiles run alone on their SMs: a block alone does its work in half the time
  // of two sharing the SM, but at 8 warps it hides latency worse (occupancy_efficiency).
  EXPECT_GT(over, 1.5 * full);
  EXPECT_LT(over, 1.8 * full);
}

// The same tiles with the partial wave cut into K slices (sgemm_warp's TAIL_SPLIT): 11 tiles past
// 264 take an eighth of a wave; tiles that fill whole waves are predicted as before.
TEST(PerformanceModel, a_stream_tail_prices_the_partial_wave_as_slices) {
  const PerformanceModel model = h200_model("sgemm_warp");
  const KernelConfig whole = KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=128,BN=128,BK=8,WM=64,WN=32,TM=8,TN=8,STAGES=3,VEC=4,SPLIT_K=1,SWIZZLE=1,MIN_BLOCKS=2,"
      "PACK_B=0");
  KernelConfig tail = whole;
  tail.set("TAIL_SPLIT", 8);
  const Problem full = nn(128 * 24, 128 * 11, 4096), over = nn(128 * 24 + 1, 128 * 11, 4096);
  EXPECT_DOUBLE_EQ(model.predict_us(tail, full), model.predict_us(whole, full));
  EXPECT_LT(model.predict_us(tail, over), 0.75 * model.predict_us(whole, over));
  EXPECT_GT(model.predict_us(tail, over), model.predict_us(tail, full));
  const BlockGroups g = PerformanceModel::block_groups(
      template_named("sgemm_warp").describe(tail, over).tile, over, 275 + 11 * 7);
  EXPECT_EQ(g.whole.blocks, 264);
  EXPECT_EQ(g.whole.k_tiles, 512);
  EXPECT_EQ(g.tail.blocks, 88);
  EXPECT_EQ(g.tail.k_tiles, 64);
}

// A stream tail's slices each write a partial tile that the last reads back: the same round
// trip as a split-K partial, priced alike (kPartialCost). Seen on the H200 (session 25): 512^3,
// all 64 of its 64x64 tiles in the tail, runs 8 slices of each in 19.9 us and 4 in 16.0; priced
// at a plain write and read, the two came out within 2 % (18.3 and 18.0 us), and 512^3 left out
// was served the 8-slice config. On a sub-wave problem the 8 slices now cost what the tiles split
// 8 ways by SPLIT_K cost, besides SPLIT_K's launch that scales C first.
TEST(PerformanceModel, a_stream_tails_partials_cost_as_split_k_partials) {
  const PerformanceModel model = h200_model("sgemm_warp");
  const auto config = [](int tail_split, int split_k) {
    KernelConfig c = KernelConfig::from_params_text(
        "sgemm_warp",
        "BM=64,BN=64,BK=8,WM=32,WN=32,TM=8,TN=4,STAGES=4,VEC=1,SPLIT_K=1,SWIZZLE=1,MIN_BLOCKS=1,"
        "PACK_B=0");
    c.set("TAIL_SPLIT", tail_split);
    c.set("SPLIT_K", split_k);
    return c;
  };
  constexpr double kLaunchUs = 2.5;  // the model's price of a launch
  const Problem p = nn(512, 512, 512);
  const double tail = model.predict_us(config(8, 1), p), split = model.predict_us(config(1, 8), p);
  EXPECT_NEAR(tail + kLaunchUs, split, 0.1) << "tail " << tail << " split " << split;
}

TEST(PerformanceModel, split_k_wins_on_a_skinny_large_k_shape_and_loses_on_a_square) {
  const PerformanceModel model = h200_model();
  const KernelConfig one = sgemm_config({{"BM", 64}, {"BN", 64}, {"TM", 4}, {"TN", 4}});
  KernelConfig four = one;
  four.set("SPLIT_K", 4);
  // 4096x128x4096 launches 128 blocks of 64x64, one per SM; four K slices put four on each
  // (measured on the H200: 155 us against 190 us).
  EXPECT_LT(model.predict_us(four, nn(4096, 128, 4096)),
            0.85 * model.predict_us(one, nn(4096, 128, 4096)));
  EXPECT_GT(model.predict_us(four, nn(4096, 4096, 4096)),
            model.predict_us(one, nn(4096, 4096, 4096)));
}

// Each block adds its split-K partial tile once its loop is done, so that traffic follows the
// compute instead of hiding under it: leave-one-out on the H200 FP32 sets carried split-K
// configs to a shape of a quarter the K ~15 % too fast while the partials overlapped.
TEST(PerformanceModel, split_k_partials_follow_the_compute_instead_of_hiding_under_it) {
  const PerformanceModel model = h200_model();
  const KernelConfig c = sgemm_config({{"BM", 64}, {"BN", 64}, {"TM", 4}, {"TN", 4}});
  KernelConfig split = c;
  split.set("SPLIT_K", 8);
  const Problem square = nn(2048, 2048, 2048);
  const double bw = default_roofs("sm_90", GemmTypes{}).bytes_per_s;
  // Three times the bytes of eight fp32 partial planes (the model's atomics cost).
  const double partial_us = 3.0 * 2048 * 2048 * 4 * 8 / bw * 1e6;
  const double compute_us = square.flops() / 66.9e12 * 1e6;
  EXPECT_LT(partial_us, compute_us);  // would hide under the compute if they overlapped
  EXPECT_GT(model.predict_us(split, square), model.predict_us(c, square) + partial_us);
}

TEST(PerformanceModel, a_matrix_vector_shape_is_memory_bound) {
  const PerformanceModel model = h200_model();
  const KernelConfig c = sgemm_config({{"BM", 64}, {"BN", 16}, {"TM", 4}, {"TN", 4}, {"VEC", 1}});
  const Problem gemv = nn(16384, 1, 16384);
  const double bytes = 16384.0 * 16384 * 4;
  const double memory_us = bytes / default_roofs("sm_90", GemmTypes{}).bytes_per_s * 1e6;
  const double compute_us = gemv.flops() / 66.9e12 * 1e6;
  const double predicted = model.predict_us(c, gemv);
  EXPECT_GT(memory_us, 10 * compute_us);
  EXPECT_GE(predicted, memory_us);
  EXPECT_LT(predicted, 3 * memory_us);
}

TEST(PerformanceModel, a_large_square_is_compute_bound_near_the_ffma_roof) {
  const PerformanceModel model = h200_model();
  const Problem square = nn(8192, 8192, 8192);
  const double roof_us = square.flops() / 66.9e12 * 1e6;
  const double predicted = model.predict_us(sgemm_config({{"MIN_BLOCKS", 2}}), square);
  EXPECT_GT(predicted, roof_us);
  EXPECT_LT(predicted, 2 * roof_us);
}

TEST(PerformanceModel, a_config_that_cannot_run_the_problem_is_infinitely_slow) {
  const PerformanceModel model = h200_model();
  Problem misaligned = nn(1024, 1024, 1024);
  misaligned.align_a = 4;  // VEC=4 needs 16 bytes
  EXPECT_TRUE(std::isinf(model.predict_us(sgemm_config(), misaligned)));
  // More K slices than K steps.
  EXPECT_TRUE(std::isinf(model.predict_us(sgemm_config({{"SPLIT_K", 64}}), nn(256, 256, 64))));
}

// gemv_simt streams A once: before it said so (bandwidth_bound), the model priced its narrow
// tile as a register tile doing K / KB times the work, 1366 us for 6144x4x2048 (29 us on the
// H200). Now: its bytes at the copy rate, its launches, and the K slices' partial sums.
// The same tile with 4-byte copies moves its bytes in four times the instructions: slower by
// about what the H200 showed (1.07-1.19x for sgemm_warp on aligned deepbench shapes).
TEST(PerformanceModel, narrower_copies_of_the_same_tile_are_predicted_slower) {
  const PerformanceModel model = h200_model();
  KernelConfig wide = sgemm_config(), narrow = sgemm_config();
  wide.set("VEC", 4);
  narrow.set("VEC", 1);
  const Problem p = nn(1760, 128, 1760);
  const double ratio = model.predict_us(narrow, p) / model.predict_us(wide, p);
  EXPECT_GT(ratio, 1.08);
  EXPECT_LT(ratio, 1.2);
  EXPECT_EQ(template_named("sgemm_warp").describe(narrow, p).copy_bytes, 4);
  EXPECT_EQ(template_named("sgemm_warp").describe(wide, p).copy_bytes, 4 * wide.get("VEC"));
}

TEST(PerformanceModel, a_streaming_family_is_priced_by_its_bytes) {
  const PerformanceModel model = h200_model("gemv_simt");
  const KernelConfig gemv = KernelConfig::from_params_text(
      "gemv_simt", "SIDE=1,ROWS=4,VEC=2,WARPS=8,KB=512,LW=2,SPLIT_MODE=1");
  const Problem p = nn(6144, 4, 2048);
  const double bytes_us = (6144.0 * 2048 + 2048 * 4 + 2 * 6144 * 4) * 4 / 4.26e12 * 1e6;
  const double predicted = model.predict_us(gemv, p);
  EXPECT_GT(predicted, bytes_us);
  EXPECT_LT(predicted, bytes_us + 10);
  // Eight times the K slices of a 64-deep KB cost more partial traffic than the 512-deep one.
  const KernelConfig shallow = KernelConfig::from_params_text(
      "gemv_simt", "SIDE=1,ROWS=4,VEC=2,WARPS=8,KB=64,LW=1,SPLIT_MODE=1");
  EXPECT_GT(model.predict_us(shallow, nn(512, 4, 500000)),
            model.predict_us(gemv, nn(512, 4, 500000)));
}

// A streaming kernel issues ROWS FFMAs per streamed element, whatever the problem's small side:
// on the H200 (session 23) 512x8x500000 ran 287 us with ROWS=8 and 354 with ROWS=16, and
// 4096x1x4096 22.0 with ROWS=1 and 30.6 with ROWS=16. Priced alike before, the tuner's model
// strategy spent its proposals on 16-row configs for every GEMV shape.
TEST(PerformanceModel, a_streaming_config_with_more_rows_than_the_problem_is_predicted_slower) {
  const PerformanceModel model = h200_model("gemv_simt");
  const auto rows = [](int64_t r) {
    return KernelConfig::from_params_text(
        "gemv_simt", "SIDE=1,ROWS=" + std::to_string(r) +
                         ",VEC=4,WARPS=8,KB=1024,LW=2,SPLIT_MODE=0,PREFETCH=1,STAGES=0,KLANES=16,"
                         "CLUSTER=1");
  };
  const Problem deep = nn(512, 8, 500000);
  // ROWS=16 does 8 more FFMAs per element of A: 2 * 8 * 512 * 500000 FLOPs at the FFMA roof.
  const double extra_us = 2.0 * 8 * 512 * 500000 / 66.9e12 * 1e6;
  const double gap = model.predict_us(rows(16), deep) - model.predict_us(rows(8), deep);
  EXPECT_NEAR(gap, extra_us, 0.1 * extra_us);
  // Rows the problem has cost what they cost on a problem that has them all.
  EXPECT_GT(model.predict_us(rows(16), nn(512, 16, 500000)), model.predict_us(rows(8), deep));
}

// Summed by each strip's last block (SPLIT_MODE=2), 977 slices of 512x8x500000 ran 474 us on the
// H200 against 380 with atomics (session 21): the reads one thread makes in turn are priced, so
// the model no longer ranks the two alike. With 8 slices (4096x1x4096) they cost ~nothing.
TEST(PerformanceModel, a_last_block_reduction_over_many_slices_is_priced_by_its_reads) {
  const PerformanceModel model = h200_model("gemv_simt");
  const auto config = [](int64_t mode) {
    return KernelConfig::from_params_text(
        "gemv_simt", "SIDE=1,ROWS=8,VEC=4,WARPS=8,KB=512,LW=4,SPLIT_MODE=" + std::to_string(mode) +
                         ",PREFETCH=1,STAGES=0,KLANES=8,CLUSTER=1");
  };
  const Problem deep = nn(512, 8, 500000);
  const double gap = model.predict_us(config(2), deep) - model.predict_us(config(0), deep);
  EXPECT_GT(gap, 80.0);  // 977 slices x 4 reads of 32 ns
  EXPECT_LT(gap, 160.0);
  const Problem short_k = nn(4096, 1, 4096);
  EXPECT_LT(std::abs(model.predict_us(config(2), short_k) - model.predict_us(config(0), short_k)),
            1.0);
}

TEST(PerformanceModel, measured_ceilings_replace_the_defaults) {
  std::vector<DeviceCeiling> measured = {{kCopyBandwidthCeiling, 1e12, "copy", ""},
                                         {kFfmaCeiling, 5e13, "ffma", ""}};
  const Roofs r = roofs_from(measured, "sm_90", GemmTypes{});
  EXPECT_DOUBLE_EQ(r.bytes_per_s, 1e12);
  EXPECT_DOUBLE_EQ(r.flops_per_s, 5e13);
  const Roofs d = roofs_from({}, "sm_90", GemmTypes{});
  EXPECT_DOUBLE_EQ(d.flops_per_s, 66.9e12);
  EXPECT_DOUBLE_EQ(d.bytes_per_s, 4.26e12);
  EXPECT_EQ(default_sm_count("sm_80"), 108);
}

}  // namespace
}  // namespace tgemm
