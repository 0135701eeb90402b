// VendorCalls: the evaluator's side of cuBLAS and cuBLASLt. Their handles (cuBLAS's for the
// references and the yardstick, cuBLASLt's made when first needed) and the timing of a prepared
// problem's vendor calls: cuBLAS's call, the yardstick of every ratio, and on request the vendor
// calls as contenders for the best, each verified like a kernel and timed interleaved.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>

#include "src/core/trial_result.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/device_buffer.h"
#include "tuner/evaluate/evaluation_types.h"
#include "tuner/evaluate/interleaved_timer.h"
#include "tuner/evaluate/prepared_problem.h"

namespace tgemm {

// One run of `launch` checked as a kernel's is: fills status, error and max_rel_error of the
// trial and `launch_ms` with the run's time; false when the run failed or its result is wrong.
using RunVerifier = std::function<bool(const Launcher& launch, TrialResult* r, double* launch_ms)>;

class VendorCalls {
 public:
  // A cuBLAS handle on `stream`; throws Error without one.
  explicit VendorCalls(cudaStream_t stream);

  cublasHandle_t cublas() const { return cublas_.get(); }
  cublasLtHandle_t lt();  // made on first use

  // The call an application makes for the problem's types (SGEMM for f32): cuBLAS's GEMM on
  // C, then the epilogue's pass where there is one. "" or the error.
  std::string run_cublas(const PreparedProblem& p) const;

  // cuBLAS's call for `p`, timed by `timer` into `out` (the yardstick of every ratio), and with
  // time_vendor the vendor calls as contenders into out->vendor_trials: that call and
  // cuBLASLt's top heuristic algorithms (a batch without an epilogue: that call alone), each
  // verified once by `verify`, then timed interleaved in one loop. Throws Error when cuBLAS's call
  // cannot run or be timed.
  void time(const PreparedProblem& p, bool time_vendor, const RunVerifier& verify,
            InterleavedTimer* timer, CublasTiming* out);

 private:
  // cuBLASLt's descriptors of `p` and the workspace its algorithms may use; null where cuBLASLt
  // has no such epilogue (then cuBLAS and the pass race alone).
  std::unique_ptr<LtGemm> lt_gemm(const Problem& problem);

  cudaStream_t stream_;
  CublasHandle cublas_;
  std::unique_ptr<CublasLtHandle> lt_;
  DeviceBuffer lt_workspace_;
};

}  // namespace tgemm
