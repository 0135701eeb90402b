// NVRTC compiles of the kernel templates for every arch we claim, with the ptxas resource
// report parsed. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "src/core/hash.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/cubin_resources.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/launch/launch_plan.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/sgemm_simt.yaml";

KernelConfig default_config() { return testing::sgemm_config(); }

class CompilesForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(CompilesForArch, default_config_in_every_layout_with_resources_parsed) {
  const std::string arch = GetParam();
  auto source = kernel_source("sgemm_simt");
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      auto k = testing::compile_f32(default_config(), a, b, arch);
      ASSERT_TRUE(k.ok) << k.error;
      EXPECT_EQ(k.arch, arch);
      EXPECT_GT(k.cubin.size(), 1000u);
      ASSERT_TRUE(k.resources.found) << k.log;
      EXPECT_GT(k.resources.registers, 32);
      EXPECT_LE(k.resources.registers, 255);
      EXPECT_EQ(k.resources.spill_store_bytes, 0) << k.log;
      EXPECT_EQ(resource_violation(k, testing::block_of(default_config()), arch_limits(arch)),
                std::nullopt);
    }
}

// A seeded sample of the legal space: whatever the space calls legal must compile.
TEST_P(CompilesForArch, sample_of_legal_space_compiles) {
  const std::string arch = GetParam();
  auto space = SearchSpace::load(kSpace);
  auto legal = space.enumerate(arch_limits(arch)).legal;
  ASSERT_GT(legal.size(), 10u);
  std::mt19937_64 rng(arch_number(arch));
  std::shuffle(legal.begin(), legal.end(), rng);
  auto source = kernel_source(space.template_name());
  for (size_t i = 0; i < 4; ++i) {
    const Op a = i % 2 ? Op::T : Op::N, b = i / 2 % 2 ? Op::T : Op::N;
    auto k = testing::compile_f32(legal[i], a, b, arch);
    EXPECT_TRUE(k.ok) << legal[i].canonical_name() << "\n" << k.error;
    EXPECT_TRUE(k.resources.found) << k.log;
  }
}

// The first layout whose 64^3 problem `line` serves on `arch` (NN when it serves none): a
// family may read some layouts only (tf32 wgmma needs both operands K-major), and the
// dispatcher skips a line for the layouts its family refuses.
Problem first_layout_served(const GemmTemplate& family, const DefaultKernel& line,
                            const std::string& arch) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      const Problem p = Problem::packed(line.types, a, b, 64, 64, 64);
      if (!family.unsupported_reason(line.config, p, arch)) return p;
    }
  return Problem::packed(line.types, Op::N, Op::N, 64, 64, 64);
}

// The dispatcher's shipped defaults of every family: each is a point of its family's space
// and compiles for its types without spills or an exceeded limit, or the library would fall
// back to cuBLAS for its shapes. A `*` line its family refuses on this arch (a cp.async
// pipeline on sm_75) is skipped: the dispatcher skips it there too.
TEST_P(CompilesForArch, every_shipped_default_kernel_is_legal_and_compiles) {
  const std::string arch = GetParam();
  std::map<std::string, std::set<std::string>> legal;  // family -> canonical names
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.arch != "*" && d.arch != arch) continue;
    const GemmTemplate& family = template_named(d.config.template_name);
    const Problem variant = first_layout_served(family, d, arch);
    if (d.arch == "*" && family.unsupported_reason(d.config, variant, arch)) continue;
    const std::string space_path =
        std::string(TGEMM_SOURCE_DIR) + "/configs/spaces/" + family.name() + ".yaml";
    if (!legal.count(family.name()))
      for (const KernelConfig& c : SearchSpace::load(space_path).enumerate(arch_limits(arch)).legal)
        legal[family.name()].insert(c.canonical_name());
    const std::string name = d.config.canonical_name();
    EXPECT_TRUE(legal[family.name()].count(name)) << name << " is not in " << space_path;
    EXPECT_EQ(family.unsupported_reason(d.config, variant, arch), std::nullopt) << name;
    auto k = build_kernel(family, d.config, variant, arch);
    ASSERT_TRUE(k.ok) << name << "\n" << k.error;
    EXPECT_EQ(resource_violation(k, family.block_resources(d.config), arch_limits(arch)),
              std::nullopt)
        << name << " " << d.types.name();
  }
  EXPECT_TRUE(legal.count("sgemm_simt")) << "no sgemm_simt default for " << arch;
}

