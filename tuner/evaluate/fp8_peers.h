// An FP8 problem's yardsticks, shared by the tuner's evaluator and tgemm-bench: A and B decoded
// into a 16-bit type (exact: every E4M3 and E5M2 value is both a bf16 and an f16), which the
// pedantic f32 reference reads, and cuBLAS's 16-bit GEMM of the same shape where cuBLASLt has
// no FP8 call for the problem; the scales on the device (per tensor, or rowwise: then the
// reference reads A and B decoded into f32 with their rows' and columns' scales applied); and
// cuBLASLt's FP8 call (its heuristic's first algorithm) with the same scales where it has one.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/gemm_call.h"
#include "src/core/problem.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/device_buffer.h"

namespace tgemm {

class Fp8Peers {
 public:
  // `a` and `b`: the FP8 operands' values (already FP8), from their first element on, as the
  // FP8 buffers store them (ld apart, a strided batch's members one after the other).
  // `scale_a` and `scale_b`: one value each, or with the problem's rowwise scales m and n.
  Fp8Peers(const Problem& problem, const std::vector<float>& a, const std::vector<float>& b,
           std::vector<float> scale_a, std::vector<float> scale_b, cudaStream_t stream);
  // How many scales the problem's A and B take (1, or m and n for rowwise scales), each
  // `uniform()` in [-1, 1) mapped into [1.5, 2).
  template <class Uniform>
  static std::pair<std::vector<float>, std::vector<float>> random_scales(const Problem& problem,
                                                                         Uniform uniform);

  // `call`, on the FP8 operands, with the device scales.
  void attach(GemmCall* call) const;
  DType decoded_type() const { return decoded_type_; }
  // What multiplies alpha op(A) op(B) at row i, column j of C.
  double scale_at(int64_t i, int64_t j) const {
    return double(scale_a_[scale_a_.size() == 1 ? 0 : size_t(i)]) *
           scale_b_[scale_b_.size() == 1 ? 0 : size_t(j)];
  }

  // The GEMM of `call` (attached; its epilogue is not applied) into its C of `c_type`:
  // cuBLASLt's FP8 call where prepare_lt built one and `math` is matching, else cuBLAS's on the
  // decoded operands (alpha times both scales; pedantic f32 for the reference). "" or the error.
  std::string run(cublasHandle_t cublas, const GemmCall& call, CublasMath math, DType c_type,
                  cudaStream_t stream) const;

  // Builds cuBLASLt's FP8 call of the problem's GEMM (an epilogue is the caller's to apply) and
  // runs it once as `call` (attached; it writes
  // call.c); false, with `why`, where cuBLASLt has none (misaligned operands, other layouts than
  // K-major A and B, E5M2 x E5M2, ...) or its call fails: then the 16-bit GEMM is the peer.
  bool prepare_lt(cublasLtHandle_t lt, const GemmCall& call, cudaStream_t stream, std::string* why);
  bool has_lt() const { return lt_ != nullptr; }

 private:
  // cuBLASLt's FP8 call of `call` (attached) on `stream` (prepare_lt first): "" or the error.
  std::string run_lt(const GemmCall& call, cudaStream_t stream) const;
  // `call` on the decoded operands, into its C of `c_type`: the reference's on the rowwise
  // scaled ones.
  GemmCall decoded(const GemmCall& call, DType c_type, CublasMath math) const;

  Problem problem_;
  DType decoded_type_;
  std::vector<float> scale_a_, scale_b_;
  DeviceBuffer a_, b_, scales_;
  DeviceBuffer a_scaled_, b_scaled_;  // f32, rowwise scales only
  std::unique_ptr<LtGemm> lt_;
  LtReadyAlgo algo_{};
  DeviceBuffer lt_workspace_;
};

template <class Uniform>
std::pair<std::vector<float>, std::vector<float>> Fp8Peers::random_scales(const Problem& problem,
                                                                          Uniform uniform) {
  const bool rowwise = problem.epilogue.rowwise_scales;
  std::pair<std::vector<float>, std::vector<float>> out{
      std::vector<float>(size_t(rowwise ? problem.m : 1)),
      std::vector<float>(size_t(rowwise ? problem.n : 1))};
  for (std::vector<float>* v : {&out.first, &out.second})
    for (float& x : *v) x = 1.75f + 0.25f * float(uniform());
  return out;
}

}  // namespace tgemm
