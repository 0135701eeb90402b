// The C API: argument checks and status codes around the Dispatcher; no exception and no
// abort ever crosses this boundary.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/dispatch/dispatcher.h"
#include "src/dispatch/problem_recorder.h"
#include "tgemm/tgemm_c.h"

// Never defined: a tgemmHandle_t is a registry token (see below), not a pointer to memory.
struct tgemmContext;

namespace {

thread_local std::string last_error;

// The live handles. A handle is a token that is never reused (not an address, which a later
// tgemmCreate could get again), so a destroyed handle stays unknown forever. A call holds
// its Dispatcher by shared_ptr, so a tgemmDestroy racing it frees it only when it returns.
class HandleRegistry {
 public:
  tgemmHandle_t add(std::shared_ptr<tgemm::Dispatcher> dispatcher) {
    std::lock_guard lock(mutex_);
    // Multiples of 16 from 16 up: never null and never a small integer.
    const auto handle = reinterpret_cast<tgemmHandle_t>(uintptr_t(++count_) << 4);
    live_.emplace(handle, std::move(dispatcher));
    return handle;
  }
  std::shared_ptr<tgemm::Dispatcher> find(tgemmHandle_t handle) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }
  // Removes the handle first, so no new call can start on it; the caller drops the last
  // reference outside the lock (destroying a Dispatcher may take a while).
  std::shared_ptr<tgemm::Dispatcher> remove(tgemmHandle_t handle) {
    std::lock_guard lock(mutex_);
    auto node = live_.extract(handle);
    return node.empty() ? nullptr : std::move(node.mapped());
  }

 private:
  std::mutex mutex_;
  uint64_t count_ = 0;
  std::unordered_map<tgemmHandle_t, std::shared_ptr<tgemm::Dispatcher>> live_;
};

// Leaked on purpose: handles destroyed from other static destructors must still find it.
HandleRegistry& registry() {
  static auto* instance = new HandleRegistry;
  return *instance;
}

// Runs `body`, turning each error kind into its status and remembering the message.
template <typename Body>
tgemmStatus_t guarded(Body&& body) {
  try {
    body();
    last_error.clear();
    return TGEMM_STATUS_SUCCESS;
  } catch (const tgemm::InvalidValueError& e) {
    last_error = e.what();
    return TGEMM_STATUS_INVALID_VALUE;
  } catch (const tgemm::NoDeviceError& e) {
    last_error = e.what();
    return TGEMM_STATUS_NO_DEVICE;
  } catch (const tgemm::NotSupportedError& e) {
    last_error = e.what();
    return TGEMM_STATUS_NOT_SUPPORTED;
  } catch (const tgemm::TypeNotSupportedError& e) {
    last_error = e.what();
    return TGEMM_STATUS_TYPE_NOT_SUPPORTED;
  } catch (const tgemm::ExecutionError& e) {
    last_error = e.what();
    return TGEMM_STATUS_EXECUTION_FAILED;
  } catch (const tgemm::NotPreparedError& e) {
    last_error = e.what();
    return TGEMM_STATUS_NOT_PREPARED;
  } catch (const tgemm::WorkspaceTooSmallError& e) {
    last_error = e.what();
    return TGEMM_STATUS_WORKSPACE_TOO_SMALL;
  } catch (const std::exception& e) {
    last_error = e.what();
    return TGEMM_STATUS_INTERNAL_ERROR;
  } catch (...) {
    last_error = "unknown error";
    return TGEMM_STATUS_INTERNAL_ERROR;
  }
}

// NOT_INITIALIZED, with a message naming the function, for a handle that is not live.
tgemmStatus_t not_initialized(const char* function, tgemmHandle_t handle) {
  last_error = handle ? fmt::format(
                            "{}: handle {} is not live: destroyed, or never returned by "
                            "tgemmCreate",
                            function, static_cast<const void*>(handle))
                      : fmt::format("{}: null handle (call tgemmCreate first)", function);
  return TGEMM_STATUS_NOT_INITIALIZED;
}

// Runs `body` on the handle's Dispatcher, guarded; NOT_INITIALIZED when the handle is not live.
template <typename Body>
tgemmStatus_t with_handle(const char* function, tgemmHandle_t handle, Body&& body) {
  std::shared_ptr<tgemm::Dispatcher> dispatcher = handle ? registry().find(handle) : nullptr;
  if (!dispatcher) return not_initialized(function, handle);
  return guarded([&] { body(*dispatcher); });
}

