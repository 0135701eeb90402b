#include "src/dispatch/library_calls.h"

#include <fmt/format.h>

#include <vector>

#include "src/core/error.h"
#include "src/core/library_log.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublas_handles.h"
#include "src/dispatch/dispatch_errors.h"
#include "src/dispatch/stream_capture.h"
#include "src/launch/launch_plan.h"

namespace tgemm {

namespace {

// What cuBLAS's GEMM alone cannot serve: a fused epilogue, or FP8 inputs (cuBLASLt computes
// both; see EpilogueFallback).
bool needs_cublaslt(const Problem& problem) {
  return problem.epilogue.any() || problem.types.fp8();
}

}  // namespace

LibraryCalls::~LibraryCalls() {
  vendor_calls_.clear();  // their descriptors before the handle
  fallbacks_.clear();
  if (lt_handle_) cublasLtDestroy(lt_handle_);
  if (cublas_) cublasDestroy(cublas_);
}

const VendorCall* LibraryCalls::vendor_call(const KernelChoice& choice, const Problem& problem) {
  const std::string key = problem.key() + "|" + choice.config.canonical_name();
  std::lock_guard lock(calls_mutex_);
  if (auto it = vendor_calls_.find(key); it != vendor_calls_.end()) return it->second.get();
  auto vendor = std::make_unique<VendorCall>();
  vendor->config = choice.config;
  vendor->problem = problem;
  // cuBLASLt's descriptors here describe one GEMM: a batch takes cuBLAS's batched call.
  if (choice.config.template_name == kCublasLtCall && !problem.batched()) {
    const std::optional<LtAlgoConfig> algo = lt_algo_of(choice.config);
    if (!algo) fail("its parameters are not a cuBLASLt algorithm");
    if (!lt_handle_ && cublasLtCreate(&lt_handle_) != CUBLAS_STATUS_SUCCESS)
      fail("cublasLtCreate failed");
    vendor->lt = std::make_unique<LtGemm>(lt_handle_, problem);
    std::string why;
    std::optional<LtReadyAlgo> ready = vendor->lt->ready(*algo, &why);
    if (!ready) fail("{}", why);
    vendor->algo = *ready;
  }
  const VendorCall* raw = vendor.get();
  vendor_calls_.emplace(key, std::move(vendor));
  return raw;
}

cublasHandle_t LibraryCalls::cublas_handle(std::optional<cudaStream_t> capture_check) {
  // The caller holds cublas_mutex_.
  if (cublas_) return cublas_;
  if (capture_check && stream_capturing(*capture_check))
    throw NotPreparedError(
        "cuBLAS serves this call and its handle is not created yet, which a capturing stream "
        "cannot do: call tgemmPrepare with this problem before the capture");
  if (cublasCreate(&cublas_) != CUBLAS_STATUS_SUCCESS) {
    cublas_ = nullptr;
    fail("cublasCreate failed");
  }
  return cublas_;
}

// cuBLAS (12.2 and later) takes its own workspace in stream order, which a capture records;
// only creating its handle must happen outside one.
void LibraryCalls::run_cublas(const GemmCall& call, cudaStream_t stream) {
  std::lock_guard lock(cublas_mutex_);
  cublasHandle_t handle = cublas_handle(stream);
  cublasSetStream(handle, stream);
  cublasStatus_t st = row_major_gemm(handle, call, CublasMath::matching);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED)
    throw TypeNotSupportedError(fmt::format("cuBLAS does not compute types {} either ({})",
                                            call.types.name(), cublasGetStatusString(st)));
  if (st != CUBLAS_STATUS_SUCCESS)
    throw ExecutionError(fmt::format("cublasGemmEx failed: {}", cublasGetStatusString(st)));
}

void LibraryCalls::grouped(const GroupedGemmCall& call, cudaStream_t stream) {
  std::lock_guard lock(cublas_mutex_);
  cublasHandle_t handle = cublas_handle(stream);
  cublasSetStream(handle, stream);
  const cublasStatus_t st = row_major_grouped_gemm(handle, call);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED)
    throw TypeNotSupportedError(fmt::format("cuBLAS does not compute types {} either ({})",
                                            call.types.name(), cublasGetStatusString(st)));
  if (st != CUBLAS_STATUS_SUCCESS)
    throw ExecutionError(
        fmt::format("cublasGemmGroupedBatchedEx failed: {}", cublasGetStatusString(st)));
}

