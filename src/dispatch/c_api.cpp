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
                          const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  if (!valid_op(op_a) || !valid_op(op_b))
    throw tgemm::InvalidValueError("op_a and op_b must be TGEMM_OP_N or TGEMM_OP_T");
  return tgemm::GemmCall{op_a == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N,
                         op_b == TGEMM_OP_T ? tgemm::Op::T : tgemm::Op::N,
                         m,
                         n,
                         k,
                         1.0f,
                         0.0f,
                         A,
                         lda,
                         B,
                         ldb,
                         C,
                         ldc};
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
    handle->dispatcher->sgemm(call, stream);
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
  }
  return "unknown tgemmStatus_t";
}

const char* tgemmGetLastError(void) { return last_error.c_str(); }

}  // extern "C"