bool valid_op(tgemmOperation_t op) { return op == TGEMM_OP_N || op == TGEMM_OP_T; }

tgemm::GemmCall make_call(tgemmOperation_t op_a, tgemmOperation_t op_b, int m, int n, int k,
                          const void* A, int lda, const void* B, int ldb, void* C, int ldc) {
  if (!valid_op(op_a) || !valid_op(op_b))
    throw tgemm::InvalidValueError("op_a and op_b must be TGEMM_OP_N or TGEMM_OP_T");
  tgemm::GemmCall call;
  call.op_a = op_a == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N;
  call.op_b = op_b == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N;
  call.m = m;
  call.n = n;
  call.k = k;
  call.a = A;
  call.lda = lda;
  call.b = B;
  call.ldb = ldb;
  call.c = C;
  call.ldc = ldc;
  return call;
}

tgemm::DType element_type(tgemmDataType_t type, const char* name) {
  switch (type) {
    case TGEMM_R_32F:
      return tgemm::DType::f32;
    case TGEMM_R_16F:
      return tgemm::DType::f16;
    case TGEMM_R_16BF:
      return tgemm::DType::bf16;
    case TGEMM_R_8F_E4M3:
      return tgemm::DType::e4m3;
    case TGEMM_R_8F_E5M2:
      return tgemm::DType::e5m2;
  }
  throw tgemm::InvalidValueError(
      std::string(name) +
      " must be TGEMM_R_32F, TGEMM_R_16F, TGEMM_R_16BF, TGEMM_R_8F_E4M3 or TGEMM_R_8F_E5M2");
}

tgemm::ComputeType compute_type(tgemmComputeType_t type) {
  switch (type) {
    case TGEMM_COMPUTE_32F:
      return tgemm::ComputeType::f32;
    case TGEMM_COMPUTE_32F_FAST_TF32:
      return tgemm::ComputeType::tf32;
    case TGEMM_COMPUTE_32F_3XTF32:
      return tgemm::ComputeType::f32x3;
  }
  throw tgemm::InvalidValueError(
      "computeType must be TGEMM_COMPUTE_32F, TGEMM_COMPUTE_32F_FAST_TF32 or "
      "TGEMM_COMPUTE_32F_3XTF32");
}

// tgemmGemmEx's call: its types checked, alpha and beta read.
tgemm::GemmCall typed_call(tgemmOperation_t op_a, tgemmOperation_t op_b, int m, int n, int k,
                           const void* alpha, const void* A, tgemmDataType_t Atype, int lda,
                           const void* B, tgemmDataType_t Btype, int ldb, const void* beta, void* C,
                           tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType) {
  if (!alpha || !beta) throw tgemm::InvalidValueError("alpha and beta must not be null");
  tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
  call.types.a = element_type(Atype, "Atype");
  call.types.b = element_type(Btype, "Btype");
  call.types.c = element_type(Ctype, "Ctype");
  call.types.compute = compute_type(computeType);
  call.alpha = *static_cast<const float*>(alpha);
  call.beta = *static_cast<const float*>(beta);
  return call;
}

static_assert(int(tgemm::Activation::relu) == TGEMM_ACTIVATION_RELU &&
                  int(tgemm::Activation::gelu) == TGEMM_ACTIVATION_GELU &&
                  int(tgemm::Activation::gelu_erf) == TGEMM_ACTIVATION_GELU_ERF &&
                  int(tgemm::Activation::silu) == TGEMM_ACTIVATION_SILU &&
                  int(tgemm::BiasAlong::n) == TGEMM_BIAS_ALONG_N &&
                  int(tgemm::BiasAlong::m) == TGEMM_BIAS_ALONG_M,
              "tgemm_c.h's epilogue enums are the library's");

