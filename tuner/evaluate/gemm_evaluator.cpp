#include "tuner/evaluate/gemm_evaluator.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <random>

#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/launch/gemm_kernel.h"
#include "src/launch/launch_plan.h"
#include "src/templates/epilogue_pass.h"
#include "src/templates/template_registry.h"
#include "tuner/evaluate/fp8_peers.h"
#include "tuner/evaluate/guarded_matrix.h"
#include "tuner/evaluate/interleaved_timer.h"

namespace tgemm {

namespace {

// cuBLASLt's heuristic algorithms timed per problem, its best first (PyTorch TunableOp times
// the heuristic's list the same way), each within kLtWorkspaceBytes.
constexpr int kLtAlgorithms = 4;

// Problems up to this many multiply-adds (and elements) also get an FP64 host reference.
constexpr double kFp64MaxFmas = double(int64_t(1) << 26);
constexpr double kFp64MaxElements = double(int64_t(1) << 25);
// L2 is flushed before each timed run when A + B + C fit in this many L2s; larger problems
// stream through L2 anyway.
constexpr double kFlushWhenWithinL2s = 4.0;

// The row-major call of `q` (a strided batch with its strides) on these buffers.
GemmCall call_of(const Problem& q, float alpha, float beta, const void* a, const void* b, void* c) {
  GemmCall call{q.op_a, q.op_b,     int(q.m), int(q.n),   int(q.k), alpha,      beta,
                a,      int(q.lda), b,        int(q.ldb), c,        int(q.ldc), q.types};
  call.batch = int(q.batch);
  call.stride_a = q.stride_a;
  call.stride_b = q.stride_b;
  call.stride_c = q.stride_c;
  return call;
}

}  // namespace

struct GemmEvaluator::Impl {
  struct Prepared {
    Problem problem;
    GemmScalars scalars;
    TimingOptions timing;
    GuardedMatrix a, b, c;
    GuardedMatrix c_ref;                    // f32, C's shape: where the reference is computed
    DeviceBuffer c_init;                    // C before each run when beta != 0 (poison outside)
    std::vector<float> ref;                 // cuBLAS FP32 result, the whole C buffer
    std::vector<double> ref64;              // FP64 result (m x ldc): small problems, and f32x3
    std::optional<double> sgemm_error;      // f32x3: cuBLAS SGEMM's error against ref64
    double f32x3_floor = kF32x3SplitError;  // f32x3: the problem's floor (f32x3_floor)
    std::vector<float> out;                 // a kernel's result, copied back (as f32)
    std::vector<unsigned char> staging;     // typed host copies on their way to or from the GPU
    bool flush_l2 = false;
    double bound = 0;
    // An epilogue's (Problem::epilogue; D is C): the bias, aux as runs write it and its
    // reference (f32), and the pass that follows cuBLAS's GEMM in its timed call.
    DeviceBuffer bias;
    GuardedMatrix aux, aux_ref;
    std::vector<float> aux_expected;
    std::unique_ptr<EpiloguePass> pass;
    // FP8 inputs' scales, decoded operands and cuBLASLt call (the reference and the peer).
    std::unique_ptr<Fp8Peers> fp8;
  };

  int ordinal;
  DeviceInfo info;
  std::unique_ptr<CudaStream> stream;
  std::unique_ptr<CublasHandle> cublas;
  std::unique_ptr<CublasLtHandle> cublas_lt;  // made when vendor calls are first timed
  DeviceBuffer lt_workspace;
  std::unique_ptr<Prepared> prep;
  std::unique_ptr<L2Flusher> flusher;
  std::unique_ptr<InterleavedTimer> timer;  // resets C and flushes L2 before each run
  std::vector<CudaEvent> events;
  DeviceBuffer workspace;  // the trial plan's scratch (LaunchPlan::workspace_bytes), grown
  bool broken = false;
  std::string broken_reason;

  cudaStream_t s() const { return stream->get(); }

  // After a failed CUDA call: is the context ruined (a sticky error) for good?
  bool check_broken() {
    if (broken) return true;
    cudaGetLastError();  // clears an ordinary error; a sticky one stays
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      cudaGetLastError();
      err = cudaDeviceSynchronize();
    }
    if (err != cudaSuccess) {
      broken = true;
      broken_reason = cuda_error_text(err);
    }
    return broken;
  }

  // Status for a failure that is not the kernel's fault unless the context is gone.
  TrialStatus classify(TrialStatus otherwise) {
    return check_broken() ? TrialStatus::crashed : otherwise;
  }

