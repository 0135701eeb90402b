#include "tuner/evaluate/fp8_peers.h"

#include <cublas_v2.h>
#include <fmt/format.h>

#include "src/core/error.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cuda_check.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

namespace {

DeviceBuffer upload(DType type, const std::vector<float>& values, cudaStream_t stream) {
  const std::vector<unsigned char> bytes = to_bytes(type, values);
  DeviceBuffer buffer(bytes.size());
  TGEMM_CUDA_CHECK(
      cudaMemcpyAsync(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // `bytes` goes out of scope
  return buffer;
}

// Where B's scales start in the scales' buffer (in floats): A's padded to 16 bytes, since
// cuBLASLt refuses an FP8 call whose scale pointers are not 16-byte aligned.
size_t b_scales_at(const std::vector<float>& scale_a) { return (scale_a.size() + 3) / 4 * 4; }

std::vector<float> scales_image(const std::vector<float>& scale_a,
                                const std::vector<float>& scale_b) {
  std::vector<float> out(b_scales_at(scale_a) + scale_b.size(), 0.0f);
  std::copy(scale_a.begin(), scale_a.end(), out.begin());
  std::copy(scale_b.begin(), scale_b.end(), out.begin() + ptrdiff_t(b_scales_at(scale_a)));
  return out;
}

// An operand's stored values with each element multiplied by the scale of the row (A) or
// column (B) of C it contributes to; `cols` and `ld` are its storage's, `row_scaled`: whether
// the storage row (else the column) picks the scale. Padding past a row's end stays as it is.
std::vector<float> scaled_image(std::vector<float> values, int64_t cols, int64_t ld,
                                bool row_scaled, const std::vector<float>& scales) {
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t row = int64_t(i) / ld, col = int64_t(i) % ld;
    const int64_t which = row_scaled ? row : col;
    if (col < cols && which < int64_t(scales.size())) values[i] *= scales[size_t(which)];
  }
  return values;
}

}  // namespace

Fp8Peers::Fp8Peers(const Problem& problem, const std::vector<float>& a, const std::vector<float>& b,
                   std::vector<float> scale_a, std::vector<float> scale_b, cudaStream_t stream)
    : problem_(problem),
      // cuBLAS multiplies bf16 into a bf16 or f32 C, and f16 into an f16 C.
      decoded_type_(problem.types.c == DType::f16 ? DType::f16 : DType::bf16),
      scale_a_(std::move(scale_a)),
      scale_b_(std::move(scale_b)),
      a_(upload(decoded_type_, a, stream)),
      b_(upload(decoded_type_, b, stream)),
      scales_(upload(DType::f32, scales_image(scale_a_, scale_b_), stream)) {
  if (!problem.types.fp8()) fail("{} has no FP8 operands", problem.key());
  const bool rowwise = problem.epilogue.rowwise_scales;
  if (scale_a_.size() != size_t(rowwise ? problem.m : 1) ||
      scale_b_.size() != size_t(rowwise ? problem.n : 1))
    fail("{}: {} and {} scales given for A and B", problem.key(), scale_a_.size(), scale_b_.size());
  if (!rowwise) return;
  // Op(A)'s row i is A's stored row i (N) or column i (T); op(B)'s column j is B's stored
  // column j (N) or row j (T).
  a_scaled_ = upload(
      DType::f32, scaled_image(a, problem.a_cols(), problem.lda, problem.op_a == Op::N, scale_a_),
      stream);
  b_scaled_ = upload(
      DType::f32, scaled_image(b, problem.b_cols(), problem.ldb, problem.op_b == Op::T, scale_b_),
      stream);
}

void Fp8Peers::attach(GemmCall* call) const {
  call->scale_a = scales_.get<float>();
  call->scale_b = scales_.get<float>() + b_scales_at(scale_a_);
  call->epilogue.rowwise_scales = problem_.epilogue.rowwise_scales;
}

GemmCall Fp8Peers::decoded(const GemmCall& call, DType c_type, CublasMath math) const {
  GemmCall out = call;
  out.scale_a = out.scale_b = nullptr;
  out.epilogue.rowwise_scales = false;
  if (problem_.epilogue.rowwise_scales && math == CublasMath::reference) {
    out.a = a_scaled_.get();
    out.b = b_scaled_.get();
    out.types = {DType::f32, DType::f32, c_type};
    return out;
  }
  // The per-tensor scales in alpha (rowwise ones only where the result is timed, not read).
  out.alpha = float(call.alpha * scale_at(0, 0));
  out.a = a_.get();
  out.b = b_.get();
  out.types = {decoded_type_, decoded_type_, c_type};
  return out;
}

bool Fp8Peers::prepare_lt(cublasLtHandle_t lt, const GemmCall& call, cudaStream_t stream,
                          std::string* why) {
  if (problem_.batched()) {
    *why = "the cuBLASLt call here describes one GEMM, not a batch";
    return false;
  }
  Problem gemm_only = problem_;
  gemm_only.epilogue = Epilogue{};
  gemm_only.epilogue.rowwise_scales = problem_.epilogue.rowwise_scales;
  try {
    auto gemm = std::make_unique<LtGemm>(lt, gemm_only);
    const std::vector<LtAlgoConfig> algos = gemm->heuristic(1, kLtWorkspaceBytes);
    if (algos.empty()) {
      *why = "cuBLASLt's heuristic has no FP8 algorithm for it";
      return false;
    }
    const std::optional<LtReadyAlgo> ready = gemm->ready(algos[0], why);
    if (!ready) return false;
    algo_ = *ready;
    lt_ = std::move(gemm);
  } catch (const Error& e) {
    *why = e.what();
    return false;
  }
  if (lt_workspace_.bytes() < algo_.workspace_bytes)
    lt_workspace_ = DeviceBuffer(algo_.workspace_bytes);
  // A heuristic's algorithm that the checks accept may still be refused by the call itself.
  std::string error = run_lt(call, stream);
  if (error.empty()) {
    const cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) error = cuda_error_text(err);
  }
  if (error.empty()) return true;
  *why = error;
  lt_.reset();
  return false;
}

std::string Fp8Peers::run(cublasHandle_t cublas, const GemmCall& call, CublasMath math,
                          DType c_type, cudaStream_t stream) const {
  if (math == CublasMath::matching && lt_) return run_lt(call, stream);
  const cublasStatus_t st = row_major_gemm(cublas, decoded(call, c_type, math), math, c_type);
  return st == CUBLAS_STATUS_SUCCESS
             ? std::string()
             : fmt::format("cuBLAS on {} operands: {}", to_string(decoded_type_),
                           cublasGetStatusString(st));
}

std::string Fp8Peers::run_lt(const GemmCall& call, cudaStream_t stream) const {
  if (!lt_) return "no cuBLASLt FP8 call was prepared";
  const cublasStatus_t st = lt_->run(algo_, call, lt_workspace_.get(), stream);
  return st == CUBLAS_STATUS_SUCCESS ? std::string()
                                     : fmt::format("cublasLtMatmul: {}", cublasGetStatusString(st));
}

}  // namespace tgemm