// tgemmGemmEpilogueEx's epilogue: its enums checked (the rest is with_epilogue's and the
// Dispatcher's).
tgemm::EpilogueArgs epilogue_args(const tgemmEpilogue_t* e) {
  if (!e) throw tgemm::InvalidValueError("epilogue must not be null (tgemmGemmEx has none)");
  tgemm::EpilogueArgs args;
  const int activation = e->activation, along = e->biasAlong;  // ints: any value may arrive
  if (activation < TGEMM_ACTIVATION_NONE || activation > TGEMM_ACTIVATION_SILU)
    throw tgemm::InvalidValueError(
        "epilogue->activation must be TGEMM_ACTIVATION_NONE, _RELU, _GELU, _GELU_ERF or _SILU");
  if (along < TGEMM_BIAS_NONE || along > TGEMM_BIAS_ALONG_M)
    throw tgemm::InvalidValueError(
        "epilogue->biasAlong must be TGEMM_BIAS_NONE, TGEMM_BIAS_ALONG_N or TGEMM_BIAS_ALONG_M");
  // The enums' values are the library's (tgemm_c.h lists them in the same order).
  args.activation = tgemm::Activation(activation);
  args.bias_along = tgemm::BiasAlong(along);
  args.bias = e->bias;
  if (e->biasAlong != TGEMM_BIAS_NONE) args.bias_type = element_type(e->biasType, "biasType");
  args.d = e->D;
  args.ldd = e->ldd;
  args.aux = e->aux;
  args.ldaux = e->ldaux;
  return args;
}

// tgemmGemmScaledEx's call: FP8 types and both scales.
tgemm::GemmCall with_scales(tgemm::GemmCall call, const tgemmScales_t* scales) {
  if (!call.types.fp8())
    throw tgemm::InvalidValueError(
        fmt::format("scales apply to FP8 inputs (Atype and Btype TGEMM_R_8F_E4M3 or _E5M2), not {}",
                    call.types.name()));
  if (!scales || !scales->scaleA || !scales->scaleB)
    throw tgemm::InvalidValueError(
        "scales, scales->scaleA and scales->scaleB must not be null (tgemmGemmEx computes FP8 "
        "unscaled)");
  if (scales->mode != TGEMM_SCALE_TENSOR && scales->mode != TGEMM_SCALE_ROWWISE)
    throw tgemm::InvalidValueError(
        fmt::format("scales->mode = {} is neither TGEMM_SCALE_TENSOR nor TGEMM_SCALE_ROWWISE",
                    int(scales->mode)));
  call.scale_a = scales->scaleA;
  call.scale_b = scales->scaleB;
  call.epilogue.rowwise_scales = scales->mode == TGEMM_SCALE_ROWWISE;
  return call;
}

// tgemmGemmGroupedBatchedEx's call: its host arrays present, ops and types checked, the groups
// read (their sizes' checks are the Dispatcher's, as for a call's).
struct GroupedArrays {
  const tgemmOperation_t *op_a, *op_b;
  const int *m, *n, *k;
  const void* alpha;
  const int* lda;
  const int* ldb;
  const void* beta;
  const int* ldc;
  const int* size;
};
tgemm::GroupedGemmCall grouped_call(const GroupedArrays& x, int group_count) {
  if (group_count < 0)
    throw tgemm::InvalidValueError(fmt::format("group_count = {} is negative", group_count));
  tgemm::GroupedGemmCall call;
  if (group_count == 0) return call;
  if (!x.op_a || !x.op_b || !x.m || !x.n || !x.k || !x.alpha || !x.lda || !x.ldb || !x.beta ||
      !x.ldc || !x.size)
    throw tgemm::InvalidValueError(
        "op_a_array, op_b_array, m_array, n_array, k_array, alpha_array, lda_array, ldb_array, "
        "beta_array, ldc_array and group_size must not be null");
  const auto* alpha = static_cast<const float*>(x.alpha);
  const auto* beta = static_cast<const float*>(x.beta);
  for (int g = 0; g < group_count; ++g) {
    if (!valid_op(x.op_a[g]) || !valid_op(x.op_b[g]))
      throw tgemm::InvalidValueError(
          fmt::format("op_a_array[{0}] and op_b_array[{0}] must be TGEMM_OP_N or TGEMM_OP_T", g));
    call.groups.push_back({x.op_a[g] == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N,
                           x.op_b[g] == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N, x.m[g], x.n[g],
                           x.k[g], alpha[g], beta[g], x.lda[g], x.ldb[g], x.ldc[g], x.size[g]});
  }
  return call;
}