  // C as a run must find it: poison (beta == 0, so unwritten elements show) or the initial C.
  void reset_c() {
    Prepared& p = *prep;
    if (p.problem.epilogue.aux)  // aux is written whatever beta: poison shows what is not
      TGEMM_CUDA_CHECK(cudaMemsetAsync(p.aux.buffer.get(), 0xFF, p.aux.buffer.bytes(), s()));
    if (p.scalars.beta == 0.0f)
      TGEMM_CUDA_CHECK(cudaMemsetAsync(p.c.buffer.get(), 0xFF, p.c.buffer.bytes(), s()));
    else
      TGEMM_CUDA_CHECK(cudaMemcpyAsync(p.c.buffer.get(), p.c_init.get(), p.c.buffer.bytes(),
                                       cudaMemcpyDeviceToDevice, s()));
  }

  void before_each_run() {
    if (prep->scalars.beta != 0.0f) reset_c();
    if (prep->flush_l2) {
      if (!flusher) flusher = std::make_unique<L2Flusher>(info.l2_bytes);
      flusher->flush(s());
    }
  }

  // The matching cuBLAS call on C (timing; with an epilogue, GEMM then the epilogue's pass), or
  // the pedantic FP32 reference into c_ref (the GEMM alone: prepare applies the epilogue).
  std::string run_cublas(CublasMath math) {
    const Prepared& p = *prep;
    const GuardedMatrix& c = math == CublasMath::reference ? p.c_ref : p.c;
    if (std::string error = run_cublas_gemm(math, c); !error.empty())
      return fmt::format("{} ({})", error, p.problem.key());
    if (math == CublasMath::reference || !p.pass) return {};
    const cudaError_t err =
        p.pass->launch(p.problem.m, p.problem.n, epilogue_params(p.c, p.aux), s());
    return err == cudaSuccess ? std::string() : "the epilogue's pass: " + cuda_error_text(err);
  }

  // The GEMM of run_cublas into `c`: cuBLAS's call for the types, or FP8's peer (cuBLASLt's FP8
  // call, else cuBLAS on the decoded operands; the pedantic reference on those).
  std::string run_cublas_gemm(CublasMath math, const GuardedMatrix& c) {
    const Prepared& p = *prep;
    if (p.fp8) return p.fp8->run(cublas->get(), prepared_call(c), math, c.type, s());
    const GemmCall call =
        call_of(p.problem, p.scalars.alpha, p.scalars.beta, p.a.data(), p.b.data(), c.data());
    const cublasStatus_t status = row_major_gemm(cublas->get(), call, math, c.type);
    return status == CUBLAS_STATUS_SUCCESS
               ? std::string()
               : fmt::format("cuBLAS: {}", cublasGetStatusString(status));
  }

  // The prepared problem's call into `c`, with FP8's scales.
  GemmCall prepared_call(const GuardedMatrix& c) const {
    const Prepared& p = *prep;
    GemmCall call =
        call_of(p.problem, p.scalars.alpha, p.scalars.beta, p.a.data(), p.b.data(), c.data());
    if (p.fp8) p.fp8->attach(&call);
    return call;
  }

  // FP8: random scales (each in [1.5, 2): a kernel that leaves one out is off by a third at
  // least), the decoded operands, and cuBLASLt's FP8 call where it computes the problem.
  void prepare_fp8(Rng& rng, const std::vector<float>& host_a, const std::vector<float>& host_b) {
    Prepared& q = *prep;
    const auto from_first = [](const GuardedMatrix& op, const std::vector<float>& image) {
      return std::vector<float>(image.begin() + op.offset, image.end());
    };
    q.fp8 = std::make_unique<Fp8Peers>(q.problem, from_first(q.a, host_a), from_first(q.b, host_b),
                                       1.75f + 0.25f * rng.uniform(), 1.75f + 0.25f * rng.uniform(),
                                       s());
    if (!cublas_lt) cublas_lt = std::make_unique<CublasLtHandle>();
    std::string why;  // where cuBLASLt has no FP8 call, cuBLAS's 16-bit GEMM is the peer
    q.fp8->prepare_lt(cublas_lt->get(), prepared_call(q.c), s(), &why);
  }

  // The prepared epilogue's parameters writing D into `d` (C's shape) and aux into `aux`.
  EpilogueParams epilogue_params(const GuardedMatrix& d, const GuardedMatrix& aux) const {
    GemmCall call = call_of(prep->problem, 1, 0, nullptr, nullptr, d.data());
    call.types.c = d.type;
    call.epilogue = prep->problem.epilogue;
    call.bias = prep->bias.get();
    call.aux = call.epilogue.aux ? aux.data() : nullptr;
    call.ldaux = int(aux.ld);
    if (prep->fp8) prep->fp8->attach(&call);
    return make_epilogue_params(call);
  }

  CudaEvent& event(size_t i) {
    while (events.size() <= i) events.emplace_back();
    return events[i];
  }

  std::string time_interleaved(const std::vector<Launcher>& launchers, double estimate_ms,
                               std::vector<TimingStats>* stats) {
    return timer->time(launchers, estimate_ms, prep->timing, stats);
  }