// No spills, no exceeded limit, and every entry the family names is in the cubin.
void expect_clean_compile(const KernelConfig& config, Op a, Op b, const std::string& arch) {
  const std::string what = config.canonical_name() + " " + to_string(a) + to_string(b) + " " + arch;
  auto k = testing::compile_f32(config, a, b, arch);
  ASSERT_TRUE(k.ok) << what << "\n" << k.error;
  ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
  EXPECT_EQ(resource_violation(k, testing::block_of(config), arch_limits(arch)), std::nullopt)
      << what;
  for (const std::string& entry : template_named(config.template_name).entries(config))
    EXPECT_TRUE(read_cubin_resources(k.cubin, entry, arch).found) << what << ": no " << entry;
}

TEST_P(CompilesForArch, deterministic_split_k_compiles_with_its_reduce_entry) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      expect_clean_compile(testing::sgemm_config({{"SPLIT_K", 16}, {"SPLIT_MODE", 1}}), a, b,
                           GetParam());
}

KernelConfig gemv_config(int64_t side, int64_t rows, int64_t vec, int64_t lw, int64_t split_mode) {
  return {"gemv_simt",
          {{"SIDE", side},
           {"ROWS", rows},
           {"VEC", vec},
           {"WARPS", 8},
           {"KB", 512},
           {"LW", lw},
           {"SPLIT_MODE", split_mode}}};
}

// Both small sides in every layout cover both strips (X contiguous along L and along K),
// alternately with the most accumulators the space allows and with the fewest.
TEST_P(CompilesForArch, gemv_simt_compiles_every_layout_and_side_without_spills) {
  int i = 0;
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (int64_t side : {0, 1})
        expect_clean_compile(
            i++ % 3 ? gemv_config(side, 16, 4, 1, 1) : gemv_config(side, 1, 2, 2, 0), a, b,
            GetParam());
}

// SPLIT_MODE=2 (the strip's last block reduces) on both strips, with the most accumulators.
TEST_P(CompilesForArch, gemv_simt_last_block_reduction_compiles_without_spills) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (int64_t side : {0, 1})
        expect_clean_compile(gemv_config(side, 16, 4, 1, 2), a, b, GetParam());
}

// Each layout in turn builds the next sampled config that a GEMV of that layout can run (the
// tuner builds nothing else: KLANES, STAGES and the accumulator limit depend on the layout).
TEST_P(CompilesForArch, sample_of_gemv_simt_space_compiles) {
  const std::string arch = GetParam();
  auto space = SearchSpace::load(TGEMM_SOURCE_DIR "/configs/spaces/gemv_simt.yaml");
  auto legal = space.enumerate(arch_limits(arch)).legal;
  ASSERT_GT(legal.size(), 10u);
  std::mt19937_64 rng(arch_number(arch));
  std::shuffle(legal.begin(), legal.end(), rng);
  const GemmTemplate& family = template_named("gemv_simt");
  size_t next = 0;
  for (int i = 0; i < 4; ++i) {
    const Op a = i % 2 ? Op::T : Op::N, b = i / 2 % 2 ? Op::T : Op::N;
    for (; next < legal.size(); ++next) {
      const bool small_m = legal[next].get("SIDE") == 0;
      const Problem p =
          Problem::packed(GemmTypes{}, a, b, small_m ? 1 : 1024, small_m ? 1024 : 1, 1024);
      if (!family.unsupported_reason(legal[next], p, arch)) break;
    }
    ASSERT_LT(next, legal.size()) << "no sampled config runs " << to_string(a) << to_string(b);
    expect_clean_compile(legal[next++], a, b, arch);
  }
}

