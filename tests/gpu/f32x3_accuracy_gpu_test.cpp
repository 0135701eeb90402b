// f32x3 (FP32-accurate 3xTF32) on a GPU: the evaluator's FP64 reference and cuBLAS SGEMM's
// error against it; a gemm_mma config inside the rule and the same config with one TF32 pass
// (F32X3_TERMS=1, tests/data/spaces/gemm_mma_one_pass.yaml) a wrong_result; the dispatcher
// under MathMode::f32_via_3xtf32 launching the 3xTF32 kernel with FP32-accurate results.
// Skips without a GPU; the gemm_mma tests skip while that family is not registered.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/jit/kernel_source.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMma = "gemm_mma";  // found through the registry at run time

GemmTypes f32x3_types() {
  GemmTypes t;
  t.compute = ComputeType::f32x3;
  return t;
}

// One evaluator for the suite, never destroyed (cuBLAS must not outlive the runtime).
GemmEvaluator& evaluator() {
  static GemmEvaluator* e = new GemmEvaluator(0);
  return *e;
}

const TimingOptions kQuick{0, 1, 1, 1.0, 0.5};

CompiledKernel compile(const KernelConfig& config, const Problem& problem,
                       const std::string& arch) {
  return build_kernel(template_named(config.template_name), config,
                      Problem::packed(problem.types, problem.op_a, problem.op_b, 1, 1, 1), arch);
}

// A gemm_mma config that computes `problem` here: its f32x3 default line, else the first
// legal point of its shipped space that accepts the problem and compiles.
std::optional<KernelConfig> mma_config(const Problem& problem, const DeviceInfo& gpu) {
  const GemmTemplate* family = find_template(kMma);
  if (!family) return std::nullopt;
  for (const DefaultKernel& d : shipped_default_kernels())
    if (d.config.template_name == kMma && d.types == problem.types &&
        can_run(d.config, problem, gpu.arch))
      return d.config;
  for (const EmbeddedTemplate& t : embedded_templates()) {
    if (std::string(t.name) != kMma || !t.space) continue;
    const SearchSpace space = SearchSpace::parse(t.space, "<embedded gemm_mma.yaml>");
    for (uint64_t i = 0; i < space.cartesian_size() && i < 20000; ++i) {
      const KernelConfig c = space.config_at(i);
      if (space.rejection(c, gpu.limits) || !can_run(c, problem, gpu.arch)) continue;
      if (compile(c, problem, gpu.arch).ok) return c;
    }
  }
  return std::nullopt;
}

class F32x3Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    gpu_ = query_device(0);
  }
  static bool has_mma() { return find_template(kMma) != nullptr; }
  TrialResult trial(const KernelConfig& config, const Problem& problem) {
    const CompiledKernel k = compile(config, problem, gpu_.arch);
    EXPECT_TRUE(k.ok) << config.canonical_name() << ": " << k.error;
    return evaluator().evaluate(config, k.cubin);
  }
  DeviceInfo gpu_;
};

Problem with_beta(Problem p) {
  p.beta_zero = false;
  return p;
}

TEST_F(F32x3Gpu, sgemm_error_against_fp64_is_measured_for_f32x3_problems_only) {
  for (int64_t k : {1, 33, 1024}) {
    const Problem p = Problem::packed(f32x3_types(), Op::N, Op::T, 129, 70, k);
    const CublasTiming c = evaluator().prepare(p, kQuick, {}, true);
    ASSERT_TRUE(c.ok) << c.error;
    ASSERT_TRUE(c.sgemm_rel_error) << p.key();
    EXPECT_GE(*c.sgemm_rel_error, 0);
    EXPECT_LT(*c.sgemm_rel_error, relative_error_bound({}, k)) << p.key();
  }
  const CublasTiming beta = evaluator().prepare(
      with_beta(Problem::packed(f32x3_types(), Op::T, Op::N, 64, 64, 64)), kQuick, {1.5f, -0.5f});
  ASSERT_TRUE(beta.ok) << beta.error;
  EXPECT_TRUE(beta.sgemm_rel_error);
  const CublasTiming f32 =
      evaluator().prepare(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64), kQuick);
  ASSERT_TRUE(f32.ok) << f32.error;
  EXPECT_FALSE(f32.sgemm_rel_error);
}

// gemm_naive computes f32x3 problems with FFMA: FP32-accurate, so inside the rule.
TEST_F(F32x3Gpu, an_ffma_accurate_kernel_passes_the_f32x3_rule) {
  const KernelConfig naive{"gemm_naive", {{"BLOCK_X", 16}, {"BLOCK_Y", 8}}};
  const Problem p = Problem::packed(f32x3_types(), Op::N, Op::N, 200, 130, 300);
  const CublasTiming c = evaluator().prepare(p, kQuick, {}, false);
  ASSERT_TRUE(c.ok) << c.error;
  const TrialResult r = trial(naive, p);
  EXPECT_EQ(r.status, TrialStatus::ok) << r.error;
  EXPECT_LE(r.max_rel_error, f32x3_error_bound(*c.sgemm_rel_error));
}

TEST_F(F32x3Gpu, a_gemm_mma_f32x3_trial_passes_the_rule_on_odd_and_large_shapes) {
  if (!has_mma()) GTEST_SKIP() << "the " << kMma << " family is not registered";
  const Problem shapes[] = {Problem::packed(f32x3_types(), Op::N, Op::N, 1024, 1024, 1024),
                            Problem::packed(f32x3_types(), Op::T, Op::N, 257, 131, 1031),
                            with_beta(Problem::packed(f32x3_types(), Op::N, Op::T, 96, 200, 17))};
  for (const Problem& p : shapes) {
    const auto config = mma_config(p, gpu_);
    ASSERT_TRUE(config) << "no gemm_mma config computes " << p.key();
    const CublasTiming c = evaluator().prepare(p, kQuick, {1.0f, p.beta_zero ? 0.0f : 0.5f}, false);
    ASSERT_TRUE(c.ok) << c.error;
    const TrialResult r = trial(*config, p);
    EXPECT_EQ(r.status, TrialStatus::ok)
        << config->canonical_name() << " on " << p.key() << ": " << r.error;
    std::printf("%s: error vs FP64: tgemm %.3g, cuBLAS %.3g (%s)\n", p.key().c_str(),
                r.max_rel_error, *c.sgemm_rel_error, config->canonical_name().c_str());
  }
}

