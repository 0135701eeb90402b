// GemmReference: what a prepared problem's runs are checked against, and the checks. The
// reference is cuBLAS in pedantic FP32 on the problem's inputs, itself checked against FP64
// (on the host for small problems; on the GPU for every f32x3 problem, whose yardstick is
// cuBLAS SGEMM's error against it), with the epilogue applied by its pass in f32.
#pragma once

#include <cublas_v2.h>

#include <optional>
#include <string>
#include <vector>

#include "src/core/trial_result.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/guarded_matrix.h"
#include "tuner/evaluate/prepared_problem.h"

namespace tgemm {

class GemmReference {
 public:
  // The GEMM's references of `p` on its inputs (`inputs`, their host images); throws Error when
  // cuBLAS fails or the references disagree.
  GemmReference(PreparedProblem& p, const HostInputs& inputs, cublasHandle_t cublas);

  // The epilogue's reference (after p.prepare_epilogue): its pass in f32 on the FP32
  // reference, compiled for `arch`, and aux's. The FP64 reference, of the GEMM alone, is dropped.
  void apply_epilogue(PreparedProblem& p, const std::string& arch);

  // f32x3: cuBLAS SGEMM's error against the FP64 reference; nullopt for other types.
  std::optional<double> sgemm_error() const { return sgemm_error_; }

  // A run's C (`out`: its whole buffer as p.download_c() gives it) and aux against the
  // references, and nothing written outside C: fills status, error and max_rel_error of `r`;
  // false when the result is wrong.
  bool check(PreparedProblem& p, const std::vector<float>& out, TrialResult* r) const;

 private:
  // The pedantic FP32 cuBLAS result into ref_: finite, and written only inside C.
  void fp32_reference(PreparedProblem& p, const HostInputs& inputs, cublasHandle_t cublas);
  // Small problems: the FP64 reference on the host into ref64_, which checks ref_ too.
  void fp64_host_reference(const PreparedProblem& p, const HostInputs& inputs);
  // f32x3: the FP64 reference on the GPU for every size (beta and C included) into ref64_, then
  // cuBLAS SGEMM's error against it and the problem's floor (the same DGEMM on the squared
  // images gives the cancellation), which set the bound every kernel of the problem is held to.
  void f32x3_reference(PreparedProblem& p, const HostInputs& inputs, cublasHandle_t cublas);
  // ref_ accumulates in f32 on the inputs as stored, so the f32 bound holds for it against
  // ref64_ (`where`: the host's or the GPU's); throws Error where it does not.
  void check_fp32_against_fp64(const PreparedProblem& p, const char* where) const;

  // Every type but f32x3: within the type's bound of the pedantic FP32 reference (and of the
  // FP64 one for small problems).
  bool check_f32(const PreparedProblem& p, const float* c, TrialResult* r) const;
  // f32x3: against the FP64 reference, within the f32 bound element by element and no
  // worse than f32x3_error_bound of SGEMM's own error in norm.
  bool check_f32x3(const PreparedProblem& p, const float* c, TrialResult* r) const;
  // aux (the values before the activation) against its reference, within the type's bound.
  bool check_aux(PreparedProblem& p, TrialResult* r) const;

  double bound_;                           // relative_error_bound of the problem's types
  GuardedMatrix c_ref_;                    // f32, C's shape: where the reference is computed
  std::vector<float> ref_;                 // cuBLAS FP32 result, the whole C buffer
  std::vector<double> ref64_;              // FP64 result (m x ldc): small problems, and f32x3
  std::optional<double> sgemm_error_;      // f32x3: cuBLAS SGEMM's error against ref64_
  double f32x3_floor_ = kF32x3SplitError;  // f32x3: the problem's floor (f32x3_floor)
  GuardedMatrix aux_ref_;                  // f32, aux's shape: the epilogue's reference aux
  std::vector<float> aux_expected_;
};

}  // namespace tgemm
