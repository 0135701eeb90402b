#include "tuner/evaluate/epilogue_peers.h"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <vector>

#include "src/core/error.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cuda_check.h"
#include "src/launch/launch_plan.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

EpiloguePeers::EpiloguePeers(const Problem& problem, const std::string& arch, std::mt19937_64& rng)
    : problem_(problem), bias_type_(problem.epilogue.bias_f32 ? DType::f32 : problem.types.c) {
  const Epilogue& e = problem.epilogue;
  if (e.bias != BiasAlong::none) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(size_t(e.bias == BiasAlong::n ? problem.n : problem.m));
    for (float& v : values) v = round_to(bias_type_, dist(rng));
    const std::vector<unsigned char> bytes = to_bytes(bias_type_, values);
    bias_ = DeviceBuffer(bytes.size());
    TGEMM_CUDA_CHECK(cudaMemcpy(bias_.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  }
  if (e.aux) {
    const size_t elements = size_t(problem.m * problem.ldc);
    aux_ = DeviceBuffer(elements * size_t(element_bytes(problem.types.c)));
    aux_ref_ = DeviceBuffer(elements * sizeof(float));
  }
  pass_ = std::make_unique<EpiloguePass>(e, problem.types.c, bias_type_, arch);
  reference_ = std::make_unique<EpiloguePass>(e, DType::f32, bias_type_, arch);
}

void EpiloguePeers::attach(GemmCall* call) const {
  call->epilogue = problem_.epilogue;
  call->bias = bias_.get();
  call->d = nullptr;
  call->aux = problem_.epilogue.aux ? aux_.get() : nullptr;
  call->ldaux = problem_.epilogue.aux ? int(problem_.ldc) : 0;
}

std::string EpiloguePeers::apply_reference(void* ref, cudaStream_t stream) const {
  GemmCall on_ref;
  on_ref.types = problem_.types;
  on_ref.types.c = DType::f32;
  on_ref.c = ref;
  on_ref.ldc = int(problem_.ldc);
  on_ref.bias = bias_.get();
  on_ref.aux = problem_.epilogue.aux ? aux_ref_.get() : nullptr;
  on_ref.ldaux = on_ref.ldc;
  const cudaError_t err =
      reference_->launch(problem_.m, problem_.n, make_epilogue_params(on_ref), stream);
  return err == cudaSuccess ? "" : "the epilogue's reference pass: " + cuda_error_text(err);
}

std::optional<Launcher> EpiloguePeers::fused(cublasLtHandle_t lt, const GemmCall& call,
                                             cudaStream_t stream, std::string* why) {
  try {
    lt_ = std::make_unique<LtGemm>(lt, problem_);
  } catch (const Error& e) {
    *why = e.what();
    return std::nullopt;
  }
  const std::vector<LtAlgoConfig> algos = lt_->heuristic(1, kLtWorkspaceBytes);
  if (algos.empty()) {
    *why = "cuBLASLt's heuristic has no algorithm for it";
    return std::nullopt;
  }
  std::optional<LtReadyAlgo> ready = lt_->ready(algos[0], why);
  if (!ready) return std::nullopt;
  algo_ = *ready;
  if (lt_workspace_.bytes() < algo_.workspace_bytes)
    lt_workspace_ = DeviceBuffer(algo_.workspace_bytes);
  return Launcher([this, call, stream] {
    const cublasStatus_t st = lt_->run(algo_, call, lt_workspace_.get(), stream);
    return st == CUBLAS_STATUS_SUCCESS ? std::string() : cublasGetStatusString(st);
  });
}

Launcher EpiloguePeers::unfused(Launcher gemm, const GemmCall& call, cudaStream_t stream) const {
  return [this, gemm = std::move(gemm), call, stream] {
    if (std::string error = gemm(); !error.empty()) return error;
    const cudaError_t err =
        pass_->launch(problem_.m, problem_.n, make_epilogue_params(call), stream);
    return err == cudaSuccess ? std::string() : "the epilogue's pass: " + cuda_error_text(err);
  };
}

}  // namespace tgemm