  // The kernel arguments for the prepared problem and buffers.
  GemmParams params() const {
    const Prepared& p = *prep;
    GemmParams params =
        make_params(p.problem, p.a.data(), p.b.data(), p.c.data(), p.scalars.alpha, p.scalars.beta);
    params.workspace = workspace.get();
    return params;
  }

  // One timed run of `kernel` on the prepared problem, for the InterleavedTimer.
  Launcher kernel_launcher(const GemmKernel& kernel, const LaunchPlan& plan) {
    return [&kernel, plan, params = params(), epilogue = epilogue_params(prep->c, prep->aux),
            stream = s()] {
      const cudaError_t err = kernel.launch(plan, params, epilogue, stream);
      return err == cudaSuccess ? std::string() : "launch: " + cuda_error_text(err);
    };
  }

  // An ok trial with these times.
  void record_ok(TrialResult* r, const TimingStats& t) const {
    r->status = TrialStatus::ok;
    r->error.clear();
    r->time_min_us = t.min_us;
    r->time_median_us = t.median_us;
    r->time_max_us = t.max_us;
    r->runs = t.runs;
    r->tflops = t.median_us > 0 ? prep->problem.flops() / t.median_us * 1e-6 : 0;
  }

  // One run on poisoned C, then every check; fills status/error/max_rel_error of `r`.
  // `launch_ms` gets the run's time (the timing loop's first estimate).
  bool verify(const Launcher& launch, TrialResult* r, double* launch_ms) {
    Prepared& p = *prep;
    reset_c();
    event(0).record(s());
    if (std::string error = launch(); !error.empty()) {
      r->status = classify(TrialStatus::launch_failed);
      r->error = error;
      return false;
    }
    event(1).record(s());
    const cudaError_t run = cudaStreamSynchronize(s());
    if (run != cudaSuccess) {
      r->status = classify(TrialStatus::launch_failed);
      r->error = "the kernel failed: " + cuda_error_text(run) +
                 (r->status == TrialStatus::crashed ? " (the CUDA context is lost)" : "");
      return false;
    }
    *launch_ms = event(1).elapsed_ms_since(event(0));
    p.c.download(s(), &p.staging, &p.out);

    const float* c = p.out.data() + p.c.offset;
    if (p.sgemm_error) {
      if (!check_f32x3(c, r)) return false;
    } else if (!check_f32(c, r)) {
      return false;
    }
    if (p.problem.epilogue.aux && !check_aux(r)) return false;
    if (auto stray = find_write_outside(p.out.data(), p.c.elements, p.c.offset, p.c.rows,
                                        p.problem.n, p.c.ld)) {
      r->status = TrialStatus::wrong_result;
      r->error = *stray;
      return false;
    }
    return true;
  }

  // Every type but f32x3: within the type's bound of the pedantic FP32 reference (and of the
  // FP64 one for small problems).
  bool check_f32(const float* c, TrialResult* r) const {
    const Prepared& p = *prep;
    const ResultCheck check =
        check_result(c, p.ref.data() + p.c.offset, p.c.rows, p.problem.n, p.c.ld, p.bound);
    r->max_rel_error = check.rel_error;
    if (!check.ok) {
      r->status = TrialStatus::wrong_result;
      r->error = check.error;
      return false;
    }
    if (!p.ref64.empty()) {
      const ResultCheck exact =
          check_result(c, p.ref64.data(), p.c.rows, p.problem.n, p.c.ld, p.bound);
      if (!exact.ok) {
        r->status = TrialStatus::wrong_result;
        r->error = "against the FP64 reference: " + exact.error;
        return false;
      }
    }
    return true;
  }

  // aux (the values before the activation) against its reference, within the type's bound.
  bool check_aux(TrialResult* r) {
    Prepared& p = *prep;
    std::vector<float> aux;
    p.aux.download(s(), &p.staging, &aux);
    const ResultCheck check =
        check_result(aux.data() + p.aux.offset, p.aux_expected.data() + p.aux.offset, p.aux.rows,
                     p.problem.n, p.aux.ld, p.bound);
    if (check.ok) return true;
    r->status = TrialStatus::wrong_result;
    r->error = "aux: " + check.error;
    return false;
  }

  // f32x3: against the FP64 reference, within the f32 bound element by element and no
  // worse than f32x3_error_bound of SGEMM's own error in norm.
  bool check_f32x3(const float* c, TrialResult* r) const {
    const Prepared& p = *prep;
    const ResultCheck check =
        check_result(c, p.ref64.data(), p.c.rows, p.problem.n, p.c.ld, p.bound);
    r->max_rel_error = check.rel_error;
    const auto why = f32x3_rejection(check, *p.sgemm_error, p.f32x3_floor);
    if (!why) return true;
    r->status = TrialStatus::wrong_result;
    r->error = *why;
    return false;
  }

