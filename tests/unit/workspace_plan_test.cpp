// The workspace plumbing without a GPU: the parameter block's append-only layout, the plans'
// workspace sizes (deterministic split-K in sgemm_simt, gemv_simt's K slices), gemv_simt's
// limits, and the dispatcher's growable workspace over an injected allocator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "src/dispatch/device_workspace.h"
#include "src/dispatch/dispatch_errors.h"
#include "src/dispatch/shared_workspace.h"
#include "src/launch/launch_plan.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

KernelConfig gemv(std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c{"gemv_simt",
                 {{"SIDE", 0},
                  {"ROWS", 8},
                  {"VEC", 4},
                  {"WARPS", 8},
                  {"KB", 256},
                  {"LW", 1},
                  {"SPLIT_MODE", 1}}};
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

TEST(GemmParams, workspace_is_appended_after_the_72_bytes_old_cubins_declare) {
  EXPECT_EQ(offsetof(GemmParams, c_aligned16) + sizeof(int), 72u);
  EXPECT_EQ(offsetof(GemmParams, workspace), 72u);
  const auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 4, 4, 4);
  EXPECT_EQ(make_params(p, nullptr, nullptr, nullptr, 1, 0).workspace, nullptr);
}

TEST(GemmParams, batch_is_appended_after_the_80_bytes_and_leaves_tma_maps_in_place) {
  EXPECT_EQ(offsetof(GemmParams, stride_a), 80u);
  EXPECT_EQ(sizeof(GemmParams), 112u);
  EXPECT_EQ(offsetof(TmaGemmParams, a), 128u);  // where TMA cubins stored before read it
  const GemmParams one = make_params(Problem::packed(GemmTypes{}, Op::N, Op::N, 4, 5, 6), nullptr,
                                     nullptr, nullptr, 1, 0);
  EXPECT_EQ(one.batch, 1);
  EXPECT_EQ(one.stride_c, 0);
  const GemmParams many = make_params(Problem::packed_batch(GemmTypes{}, Op::T, Op::N, 4, 5, 6, 3),
                                      nullptr, nullptr, nullptr, 1, 0);
  EXPECT_EQ(many.batch, 3);
  EXPECT_EQ(many.stride_a, 24);
  EXPECT_EQ(many.stride_b, 30);
  EXPECT_EQ(many.stride_c, 20);
}

TEST(SplitKPlan, deterministic_split_needs_a_workspace_and_a_reduce_and_no_beta_pass) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 100, 70, 4096);
  const KernelConfig det = testing::sgemm_config({{"SPLIT_K", 16}, {"SPLIT_MODE", 1}});
  const LaunchPlan plan = family.plan_launch(det, p);
  EXPECT_EQ(plan.workspace_bytes, size_t(16) * 100 * 70 * 4);
  ASSERT_EQ(plan.count, 2);
  EXPECT_EQ(plan.launches[0].entry, 0);
  EXPECT_EQ(plan.launches[0].grid[2], 16u);
  const std::vector<std::string> entries = family.entries(det);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[size_t(plan.launches[1].entry)], "sgemm_simt_reduce");
}

TEST(SplitKPlan, atomic_split_and_old_configs_need_no_workspace) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 100, 70, 4096);
  const LaunchPlan atomic = family.plan_launch(testing::sgemm_config({{"SPLIT_K", 16}}), p);
  EXPECT_EQ(atomic.workspace_bytes, 0u);
  ASSERT_EQ(atomic.count, 2);
  EXPECT_EQ(atomic.launches[0].entry, 1);  // C = beta * C first
  // A config stored before SPLIT_MODE existed: atomics, two entries as before.
  KernelConfig old = testing::sgemm_config({{"SPLIT_K", 4}});
  old.params.erase(std::remove_if(old.params.begin(), old.params.end(),
                                  [](const auto& kv) { return kv.first == "SPLIT_MODE"; }),
                   old.params.end());
  EXPECT_EQ(family.entries(old).size(), 2u);
  EXPECT_EQ(family.plan_launch(old, p).workspace_bytes, 0u);
}

TEST(SplitKPlan, refuses_a_workspace_past_the_limit_with_its_size) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const auto big = Problem::packed(GemmTypes{}, Op::N, Op::N, 8192, 8192, 8192);
  auto why = family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 16}, {"SPLIT_MODE", 1}}),
                                       big, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("workspace"), std::string::npos) << *why;
  EXPECT_FALSE(family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 16}}), big, "sm_90"));
}

