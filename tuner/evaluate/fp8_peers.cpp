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

}  // namespace

Fp8Peers::Fp8Peers(const Problem& problem, const std::vector<float>& a, const std::vector<float>& b,
                   float scale_a, float scale_b, cudaStream_t stream)
    : problem_(problem),
      // cuBLAS multiplies bf16 into a bf16 or f32 C, and f16 into an f16 C.
      decoded_type_(problem.types.c == DType::f16 ? DType::f16 : DType::bf16),
      a_(upload(decoded_type_, a, stream)),
      b_(upload(decoded_type_, b, stream)),
      // Each scale in a 16-byte slot of its own: cuBLASLt refuses an FP8 call whose scale
      // pointers are not 16-byte aligned.
      scales_(upload(DType::f32, {scale_a, 0, 0, 0, scale_b, 0, 0, 0}, stream)),
      scale_(scale_a * scale_b) {
  if (!problem.types.fp8()) fail("{} has no FP8 operands", problem.key());
}

void Fp8Peers::attach(GemmCall* call) const {
  call->scale_a = scales_.get<float>();
  call->scale_b = scales_.get<float>() + 4;
}

GemmCall Fp8Peers::decoded(const GemmCall& call, DType c_type) const {
  GemmCall out = call;
  out.alpha = call.alpha * scale_;
  out.a = a_.get();
  out.b = b_.get();
  out.types = {decoded_type_, decoded_type_, c_type};
  out.scale_a = out.scale_b = nullptr;
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
  const cublasStatus_t st = row_major_gemm(cublas, decoded(call, c_type), math, c_type);
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
