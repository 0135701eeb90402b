// The C API: argument checks and status codes around the Dispatcher; no exception and no
// abort ever crosses this boundary.
#include <spdlog/spdlog.h>

#include <string>

#include "src/dispatch/dispatcher.h"
#include "tgemm/tgemm_c.h"

struct tgemmContext {
  std::unique_ptr<tgemm::Dispatcher> dispatcher;
};

namespace {

thread_local std::string last_error;

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
  } catch (const std::exception& e) {
    last_error = e.what();
    return TGEMM_STATUS_INTERNAL_ERROR;
  } catch (...) {
    last_error = "unknown error";
    return TGEMM_STATUS_INTERNAL_ERROR;
  }
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
  }
  throw tgemm::InvalidValueError(std::string(name) +
                                 " must be TGEMM_R_32F, TGEMM_R_16F or TGEMM_R_16BF");
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

}  // namespace

extern "C" {

tgemmStatus_t tgemmCreate(tgemmHandle_t* handle, const char* db_path) {
  if (!handle) {
    last_error = "handle is a null pointer";
    return TGEMM_STATUS_INVALID_VALUE;
  }
  *handle = nullptr;
  return guarded([&] {
    auto context = std::make_unique<tgemmContext>();
    context->dispatcher = std::make_unique<tgemm::Dispatcher>(
        tgemm::DispatcherOptions{db_path ? db_path : "", {}, true});
    *handle = context.release();
  });
}

tgemmStatus_t tgemmDestroy(tgemmHandle_t handle) {
  if (!handle) return TGEMM_STATUS_NOT_INITIALIZED;
  delete handle;
  return TGEMM_STATUS_SUCCESS;
}

tgemmStatus_t tgemmSgemm(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                         int n, int k, const float* alpha, const float* A, int lda, const float* B,
                         int ldb, const float* beta, float* C, int ldc, cudaStream_t stream) {
  if (!handle) {
    last_error = "null handle (call tgemmCreate first)";
    return TGEMM_STATUS_NOT_INITIALIZED;
  }
  return guarded([&] {
    if (!alpha || !beta) throw tgemm::InvalidValueError("alpha and beta must not be null");
    tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
    call.alpha = *alpha;
    call.beta = *beta;
    handle->dispatcher->gemm(call, stream);
  });
}

tgemmStatus_t tgemmGemmEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                          int n, int k, const void* alpha, const void* A, tgemmDataType_t Atype,
                          int lda, const void* B, tgemmDataType_t Btype, int ldb, const void* beta,
                          void* C, tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                          cudaStream_t stream) {
  if (!handle) {
    last_error = "null handle (call tgemmCreate first)";
    return TGEMM_STATUS_NOT_INITIALIZED;
  }
  return guarded([&] {
    if (!alpha || !beta) throw tgemm::InvalidValueError("alpha and beta must not be null");
    tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
    call.types.a = element_type(Atype, "Atype");
    call.types.b = element_type(Btype, "Btype");
    call.types.c = element_type(Ctype, "Ctype");
    call.types.compute = compute_type(computeType);
    call.alpha = *static_cast<const float*>(alpha);
    call.beta = *static_cast<const float*>(beta);
    handle->dispatcher->gemm(call, stream);
  });
}

tgemmStatus_t tgemmSetMathMode(tgemmHandle_t handle, tgemmMath_t mode) {
  if (!handle) {
    last_error = "null handle (call tgemmCreate first)";
    return TGEMM_STATUS_NOT_INITIALIZED;
  }
  return guarded([&] {
    if (mode != TGEMM_DEFAULT_MATH && mode != TGEMM_3XTF32_MATH)
      throw tgemm::InvalidValueError("mode must be TGEMM_DEFAULT_MATH or TGEMM_3XTF32_MATH");
    handle->dispatcher->set_math_mode(mode == TGEMM_3XTF32_MATH ? tgemm::MathMode::f32_via_3xtf32
                                                                : tgemm::MathMode::standard);
  });
}

tgemmStatus_t tgemmGetMathMode(tgemmHandle_t handle, tgemmMath_t* mode) {
  if (!handle) {
    last_error = "null handle (call tgemmCreate first)";
    return TGEMM_STATUS_NOT_INITIALIZED;
  }
  return guarded([&] {
    if (!mode) throw tgemm::InvalidValueError("mode is a null pointer");
    *mode = handle->dispatcher->math_mode() == tgemm::MathMode::f32_via_3xtf32 ? TGEMM_3XTF32_MATH
                                                                               : TGEMM_DEFAULT_MATH;
  });
}

tgemmStatus_t tgemmSetCublasFallback(tgemmHandle_t handle, int enabled) {
  if (!handle) return TGEMM_STATUS_NOT_INITIALIZED;
  handle->dispatcher->set_cublas_fallback(enabled != 0);
  return TGEMM_STATUS_SUCCESS;
}

tgemmStatus_t tgemmGetSelection(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const float* A, int lda, const float* B,
                                int ldb, float* C, int ldc, tgemmSelection_t* selection) {
  if (!handle) return TGEMM_STATUS_NOT_INITIALIZED;
  return guarded([&] {
    if (!selection) throw tgemm::InvalidValueError("selection is a null pointer");
    tgemm::GemmCall call = make_call(op_a, op_b, m, n, k, A, lda, B, ldb, C, ldc);
    *selection = tgemmSelection_t(int(handle->dispatcher->selection(call)));
  });
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
  }
  return "unknown tgemmStatus_t";
}

const char* tgemmGetLastError(void) { return last_error.c_str(); }

}  // extern "C"