TEST(GemvSimt, refuses_a_small_side_past_rows_with_the_reason) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto m9 = Problem::packed(GemmTypes{}, Op::N, Op::N, 9, 4096, 4096);
  auto why = family.unsupported_reason(gemv(), m9, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("M <= ROWS=8"), std::string::npos) << *why;
  EXPECT_FALSE(family.unsupported_reason(gemv({{"ROWS", 16}}), m9, "sm_90"));
  const auto n9 = Problem::packed(GemmTypes{}, Op::T, Op::N, 4096, 9, 4096);
  why = family.unsupported_reason(gemv({{"SIDE", 1}}), n9, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("N <= ROWS=8"), std::string::npos) << *why;
  // SIDE=0 reads N as the long side: an N of 9 with M = 1 is fine (VEC=1: ldb = 9).
  EXPECT_FALSE(family.unsupported_reason(
      gemv({{"VEC", 1}}), Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 9, 5), "sm_90"));
}

TEST(GemvSimt, vector_loads_need_the_large_operand_aligned) {
  const GemmTemplate& family = template_named("gemv_simt");
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 4097, 300);
  p.align_b = 4;
  auto why = family.unsupported_reason(gemv(), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("VEC=4 needs B"), std::string::npos) << *why;
  EXPECT_FALSE(family.unsupported_reason(gemv({{"VEC", 1}}), p, "sm_90"));
  p.align_a = 4;  // A is the small operand for SIDE=0: read through shared memory
  EXPECT_FALSE(family.unsupported_reason(gemv({{"VEC", 1}}), p, "sm_90"));
}

// PREFETCH changes only the loop over X contiguous along L (1x4096x4096 NN reads B along N);
// with X along K (4096x1x4096 NN reads A along K) PREFETCH=0 would be the same kernel again.
TEST(GemvSimt, prefetch_0_is_refused_where_x_is_contiguous_along_k) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto along_l = Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 4096, 4096);
  EXPECT_FALSE(family.unsupported_reason(gemv({{"PREFETCH", 0}}), along_l, "sm_90"));
  const auto along_k = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 1, 4096);
  auto why = family.unsupported_reason(gemv({{"SIDE", 1}, {"PREFETCH", 0}}), along_k, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("PREFETCH=0 builds the same kernel"), std::string::npos) << *why;
  EXPECT_FALSE(family.unsupported_reason(gemv({{"SIDE", 1}, {"PREFETCH", 1}}), along_k, "sm_90"));
  // A stored config with another value (its static_assert would fail at the JIT compile).
  why = family.unsupported_reason(gemv({{"PREFETCH", 2}}), along_l, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "PREFETCH=2 is not 0 or 1");
}

TEST(GemvSimt, plans_one_slice_per_kb_of_k_with_the_matching_workspace) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 3, 4096, 1000);
  const LaunchPlan det = family.plan_launch(gemv(), p);
  ASSERT_EQ(det.count, 2);
  EXPECT_EQ(det.launches[0].grid[0], 4096u / 128);  // 32 lanes x VEC=4 per strip
  EXPECT_EQ(det.launches[0].grid[1], 4u);           // ceil(1000 / 256)
  EXPECT_EQ(det.launches[1].entry, 1);              // gemv_simt_reduce
  EXPECT_FALSE(det.launches[0].early);              // follows the caller's work
  EXPECT_TRUE(det.launches[1].early);               // waits for the partials in the kernel
  EXPECT_EQ(det.workspace_bytes, size_t(4) * 3 * 4096 * 4);
  // Atomic slices: one launch, C scaled by each strip's first slice within it.
  const LaunchPlan atomic = family.plan_launch(gemv({{"SPLIT_MODE", 0}}), p);
  EXPECT_EQ(atomic.workspace_bytes, 0u);
  ASSERT_EQ(atomic.count, 1);
  EXPECT_EQ(atomic.launches[0].entry, 0);
  EXPECT_EQ(atomic.launches[0].grid[1], 4u);
  EXPECT_EQ(family.entries(gemv({{"SPLIT_MODE", 0}})), std::vector<std::string>{"gemv_simt"});
  // K within one slice: a single launch writes C directly.
  const LaunchPlan one =
      family.plan_launch(gemv(), Problem::packed(GemmTypes{}, Op::N, Op::T, 3, 4096, 256));
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(one.workspace_bytes, 0u);
  EXPECT_EQ(one.launches[0].grid[0], 4096u / 8);  // B^T: a row of L per warp
}

TEST(GemvSimt, last_block_reduction_is_one_launch_with_the_partials_workspace) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 3, 4096, 1000);
  const KernelConfig one_launch = gemv({{"SPLIT_MODE", 2}});
  ASSERT_FALSE(family.unsupported_reason(one_launch, p, "sm_75"));
  const LaunchPlan plan = family.plan_launch(one_launch, p);
  ASSERT_EQ(plan.count, 1);  // no C = beta * C pass, no reduce pass
  EXPECT_EQ(plan.launches[0].entry, 0);
  EXPECT_EQ(plan.launches[0].grid[0], 4096u / 128);
  EXPECT_EQ(plan.launches[0].grid[1], 4u);
  EXPECT_EQ(plan.workspace_bytes, size_t(4) * 3 * 4096 * 4);
  // K within one slice: C written directly, no workspace.
  const LaunchPlan direct =
      family.plan_launch(one_launch, Problem::packed(GemmTypes{}, Op::N, Op::N, 3, 4096, 256));
  EXPECT_EQ(direct.count, 1);
  EXPECT_EQ(direct.workspace_bytes, 0u);
}