// KLANES < 32 (several rows per warp along K) with the most accumulators, and the cp.async
// ring along L; sm_75 refuses the ring with its reason.
TEST_P(CompilesForArch, gemv_simt_lane_groups_and_ring_compile_without_spills) {
  const std::string arch = GetParam();
  for (int64_t side : {0, 1}) {
    KernelConfig groups = gemv_config(side, 16, 4, 4, 2);
    groups.set("KLANES", 8);
    KernelConfig ring = gemv_config(side, 16, 4, 1, 2);
    ring.set("STAGES", 4);
    // SIDE=0 streams B (along K when transposed), SIDE=1 streams A (along K when not).
    const Op along_k_b = side == 0 ? Op::T : Op::N, along_l_a = side == 0 ? Op::N : Op::T;
    expect_clean_compile(groups, Op::N, along_k_b, arch);
    if (arch == "sm_75") {
      const auto k = testing::compile_f32(ring, along_l_a, Op::N, arch);
      EXPECT_FALSE(k.ok);
      EXPECT_NE(k.error.find("STAGES > 0 needs cp.async"), std::string::npos) << k.error;
    } else {
      expect_clean_compile(ring, along_l_a, Op::N, arch);
    }
  }
}

// SPLIT_MODE=3 (a strip's K slices meet in one cluster's shared memory) builds clean on both
// strips on sm_90, with the ring and with lane groups; earlier archs refuse it with its reason.
TEST_P(CompilesForArch, gemv_simt_cluster_of_slices_compiles_on_sm_90_only) {
  const std::string arch = GetParam();
  for (int64_t side : {0, 1}) {
    KernelConfig ring = gemv_config(side, 16, 4, 1, 3);
    ring.set("CLUSTER", 8);
    ring.set("STAGES", 3);
    KernelConfig groups = gemv_config(side, 16, 4, 4, 3);
    groups.set("CLUSTER", 4);
    groups.set("KLANES", 8);
    const Op along_k_b = side == 0 ? Op::T : Op::N, along_l_a = side == 0 ? Op::N : Op::T;
    if (arch_number(arch) < 90) {
      const auto k = testing::compile_f32(groups, Op::N, along_k_b, arch);
      EXPECT_FALSE(k.ok);
      EXPECT_NE(k.error.find("SPLIT_MODE=3 needs thread block clusters"), std::string::npos)
          << k.error;
      continue;
    }
    expect_clean_compile(groups, Op::N, along_k_b, arch);
    expect_clean_compile(ring, along_l_a, Op::N, arch);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CompilesForArch, ::testing::Values("sm_75", "sm_80", "sm_90"));

// The selector counts a streaming config's resident blocks (KernelSelector::resident_capacity)
// from the family's register estimate: for every shipped GEMV line, on both of its loops (X
// along L, then along K), it stays within 32 of ptxas's count on sm_90 (the 16-row lines'
// 124-128 decide between two and three blocks of 256 threads per SM).
TEST(GemvSimtRegisters, estimate_is_near_ptxas_for_every_shipped_line_and_loop) {
  const GemmTemplate& family = template_named("gemv_simt");
  int compiled = 0;
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.config.template_name != "gemv_simt") continue;
    const bool small_m = d.config.get("SIDE") == 0;
    // SIDE=0 streams B (along K when transposed), SIDE=1 streams A (along K when not).
    const std::pair<Op, Op> loops[] = {small_m ? std::pair{Op::N, Op::N} : std::pair{Op::T, Op::N},
                                       small_m ? std::pair{Op::N, Op::T} : std::pair{Op::N, Op::N}};
    for (const auto& [a, b] : loops) {
      const int64_t rows = d.config.get("ROWS");
      const Problem p =
          Problem::packed(GemmTypes{}, a, b, small_m ? rows : 4096, small_m ? 4096 : rows, 4096);
      if (family.unsupported_reason(d.config, p, "sm_90")) continue;
      const CompiledKernel k = testing::compile_f32(d.config, a, b, "sm_90");
      ASSERT_TRUE(k.ok) << k.error;
      EXPECT_NEAR(family.describe(d.config, p).estimated_registers, k.resources.registers, 32)
          << d.config.params_text() << " " << to_string(a) << to_string(b);
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 10);
}