  // C = alpha * op(A) op(B) + beta * C in FP64 on the GPU (cublasDgemm on the images widened to
  // double; C read only when beta != 0), into a host copy of m x ldc.
  std::vector<double> dgemm_on_images(const std::vector<float>& host_a,
                                      const std::vector<float>& host_b,
                                      const std::vector<float>& host_c0, float alpha, float beta) {
    Prepared& p = *prep;
    const Problem& q = p.problem;
    const DeviceBuffer a = widened(p.a, host_a, s());
    const DeviceBuffer b = widened(p.b, host_b, s());
    // The C image (poison outside the matrix) or zeros.
    const DeviceBuffer c = beta != 0.0f
                               ? widened(p.c, host_c0, s())
                               : widened(p.c, std::vector<float>(size_t(p.c.elements), 0.0f), s());
    const GemmCall call = call_of(q, alpha, beta, a.get(), b.get(), c.get());
    const cublasStatus_t status = row_major_dgemm(cublas->get(), call);
    if (status != CUBLAS_STATUS_SUCCESS)
      fail("cublasDgemm (the FP64 reference): {}", cublasGetStatusString(status));
    std::vector<double> out(size_t(p.c.rows * p.c.ld), 0.0);
    TGEMM_CUDA_CHECK(cudaMemcpyAsync(out.data(), c.get(), out.size() * sizeof(double),
                                     cudaMemcpyDeviceToHost, s()));
    TGEMM_CUDA_CHECK(cudaStreamSynchronize(s()));
    return out;
  }

  // f32x3: the FP64 reference on the GPU for every size (beta and C included) into ref64, then
  // cuBLAS SGEMM's error against it and the problem's floor (the same DGEMM on the squared
  // images gives the cancellation), which set the bound every kernel of the problem is held to.
  void prepare_f32x3_reference(const std::vector<float>& host_a, const std::vector<float>& host_b,
                               const std::vector<float>& host_c0) {
    Prepared& p = *prep;
    const Problem& q = p.problem;
    const float alpha = p.scalars.alpha, beta = p.scalars.beta;
    p.ref64 = dgemm_on_images(host_a, host_b, host_c0, alpha, beta);
    const auto squared = [](std::vector<float> image) {
      for (float& x : image) x *= x;  // poison stays outside the matrix, where DGEMM never reads
      return image;
    };
    const std::vector<double> squares = dgemm_on_images(
        squared(host_a), squared(host_b), squared(host_c0), alpha * alpha, beta * beta);
    p.f32x3_floor =
        f32x3_floor(q.k, f32x3_cancellation(squares.data(), p.ref64.data(), p.c.rows, q.n, p.c.ld));
    // The pedantic FP32 reference must agree with it within the f32 bound, as on the host.
    const ResultCheck fp32 = check_result(p.ref.data() + p.c.offset, p.ref64.data(), p.c.rows, q.n,
                                          p.c.ld, relative_error_bound({}, q.k));
    if (!fp32.ok)
      fail("the cuBLAS FP32 reference disagrees with the FP64 GPU reference: {}", fp32.error);
    // SGEMM's own error, on C as a kernel finds it.
    reset_c();
    if (std::string error = run_cublas(CublasMath::matching); !error.empty()) fail("{}", error);
    p.c.download(s(), &p.staging, &p.out);
    const ResultCheck sgemm =
        check_result(p.out.data() + p.c.offset, p.ref64.data(), p.c.rows, q.n, p.c.ld, HUGE_VAL);
    if (!sgemm.ok) fail("cuBLAS SGEMM against the FP64 reference: {}", sgemm.error);
    p.sgemm_error = sgemm.rel_error;
  }

  // Loads and verifies; on success `kernel` and `plan` are ready for timing.
  bool load_and_verify(const KernelConfig& config, const std::vector<char>& cubin, TrialResult* r,
                       std::unique_ptr<GemmKernel>* kernel, LaunchPlan* plan, double* launch_ms) {
    if (broken) {
      r->status = TrialStatus::crashed;
      r->error = "the CUDA context was lost earlier: " + broken_reason;
      return false;
    }
    if (!prep) {
      r->status = TrialStatus::launch_failed;
      r->error = "no problem prepared";
      return false;
    }
    const GemmTemplate* family = find_template(config.template_name);
    if (!family) {
      r->status = TrialStatus::invalid;
      r->error = fmt::format("no template family '{}' is registered", config.template_name);
      return false;
    }
    if (auto why = family->unsupported_reason(config, prep->problem, info.arch)) {
      r->status = TrialStatus::invalid;
      r->error = *why;
      return false;
    }
    try {
      *kernel =
          std::make_unique<GemmKernel>(config, cubin, family->entries(config, prep->problem.types),
                                       main_smem_opt_in(*family, config, prep->problem));
    } catch (const Error& e) {
      r->status = classify(TrialStatus::launch_failed);
      r->error = fmt::format("cannot load the kernel: {}", e.what());
      return false;
    }
    *plan = family->plan_launch(config, prep->problem, info.sm_count);
    if (plan->workspace_bytes > workspace.bytes()) {
      workspace = DeviceBuffer();  // the old one first: the new may need its memory
      try {
        workspace = DeviceBuffer(plan->workspace_bytes);
      } catch (const Error& e) {
        r->status = classify(TrialStatus::resource_exceeded);
        r->error = fmt::format("cannot allocate the plan's {} bytes of workspace: {}",
                               plan->workspace_bytes, e.what());
        return false;
      }
    }
    return verify(kernel_launcher(**kernel, *plan), r, launch_ms);
  }