// A tuned vendor best is the database's choice, served whatever the cuBLAS fallback says.
void LibraryCalls::run_vendor_call(const VendorCall& vendor, const Problem& problem,
                                   const GemmCall& call, cudaStream_t stream) {
  if (!vendor.lt) {
    gemm(problem, call, stream);
    return;
  }
  // Descriptors hold the leading dimensions: a call of the same key with others gets its own.
  std::unique_ptr<LtGemm> other;
  const LtGemm* lt = vendor.lt.get();
  if (problem.lda != vendor.problem.lda || problem.ldb != vendor.problem.ldb ||
      problem.ldc != vendor.problem.ldc || (call.d && call.ldd != problem.ldc)) {
    other = std::make_unique<LtGemm>(lt_handle_, problem, call.d ? call.ldd : 0);
    lt = other.get();
  }
  cudaError_t reserve_error = cudaSuccess;
  const cublasStatus_t status =
      run_lt(*lt, vendor.algo, call, stream,
             describe_vendor_call(vendor.config) + " for " + problem.key(), &reserve_error);
  if (reserve_error != cudaSuccess || status == CUBLAS_STATUS_NOT_SUPPORTED) {
    library_log().warn("tgemm: {} cannot run {} ({}); this call runs cuBLAS",
                       describe_vendor_call(vendor.config), problem.key(),
                       reserve_error != cudaSuccess ? cudaGetErrorString(reserve_error)
                                                    : cublasGetStatusString(status));
    gemm(problem, call, stream);
    return;
  }
  if (status != CUBLAS_STATUS_SUCCESS)
    throw ExecutionError(fmt::format("cublasLtMatmul failed: {}", cublasGetStatusString(status)));
}

cublasStatus_t LibraryCalls::run_lt(const LtGemm& lt, const LtReadyAlgo& algo, const GemmCall& call,
                                    cudaStream_t stream, const std::string& what,
                                    cudaError_t* reserve_error) {
  if (algo.workspace_bytes == 0) return lt.run(algo, call, nullptr, stream);
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const bool captured = stream_capturing(stream);
  cudaError_t unused = cudaSuccess;  // cuBLASLt reports through its status
  const Reservation reserved = workspace_.run(
      stream, algo.workspace_bytes, captured,
      [&](void* workspace) {
        status = lt.run(algo, call, workspace, stream);
        return cudaSuccess;
      },
      &unused);
  if (reserved.too_small) workspace_.check(reserved, algo.workspace_bytes, captured, what);
  *reserve_error = reserved.error;
  return status;
}

void LibraryCalls::gemm(const Problem& problem, const GemmCall& call, cudaStream_t stream) {
  if (needs_cublaslt(problem))
    run_epilogue_fallback(problem, call, stream);
  else
    run_cublas(call, stream);
}

const LibraryCalls::EpilogueFallback& LibraryCalls::epilogue_fallback(
    const Problem& problem, int64_t ldd, int64_t ldaux, std::optional<cudaStream_t> capture_check) {
  const std::string key = fmt::format("{}|{}.{}.{}.{}.{}", problem.key(), problem.lda, problem.ldb,
                                      problem.ldc, ldd, ldaux);
  std::lock_guard lock(calls_mutex_);
  if (auto it = fallbacks_.find(key); it != fallbacks_.end()) return *it->second;
  if (capture_check && stream_capturing(*capture_check))
    throw NotPreparedError(fmt::format(
        "{} is served by cuBLAS with an epilogue, which is not prepared and a capturing stream "
        "cannot prepare: call tgemmPrepare with this problem before the capture",
        problem.key()));
  auto fallback = std::make_unique<EpilogueFallback>();
  // cuBLASLt's aux needs a leading dimension of whole 8 elements.
  if (lt_epilogue(problem.epilogue) && (!problem.epilogue.aux || ldaux % 8 == 0)) {
    try {
      if (!lt_handle_ && cublasLtCreate(&lt_handle_) != CUBLAS_STATUS_SUCCESS)
        fail("cublasLtCreate failed");
      auto lt = std::make_unique<LtGemm>(lt_handle_, problem, ldd);
      // Without a workspace where cuBLASLt has such an algorithm (a call needs nothing more),
      // else with one (FP8 at large sizes has none without), reserved as a kernel's is.
      std::vector<LtAlgoConfig> algos = lt->heuristic(1, 0);
      if (algos.empty()) algos = lt->heuristic(1, kLtWorkspaceBytes);
      std::string why = "its heuristic has no algorithm";
      const std::optional<LtReadyAlgo> ready =
          algos.empty() ? std::nullopt : lt->ready(algos.front(), &why);
      if (!ready) fail("{}", why);
      fallback->lt = std::move(lt);
      fallback->algo = *ready;
    } catch (const std::exception& e) {
      if (problem.types.fp8())  // cuBLAS has no FP8 GEMM to fall back to
        throw NotSupportedError(fmt::format(
            "no tgemm kernel runs {} and cuBLASLt has no FP8 call for it either ({}; cuBLASLt's "
            "FP8 needs Hopper or Ada, K-major A and B (layout NT) and 16-byte aligned operands)",
            problem.key(), e.what()));
      library_log().info(
          "tgemm: cuBLASLt cannot apply epilogue {} to {} ({}); cuBLAS and a "
          "pass of the epilogue serve it",
          problem.epilogue.name(), problem.key(), e.what());
    }
  }
  if (!fallback->lt && problem.types.fp8())
    throw NotSupportedError(
        fmt::format("no tgemm kernel runs {} and cuBLASLt has no FP8 call with epilogue {}",
                    problem.key(), problem.epilogue.kind()));
  if (!fallback->lt) {
    const Epilogue& e = problem.epilogue;
    const DType bias = e.bias_f32 ? DType::f32 : problem.types.c;
    fallback->pass = std::make_unique<EpiloguePass>(e, problem.types.c, bias, arch_);
  }
  return *fallbacks_.emplace(key, std::move(fallback)).first->second;
}