TEST(NvrtcCompiler, violated_static_assert_fails_with_reason_name_and_options) {
  KernelConfig bad = default_config();
  bad.set("BM", 100);  // not a multiple of TM = 8
  auto k = testing::compile_f32(bad, Op::N, Op::N, "sm_80");
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.error.find("BM must be a multiple of TM"), std::string::npos) << k.error;
  EXPECT_NE(k.error.find(bad.canonical_name()), std::string::npos);
  EXPECT_NE(k.error.find("-DBM=100"), std::string::npos);
  EXPECT_TRUE(k.cubin.empty());
}

TEST(NvrtcCompiler, malformed_arch_is_a_failed_compile_not_an_exception) {
  auto k = testing::compile_f32(default_config(), Op::N, Op::N, "gfx90a");
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.error.find("gfx90a"), std::string::npos);
}

// NVRTC compiles on the calling thread: its CPU time is most of the wall time on an idle core,
// never more (the tuner's summary compares the two to tell waiting from slow compiling).
TEST(NvrtcCompiler, reports_the_compiling_threads_cpu_time_within_the_wall_time) {
  auto k = testing::compile_f32(default_config(), Op::N, Op::N, "sm_80");
  ASSERT_TRUE(k.ok) << k.error;
  EXPECT_GT(k.compile_cpu_ms, 0);
  EXPECT_LE(k.compile_cpu_ms, k.compile_ms + 1);  // clocks of 1 ms granularity at worst
  // Time runnable but not running (no free core) is the rest of the wall time, or part of it;
  // the three clocks are read a little apart (seen 578.0 against 575.7 ms under load).
  EXPECT_GE(k.compile_wait_ms, 0);
  EXPECT_LE(k.compile_cpu_ms + k.compile_wait_ms, 1.01 * k.compile_ms + 2);
}

TEST(NvrtcCompiler, cache_key_depends_on_every_input) {
  const GemmTemplate& family = template_named("sgemm_simt");
  auto variant = [](Op a, Op b, GemmTypes t = {}) { return Problem::packed(t, a, b, 1, 1, 1); };
  auto key = [&](const GemmTemplate& f, const KernelConfig& c, const Problem& v, const char* arch) {
    return kernel_cache_key(f, c, v, arch);
  };
  auto base = key(family, default_config(), variant(Op::N, Op::N), "sm_80");
  EXPECT_EQ(base, key(family, default_config(), variant(Op::N, Op::N), "sm_80"));
  EXPECT_NE(base, key(family, default_config(), variant(Op::N, Op::N), "sm_90"));
  EXPECT_NE(base, key(family, default_config(), variant(Op::T, Op::N), "sm_80"));
  EXPECT_NE(base,
            key(family, default_config(), variant(Op::N, Op::N, gemm_types("tf32")), "sm_80"));
  KernelConfig other = default_config();
  other.set("BK", 16);
  EXPECT_NE(base, key(family, other, variant(Op::N, Op::N), "sm_80"));
  // The template text and every common header are in the hash, hence in the key.
  KernelSource edited = family.source();
  edited.text += "\n";
  auto edited_family =
      make_template("sgemm_simt", kernel_source_from_text("sgemm_simt", edited.text));
  EXPECT_NE(base, key(*edited_family, default_config(), variant(Op::N, Op::N), "sm_80"));
  ASSERT_FALSE(family.source().headers.empty());
  EXPECT_NE(family.source().hash, stable_hash(family.source().text));
}