  void prepare(const Problem& problem, const TimingOptions& timing, GemmScalars scalars,
               bool time_cublas, bool time_vendor, CublasTiming* out);
  // The epilogue's buffers (a random bias, aux) and its reference applied to c_ref (and aux_ref)
  // by the pass in f32; the kernels' D is C.
  void prepare_epilogue(Rng& rng);
  void time_cublas_calls(bool time_vendor, CublasTiming* out);
};

// cuBLAS's call for the prepared problem, timed (the yardstick of every ratio), and with
// time_vendor the vendor calls as contenders: that call and cuBLASLt's top heuristic algorithms,
// each verified like a kernel, then timed interleaved in one loop.
void GemmEvaluator::Impl::time_cublas_calls(bool time_vendor, CublasTiming* out) {
  const Problem& q = prep->problem;
  GemmCall call = prepared_call(prep->c);
  call.epilogue = q.epilogue;
  call.bias = prep->bias.get();
  call.aux = q.epilogue.aux ? prep->aux.data() : nullptr;
  call.ldaux = int(prep->aux.ld);
  // cuBLASLt's descriptors here describe one GEMM: a batch races cuBLAS's batched call only.
  time_vendor = time_vendor && !q.batched();
  std::vector<Launcher> launchers = {[this] { return run_cublas(CublasMath::matching); }};
  std::vector<TrialResult> contenders(1);
  contenders[0].config = cublas_default_call();
  std::unique_ptr<LtGemm> lt;
  std::vector<LtReadyAlgo> ready;
  ready.reserve(size_t(kLtAlgorithms));  // the launchers hold pointers into it
  if (time_vendor) {
    if (!cublas_lt) cublas_lt = std::make_unique<CublasLtHandle>();
    if (lt_workspace.bytes() < kLtWorkspaceBytes) lt_workspace = DeviceBuffer(kLtWorkspaceBytes);
    try {
      lt = std::make_unique<LtGemm>(cublas_lt->get(), q);
    } catch (const Error&) {  // cuBLASLt has no such epilogue: cuBLAS and the pass race alone
      time_vendor = false;
    }
  }
  if (time_vendor) {
    for (const LtAlgoConfig& algo : lt->heuristic(kLtAlgorithms, kLtWorkspaceBytes)) {
      TrialResult r;
      r.config = cublaslt_call(algo);
      std::string why;
      if (auto one = lt->ready(algo, &why)) {
        ready.push_back(*one);
      } else {
        r.status = TrialStatus::invalid;
        r.error = why;
        out->vendor_trials.push_back(r);
        continue;
      }
      contenders.push_back(r);
      launchers.push_back([this, &lt, algo = &ready.back(), call]() -> std::string {
        const cublasStatus_t status = lt->run(*algo, call, lt_workspace.get(), s());
        if (status == CUBLAS_STATUS_SUCCESS) return {};
        return fmt::format("cublasLtMatmul: {}", cublasGetStatusString(status));
      });
    }
  }
  // Each verified once on a poisoned C; cuBLAS's call is timed whatever its verdict.
  double estimate_ms = 0;
  std::vector<size_t> timed;
  std::vector<bool> verified(launchers.size());
  for (size_t i = 0; i < launchers.size(); ++i) {
    double ms = 0;
    verified[i] = verify(launchers[i], &contenders[i], &ms);
    if (!verified[i] && i == 0 && contenders[0].status != TrialStatus::wrong_result)
      fail("{}", contenders[0].error);
    if (!verified[i] && i > 0) continue;
    estimate_ms += ms;
    timed.push_back(i);
  }
  std::vector<Launcher> timed_launchers;
  for (size_t i : timed) timed_launchers.push_back(launchers[i]);
  std::vector<TimingStats> stats;
  const std::string error = time_interleaved(timed_launchers, estimate_ms, &stats);
  if (!error.empty()) fail("timing cuBLAS: {}", error);
  out->min_us = stats[0].min_us;
  out->median_us = stats[0].median_us;
  out->max_us = stats[0].max_us;
  out->runs = stats[0].runs;
  if (!time_vendor) return;
  // verify() leaves a passing trial's status as it was (invalid, the default): only the
  // timing makes it ok.
  for (size_t t = 0; t < timed.size(); ++t)
    if (verified[timed[t]]) record_ok(&contenders[timed[t]], stats[t]);
  // An FP8 problem's cuBLAS call is cuBLASLt's FP8 call, or where cuBLASLt has none the 16-bit
  // GEMM of the decoded operands: a yardstick that cannot serve the FP8 problem, so no contender.
  const size_t first = prep->fp8 && !prep->fp8->has_lt() ? 1 : 0;
  for (size_t i = first; i < contenders.size(); ++i)
    out->vendor_trials.push_back(std::move(contenders[i]));
}