TEST_F(F32x3Gpu, the_same_config_with_one_tf32_pass_is_a_wrong_result) {
  if (!has_mma()) GTEST_SKIP() << "the " << kMma << " family is not registered";
  const SearchSpace one_pass = SearchSpace::load(std::string(TGEMM_SOURCE_DIR) +
                                                 "/tests/data/spaces/gemm_mma_one_pass.yaml");
  ASSERT_EQ(one_pass.cartesian_size(), 1u);
  const KernelConfig terms = one_pass.config_at(0);
  ASSERT_EQ(terms.get("F32X3_TERMS"), 1);
  const Problem p = Problem::packed(f32x3_types(), Op::N, Op::N, 512, 512, 512);
  const auto config = mma_config(p, gpu_);
  ASSERT_TRUE(config);
  KernelConfig single = *config;
  single.set("F32X3_TERMS", 1);
  const CublasTiming c = evaluator().prepare(p, kQuick, {}, false);
  ASSERT_TRUE(c.ok) << c.error;
  const TrialResult three = trial(*config, p);
  EXPECT_EQ(three.status, TrialStatus::ok) << three.error;
  const TrialResult one = trial(single, p);
  EXPECT_EQ(one.status, TrialStatus::wrong_result) << one.error;
  EXPECT_NE(one.error.find("cuBLAS SGEMM's"), std::string::npos) << one.error;
  EXPECT_GT(one.max_rel_error, 100 * *c.sgemm_rel_error);
}

// The dispatcher: a fixture database where the 3xTF32 kernel beat FFMA on 512^3 NN.
class F32x3DispatchGpu : public F32x3Gpu {
 protected:
  void SetUp() override {
    F32x3Gpu::SetUp();
    if (IsSkipped()) return;
    if (!has_mma()) GTEST_SKIP() << "the " << kMma << " family is not registered";
    dir_ = fs::temp_directory_path() / ("tgemm_f32x3_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    db_path_ = (dir_ / "tuned.db").string();
    const Problem f32 = Problem::packed(GemmTypes{}, Op::N, Op::N, kSize, kSize, kSize);
    Problem accurate = f32;
    accurate.types = f32x3_types();
    const auto mma = mma_config(accurate, gpu_);
    ASSERT_TRUE(mma);
    mma_ = *mma;
    TuningDb db(db_path_, TuningDb::Mode::read_write);
    const int64_t device = db.upsert_device(gpu_);
    // No cubins stored: the dispatcher compiles what it picks.
    auto record = [&](const Problem& p, const KernelConfig& config, double us) {
      const int64_t problem = db.upsert_problem(p);
      TrialResult t;
      t.config = config;
      t.status = TrialStatus::ok;
      t.time_min_us = t.time_median_us = t.time_max_us = us;
      t.runs = 10;
      db.record_trial(0, problem,
                      db.upsert_kernel(config, kernel_source(config.template_name).hash), device,
                      std::nullopt, t);
      db.update_best(problem, device);
    };
    record(f32, ffma_, 100);
    record(accurate, mma_, 40);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static constexpr int kSize = 512;
  KernelConfig ffma_ = testing::sgemm_config();
  KernelConfig mma_;
  fs::path dir_;
  std::string db_path_;
};

TEST_F(F32x3DispatchGpu, the_mode_launches_the_3xtf32_kernel_with_fp32_accurate_results) {
  const int n = kSize;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  for (auto* v : {&a, &b})
    for (float& x : *v) x = u(rng);
  DeviceBuffer da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4);
  TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  const GemmCall call{Op::N,    Op::N, n,        n, n,        1.0f, 0.0f,
                      da.get(), n,     db.get(), n, dc.get(), n,    GemmTypes{}};
  Dispatcher d({db_path_, {}, true});
  ASSERT_TRUE(d.has_database()) << d.database_problem();
  // Without the mode, the FFMA kernel.
  ServedBy plain = d.served_by(call);
  ASSERT_TRUE(plain.kernel);
  EXPECT_EQ(plain.kernel->template_name, ffma_.template_name);
  EXPECT_EQ(plain.types, GemmTypes{});
  d.set_math_mode(MathMode::f32_via_3xtf32);
  const ServedBy opted = d.served_by(call);
  ASSERT_TRUE(opted.kernel);
  EXPECT_EQ(*opted.kernel, mma_);
  EXPECT_EQ(opted.types, f32x3_types());
  d.gemm(call, nullptr);
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> ref(c.size(), 0.0);
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < n; ++j)
        ref[size_t(i) * n + j] += double(a[size_t(i) * n + l]) * double(b[size_t(l) * n + j]);
  const ResultCheck check =
      check_result(c.data(), ref.data(), n, n, n, relative_error_bound(GemmTypes{}, n));
  EXPECT_TRUE(check.ok) << check.error;
  // Back to the standard mode: FFMA again (the choice is cached per mode).
  d.set_math_mode(MathMode::standard);
  plain = d.served_by(call);
  ASSERT_TRUE(plain.kernel);
  EXPECT_EQ(plain.kernel->template_name, ffma_.template_name);
}

}  // namespace
}  // namespace tgemm
