#include "tuner/evaluate/gemm_reference.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <utility>

#include "src/core/error.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/templates/epilogue_pass.h"

namespace tgemm {

namespace {

// Problems up to this many multiply-adds (and elements) also get an FP64 host reference.
constexpr double kFp64MaxFmas = double(int64_t(1) << 26);
constexpr double kFp64MaxElements = double(int64_t(1) << 25);

// An f32 matrix of `m`'s shape at `m`'s element offset, so one index addresses both.
GuardedMatrix f32_twin(const GuardedMatrix& m) {
  GuardedMatrix twin(DType::f32, m.rows, m.cols, m.ld, 16);
  twin.offset = m.offset;
  twin.elements = m.elements;
  twin.buffer = DeviceBuffer(size_t(m.elements) * sizeof(float));
  return twin;
}

// op(X) of the matrix `x` with host image `image`: rows x cols, dense, in double.
std::vector<double> dense_op(const GuardedMatrix& x, const std::vector<float>& image, Op op,
                             int64_t rows, int64_t cols) {
  std::vector<double> out(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[size_t(i * cols + j)] =
          image[size_t(x.offset + (op == Op::N ? i * x.ld + j : j * x.ld + i))];
  return out;
}

// C = alpha * op(A) op(B) + beta * C in FP64 on the GPU (cublasDgemm on the images widened to
// double; C read only when beta != 0), into a host copy of m x ldc.
std::vector<double> dgemm_on_images(const PreparedProblem& p, cublasHandle_t cublas,
                                    const HostInputs& images, float alpha, float beta) {
  const cudaStream_t s = p.stream();
  const DeviceBuffer a = widened(p.a(), images.a, s);
  const DeviceBuffer b = widened(p.b(), images.b, s);
  // The C image (poison outside the matrix) or zeros.
  const DeviceBuffer c = beta != 0.0f
                             ? widened(p.c(), images.c0, s)
                             : widened(p.c(), std::vector<float>(size_t(p.c().elements), 0.0f), s);
  const cublasStatus_t status =
      row_major_dgemm(cublas, p.call_on(alpha, beta, a.get(), b.get(), c.get()));
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasDgemm (the FP64 reference): {}", cublasGetStatusString(status));
  std::vector<double> out(size_t(p.c().rows * p.c().ld), 0.0);
  TGEMM_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), c.get(), out.size() * sizeof(double), cudaMemcpyDeviceToHost, s));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

// `r` as a wrong result, for `error`; false, the verdict of the check that found it.
bool wrong_result(TrialResult* r, std::string error) {
  r->status = TrialStatus::wrong_result;
  r->error = std::move(error);
  return false;
}

}  // namespace

GemmReference::GemmReference(PreparedProblem& p, const HostInputs& inputs, cublasHandle_t cublas)
    : bound_(relative_error_bound(p.problem().types, p.problem().k)) {
  fp32_reference(p, inputs, cublas);
  // Small problems: an FP64 reference on the host, which also checks the cuBLAS call (a batch's
  // members are checked against cuBLAS's batched call in pedantic FP32 alone). f32x3 problems of
  // every size get theirs on the GPU instead.
  const Problem& q = p.problem();
  const double m = double(q.m), n = double(q.n), k = double(q.k);
  if (q.types.compute == ComputeType::f32x3)
    f32x3_reference(p, inputs, cublas);
  else if (q.batch == 1 && m * n * k <= kFp64MaxFmas && m * k + k * n + m * n <= kFp64MaxElements)
    fp64_host_reference(p, inputs);
}

void GemmReference::fp32_reference(PreparedProblem& p, const HostInputs& inputs,
                                   cublasHandle_t cublas) {
  const Problem& q = p.problem();
  const GuardedMatrix& c = p.c();
  c_ref_ = f32_twin(c);
  p.upload(c_ref_, p.scalars().beta != 0.0f
                       ? inputs.c0
                       : std::vector<float>(size_t(c.elements), poison_value()));
  ref_.resize(size_t(c.elements));
  // No TF32, no reduced-precision shortcuts: the same inputs into an f32 C.
  if (std::string error = p.cublas_gemm(cublas, CublasMath::reference, c_ref_); !error.empty())
    fail("{}", error);
  p.download(c_ref_, &ref_);
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < q.n; ++j)
      if (!std::isfinite(ref_[size_t(c.offset + i * c.ld + j)]))
        fail("the cuBLAS reference has a non-finite element at C[{}][{}]", i, j);
  if (auto stray = find_write_outside(ref_.data(), c.elements, c.offset, c.rows, q.n, c.ld))
    fail("the cuBLAS reference {}", *stray);
}

void GemmReference::fp64_host_reference(const PreparedProblem& p, const HostInputs& inputs) {
  const Problem& q = p.problem();
  const GuardedMatrix& c = p.c();
  const int64_t M = q.m, N = q.n, K = q.k;
  const std::vector<double> op_a = dense_op(p.a(), inputs.a, q.op_a, M, K);
  const std::vector<double> op_b = dense_op(p.b(), inputs.b, q.op_b, K, N);
  const double alpha = p.scalars().alpha;
  const float beta = p.scalars().beta;
  ref64_.assign(size_t(M * c.ld), 0.0);
  for (int64_t i = 0; i < M; ++i) {
    double* row = ref64_.data() + i * c.ld;
    for (int64_t l = 0; l < K; ++l) {
      const double a = op_a[size_t(i * K + l)];
      const double* b = op_b.data() + l * N;
      for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];
    }
    for (int64_t j = 0; j < N; ++j) {
      const double c0 = beta != 0.0f ? inputs.c0[size_t(c.offset + i * c.ld + j)] : 0;
      const double scale = p.fp8() ? p.fp8()->scale_at(i, j) : 1.0;
      row[j] = alpha * scale * row[j] + double(beta) * c0;
    }
  }
  check_fp32_against_fp64(p, "host");
}