void GemmEvaluator::Impl::prepare(const Problem& problem, const TimingOptions& timing,
                                  GemmScalars scalars, bool time_cublas, bool time_vendor,
                                  CublasTiming* out) {
  prep.reset();
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

  auto p = std::make_unique<Prepared>();
  p->problem = problem;
  p->scalars = scalars;
  p->timing = timing;
  const GemmTypes& t = problem.types;
  const int64_t batch = problem.batch;
  p->a =
      GuardedMatrix(t.a, stacked_rows("a", problem.a_rows(), problem.lda, problem.stride_a, batch),
                    problem.a_cols(), problem.lda, problem.align_a);
  p->b =
      GuardedMatrix(t.b, stacked_rows("b", problem.b_rows(), problem.ldb, problem.stride_b, batch),
                    problem.b_cols(), problem.ldb, problem.align_b);
  const int64_t c_rows = stacked_rows("c", problem.m, problem.ldc, problem.stride_c, batch);
  if (c_rows != problem.m * batch)
    fail(
        "problem {}: the tuner measures batches whose members of C follow each other (stride_c "
        "= m x ldc = {}), not {}",
        problem.key(), problem.m * problem.ldc, problem.stride_c);
  p->c = GuardedMatrix(t.c, c_rows, problem.n, problem.ldc, problem.align_c);
  // The reference sits at the same element offset, so one index addresses both.
  p->c_ref = GuardedMatrix(DType::f32, c_rows, problem.n, problem.ldc, 16);
  p->c_ref.offset = p->c.offset;
  p->c_ref.elements = p->c.elements;
  p->c_ref.buffer = DeviceBuffer(size_t(p->c.elements) * sizeof(float));
  p->bound = relative_error_bound(t, problem.k);

  // Fresh inputs for every problem: a kernel cannot pass by matching yesterday's numbers.
  std::random_device device_entropy;
  Rng rng{(uint64_t(device_entropy()) << 32) ^ device_entropy()};
  std::vector<float> host_a = p->a.host_image(rng);
  std::vector<float> host_b = p->b.host_image(rng);
  std::vector<float> host_c0;  // C before the GEMM; only beta != 0 reads it
  if (scalars.beta != 0.0f) host_c0 = p->c.host_image(rng);
  p->a.upload(host_a, s(), &p->staging);
  p->b.upload(host_b, s(), &p->staging);
  p->c_ref.upload(
      scalars.beta != 0.0f ? host_c0 : std::vector<float>(size_t(p->c.elements), poison_value()),
      s(), &p->staging);
  if (scalars.beta != 0.0f) {
    p->c.upload(host_c0, s(), &p->staging);  // through c, in C's type, then kept aside
    p->c_init = DeviceBuffer(p->c.buffer.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpyAsync(p->c_init.get(), p->c.buffer.get(), p->c.buffer.bytes(),
                                     cudaMemcpyDeviceToDevice, s()));
  }
  p->ref.resize(size_t(p->c.elements));
  p->out.resize(size_t(p->c.elements));
  prep = std::move(p);
  Prepared& q = *prep;
  if (t.fp8()) prepare_fp8(rng, host_a, host_b);

  // The reference: cuBLAS in pedantic FP32 (no TF32, no reduced-precision shortcuts) on the
  // same inputs, into an f32 C.
  if (std::string error = run_cublas(CublasMath::reference); !error.empty()) fail("{}", error);
  q.c_ref.download(s(), &q.staging, &q.ref);
  for (int64_t i = 0; i < q.c.rows; ++i)
    for (int64_t j = 0; j < problem.n; ++j)
      if (!std::isfinite(q.ref[size_t(q.c.offset + i * q.c.ld + j)]))
        fail("the cuBLAS reference has a non-finite element at C[{}][{}]", i, j);
  if (auto stray =
          find_write_outside(q.ref.data(), q.c.elements, q.c.offset, q.c.rows, problem.n, q.c.ld))
    fail("the cuBLAS reference {}", *stray);

  // Small problems: an FP64 reference on the host, which also checks the cuBLAS call.
  // f32x3 problems of every size get theirs on the GPU instead.
  const double m = double(problem.m), n = double(problem.n), k = double(problem.k);
  if (t.compute == ComputeType::f32x3) {
    prepare_f32x3_reference(host_a, host_b, host_c0);
    out->sgemm_rel_error = q.sgemm_error;
  } else if (batch == 1 && m * n * k <= kFp64MaxFmas && m * k + k * n + m * n <= kFp64MaxElements) {
    // (A batch's members are checked against cuBLAS's batched call in pedantic FP32.)
    const int64_t M = problem.m, N = problem.n, K = problem.k;
    std::vector<double> op_a(size_t(M * K)), op_b(size_t(K * N));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t l = 0; l < K; ++l)
        op_a[size_t(i * K + l)] =
            host_a[size_t(q.a.offset + (problem.op_a == Op::N ? i * q.a.ld + l : l * q.a.ld + i))];
    for (int64_t l = 0; l < K; ++l)
      for (int64_t j = 0; j < N; ++j)
        op_b[size_t(l * N + j)] =
            host_b[size_t(q.b.offset + (problem.op_b == Op::N ? l * q.b.ld + j : j * q.b.ld + l))];
    q.ref64.assign(size_t(M * q.c.ld), 0.0);
    for (int64_t i = 0; i < M; ++i) {
      double* row = q.ref64.data() + i * q.c.ld;
      for (int64_t l = 0; l < K; ++l) {
        const double a = op_a[size_t(i * K + l)];
        const double* b = op_b.data() + l * N;
        for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];
      }
      for (int64_t j = 0; j < N; ++j) {
        const double c0 = scalars.beta != 0.0f ? host_c0[size_t(q.c.offset + i * q.c.ld + j)] : 0;
        row[j] = double(scalars.alpha) * (q.fp8 ? q.fp8->scale() : 1.0) * row[j] +
                 double(scalars.beta) * c0;
      }
    }
    // The reference accumulates in f32 on the inputs as stored: the f32 bound holds for it.
    const ResultCheck check = check_result(q.ref.data() + q.c.offset, q.ref64.data(), problem.m,
                                           problem.n, q.c.ld, relative_error_bound({}, problem.k));
    if (!check.ok)
      fail("the cuBLAS FP32 reference disagrees with the FP64 host reference: {}", check.error);
  }

  // The FP64 check above is of the GEMM; the epilogue is checked against its f32 reference.
  if (problem.epilogue.any()) {
    q.ref64.clear();
    prepare_epilogue(rng);
  }

  const double working_set = q.a.matrix_bytes() + q.b.matrix_bytes() + q.c.matrix_bytes();
  q.flush_l2 = info.l2_bytes > 0 && working_set <= kFlushWhenWithinL2s * double(info.l2_bytes);

  // Timed runs make the call an application would make for these types (SGEMM for f32).
  if (time_cublas) time_cublas_calls(time_vendor, out);
  out->ok = true;
}