TEST(ResourceCheck, prunes_spills_and_oversized_shared_memory) {
  CompiledKernel k;
  k.resources.found = true;
  k.resources.registers = 64;
  EXPECT_EQ(resource_violation(k, testing::block_of(default_config()), arch_limits("sm_75")),
            std::nullopt);
  k.resources.spill_store_bytes = 8;
  auto why = resource_violation(k, testing::block_of(default_config()), arch_limits("sm_75"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("spills"), std::string::npos);
  k.resources.spill_store_bytes = 0;
  KernelConfig big = default_config();
  big.set("BK", 64);  // 2 stages x 64 x 264 floats = 135 KB: fits sm_90, not sm_75
  EXPECT_EQ(resource_violation(k, testing::block_of(big), arch_limits("sm_90")), std::nullopt);
  why = resource_violation(k, testing::block_of(big), arch_limits("sm_75"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("shared memory"), std::string::npos);
  k.resources.registers = 255;  // 255 x 512 threads > 65536
  KernelConfig wide = default_config();
  wide.set("TM", 4);
  why = resource_violation(k, testing::block_of(wide), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("registers"), std::string::npos);
}

TEST(ResourceCheck, prunes_kernels_whose_wgmmas_ptxas_serialized) {
  CompiledKernel k;
  k.resources.found = true;
  k.resources.registers = 64;
  k.resources.wgmma_serialized = true;
  auto why = resource_violation(k, testing::block_of(default_config()), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("serializes its wgmma"), std::string::npos) << *why;
}

}  // namespace
}  // namespace tgemm

namespace tgemm {
namespace {

// The cubin's own attributes must agree with the ptxas report they stand in for.
TEST(CubinResources, agree_with_the_ptxas_report) {
  auto source = kernel_source("sgemm_simt");
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
    KernelConfig c = default_config();
    c.set("BM", 64);
    auto k = testing::compile_f32(c, Op::T, Op::N, arch);
    ASSERT_TRUE(k.ok) << k.error;
    const auto from_log = parse_ptxas_log(k.log, k.entry);
    ASSERT_TRUE(from_log.found) << k.log;
    const auto from_elf = read_cubin_resources(k.cubin, k.entry, arch);
    ASSERT_TRUE(from_elf.found);
    EXPECT_EQ(from_elf.registers, from_log.registers) << arch;
    EXPECT_EQ(from_elf.smem_bytes, from_log.smem_bytes) << arch;
    EXPECT_EQ(from_elf.stack_frame_bytes, from_log.stack_frame_bytes) << arch;
    const auto prepare = read_cubin_resources(k.cubin, k.entry + "_prepare_c", arch);
    EXPECT_EQ(prepare.registers, parse_ptxas_log(k.log, k.entry + "_prepare_c").registers);
  }
}

TEST(CubinResources, garbage_and_missing_functions_are_not_found) {
  EXPECT_FALSE(read_cubin_resources(std::vector<char>(100, 'x'), "sgemm_simt", "sm_80").found);
  EXPECT_FALSE(read_cubin_resources({}, "sgemm_simt", "sm_80").found);
  auto k = testing::compile_f32(default_config(), Op::N, Op::N, "sm_80");
  ASSERT_TRUE(k.ok);
  EXPECT_FALSE(read_cubin_resources(k.cubin, "no_such_kernel", "sm_80").found);
  std::vector<char> cut(k.cubin.begin(), k.cubin.begin() + 200);
  EXPECT_FALSE(read_cubin_resources(cut, "sgemm_simt", "sm_80").found);
}

}  // namespace
}  // namespace tgemm
