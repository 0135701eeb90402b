// tgemm-profile-target: the process tgemm-db profile runs under Nsight Compute. It launches
// one contender on one tuned problem of the database: tgemm's best kernel on this device
// (from its stored cubin, through the dispatcher) or cuBLAS's matching call. Warm-ups come
// first, then exactly one call between cudaProfilerStart and cudaProfilerStop, so that ncu
// with --profile-from-start off sees the timed call only.
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <random>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "tuner/cli/option_checks.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {
namespace {

struct TargetOptions {
  std::string db_path = "tgemm.db";
  std::string problem_key;
  std::string contender;
  int warmup = 3;
  int device = 0;
};

// An operand of `rows` x `ld` elements in [-1, 1), its pointer offset by `align` bytes when
// that is below 16 so the call has the problem's alignment, as the tuner measured it.
struct Operand {
  DeviceBuffer buffer;
  char* data;
  Operand(DType type, int64_t rows, int64_t ld, int align, std::mt19937_64& rng)
      : buffer(size_t(rows * ld) * size_t(element_bytes(type)) + 16),
        data(static_cast<char*>(buffer.get()) + (align < 16 ? align : 0)) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(size_t(rows * ld));
    for (float& x : values) x = dist(rng);
    const std::vector<unsigned char> host = to_bytes(type, values);
    TGEMM_CUDA_CHECK(cudaMemcpy(data, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
};

int run_target(const TargetOptions& opt) {
  if (cuda_device_count() == 0) fail("no CUDA driver/device available");
  TGEMM_CUDA_CHECK(cudaSetDevice(opt.device));
  const DeviceInfo info = query_device(opt.device);
  std::vector<BestEntry> entries;
  {
    TuningDb db(opt.db_path, TuningDb::Mode::read_only);
    entries = db.best_entries(opt.problem_key, info.name, info.arch);
  }
  if (entries.empty())
    fail("'{}' has no best kernel for problem '{}' on {} ({})", opt.db_path, opt.problem_key,
         info.name, info.arch);
  const BestEntry& best = entries.front();
  const Problem& p = best.problem;
  std::mt19937_64 rng(42);
  Operand a(p.types.a, p.a_rows(), p.lda, p.align_a, rng);
  Operand b(p.types.b, p.b_rows(), p.ldb, p.align_b, rng);
  Operand c(p.types.c, p.m, p.ldc, p.align_c, rng);
  GemmCall call;
  call.op_a = p.op_a;
  call.op_b = p.op_b;
  call.m = int(p.m);
  call.n = int(p.n);
  call.k = int(p.k);
  call.beta = p.beta_zero ? 0.0f : 1.0f;
  call.types = p.types;
  call.a = a.data;
  call.lda = int(p.lda);
  call.b = b.data;
  call.ldb = int(p.ldb);
  call.c = c.data;
  call.ldc = int(p.ldc);

  CudaStream stream;
  std::function<void()> launch;
  std::unique_ptr<Dispatcher> dispatcher;
  cublasHandle_t handle = nullptr;
  if (opt.contender == kTgemmContender) {
    dispatcher = std::make_unique<Dispatcher>(DispatcherOptions{opt.db_path, {}, false});
    const ServedBy served = dispatcher->served_by(call);
    if (served.path != Selection::exact || !served.kernel ||
        served.kernel->canonical_name() != best.config.canonical_name())
      fail("the dispatcher serves {} with {} ({}), not the best kernel {}", p.key(),
           served.kernel ? served.kernel->canonical_name() : "cuBLAS", to_string(served.path),
           best.config.canonical_name());
    launch = [&] { dispatcher->gemm(call, stream.get()); };
  } else {
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) fail("cublasCreate failed");
    cublasSetStream(handle, stream.get());
    launch = [&] {
      const cublasStatus_t st = row_major_gemm(handle, call, CublasMath::matching);
      if (st != CUBLAS_STATUS_SUCCESS) fail("cuBLAS failed: {}", cublasGetStatusString(st));
    };
  }
  for (int i = 0; i < opt.warmup; ++i) launch();
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  TGEMM_CUDA_CHECK(cudaProfilerStart());
  launch();
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  TGEMM_CUDA_CHECK(cudaProfilerStop());
  if (handle) cublasDestroy(handle);
  // stderr: ncu prints its CSV on stdout.
  std::fprintf(stderr, "tgemm-profile-target: %s on %s (%s) after %d warm-up call(s)\n",
               opt.contender == kTgemmContender ? best.config.canonical_name().c_str() : "cuBLAS",
               p.key().c_str(), info.name.c_str(), opt.warmup);
  return 0;
}

}  // namespace
}  // namespace tgemm

int main(int argc, char** argv) {
  tgemm::TargetOptions opt;
  CLI::App app{
      "tgemm-profile-target: one tuned problem's best tgemm kernel or cuBLAS, launched for "
      "Nsight Compute (started by tgemm-db profile)"};
  app.add_option("--db", opt.db_path, "the tuning database")->capture_default_str();
  bool print_device = false;
  app.add_flag("--print-device", print_device, "print the GPU's name and arch, one a line");
  app.add_option("--problem", opt.problem_key, "problem key as stored, e.g. f32_NN_m2048_...");
  app.add_option("--contender", opt.contender, "tgemm or cublas")
      ->check(CLI::IsMember({tgemm::kTgemmContender, tgemm::kCublasContender}));
  app.add_option("--warmup", opt.warmup, "calls before the profiled one")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  app.add_option("--device", opt.device, "CUDA device ordinal")
      ->transform(tgemm::cli::device_ordinal());
  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;
  try {
    if (print_device) {
      if (tgemm::cuda_device_count() == 0) tgemm::fail("no CUDA driver/device available");
      const tgemm::DeviceInfo info = tgemm::query_device(opt.device);
      std::printf("%s\n%s\n", info.name.c_str(), info.arch.c_str());
      return 0;
    }
    if (opt.problem_key.empty() || opt.contender.empty())
      tgemm::fail("--problem and --contender are required (or --print-device)");
    return tgemm::run_target(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-profile-target: error: %s\n", e.what());
    return 1;
  }
}