void GemmEvaluator::Impl::prepare_epilogue(Rng& rng) {
  Prepared& q = *prep;
  const Problem& problem = q.problem;
  const Epilogue& e = problem.epilogue;
  const DType bias_type = e.bias_f32 ? DType::f32 : problem.types.c;
  if (e.bias != BiasAlong::none) {
    std::vector<float> values(size_t(e.bias == BiasAlong::n ? problem.n : problem.m));
    for (float& v : values) v = round_to(bias_type, rng.uniform());
    const std::vector<unsigned char> bytes = to_bytes(bias_type, values);
    q.bias = DeviceBuffer(bytes.size());
    TGEMM_CUDA_CHECK(
        cudaMemcpyAsync(q.bias.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, s()));
  }
  if (e.aux) {
    q.aux = GuardedMatrix(problem.types.c, q.c.rows, problem.n, problem.ldc, problem.align_c);
    // The reference at aux's element offset, as c_ref is at C's.
    q.aux_ref = GuardedMatrix(DType::f32, q.c.rows, problem.n, problem.ldc, 16);
    q.aux_ref.offset = q.aux.offset;
    q.aux_ref.elements = q.aux.elements;
    q.aux_ref.buffer = DeviceBuffer(size_t(q.aux.elements) * sizeof(float));
  }
  q.pass = std::make_unique<EpiloguePass>(e, problem.types.c, bias_type, info.arch);
  const EpiloguePass reference(e, DType::f32, bias_type, info.arch);
  const cudaError_t err =
      reference.launch(problem.m, problem.n, epilogue_params(q.c_ref, q.aux_ref), s());
  if (err != cudaSuccess) fail("the epilogue's reference pass: {}", cuda_error_text(err));
  q.c_ref.download(s(), &q.staging, &q.ref);
  if (e.aux) q.aux_ref.download(s(), &q.staging, &q.aux_expected);
}