// The request of one tgemmProblem_t (its checks are the Dispatcher's, as for a call's).
tgemm::PrepareRequest prepare_request(const tgemmProblem_t& p) {
  tgemm::PrepareRequest request;
  request.call =
      make_call(p.op_a, p.op_b, p.m, p.n, p.k, nullptr, p.lda, nullptr, p.ldb, nullptr, p.ldc);
  request.call.types.a = element_type(p.Atype, "Atype");
  request.call.types.b = element_type(p.Btype, "Btype");
  request.call.types.c = element_type(p.Ctype, "Ctype");
  request.call.types.compute = compute_type(p.computeType);
  const auto alignment = [](const char* name, int bytes) {
    if (bytes < 0) throw tgemm::InvalidValueError(fmt::format("{} = {} is negative", name, bytes));
    return bytes == 0 ? size_t(256) : size_t(bytes);
  };
  request.align_a = alignment("Aalignment", p.Aalignment);
  request.align_b = alignment("Balignment", p.Balignment);
  request.align_c = alignment("Calignment", p.Calignment);
  return request;
}

}  // namespace

extern "C" {

tgemmStatus_t tgemmCreate(tgemmHandle_t* handle, const char* db_path) {
  if (!handle) {
    last_error = "tgemmCreate: handle is a null pointer";
    return TGEMM_STATUS_INVALID_VALUE;
  }
  *handle = nullptr;
  return guarded([&] {
    auto dispatcher = std::make_shared<tgemm::Dispatcher>(
        tgemm::DispatcherOptions{db_path ? db_path : "", {}, true});
    *handle = registry().add(std::move(dispatcher));
  });
}

tgemmStatus_t tgemmDestroy(tgemmHandle_t handle) {
  std::shared_ptr<tgemm::Dispatcher> dispatcher = handle ? registry().remove(handle) : nullptr;
  if (!dispatcher) return not_initialized("tgemmDestroy", handle);
  // Calls still running on other threads hold their own reference; the last one frees it.
  return guarded([&] { dispatcher.reset(); });
}

tgemmStatus_t tgemmSgemm(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                         int n, int k, const float* alpha, const float* A, int lda, const float* B,
                         int ldb, const float* beta, float* C, int ldc, cudaStream_t stream) {
  return with_handle("tgemmSgemm", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (!alpha || !beta) throw tgemm::InvalidValueError("alpha and beta must not be null");
    tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
    call.alpha = *alpha;
    call.beta = *beta;
    dispatcher.gemm(call, stream);
  });
}

tgemmStatus_t tgemmGemmEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                          int n, int k, const void* alpha, const void* A, tgemmDataType_t Atype,
                          int lda, const void* B, tgemmDataType_t Btype, int ldb, const void* beta,
                          void* C, tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                          cudaStream_t stream) {
  return with_handle("tgemmGemmEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    dispatcher.gemm(typed_call(op_a, op_b, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                               Ctype, ldc, computeType),
                    stream);
  });
}

tgemmStatus_t tgemmGemmEpilogueEx(tgemmHandle_t handle, tgemmOperation_t op_a,
                                  tgemmOperation_t op_b, int m, int n, int k, const void* alpha,
                                  const void* A, tgemmDataType_t Atype, int lda, const void* B,
                                  tgemmDataType_t Btype, int ldb, const void* beta, void* C,
                                  tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                                  const tgemmEpilogue_t* epilogue, cudaStream_t stream) {
  return with_handle("tgemmGemmEpilogueEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    const tgemm::GemmCall call = typed_call(op_a, op_b, m, n, k, alpha, A, Atype, lda, B, Btype,
                                            ldb, beta, C, Ctype, ldc, computeType);
    dispatcher.gemm(tgemm::with_epilogue(call, epilogue_args(epilogue)), stream);
  });
}

tgemmStatus_t tgemmGemmScaledEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const void* alpha, const void* A,
                                tgemmDataType_t Atype, int lda, const void* B,
                                tgemmDataType_t Btype, int ldb, const void* beta, void* C,
                                tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                                const tgemmScales_t* scales, const tgemmEpilogue_t* epilogue,
                                cudaStream_t stream) {
  return with_handle("tgemmGemmScaledEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    const tgemm::GemmCall call =
        with_scales(typed_call(op_a, op_b, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                               Ctype, ldc, computeType),
                    scales);
    dispatcher.gemm(epilogue ? tgemm::with_epilogue(call, epilogue_args(epilogue)) : call, stream);
  });
}

