#include "tuner/evaluate/prepared_problem.h"

#include <random>
#include <tuple>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"
#include "src/launch/launch_plan.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

namespace {

// Throws Error unless the tuner measures `problem` with these scalars and timing options.
void check_measurable(const Problem& problem, const TimingOptions& timing, GemmScalars scalars) {
  problem.validate();
  if (problem.beta_zero && scalars.beta != 0.0f)
    fail("problem {} says beta == 0 but beta = {}", problem.key(), scalars.beta);
  if (!problem.beta_zero && scalars.beta == 0.0f)
    fail("problem {} says beta != 0 but beta = 0", problem.key());
  const std::tuple<int, int64_t, DType> alignments[] = {
      {problem.align_a, problem.lda, problem.types.a},
      {problem.align_b, problem.ldb, problem.types.b},
      {problem.align_c, problem.ldc, problem.types.c}};
  for (const auto& [align, ld, type] : alignments)
    if ((ld * element_bytes(type)) % align != 0)
      fail("problem {}: alignment {} bytes does not divide the leading dimension {} ({} bytes)",
           problem.key(), align, ld, ld * element_bytes(type));
  if (problem.batch_pointers)
    fail("problem {}: the tuner measures strided batches (pointer arrays serve from them)",
         problem.key());
  if (timing.min_runs < 1 || timing.max_runs < 1 || timing.max_ms <= 0)
    fail("timing options need min_runs, max_runs >= 1 and max_ms > 0");
  if (problem.epilogue.any() && problem.types.compute == ComputeType::f32x3)
    fail(
        "problem {}: f32x3 is checked against an FP64 GEMM without epilogues; the tuner "
        "measures epilogues of the other types",
        problem.key());
  if (problem.epilogue.separate_d)
    fail("problem {}: the tuner measures epilogues into C (a D apart is served from them)",
         problem.key());
}

}  // namespace

PreparedProblem::PreparedProblem(const Problem& problem, const TimingOptions& timing,
                                 GemmScalars scalars, cudaStream_t stream, HostInputs* inputs)
    : problem_(problem),
      scalars_(scalars),
      timing_(timing),
      stream_(stream),
      rng_{0},
      bias_type_(problem.epilogue.bias_f32 ? DType::f32 : problem.types.c) {
  check_measurable(problem, timing, scalars);
  allocate_operands();
  fill_inputs(inputs);
}

void PreparedProblem::allocate_operands() {
  const Problem& q = problem_;
  const GemmTypes& t = q.types;
  a_ = GuardedMatrix(t.a, stacked_rows("a", q.a_rows(), q.lda, q.stride_a, q.batch), q.a_cols(),
                     q.lda, q.align_a);
  b_ = GuardedMatrix(t.b, stacked_rows("b", q.b_rows(), q.ldb, q.stride_b, q.batch), q.b_cols(),
                     q.ldb, q.align_b);
  const int64_t c_rows = stacked_rows("c", q.m, q.ldc, q.stride_c, q.batch);
  if (c_rows != q.m * q.batch)
    fail(
        "problem {}: the tuner measures batches whose members of C follow each other (stride_c "
        "= m x ldc = {}), not {}",
        q.key(), q.m * q.ldc, q.stride_c);
  c_ = GuardedMatrix(t.c, c_rows, q.n, q.ldc, q.align_c);
}

void PreparedProblem::fill_inputs(HostInputs* inputs) {
  std::random_device device_entropy;
  rng_ = Rng{(uint64_t(device_entropy()) << 32) ^ device_entropy()};
  inputs->a = a_.host_image(rng_);
  inputs->b = b_.host_image(rng_);
  if (scalars_.beta != 0.0f) inputs->c0 = c_.host_image(rng_);
  upload(a_, inputs->a);
  upload(b_, inputs->b);
  if (scalars_.beta != 0.0f) {
    upload(c_, inputs->c0);  // through c, in C's type, then kept aside
    c_init_ = DeviceBuffer(c_.buffer.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpyAsync(c_init_.get(), c_.buffer.get(), c_.buffer.bytes(),
                                     cudaMemcpyDeviceToDevice, stream_));
  }
  out_.resize(size_t(c_.elements));
}

void PreparedProblem::prepare_fp8(const HostInputs& inputs, cublasLtHandle_t lt) {
  const auto from_first = [](const GuardedMatrix& op, const std::vector<float>& image) {
    return std::vector<float>(image.begin() + op.offset, image.end());
  };
  auto [scale_a, scale_b] = Fp8Peers::random_scales(problem_, [this] { return rng_.uniform(); });
  fp8_ = std::make_unique<Fp8Peers>(problem_, from_first(a_, inputs.a), from_first(b_, inputs.b),
                                    std::move(scale_a), std::move(scale_b), stream_);
  std::string why;  // where cuBLASLt has no FP8 call, cuBLAS's 16-bit GEMM is the peer
  fp8_->prepare_lt(lt, call(c_), stream_, &why);
}