// SPLIT_MODE 0 (its strips' ready flags) and 2 count arrivals per strip.
TEST(GemvSimt, atomic_and_last_block_slices_refuse_more_strips_than_their_arrival_counters) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto wide_atomic = Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 4 * 65536 + 1, 512);
  const auto atomic_why = family.unsupported_reason(
      gemv({{"SPLIT_MODE", 0}, {"WARPS", 4}, {"VEC", 1}}), wide_atomic, "sm_90");
  ASSERT_TRUE(atomic_why);
  EXPECT_NE(atomic_why->find("SPLIT_MODE=0 counts arrivals for at most 65536 strips"),
            std::string::npos)
      << *atomic_why;
  // B^T with WARPS=4, LW=1: strips of 4 rows of L; 65537 strips past the 65536 counters.
  const KernelConfig c = gemv({{"SPLIT_MODE", 2}, {"WARPS", 4}, {"VEC", 1}});
  const auto wide = Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 4 * 65536 + 1, 512);
  const auto why = family.unsupported_reason(c, wide, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("SPLIT_MODE=2 counts arrivals for at most 65536 strips"), std::string::npos)
      << *why;
  EXPECT_NE(why->find("65537"), std::string::npos) << *why;
  EXPECT_FALSE(family.unsupported_reason(gemv({{"SPLIT_MODE", 1}, {"WARPS", 4}, {"VEC", 1}}), wide,
                                         "sm_90"));
  // One K slice counts nothing; 65536 strips fit.
  EXPECT_FALSE(family.unsupported_reason(
      c, Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 4 * 65536 + 1, 256), "sm_90"));
  EXPECT_FALSE(family.unsupported_reason(
      c, Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 4 * 65536, 512), "sm_90"));
}

// A fake device: allocations are counted, the ones over `limit` fail.
struct FakeAllocator {
  size_t limit = size_t(1) << 20;
  int allocations = 0, releases = 0;
  std::vector<char> arena = std::vector<char>(16);
  WorkspaceAllocator make() {
    return {[this](void** p, size_t bytes) {
              if (bytes > limit) return cudaErrorMemoryAllocation;
              ++allocations;
              *p = arena.data();
              return cudaSuccess;
            },
            [this](void*) { ++releases; }};
  }
};

TEST(DeviceWorkspace, allocates_lazily_grows_and_never_shrinks) {
  FakeAllocator fake;
  {
    DeviceWorkspace ws(fake.make());
    EXPECT_EQ(ws.bytes(), 0u);
    EXPECT_EQ(fake.allocations, 0);
    Reservation r = ws.reserve(0);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.ptr, nullptr);
    EXPECT_EQ(fake.allocations, 0);
    r = ws.reserve(1000);
    ASSERT_TRUE(r.ok());
    EXPECT_NE(r.ptr, nullptr);
    EXPECT_EQ(ws.bytes(), 1000u);
    ASSERT_TRUE(ws.reserve(500).ok());
    EXPECT_EQ(ws.bytes(), 1000u);
    EXPECT_EQ(fake.allocations, 1);
    ASSERT_TRUE(ws.reserve(4000).ok());
    EXPECT_EQ(ws.bytes(), 4000u);
    EXPECT_EQ(fake.allocations, 2);
    EXPECT_EQ(fake.releases, 1);
  }
  EXPECT_EQ(fake.releases, 2);  // freed with its owner
}

TEST(DeviceWorkspace, failed_allocation_is_a_status_and_leaves_none) {
  FakeAllocator fake;
  DeviceWorkspace ws(fake.make());
  ASSERT_TRUE(ws.reserve(100).ok());
  const Reservation failed = ws.reserve(fake.limit + 1);
  EXPECT_EQ(failed.error, cudaErrorMemoryAllocation);
  EXPECT_FALSE(failed.too_small);
  EXPECT_EQ(failed.ptr, nullptr);
  EXPECT_EQ(ws.bytes(), 0u);
  const Reservation later = ws.reserve(100);  // a later, smaller plan still gets one
  ASSERT_TRUE(later.ok());
  EXPECT_NE(later.ptr, nullptr);
}