void GemmReference::f32x3_reference(PreparedProblem& p, const HostInputs& inputs,
                                    cublasHandle_t cublas) {
  const Problem& q = p.problem();
  const GuardedMatrix& c = p.c();
  const float alpha = p.scalars().alpha, beta = p.scalars().beta;
  ref64_ = dgemm_on_images(p, cublas, inputs, alpha, beta);
  const auto squared = [](std::vector<float> image) {
    for (float& x : image) x *= x;  // poison stays outside the matrix, where DGEMM never reads
    return image;
  };
  const std::vector<double> squares =
      dgemm_on_images(p, cublas, {squared(inputs.a), squared(inputs.b), squared(inputs.c0)},
                      alpha * alpha, beta * beta);
  f32x3_floor_ =
      f32x3_floor(q.k, f32x3_cancellation(squares.data(), ref64_.data(), c.rows, q.n, c.ld));
  check_fp32_against_fp64(p, "GPU");
  // SGEMM's own error, on C as a kernel finds it (cuBLAS's GEMM alone: f32x3 has no epilogue).
  p.reset_c();
  if (std::string error = p.cublas_gemm(cublas, CublasMath::matching, c); !error.empty())
    fail("{}", error);
  const std::vector<float>& sgemm_c = p.download_c();
  const ResultCheck sgemm =
      check_result(sgemm_c.data() + c.offset, ref64_.data(), c.rows, q.n, c.ld, HUGE_VAL);
  if (!sgemm.ok) fail("cuBLAS SGEMM against the FP64 reference: {}", sgemm.error);
  sgemm_error_ = sgemm.rel_error;
}

void GemmReference::check_fp32_against_fp64(const PreparedProblem& p, const char* where) const {
  const GuardedMatrix& c = p.c();
  const ResultCheck check =
      check_result(ref_.data() + c.offset, ref64_.data(), c.rows, p.problem().n, c.ld,
                   relative_error_bound({}, p.problem().k));
  if (!check.ok)
    fail("the cuBLAS FP32 reference disagrees with the FP64 {} reference: {}", where, check.error);
}

void GemmReference::apply_epilogue(PreparedProblem& p, const std::string& arch) {
  ref64_.clear();
  const Problem& q = p.problem();
  if (q.epilogue.aux) aux_ref_ = f32_twin(p.aux());
  const EpiloguePass reference(q.epilogue, DType::f32, p.bias_type(), arch);
  const cudaError_t err =
      reference.launch(q.m, q.n, p.epilogue_params(c_ref_, aux_ref_), p.stream());
  if (err != cudaSuccess) fail("the epilogue's reference pass: {}", cuda_error_text(err));
  p.download(c_ref_, &ref_);
  if (q.epilogue.aux) p.download(aux_ref_, &aux_expected_);
}

bool GemmReference::check(PreparedProblem& p, const std::vector<float>& out, TrialResult* r) const {
  const GuardedMatrix& c = p.c();
  const float* result = out.data() + c.offset;
  if (sgemm_error_) {
    if (!check_f32x3(p, result, r)) return false;
  } else if (!check_f32(p, result, r)) {
    return false;
  }
  if (p.problem().epilogue.aux && !check_aux(p, r)) return false;
  if (auto stray =
          find_write_outside(out.data(), c.elements, c.offset, c.rows, p.problem().n, c.ld))
    return wrong_result(r, *stray);
  return true;
}

bool GemmReference::check_f32(const PreparedProblem& p, const float* c, TrialResult* r) const {
  const GuardedMatrix& cm = p.c();
  const int64_t n = p.problem().n;
  const ResultCheck check = check_result(c, ref_.data() + cm.offset, cm.rows, n, cm.ld, bound_);
  r->max_rel_error = check.rel_error;
  if (!check.ok) return wrong_result(r, check.error);
  if (ref64_.empty()) return true;
  const ResultCheck exact = check_result(c, ref64_.data(), cm.rows, n, cm.ld, bound_);
  if (!exact.ok) return wrong_result(r, "against the FP64 reference: " + exact.error);
  return true;
}

bool GemmReference::check_f32x3(const PreparedProblem& p, const float* c, TrialResult* r) const {
  const GuardedMatrix& cm = p.c();
  const ResultCheck check = check_result(c, ref64_.data(), cm.rows, p.problem().n, cm.ld, bound_);
  r->max_rel_error = check.rel_error;
  const auto why = f32x3_rejection(check, *sgemm_error_, f32x3_floor_);
  if (why) return wrong_result(r, *why);
  return true;
}

bool GemmReference::check_aux(PreparedProblem& p, TrialResult* r) const {
  const GuardedMatrix& aux = p.aux();
  std::vector<float> written;
  p.download(aux, &written);
  const ResultCheck check =
      check_result(written.data() + aux.offset, aux_expected_.data() + aux.offset, aux.rows,
                   p.problem().n, aux.ld, bound_);
  if (!check.ok) return wrong_result(r, "aux: " + check.error);
  return true;
}

}  // namespace tgemm
