#include "tuner/evaluate/gemm_evaluator.h"

#include <cuda_runtime_api.h>

#include <new>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/launch/gemm_kernel.h"
#include "src/launch/launch_plan.h"
#include "src/templates/template_registry.h"
#include "tuner/evaluate/gemm_reference.h"
#include "tuner/evaluate/interleaved_timer.h"
#include "tuner/evaluate/prepared_problem.h"
#include "tuner/evaluate/vendor_calls.h"

namespace tgemm {

namespace {

// L2 is flushed before each timed run when A + B + C fit in this many L2s; larger problems
// stream through L2 anyway.
constexpr double kFlushWhenWithinL2s = 4.0;

}  // namespace

// Connects the pieces: the device and its stream, the vendor calls, the prepared problem and
// its reference; loads, verifies and times kernels, and notices when the context is lost.
struct GemmEvaluator::Impl {
  int ordinal;
  DeviceInfo info;
  std::unique_ptr<CudaStream> stream;
  std::unique_ptr<VendorCalls> vendor;
  std::unique_ptr<PreparedProblem> prep;
  std::unique_ptr<GemmReference> reference;  // of `prep`
  bool flush_l2 = false;
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

  void before_each_run() {
    if (prep->scalars().beta != 0.0f) prep->reset_c();
    if (flush_l2) {
      if (!flusher) flusher = std::make_unique<L2Flusher>(info.l2_bytes);
      flusher->flush(s());
    }
  }

  CudaEvent& event(size_t i) {
    while (events.size() <= i) events.emplace_back();
    return events[i];
  }

  std::string time_interleaved(const std::vector<Launcher>& launchers, double estimate_ms,
                               std::vector<TimingStats>* stats) {
    return timer->time(launchers, estimate_ms, prep->timing(), stats);
  }

  // One timed run of `kernel` on the prepared problem, for the InterleavedTimer.
  Launcher kernel_launcher(const GemmKernel& kernel, const LaunchPlan& plan) {
    return [&kernel, plan, params = prep->kernel_params(workspace.get()),
            epilogue = prep->epilogue_params(prep->c(), prep->aux()), stream = s()] {
      const cudaError_t err = kernel.launch(plan, params, epilogue, stream);
      return err == cudaSuccess ? std::string() : "launch: " + cuda_error_text(err);
    };
  }

  // One run on poisoned C, then every check; fills status/error/max_rel_error of `r`.
  // `launch_ms` gets the run's time (the timing loop's first estimate).
  bool verify(const Launcher& launch, TrialResult* r, double* launch_ms) {
    prep->reset_c();
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
    return reference->check(*prep, prep->download_c(), r);
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
    if (auto why = family->unsupported_reason(config, prep->problem(), info.arch)) {
      r->status = TrialStatus::invalid;
      r->error = *why;
      return false;
    }
    try {
      *kernel = std::make_unique<GemmKernel>(config, cubin,
                                             family->entries(config, prep->problem().types),
                                             main_smem_opt_in(*family, config, prep->problem()));
    } catch (const Error& e) {
      r->status = classify(TrialStatus::launch_failed);
      r->error = fmt::format("cannot load the kernel: {}", e.what());
      return false;
    }
    *plan = family->plan_launch(config, prep->problem(), info.sm_count);
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
  void reset_problem() {
    reference.reset();
    prep.reset();
  }
};

void GemmEvaluator::Impl::prepare(const Problem& problem, const TimingOptions& timing,
                                  GemmScalars scalars, bool time_cublas, bool time_vendor,
                                  CublasTiming* out) {
  reset_problem();
  HostInputs inputs;
  prep = std::make_unique<PreparedProblem>(problem, timing, scalars, s(), &inputs);
  if (problem.types.fp8()) prep->prepare_fp8(inputs, vendor->lt());
  reference = std::make_unique<GemmReference>(*prep, inputs, vendor->cublas());
  out->sgemm_rel_error = reference->sgemm_error();
  if (problem.epilogue.fused()) {
    prep->prepare_epilogue(info.arch);
    reference->apply_epilogue(*prep, info.arch);
  }
  flush_l2 =
      info.l2_bytes > 0 && prep->working_set_bytes() <= kFlushWhenWithinL2s * double(info.l2_bytes);
  // Timed runs make the call an application would make for these types (SGEMM for f32).
  if (time_cublas) {
    const RunVerifier verify_run = [this](const Launcher& launch, TrialResult* r, double* ms) {
      return verify(launch, r, ms);
    };
    vendor->time(*prep, time_vendor, verify_run, timer.get(), out);
  }
  out->ok = true;
}

GemmEvaluator::GemmEvaluator(int device) : impl_(std::make_unique<Impl>()) {
  impl_->ordinal = device;
  impl_->info = query_device(device);  // throws without a driver or device
  TGEMM_CUDA_CHECK(cudaSetDevice(device));
  impl_->stream = std::make_unique<CudaStream>();
  impl_->timer = std::make_unique<InterleavedTimer>(
      impl_->s(), [impl = impl_.get()] { impl->before_each_run(); });
  impl_->vendor = std::make_unique<VendorCalls>(impl_->s());
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
    impl_->reset_problem();
    out = CublasTiming{};
    out.error = e.what();
    if (impl_->check_broken()) out.error += " (the CUDA context is lost)";
  } catch (const std::bad_alloc&) {
    impl_->reset_problem();
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
        impl_->prep->record_ok(&r,
                               {stats[0].min_us, stats[0].min_us, stats[0].max_us, stats[0].runs});
        return r;
      }
    }
    const std::string error = impl_->time_interleaved({launch}, launch_ms, &stats);
    if (!error.empty()) {
      r.status = impl_->classify(TrialStatus::launch_failed);
      r.error = error;
      return r;
    }
    impl_->prep->record_ok(&r, stats[0]);
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
                                 [this] { return impl_->vendor->run_cublas(*impl_->prep); }},
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