// During a stream capture the buffer may not grow: what it holds serves, more is too_small
// and nothing is allocated or freed (either would break the capture).
TEST(DeviceWorkspace, a_buffer_that_may_not_grow_serves_what_it_holds) {
  FakeAllocator fake;
  DeviceWorkspace ws(fake.make());
  const Reservation none = ws.reserve(100, /*may_grow=*/false);
  EXPECT_TRUE(none.too_small);
  EXPECT_EQ(none.ptr, nullptr);
  EXPECT_EQ(fake.allocations, 0);
  ASSERT_TRUE(ws.reserve(1000).ok());
  const Reservation held = ws.reserve(1000, false);
  ASSERT_TRUE(held.ok());
  EXPECT_NE(held.ptr, nullptr);
  EXPECT_TRUE(ws.reserve(1001, false).too_small);
  EXPECT_EQ(fake.allocations, 1);
  EXPECT_EQ(fake.releases, 0);
  EXPECT_EQ(ws.bytes(), 1000u);
}

// A lent buffer (tgemmSetWorkspace) serves up to its size, is never grown nor freed, and
// lending frees the library's own; a null one returns to the library's own, allocated anew.
TEST(DeviceWorkspace, a_lent_buffer_is_used_never_grown_nor_freed) {
  FakeAllocator fake;
  std::vector<char> user(64);
  {
    DeviceWorkspace ws(fake.make());
    ASSERT_TRUE(ws.reserve(500).ok());
    EXPECT_FALSE(ws.lent());
    ws.lend(user.data(), user.size());
    EXPECT_EQ(fake.releases, 1);
    EXPECT_TRUE(ws.lent());
    EXPECT_EQ(ws.bytes(), 64u);
    const Reservation r = ws.reserve(64);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.ptr, user.data());
    const Reservation more = ws.reserve(65);
    EXPECT_TRUE(more.too_small);
    EXPECT_EQ(more.ptr, nullptr);
    EXPECT_EQ(fake.allocations, 1);
    EXPECT_EQ(ws.bytes(), 64u);
    ws.lend(nullptr, 0);
    EXPECT_FALSE(ws.lent());
    EXPECT_EQ(ws.bytes(), 0u);
    ws.lend(user.data(), user.size());
  }
  EXPECT_EQ(fake.allocations, 1);
  EXPECT_EQ(fake.releases, 1);  // the lent buffer is never freed
}

// The device's workspace as calls share it: holding it ahead grows it and the most any call
// needed; a lent buffer too small, a capture's leave to allocate, and a failed allocation are
// each their own error, naming what needed the bytes.
TEST(SharedWorkspace, hold_grows_it_and_counts_the_most_needed) {
  FakeAllocator fake;
  SharedWorkspace ws(fake.make());
  ws.hold(1000, "kernel x");
  ws.hold(400, "kernel y");
  EXPECT_EQ(ws.bytes(), 1000u);
  EXPECT_EQ(ws.needed(), 1000u);
  EXPECT_EQ(fake.allocations, 1);
}

TEST(SharedWorkspace, a_lent_buffer_too_small_or_a_failed_allocation_is_an_error_naming_it) {
  FakeAllocator fake;
  SharedWorkspace ws(fake.make());
  char lent[256];
  ws.lend(lent, sizeof lent);
  try {
    ws.hold(4096, "kernel x for problem p");
    FAIL() << "a lent buffer of 256 bytes held 4096";
  } catch (const WorkspaceTooSmallError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel x for problem p needs 4096 bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ws.needed(), 4096u) << "what a call needed counts even when it could not be had";
  ws.lend(nullptr, 0);  // back to the library's own buffer
  try {
    ws.hold(fake.limit + 1, "kernel z");
    FAIL() << "an allocation over the fake device's limit succeeded";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel z needs"), std::string::npos) << e.what();
  }
}

TEST(SharedWorkspace, a_capture_that_would_grow_it_is_not_prepared) {
  FakeAllocator fake;
  SharedWorkspace ws(fake.make());
  Reservation too_small;
  too_small.too_small = true;
  try {
    ws.check(too_small, 512, true, "kernel x");
    FAIL() << "a capture's reservation that needed to grow passed";
  } catch (const NotPreparedError& e) {
    EXPECT_NE(std::string(e.what()).find("capturing stream cannot allocate"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(ws.check(Reservation{}, 512, true, "kernel x"));  // it fitted
}

TEST(SharedWorkspace, another_allocator_serves_from_then_on) {
  FakeAllocator first, second;
  SharedWorkspace ws(first.make());
  ws.hold(100, "x");
  ws.use_allocator(second.make());
  EXPECT_EQ(ws.bytes(), 0u);
  ws.hold(100, "x");
  EXPECT_EQ(first.allocations, 1);
  EXPECT_EQ(first.releases, 1);
  EXPECT_EQ(second.allocations, 1);
}

}  // namespace
}  // namespace tgemm