tgemmStatus_t tgemmGemmStridedBatchedEx(tgemmHandle_t handle, tgemmOperation_t op_a,
                                        tgemmOperation_t op_b, int m, int n, int k,
                                        const void* alpha, const void* A, tgemmDataType_t Atype,
                                        int lda, long long strideA, const void* B,
                                        tgemmDataType_t Btype, int ldb, long long strideB,
                                        const void* beta, void* C, tgemmDataType_t Ctype, int ldc,
                                        long long strideC, int batchCount,
                                        tgemmComputeType_t computeType, cudaStream_t stream) {
  return with_handle("tgemmGemmStridedBatchedEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    tgemm::GemmCall call = typed_call(op_a, op_b, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                                      beta, C, Ctype, ldc, computeType);
    call.batch = batchCount;
    call.stride_a = strideA;
    call.stride_b = strideB;
    call.stride_c = strideC;
    dispatcher.gemm(call, stream);
  });
}

tgemmStatus_t tgemmGemmBatchedEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                 int m, int n, int k, const void* alpha, const void* const Aarray[],
                                 tgemmDataType_t Atype, int lda, const void* const Barray[],
                                 tgemmDataType_t Btype, int ldb, const void* beta,
                                 void* const Carray[], tgemmDataType_t Ctype, int ldc,
                                 int batchCount, tgemmComputeType_t computeType,
                                 cudaStream_t stream) {
  return with_handle("tgemmGemmBatchedEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    tgemm::GemmCall call =
        typed_call(op_a, op_b, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,
                   const_cast<void**>(Carray), Ctype, ldc, computeType);
    call.batch = batchCount;
    call.batch_pointers = true;
    dispatcher.gemm(call, stream);
  });
}

tgemmStatus_t tgemmGemmGroupedBatchedEx(
    tgemmHandle_t handle, const tgemmOperation_t op_a_array[], const tgemmOperation_t op_b_array[],
    const int m_array[], const int n_array[], const int k_array[], const void* alpha_array,
    const void* const Aarray[], tgemmDataType_t Atype, const int lda_array[],
    const void* const Barray[], tgemmDataType_t Btype, const int ldb_array[],
    const void* beta_array, void* const Carray[], tgemmDataType_t Ctype, const int ldc_array[],
    int group_count, const int group_size[], tgemmComputeType_t computeType, cudaStream_t stream) {
  return with_handle("tgemmGemmGroupedBatchedEx", handle, [&](tgemm::Dispatcher& dispatcher) {
    tgemm::GroupedGemmCall call =
        grouped_call({op_a_array, op_b_array, m_array, n_array, k_array, alpha_array, lda_array,
                      ldb_array, beta_array, ldc_array, group_size},
                     group_count);
    call.types.a = element_type(Atype, "Atype");
    call.types.b = element_type(Btype, "Btype");
    call.types.c = element_type(Ctype, "Ctype");
    call.types.compute = compute_type(computeType);
    call.a = Aarray;
    call.b = Barray;
    call.c = Carray;
    dispatcher.gemm_grouped(call, stream);
  });
}

tgemmStatus_t tgemmPrepare(tgemmHandle_t handle, const tgemmProblem_t* problems, int count) {
  return with_handle("tgemmPrepare", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (count < 0) throw tgemm::InvalidValueError(fmt::format("count = {} is negative", count));
    if (count > 0 && !problems) throw tgemm::InvalidValueError("problems is a null pointer");
    std::vector<tgemm::PrepareRequest> requests;
    for (int i = 0; i < count; ++i) {
      try {
        requests.push_back(prepare_request(problems[i]));
      } catch (const tgemm::InvalidValueError& e) {
        throw tgemm::InvalidValueError(fmt::format("problems[{}]: {}", i, e.what()));
      }
    }
    dispatcher.prepare(requests);
  });
}

tgemmStatus_t tgemmSetWorkspace(tgemmHandle_t handle, void* workspace, size_t bytes) {
  return with_handle("tgemmSetWorkspace", handle, [&](tgemm::Dispatcher& dispatcher) {
    dispatcher.set_workspace(workspace, bytes);
  });
}