// cuBLASLt's fused call where it has the epilogue, else three steps in stream order: C copied
// into a D apart (when beta reads it), cuBLAS's GEMM into D, our pass over D.
void LibraryCalls::run_epilogue_fallback(const Problem& problem, const GemmCall& call,
                                         cudaStream_t stream) {
  const int64_t ldd = problem.epilogue.separate_d ? call.ldd : call.ldc;
  const EpilogueFallback& fallback = epilogue_fallback(problem, ldd, call.ldaux, stream);
  if (fallback.lt && problem.types.fp8() && !lt_scales_aligned(call))
    throw NotSupportedError(fmt::format(
        "{} is served by cuBLASLt's FP8 call, which needs 16-byte aligned scale pointers",
        problem.key()));
  if (fallback.lt) {
    cudaError_t reserve_error = cudaSuccess;
    const cublasStatus_t status = run_lt(*fallback.lt, fallback.algo, call, stream,
                                         "cuBLASLt's call for " + problem.key(), &reserve_error);
    if (reserve_error != cudaSuccess)
      throw ExecutionError(fmt::format("cuBLASLt's call for {} needs {} bytes of workspace: {}",
                                       problem.key(), fallback.algo.workspace_bytes,
                                       cudaGetErrorString(reserve_error)));
    if (status != CUBLAS_STATUS_SUCCESS)
      throw ExecutionError(fmt::format("cublasLtMatmul with epilogue {} failed: {}",
                                       problem.epilogue.name(), cublasGetStatusString(status)));
    return;
  }
  GemmCall into_d = call;
  into_d.epilogue = Epilogue{};
  if (problem.epilogue.separate_d) {
    const size_t element = size_t(element_bytes(call.types.c));
    if (call.beta != 0.0f) {
      const cudaError_t err = cudaMemcpy2DAsync(
          call.d, size_t(call.ldd) * element, call.c, size_t(call.ldc) * element,
          size_t(call.n) * element, size_t(call.m), cudaMemcpyDeviceToDevice, stream);
      if (err != cudaSuccess)
        throw ExecutionError(fmt::format("copying C into D failed: {}", cudaGetErrorString(err)));
    }
    into_d.c = call.d;
    into_d.ldc = call.ldd;
  }
  run_cublas(into_d, stream);
  const cudaError_t err = fallback.pass->launch(call.m, call.n, make_epilogue_params(call), stream);
  if (err != cudaSuccess)
    throw ExecutionError(fmt::format("the pass of epilogue {} failed: {}", problem.epilogue.name(),
                                     cudaGetErrorString(err)));
}

void LibraryCalls::prepare(const Problem& problem, int64_t ldd, int64_t ldaux) {
  {
    std::lock_guard lock(cublas_mutex_);
    cublas_handle(std::nullopt);
  }
  if (!needs_cublaslt(problem)) return;
  const EpilogueFallback& fallback = epilogue_fallback(problem, ldd, ldaux, std::nullopt);
  if (fallback.lt)
    workspace_.hold(fallback.algo.workspace_bytes, "cuBLASLt's call for " + problem.key());
}

}  // namespace tgemm
