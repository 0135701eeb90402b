// One f32 GEMM run straight through a family's host side and GemmKernel (no evaluator, no
// dispatcher), on host matrices with padded leading dimensions and offset pointers, with a
// double-precision host reference: for GPU tests that need the raw output bits.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "src/cuda/device_buffer.h"
#include "src/launch/gemm_kernel.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm::testing {

struct DirectGemm {
  GemmTypes types;  // f32 in and out; the compute type (f32, tf32, f32x3) may vary
  Op op_a = Op::N, op_b = Op::N;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float alpha = 1, beta = 0;
  int offset = 0;  // elements added to each device pointer (misaligns them)
  std::vector<float> a, b, c0;

  static DirectGemm make(Op op_a, Op op_b, int m, int n, int k, int pad, int offset, float alpha,
                         float beta, uint32_t seed) {
    DirectGemm g;
    g.op_a = op_a;
    g.op_b = op_b;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = alpha;
    g.beta = beta;
    g.offset = offset;
    const int a_rows = op_a == Op::N ? m : k, b_rows = op_b == Op::N ? k : n;
    g.lda = (op_a == Op::N ? k : m) + pad;
    g.ldb = (op_b == Op::N ? n : k) + pad;
    g.ldc = n + pad;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    g.a.resize(size_t(a_rows) * size_t(g.lda));
    g.b.resize(size_t(b_rows) * size_t(g.ldb));
    g.c0.resize(size_t(m) * size_t(g.ldc));
    for (auto* v : {&g.a, &g.b, &g.c0})
      for (float& x : *v) x = dist(rng);
    return g;
  }

  // The problem as the dispatcher would see it for these device pointers.
  Problem problem(const void* pa, const void* pb, const void* pc) const {
    Problem p = Problem::packed(types, op_a, op_b, m, n, k);
    p.lda = lda;
    p.ldb = ldb;
    p.ldc = ldc;
    p.beta_zero = beta == 0.0f;
    p.align_a = alignment_bytes(lda, reinterpret_cast<uintptr_t>(pa), 4);
    p.align_b = alignment_bytes(ldb, reinterpret_cast<uintptr_t>(pb), 4);
    p.align_c = alignment_bytes(ldc, reinterpret_cast<uintptr_t>(pc), 4);
    return p;
  }

  // Runs `config` (compiled for `arch`) and returns all of C (padding included). Sets
  // *unsupported to the family's reason when it refuses the problem (and runs nothing).
  std::vector<float> run(const KernelConfig& config, const std::vector<char>& cubin,
                         std::string* unsupported, const std::string& arch) const {
    const GemmTemplate& family = template_named(config.template_name);
    DeviceBuffer da((a.size() + size_t(offset)) * 4), db((b.size() + size_t(offset)) * 4),
        dc((c0.size() + size_t(offset)) * 4);
    float* pa = da.get<float>() + offset;
    float* pb = db.get<float>() + offset;
    float* pc = dc.get<float>() + offset;
    const Problem p = problem(pa, pb, pc);
    if (auto why = family.unsupported_reason(config, p, arch)) {
      *unsupported = *why;
      return {};
    }
    TGEMM_CUDA_CHECK(cudaMemcpy(pa, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(pb, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(pc, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
    GemmKernel kernel(config, cubin, family.entries(config),
                      family.block_resources(config).dynamic_smem_bytes);
    const LaunchPlan plan = family.plan_launch(config, p);
    DeviceBuffer workspace(plan.workspace_bytes);
    TGEMM_CUDA_CHECK(
        kernel.launch(plan, make_params(p, pa, pb, pc, alpha, beta), workspace.get(), nullptr));
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> c(c0.size());
    TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), pc, c.size() * 4, cudaMemcpyDeviceToHost));
    return c;
  }

  // ||C - Cref|| / ||Cref|| over the m x n result; infinity when an element is not finite or
  // the padding past n changed.
  double relative_error(const std::vector<float>& c) const {
    double err = 0, norm = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int p = 0; p < k; ++p) {
          const double x = op_a == Op::N ? a[size_t(i) * lda + p] : a[size_t(p) * lda + i];
          const double y = op_b == Op::N ? b[size_t(p) * ldb + j] : b[size_t(j) * ldb + p];
          ref += x * y;
        }
        ref = alpha * ref + beta * double(c0[size_t(i) * ldc + j]);
        const double got = c[size_t(i) * ldc + j];
        if (!std::isfinite(got)) return INFINITY;
        err += (got - ref) * (got - ref);
        norm += ref * ref;
      }
    for (int i = 0; i < m; ++i)
      for (int j = n; j < ldc; ++j)
        if (c[size_t(i) * ldc + j] != c0[size_t(i) * ldc + j]) return INFINITY;
    return norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
  }
};

}  // namespace tgemm::testing
