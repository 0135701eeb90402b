/* tgemm C API: a cuBLAS-like GEMM that launches the kernel tuned for each problem shape.
 *
 * Storage is ROW-MAJOR:  C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C,
 * with element (i, j) of a matrix X at X[i * ldX + j]. op(X) is X for TGEMM_OP_N and X^T for
 * TGEMM_OP_T; A is stored m x k (N) or k x m (T), B is stored k x n (N) or n x k (T).
 * Column-major callers (cuBLAS order) compute C^T = op(B)^T op(A)^T instead: swap the operands
 * and the sizes, keeping each op:  tgemmSgemm(h, opB, opA, n, m, k, &alpha, B, ldb, A, lda,
 * &beta, C, ldc, stream)  equals  cublasSgemm(h, opA, opB, m, n, k, ...) on column-major data.
 *
 * Every call returns a status and never aborts the caller. m, n or k == 0 is valid, as in
 * cuBLAS (k == 0 scales C by beta). Calls are thread-safe: any number of host threads and
 * streams may share a handle; each call runs on the device current on the calling thread.
 */
#ifndef TGEMM_TGEMM_C_H_
#define TGEMM_TGEMM_C_H_

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TGEMM_STATUS_SUCCESS = 0,
  TGEMM_STATUS_NOT_INITIALIZED = 1,  /* null or destroyed handle */
  TGEMM_STATUS_INVALID_VALUE = 2,    /* bad size, leading dimension, pointer or op */
  TGEMM_STATUS_NO_DEVICE = 3,        /* no CUDA driver or device */
  TGEMM_STATUS_NOT_SUPPORTED = 4,    /* no kernel can run the problem (cuBLAS fallback off) */
  TGEMM_STATUS_EXECUTION_FAILED = 5, /* the launch failed; see tgemmGetLastError */
  TGEMM_STATUS_INTERNAL_ERROR = 6
} tgemmStatus_t;

typedef enum { TGEMM_OP_N = 0, TGEMM_OP_T = 1 } tgemmOperation_t;

/* How the kernel for a problem was chosen. */
typedef enum {
  TGEMM_SELECTION_EXACT = 0,   /* tuned for this very problem on this GPU */
  TGEMM_SELECTION_NEAREST = 1, /* the best kernel of the nearest tuned shape */
  TGEMM_SELECTION_DEFAULT = 2, /* the per-arch default shipped with tgemm */
  TGEMM_SELECTION_CUBLAS = 3   /* cuBLAS, the last resort */
} tgemmSelection_t;

typedef struct tgemmContext* tgemmHandle_t;

/* Opens the tuning database read-only: db_path, else $TGEMM_DB, else "tgemm.db". A missing
 * or unreadable database is not an error: the handle works through the defaults and says
 * so once in the log. */
tgemmStatus_t tgemmCreate(tgemmHandle_t* handle, const char* db_path);
tgemmStatus_t tgemmDestroy(tgemmHandle_t handle);

tgemmStatus_t tgemmSgemm(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                         int n, int k, const float* alpha, const float* A, int lda, const float* B,
                         int ldb, const float* beta, float* C, int ldc, cudaStream_t stream);

/* 0 turns the cuBLAS last resort off (then a problem no kernel can run is NOT_SUPPORTED). */
tgemmStatus_t tgemmSetCublasFallback(tgemmHandle_t handle, int enabled);

/* Which path tgemmSgemm takes for this problem (resolving and caching it if needed). */
tgemmStatus_t tgemmGetSelection(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const float* A, int lda, const float* B,
                                int ldb, float* C, int ldc, tgemmSelection_t* selection);

const char* tgemmGetStatusString(tgemmStatus_t status);
/* The message of the last failure on this thread (empty when none). */
const char* tgemmGetLastError(void);

#ifdef __cplusplus
}
#endif

#endif /* TGEMM_TGEMM_C_H_ */