tgemmStatus_t tgemmGetWorkspaceSize(tgemmHandle_t handle, size_t* bytes) {
  return with_handle("tgemmGetWorkspaceSize", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (!bytes) throw tgemm::InvalidValueError("bytes is a null pointer");
    *bytes = dispatcher.needed_workspace_bytes();
  });
}

tgemmStatus_t tgemmSetMathMode(tgemmHandle_t handle, tgemmMath_t mode) {
  return with_handle("tgemmSetMathMode", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (mode != TGEMM_DEFAULT_MATH && mode != TGEMM_3XTF32_MATH)
      throw tgemm::InvalidValueError("mode must be TGEMM_DEFAULT_MATH or TGEMM_3XTF32_MATH");
    dispatcher.set_math_mode(mode == TGEMM_3XTF32_MATH ? tgemm::MathMode::f32_via_3xtf32
                                                       : tgemm::MathMode::standard);
  });
}

tgemmStatus_t tgemmGetMathMode(tgemmHandle_t handle, tgemmMath_t* mode) {
  return with_handle("tgemmGetMathMode", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (!mode) throw tgemm::InvalidValueError("mode is a null pointer");
    *mode = dispatcher.math_mode() == tgemm::MathMode::f32_via_3xtf32 ? TGEMM_3XTF32_MATH
                                                                      : TGEMM_DEFAULT_MATH;
  });
}

tgemmStatus_t tgemmSetCublasFallback(tgemmHandle_t handle, int enabled) {
  return with_handle("tgemmSetCublasFallback", handle, [&](tgemm::Dispatcher& dispatcher) {
    dispatcher.set_cublas_fallback(enabled != 0);
  });
}

tgemmStatus_t tgemmGetSelection(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const float* A, int lda, const float* B,
                                int ldb, float* C, int ldc, tgemmSelection_t* selection) {
  return with_handle("tgemmGetSelection", handle, [&](tgemm::Dispatcher& dispatcher) {
    if (!selection) throw tgemm::InvalidValueError("selection is a null pointer");
    tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
    *selection = tgemmSelection_t(int(dispatcher.selection(call)));
  });
}

tgemmStatus_t tgemmSetRecordFile(const char* path) {
  return guarded([&] {
    try {
      tgemm::problem_recorder().start(path ? path : "");
    } catch (const tgemm::Error& e) {
      throw tgemm::InvalidValueError(fmt::format("tgemmSetRecordFile: {}", e.what()));
    }
  });
}

const char* tgemmGetRecordFile(void) {
  thread_local std::string path;
  try {
    path = tgemm::problem_recorder().path();
  } catch (...) {
    path.clear();
  }
  return path.c_str();
}

const char* tgemmGetStatusString(tgemmStatus_t status) {
  switch (status) {
    case TGEMM_STATUS_SUCCESS:
      return "TGEMM_STATUS_SUCCESS";
    case TGEMM_STATUS_NOT_INITIALIZED:
      return "TGEMM_STATUS_NOT_INITIALIZED";
    case TGEMM_STATUS_INVALID_VALUE:
      return "TGEMM_STATUS_INVALID_VALUE";
    case TGEMM_STATUS_NO_DEVICE:
      return "TGEMM_STATUS_NO_DEVICE";
    case TGEMM_STATUS_NOT_SUPPORTED:
      return "TGEMM_STATUS_NOT_SUPPORTED";
    case TGEMM_STATUS_EXECUTION_FAILED:
      return "TGEMM_STATUS_EXECUTION_FAILED";
    case TGEMM_STATUS_INTERNAL_ERROR:
      return "TGEMM_STATUS_INTERNAL_ERROR";
    case TGEMM_STATUS_TYPE_NOT_SUPPORTED:
      return "TGEMM_STATUS_TYPE_NOT_SUPPORTED";
    case TGEMM_STATUS_NOT_PREPARED:
      return "TGEMM_STATUS_NOT_PREPARED";
    case TGEMM_STATUS_WORKSPACE_TOO_SMALL:
      return "TGEMM_STATUS_WORKSPACE_TOO_SMALL";
  }
  return "unknown tgemmStatus_t";
}

const char* tgemmGetLastError(void) { return last_error.c_str(); }

}  // extern "C"