void PreparedProblem::prepare_epilogue(const std::string& arch) {
  const Epilogue& e = problem_.epilogue;
  if (e.bias != BiasAlong::none) {
    std::vector<float> values(size_t(e.bias == BiasAlong::n ? problem_.n : problem_.m));
    for (float& v : values) v = round_to(bias_type_, rng_.uniform());
    const std::vector<unsigned char> bytes = to_bytes(bias_type_, values);
    bias_ = DeviceBuffer(bytes.size());
    TGEMM_CUDA_CHECK(
        cudaMemcpyAsync(bias_.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_));
  }
  if (e.aux)
    aux_ = GuardedMatrix(problem_.types.c, c_.rows, problem_.n, problem_.ldc, problem_.align_c);
  pass_ = std::make_unique<EpiloguePass>(e, problem_.types.c, bias_type_, arch);
}

double PreparedProblem::working_set_bytes() const {
  return a_.matrix_bytes() + b_.matrix_bytes() + c_.matrix_bytes();
}

void PreparedProblem::reset_c() const {
  if (problem_.epilogue.aux)  // aux is written whatever beta: poison shows what is not
    TGEMM_CUDA_CHECK(cudaMemsetAsync(aux_.buffer.get(), 0xFF, aux_.buffer.bytes(), stream_));
  if (scalars_.beta == 0.0f)
    TGEMM_CUDA_CHECK(cudaMemsetAsync(c_.buffer.get(), 0xFF, c_.buffer.bytes(), stream_));
  else
    TGEMM_CUDA_CHECK(cudaMemcpyAsync(c_.buffer.get(), c_init_.get(), c_.buffer.bytes(),
                                     cudaMemcpyDeviceToDevice, stream_));
}

void PreparedProblem::upload(const GuardedMatrix& m, const std::vector<float>& image) {
  m.upload(image, stream_, &staging_);
}

void PreparedProblem::download(const GuardedMatrix& m, std::vector<float>* out) {
  m.download(stream_, &staging_, out);
}

const std::vector<float>& PreparedProblem::download_c() {
  download(c_, &out_);
  return out_;
}

GemmCall PreparedProblem::call_on(float alpha, float beta, const void* a, const void* b,
                                  void* c) const {
  const Problem& q = problem_;
  GemmCall call{q.op_a, q.op_b,     int(q.m), int(q.n),   int(q.k), alpha,      beta,
                a,      int(q.lda), b,        int(q.ldb), c,        int(q.ldc), q.types};
  call.batch = int(q.batch);
  call.stride_a = q.stride_a;
  call.stride_b = q.stride_b;
  call.stride_c = q.stride_c;
  return call;
}

GemmCall PreparedProblem::call(const GuardedMatrix& c) const {
  GemmCall call = call_on(scalars_.alpha, scalars_.beta, a_.data(), b_.data(), c.data());
  if (fp8_) fp8_->attach(&call);
  return call;
}

GemmCall PreparedProblem::epilogue_call() const {
  GemmCall whole = call(c_);
  attach_epilogue(&whole, aux_);
  return whole;
}

EpilogueParams PreparedProblem::epilogue_params(const GuardedMatrix& d,
                                                const GuardedMatrix& aux) const {
  GemmCall pass = call_on(1, 0, nullptr, nullptr, d.data());
  pass.types.c = d.type;
  attach_epilogue(&pass, aux);
  if (fp8_) fp8_->attach(&pass);
  return make_epilogue_params(pass);
}

void PreparedProblem::attach_epilogue(GemmCall* call, const GuardedMatrix& aux) const {
  call->epilogue = problem_.epilogue;
  call->bias = bias_.get();
  call->aux = problem_.epilogue.aux ? aux.data() : nullptr;
  call->ldaux = int(aux.ld);
}

GemmParams PreparedProblem::kernel_params(void* workspace) const {
  GemmParams params =
      make_params(problem_, a_.data(), b_.data(), c_.data(), scalars_.alpha, scalars_.beta);
  params.workspace = workspace;
  return params;
}

std::string PreparedProblem::cublas_gemm(cublasHandle_t cublas, CublasMath math,
                                         const GuardedMatrix& c) const {
  std::string error;
  if (fp8_) {
    error = fp8_->run(cublas, call(c), math, c.type, stream_);
  } else if (const cublasStatus_t status = row_major_gemm(cublas, call(c), math, c.type);
             status != CUBLAS_STATUS_SUCCESS) {
    error = fmt::format("cuBLAS: {}", cublasGetStatusString(status));
  }
  return error.empty() ? error : fmt::format("{} ({})", error, problem_.key());
}

void PreparedProblem::record_ok(TrialResult* r, const TimingStats& t) const {
  r->status = TrialStatus::ok;
  r->error.clear();
  r->time_min_us = t.min_us;
  r->time_median_us = t.median_us;
  r->time_max_us = t.max_us;
  r->runs = t.runs;
  r->tflops = t.median_us > 0 ? problem_.flops() / t.median_us * 1e-6 : 0;
}

}  // namespace tgemm