GemmEvaluator::GemmEvaluator(int device) : impl_(std::make_unique<Impl>()) {
  impl_->ordinal = device;
  impl_->info = query_device(device);  // throws without a driver or device
  TGEMM_CUDA_CHECK(cudaSetDevice(device));
  impl_->stream = std::make_unique<CudaStream>();
  impl_->timer = std::make_unique<InterleavedTimer>(
      impl_->s(), [impl = impl_.get()] { impl->before_each_run(); });
  impl_->cublas = std::make_unique<CublasHandle>();
  const cublasStatus_t status = cublasSetStream(impl_->cublas->get(), impl_->s());
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasSetStream failed: {}", cublasGetStatusString(status));
}

GemmEvaluator::~GemmEvaluator() = default;

const DeviceInfo& GemmEvaluator::device() const { return impl_->info; }

bool GemmEvaluator::prepared() const { return impl_->prep != nullptr; }

bool GemmEvaluator::context_broken() const { return impl_->broken; }

CublasTiming GemmEvaluator::prepare(const Problem& problem, const TimingOptions& timing,
                                    GemmScalars scalars, bool time_cublas, bool time_vendor) {
  CublasTiming out;
  if (impl_->broken) {
    out.error = "the CUDA context was lost earlier: " + impl_->broken_reason;
    return out;
  }
  try {
    impl_->prepare(problem, timing, scalars, time_cublas, time_vendor, &out);
  } catch (const Error& e) {
    impl_->prep.reset();
    out = CublasTiming{};
    out.error = e.what();
    if (impl_->check_broken()) out.error += " (the CUDA context is lost)";
  } catch (const std::bad_alloc&) {
    impl_->prep.reset();
    out = CublasTiming{};
    out.error = fmt::format("out of host memory preparing {}", problem.key());
  }
  return out;
}

TrialResult GemmEvaluator::evaluate(const KernelConfig& config, const std::vector<char>& cubin,
                                    double cutoff_us) {
  TrialResult r;
  r.config = config;
  try {
    std::unique_ptr<GemmKernel> kernel;
    LaunchPlan plan;
    double launch_ms = 0;
    if (!impl_->load_and_verify(config, cubin, &r, &kernel, &plan, &launch_ms)) return r;
    const Launcher launch = impl_->kernel_launcher(*kernel, plan);
    // Two warm runs, both over the cutoff, before a kernel is recorded without full timing:
    // a single run can be disturbed (seen once in ~1000: 8096 us for a kernel of 89), and the
    // model learns from these times. The faster run stands for it, since a disturbance only
    // adds time. (One run only where one alone exceeds the timer's budget.)
    TimingOptions two_runs;
    two_runs.warmup_runs = 0;
    two_runs.min_runs = two_runs.max_runs = 2;
    std::vector<TimingStats> stats;
    if (cutoff_us > 0) {
      const std::string error = impl_->timer->time({launch}, launch_ms, two_runs, &stats);
      if (error.empty() && stats[0].min_us > cutoff_us) {
        impl_->record_ok(&r, {stats[0].min_us, stats[0].min_us, stats[0].max_us, stats[0].runs});
        return r;
      }
    }
    const std::string error = impl_->time_interleaved({launch}, launch_ms, &stats);
    if (!error.empty()) {
      r.status = impl_->classify(TrialStatus::launch_failed);
      r.error = error;
      return r;
    }
    impl_->record_ok(&r, stats[0]);
  } catch (const Error& e) {
    r.status = impl_->classify(TrialStatus::launch_failed);
    r.error = e.what();
  }
  return r;
}

Comparison GemmEvaluator::compare(const KernelConfig& config, const std::vector<char>& cubin) {
  Comparison out;
  TrialResult r;
  r.config = config;
  try {
    std::unique_ptr<GemmKernel> kernel;
    LaunchPlan plan;
    double launch_ms = 0;
    if (!impl_->load_and_verify(config, cubin, &r, &kernel, &plan, &launch_ms)) {
      out.error = fmt::format("{}: {}", to_string(r.status), r.error);
      return out;
    }
    std::vector<TimingStats> stats;
    // One round is a tgemm run then a cuBLAS run; the kernel's time stands in for both.
    const std::string error =
        impl_->time_interleaved({impl_->kernel_launcher(*kernel, plan),
                                 [this] { return impl_->run_cublas(CublasMath::matching); }},
                                2 * launch_ms, &stats);
    if (!error.empty()) {
      out.error =
          fmt::format("{}: {}", to_string(impl_->classify(TrialStatus::launch_failed)), error);
      return out;
    }
    out.ok = true;
    out.tgemm_median_us = stats[0].median_us;
    out.cublas_median_us = stats[1].median_us;
    out.runs = stats[0].runs;
  } catch (const Error& e) {
    out.error =
        fmt::format("{}: {}", to_string(impl_->classify(TrialStatus::launch_failed)), e.what());
  }
  return out;
}

}  // namespace tgemm
