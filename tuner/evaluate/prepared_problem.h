// PreparedProblem: one problem as the evaluator measures it. Checked to be one the tuner
// measures; its operands in guarded device buffers (guarded_matrix.h) holding fresh random
// inputs; C as every run must find it; FP8's scales and the epilogue's inputs; and the calls
// (cuBLAS's GEMM, a kernel's arguments, the epilogue's parameters) on those buffers.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "kernel_templates/common/epilogue_params.h"
#include "kernel_templates/common/gemm_params.h"
#include "src/core/gemm_call.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/device_buffer.h"
#include "src/templates/epilogue_pass.h"
#include "tuner/evaluate/evaluation_types.h"
#include "tuner/evaluate/fp8_peers.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/guarded_matrix.h"
#include "tuner/evaluate/interleaved_timer.h"

namespace tgemm {

// The inputs' host images (f32, as GuardedMatrix::host_image makes them): what the host and
// FP64 references read. Apart from the problem, so they are freed once the references are made.
struct HostInputs {
  std::vector<float> a, b;
  std::vector<float> c0;  // C before the GEMM; only beta != 0 reads it (empty otherwise)
};

class PreparedProblem {
 public:
  // Checks that the tuner measures `problem` with these options and scalars (throws Error
  // naming why not), then fills its buffers with fresh random inputs on `stream`, their host
  // images into `inputs`.
  PreparedProblem(const Problem& problem, const TimingOptions& timing, GemmScalars scalars,
                  cudaStream_t stream, HostInputs* inputs);
  PreparedProblem(const PreparedProblem&) = delete;
  PreparedProblem& operator=(const PreparedProblem&) = delete;

  // FP8: random scales (each in [1.5, 2): a kernel that leaves one out is off by a third at
  // least), the decoded operands, and cuBLASLt's FP8 call where it computes the problem.
  void prepare_fp8(const HostInputs& inputs, cublasLtHandle_t lt);
  // The epilogue's inputs (a random bias, aux where it keeps one) and the pass that follows
  // cuBLAS's GEMM in its timed call, compiled for `arch`; the kernels' D is C.
  void prepare_epilogue(const std::string& arch);

  const Problem& problem() const { return problem_; }
  const GemmScalars& scalars() const { return scalars_; }
  const TimingOptions& timing() const { return timing_; }
  cudaStream_t stream() const { return stream_; }
  const GuardedMatrix& a() const { return a_; }
  const GuardedMatrix& b() const { return b_; }
  const GuardedMatrix& c() const { return c_; }
  const GuardedMatrix& aux() const { return aux_; }
  DType bias_type() const { return bias_type_; }
  const Fp8Peers* fp8() const { return fp8_.get(); }        // null unless FP8
  const EpiloguePass* pass() const { return pass_.get(); }  // null without an epilogue
  // A + B + C as stored (their rows times ld), in bytes.
  double working_set_bytes() const;

  // C as a run must find it: poison (beta == 0, so unwritten elements show) or the initial C.
  void reset_c() const;
  // `image` (f32, as host_image makes) into `m`, one of this problem's matrices or of its shape.
  void upload(const GuardedMatrix& m, const std::vector<float>& image);
  // `m` (one of this problem's matrices or of its shape) back as f32 into `out`.
  void download(const GuardedMatrix& m, std::vector<float>* out);
  // The last run's C back as f32, the whole buffer.
  const std::vector<float>& download_c();

  // The problem's row-major call (a strided batch with its strides) with these scalars on these
  // buffers; FP8's scales are not attached.
  GemmCall call_on(float alpha, float beta, const void* a, const void* b, void* c) const;
  // The problem's call into `c`, with FP8's scales.
  GemmCall call(const GuardedMatrix& c) const;
  // The call on C with the epilogue's bias and aux too: what cuBLASLt's fused call runs.
  GemmCall epilogue_call() const;
  // The epilogue's parameters writing D into `d` (C's shape) and aux into `aux`.
  EpilogueParams epilogue_params(const GuardedMatrix& d, const GuardedMatrix& aux) const;
  // A kernel's arguments on the problem's buffers, with `workspace` as its scratch.
  GemmParams kernel_params(void* workspace) const;
  // cuBLAS's GEMM into `c` (no epilogue): the call for the types, or FP8's peer (cuBLASLt's FP8
  // call, else cuBLAS on the decoded operands; the pedantic reference on those). "" or the error.
  std::string cublas_gemm(cublasHandle_t cublas, CublasMath math, const GuardedMatrix& c) const;

  // An ok trial of this problem with these times.
  void record_ok(TrialResult* r, const TimingStats& t) const;

 private:
  // A, B and C, each as one tall matrix over a strided batch (stacked_rows).
  void allocate_operands();
  // Random inputs, their host images into `inputs`; C's initial value kept aside.
  void fill_inputs(HostInputs* inputs);
  // `call` with the epilogue, its bias, and `aux` for the epilogue's aux.
  void attach_epilogue(GemmCall* call, const GuardedMatrix& aux) const;

  Problem problem_;
  GemmScalars scalars_;
  TimingOptions timing_;
  cudaStream_t stream_;
  Rng rng_;  // fresh for every problem: a kernel cannot pass by matching yesterday's numbers
  GuardedMatrix a_, b_, c_;
  DeviceBuffer c_init_;  // C before each run when beta != 0 (poison outside)
  DType bias_type_;
  DeviceBuffer bias_;
  GuardedMatrix aux_;  // as runs write it
  std::unique_ptr<EpiloguePass> pass_;
  // FP8 inputs' scales, decoded operands and cuBLASLt call (the reference and the peer).
  std::unique_ptr<Fp8Peers> fp8_;
  std::vector<float> out_;              // a run's C, copied back (as f32)
  std::vector<unsigned char> staging_;  // typed host copies on their way to or from the GPU
};

}  // namespace tgemm
