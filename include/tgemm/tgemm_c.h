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
 * cuBLAS (k == 0 scales C by beta); m, n, k and the leading dimensions are ints, as the
 * kernels index them. Calls are thread-safe: any number of host threads may share a handle;
 * each call runs on the device current on the calling thread. Calls may use any streams: the
 * few kernels that keep state between calls in the handle (a workspace, per-call counters) are
 * run in turn across streams, each after the one before it.
 *
 * CUDA graphs: a call on a stream being captured (any capture mode) does nothing a capture
 * forbids; it only launches kernels (or cuBLAS, cuBLASLt calls). What the first call of a
 * problem does besides that (choose its kernel, load it from the database or compile it with
 * NVRTC, allocate the workspace it needs, create a cuBLAS handle) must be done before the
 * capture by tgemmPrepare, or by one call of the problem outside it (a problem: the ops,
 * sizes, types, leading dimensions and pointer alignments, on one device under one math mode);
 * a captured call of a problem not prepared returns TGEMM_STATUS_NOT_PREPARED, launches
 * nothing and leaves the capture valid. A graph's calls use the handle's workspace: lend one with
 * tgemmSetWorkspace (as cublasSetWorkspace) and the library never allocates one; keep that buffer
 * alive while a graph uses it. Without one, the handle's own workspace is grown when a later
 * prepare or call needs more, which frees the buffer earlier graphs hold: capture after preparing
 * every problem. Captured calls are not ordered across streams as eager ones are: launch graphs
 * that hold calls of one handle one at a time, and only while the handle lives. While another
 * thread captures in cudaStreamCaptureModeGlobal, CUDA refuses allocations and module loads on
 * every thread: prepare before any capture starts.
 *
 * Every function that takes a handle returns TGEMM_STATUS_NOT_INITIALIZED for a null
 * handle, a destroyed one (a second tgemmDestroy included) and any value tgemmCreate did not
 * return; handle values are never reused. A tgemmDestroy racing calls on the same handle
 * waits for nothing: calls already running finish on it, later ones are NOT_INITIALIZED.
 * Every failure sets tgemmGetLastError; every success clears it.
 *
 * A tuning database is code: the library loads the GPU kernels (cubins) it holds. Trust a
 * database file as you would a shared library you link: open only files that you, your build
 * or a source you trust wrote, from a folder others cannot write. Every value read from it is
 * checked (a cubin must be an ELF for the GPU's arch with the kernel's entry, and match its
 * checksum), but a checked cubin still runs with your process's rights on the GPU. The library
 * only reads the file: a kernel it must compile on a miss is written back into the database
 * only when TGEMM_DB_WRITE_BACK=1 is set in the environment (and the file is writable), so the
 * next process finds it.
 */
#ifndef TGEMM_TGEMM_C_H_
#define TGEMM_TGEMM_C_H_

#include <cuda_runtime_api.h>
#include <stddef.h>

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
  TGEMM_STATUS_INTERNAL_ERROR = 6,
  TGEMM_STATUS_TYPE_NOT_SUPPORTED = 7, /* a type combination no kernel and no fallback computes */
  /* a call on a capturing stream needs work the capture forbids (compiling or loading a
   * kernel, allocating a workspace): call tgemmPrepare for its problem before capturing */
  TGEMM_STATUS_NOT_PREPARED = 8,
  TGEMM_STATUS_WORKSPACE_TOO_SMALL = 9 /* the buffer lent by tgemmSetWorkspace is too small */
} tgemmStatus_t;

/* Element types of A, B and C (cudaDataType's CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF,
 * CUDA_R_8F_E4M3, CUDA_R_8F_E5M2). The FP8 types are for A and B only. */
typedef enum {
  TGEMM_R_32F = 0,
  TGEMM_R_16F = 1,
  TGEMM_R_16BF = 2,
  TGEMM_R_8F_E4M3 = 3,
  TGEMM_R_8F_E5M2 = 4
} tgemmDataType_t;

/* How products are accumulated, as cublasComputeType_t; every one accumulates in f32, so
 * alpha and beta are floats. */
typedef enum {
  TGEMM_COMPUTE_32F = 0,           /* FP32 accuracy: FFMA (any input type) */
  TGEMM_COMPUTE_32F_FAST_TF32 = 1, /* f32 inputs, one TF32 tensor-core pass */
  TGEMM_COMPUTE_32F_3XTF32 = 2     /* f32 inputs, FP32-accurate on tensor cores (3xTF32) */
} tgemmComputeType_t;

/* Opt-in behaviour, as cublasSetMathMode. */
typedef enum {
  TGEMM_DEFAULT_MATH = 0, /* each call gets exactly the compute type it asks for */
  /* tgemmSgemm and TGEMM_COMPUTE_32F f32 calls may run FP32-accurate 3xTF32 kernels where
   * the database holds one that was measured faster than the FFMA kernel */
  TGEMM_3XTF32_MATH = 1
} tgemmMath_t;

typedef enum { TGEMM_OP_N = 0, TGEMM_OP_T = 1 } tgemmOperation_t;

/* How the kernel for a problem was chosen. */
typedef enum {
  TGEMM_SELECTION_EXACT = 0,   /* tuned for this very problem on this GPU */
  TGEMM_SELECTION_NEAREST = 1, /* the best kernel of the nearest tuned shape */
  TGEMM_SELECTION_DEFAULT = 2, /* the per-arch default shipped with tgemm */
  TGEMM_SELECTION_CUBLAS = 3   /* cuBLAS, the last resort */
} tgemmSelection_t;

/* An opaque token: compare it, never dereference it. */
typedef struct tgemmContext* tgemmHandle_t;

/* Opens the tuning database read-only: db_path, else $TGEMM_DB, else "tgemm.db". A missing
 * or unreadable database is not an error: the handle works through the defaults and says
 * so once in the log. The library logs to standard error (spdlog's logger "tgemm"), never to
 * standard output, with control characters escaped. */
tgemmStatus_t tgemmCreate(tgemmHandle_t* handle, const char* db_path);
tgemmStatus_t tgemmDestroy(tgemmHandle_t handle);

tgemmStatus_t tgemmSgemm(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                         int n, int k, const float* alpha, const float* A, int lda, const float* B,
                         int ldb, const float* beta, float* C, int ldc, cudaStream_t stream);

/* C = alpha op(A) op(B) + beta C with typed operands, as cublasGemmEx (row-major; see above).
 * Supported: A and B of one type; f32 inputs with an f32 C and any compute type; f16 or bf16
 * inputs with compute 32F and C of the input type or f32; FP8 inputs (A and B each E4M3 or
 * E5M2) with compute 32F and C bf16, f16 or f32, unscaled (tgemmGemmScaledEx takes scales).
 * alpha and beta point to floats. Other combinations return TGEMM_STATUS_TYPE_NOT_SUPPORTED.
 * FP8 runs on Hopper (sm_90) in every layout: an operand stored K-major (A with op_a N, B with
 * op_b T) is read in place and must be 16-byte aligned (pointer and leading dimension); one
 * stored MN-major is first copied K-major into the handle's workspace, from any alignment.
 * Other FP8 problems are served by cuBLASLt where it computes them, else return
 * TGEMM_STATUS_NOT_SUPPORTED. */
tgemmStatus_t tgemmGemmEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b, int m,
                          int n, int k, const void* alpha, const void* A, tgemmDataType_t Atype,
                          int lda, const void* B, tgemmDataType_t Btype, int ldb, const void* beta,
                          void* C, tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                          cudaStream_t stream);

/* batchCount GEMMs of one shape and types in one call, as cublasGemmStridedBatchedEx (row-major,
 * see above): member i computes with A + i * strideA, B + i * strideB and C + i * strideC
 * (strides in elements). batchCount == 0 does nothing; batchCount == 1 is tgemmGemmEx (the
 * strides are not used). strideA or strideB may be 0 (one operand shared by every member);
 * strideC must keep the members of C apart, at least (m - 1) * ldc + n. A negative batchCount
 * or stride, or a strideC that makes C's members overlap, is TGEMM_STATUS_INVALID_VALUE;
 * batchCount above 65535 is TGEMM_STATUS_NOT_SUPPORTED. Each batch size is tuned as a problem
 * of its own (shape files' `batch:`). tgemmPrepare's problems are single GEMMs: before capturing
 * a batched call into a graph, make one eager call of its problem. */
tgemmStatus_t tgemmGemmStridedBatchedEx(tgemmHandle_t handle, tgemmOperation_t op_a,
                                        tgemmOperation_t op_b, int m, int n, int k,
                                        const void* alpha, const void* A, tgemmDataType_t Atype,
                                        int lda, long long strideA, const void* B,
                                        tgemmDataType_t Btype, int ldb, long long strideB,
                                        const void* beta, void* C, tgemmDataType_t Ctype, int ldc,
                                        long long strideC, int batchCount,
                                        tgemmComputeType_t computeType, cudaStream_t stream);

/* The same with the members' matrices given by pointers, as cublasGemmBatchedEx: Aarray,
 * Barray and Carray are device memory holding batchCount device pointers each (null arrays are
 * TGEMM_STATUS_INVALID_VALUE). The library never reads the pointers on the host, so it assumes
 * no alignment beyond one element for them; the strided call, whose members' alignment it
 * sees, gets the kernels with the widest loads. */
tgemmStatus_t tgemmGemmBatchedEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                 int m, int n, int k, const void* alpha, const void* const Aarray[],
                                 tgemmDataType_t Atype, int lda, const void* const Barray[],
                                 tgemmDataType_t Btype, int ldb, const void* beta,
                                 void* const Carray[], tgemmDataType_t Ctype, int ldc,
                                 int batchCount, tgemmComputeType_t computeType,
                                 cudaStream_t stream);

/* Groups of GEMMs of their own shapes in one call, as cublasGemmGroupedBatchedEx (row-major, see
 * above): group g (0 <= g < group_count) holds group_size[g] problems
 *   C = alpha_array[g] op_g(A) op_g(B) + beta_array[g] C
 * of m_array[g] x n_array[g] x k_array[g], with op_a_array[g], op_b_array[g] and the leading
 * dimensions lda_array[g], ldb_array[g], ldc_array[g]. These arrays are host memory of
 * group_count entries, read during the call; alpha_array and beta_array point to floats.
 * Aarray, Barray and Carray are device memory holding one device pointer per problem, group 0's
 * problems first, then group 1's, and so on (the sum of group_size entries each). One type triple
 * and compute type for every group, as tgemmGemmEx's. Column-major callers swap as above, array
 * for array: B's ops, n_array, Barray and ldb_array where cuBLAS takes A's, and so on.
 *
 * A mixture of experts' layer is one call: a group per expert (group_size 1, m its tokens, zero
 * for an expert without any). The kernel is chosen for the call's bucket, the heaviest group's
 * m, n and k and the count of problems, each rounded up to three significant bits, so calls
 * whose sizes change from step to step share a few choices; one launch computes the tiles of up
 * to 64 groups that share lda and ldb (more take one launch per such run). The library never
 * reads the pointers on the host, so it assumes no alignment beyond one element for A and B.
 * Our grouped kernels run only where the environment sets TGEMM_GROUPED_KERNELS=1 (untuned,
 * they are slower than cuBLAS's grouped call); by default, as where no kernel serves the bucket
 * and for groups of different layouts, cuBLAS's
 * cublasGemmGroupedBatchedEx runs the call (one cublasGemmBatchedEx per group for types its
 * grouped call refuses); TGEMM_STATUS_NOT_SUPPORTED with the cuBLAS fallback off.
 *
 * group_count == 0, and groups whose m, n or group_size is 0, compute nothing (k == 0 scales C
 * by beta). TGEMM_STATUS_INVALID_VALUE, naming the group and argument in tgemmGetLastError, for:
 * a negative group_count; a null host array when group_count > 0; an op that is neither
 * TGEMM_OP_N nor TGEMM_OP_T; a negative m, n, k or group_size; a leading dimension below its row
 * length (or 1); more than 2^31 - 1 problems in all; a null Aarray, Barray or Carray when a
 * group has work. Types as tgemmGemmEx (TGEMM_STATUS_TYPE_NOT_SUPPORTED); FP8 inputs run only
 * where cuBLAS's grouped or batched call computes them. No epilogue.
 *
 * Capturing: make one eager call of the same bucket first (tgemmPrepare's problems are single
 * GEMMs); the captured call then only launches, with the groups' shapes held in the launch's
 * parameters. Where cuBLAS serves it, the call is captured as cuBLAS's grouped call captures.
 * Record mode (tgemmSetRecordFile) does not record grouped calls: they are not tuned yet. */
tgemmStatus_t tgemmGemmGroupedBatchedEx(
    tgemmHandle_t handle, const tgemmOperation_t op_a_array[], const tgemmOperation_t op_b_array[],
    const int m_array[], const int n_array[], const int k_array[], const void* alpha_array,
    const void* const Aarray[], tgemmDataType_t Atype, const int lda_array[],
    const void* const Barray[], tgemmDataType_t Btype, const int ldb_array[],
    const void* beta_array, void* const Carray[], tgemmDataType_t Ctype, const int ldc_array[],
    int group_count, const int group_size[], tgemmComputeType_t computeType, cudaStream_t stream);

/* Fused epilogues, as cuBLASLt's matmul descriptor attributes (CUBLASLT_MATMUL_DESC_EPILOGUE,
 * _BIAS_POINTER, _BIAS_DATA_TYPE, _EPILOGUE_AUX_POINTER, _EPILOGUE_AUX_LD) and its D:
 *   x = alpha op(A) op(B) + beta C + bias,   aux = x (optional),   D = activation(x).
 * The activation applied last: */
typedef enum {
  TGEMM_ACTIVATION_NONE = 0,
  TGEMM_ACTIVATION_RELU = 1,     /* max(x, 0) */
  TGEMM_ACTIVATION_GELU = 2,     /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), cuBLASLt's */
  TGEMM_ACTIVATION_GELU_ERF = 3, /* 0.5 x (1 + erf(x / sqrt(2))) */
  TGEMM_ACTIVATION_SILU = 4      /* x / (1 + exp(-x)) */
} tgemmActivation_t;

/* Which index of C the bias follows. */
typedef enum {
  TGEMM_BIAS_NONE = 0,
  TGEMM_BIAS_ALONG_N = 1, /* n values, one per column (a Linear layer's bias in row-major C) */
  TGEMM_BIAS_ALONG_M = 2  /* m values, one per row */
} tgemmBiasAlong_t;

/* An epilogue's attributes; zero-initialise it ({0}) and set what is used. */
typedef struct {
  tgemmActivation_t activation;
  tgemmBiasAlong_t biasAlong;
  const void* bias;         /* device memory; required exactly when biasAlong is not NONE */
  tgemmDataType_t biasType; /* Ctype, or TGEMM_R_32F with a 16-bit C */
  void* D;                  /* where the result goes (Ctype, m x n, ldd apart); NULL: into C */
  int ldd;
  void* aux; /* NULL, or where x (before the activation) is also stored: Ctype, m x n, ldaux
              * apart, for a backward pass (CUBLASLT_EPILOGUE_GELU_AUX); needs an activation */
  int ldaux;
} tgemmEpilogue_t;

/* tgemmGemmEx with a fused epilogue (one GEMM: no batches). The epilogue is part of the problem
 * as the sizes are: tuned (shape files' `epilogue:`, `bias_along:`, `bias_type:`, `aux:`,
 * `separate_d:`) and served like any problem; where no kernel of ours applies it, cuBLASLt with
 * the same epilogue serves the call, or, where cuBLASLt has none (SiLU, erf GELU, a bias along
 * M, aux of ReLU), cuBLAS followed by a pass of the epilogue. C is read only where beta is not 0;
 * D apart from C must not overlap it. Statuses: TGEMM_STATUS_INVALID_VALUE for a null epilogue,
 * an unknown activation, biasAlong or biasType (one that is neither Ctype nor f32), a null bias
 * with a biasAlong (or a bias with TGEMM_BIAS_NONE), aux without an activation, ldd or ldaux
 * below n; otherwise tgemmGemmEx's. Capturing: tgemmPrepare does not take an epilogue; make one
 * eager call of the problem before capturing its calls. */
tgemmStatus_t tgemmGemmEpilogueEx(tgemmHandle_t handle, tgemmOperation_t op_a,
                                  tgemmOperation_t op_b, int m, int n, int k, const void* alpha,
                                  const void* A, tgemmDataType_t Atype, int lda, const void* B,
                                  tgemmDataType_t Btype, int ldb, const void* beta, void* C,
                                  tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                                  const tgemmEpilogue_t* epilogue, cudaStream_t stream);

/* How tgemmScales_t's pointers scale the product, as cublasLt's CUBLASLT_MATMUL_DESC_A_SCALE_MODE
 * and _B_SCALE_MODE (both take one mode here):
 *   TGEMM_SCALE_TENSOR  one float each (CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
 *   TGEMM_SCALE_ROWWISE scaleA m floats, one per row of C, and scaleB n floats, one per column:
 *                       C[i][j] = scaleA[i] * scaleB[j] * alpha * (op(A) op(B))[i][j] + beta *
 *                       C[i][j] (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F; a single GEMM).
 * A rowwise problem is keyed apart (tuned with shape files' `scales: rowwise`); tgemmPrepare
 * takes no mode, so before a capture make one eager call of it, as for an epilogue. */
typedef enum { TGEMM_SCALE_TENSOR = 0, TGEMM_SCALE_ROWWISE = 1 } tgemmScaleMode_t;

/* FP8 inputs' scales, as cublasLt's CUBLASLT_MATMUL_DESC_A_SCALE_POINTER and
 * _B_SCALE_POINTER: floats in device memory, read by the kernel when it runs (so a graph replays
 * with the values current then); `mode` says how many (zero-initialized: one per tensor). */
typedef struct {
  const float* scaleA;
  const float* scaleB;
  tgemmScaleMode_t mode;
} tgemmScales_t;

/* tgemmGemmEx of FP8 inputs with their scales, and optionally a fused epilogue (NULL: none):
 *   D = act(scaleA * scaleB * alpha * op(A) op(B) + beta * C + bias).
 * Our kernels read the scales at any float's alignment; where cuBLASLt serves the problem (a
 * tuned cuBLASLt best, or a layout or alignment no kernel of ours takes), the scale pointers
 * must be 16-byte aligned, as cuBLASLt's FP8 call needs.
 * Statuses: TGEMM_STATUS_INVALID_VALUE for null scales or a null pointer in them, and for
 * types that are not FP8; TGEMM_STATUS_NOT_SUPPORTED for scales cuBLASLt cannot take where it
 * serves; otherwise tgemmGemmEpilogueEx's (tgemmGemmEx's without an epilogue). */
tgemmStatus_t tgemmGemmScaledEx(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const void* alpha, const void* A,
                                tgemmDataType_t Atype, int lda, const void* B,
                                tgemmDataType_t Btype, int ldb, const void* beta, void* C,
                                tgemmDataType_t Ctype, int ldc, tgemmComputeType_t computeType,
                                const tgemmScales_t* scales, const tgemmEpilogue_t* epilogue,
                                cudaStream_t stream);

/* One problem for tgemmPrepare: tgemmGemmEx's arguments without the scalars, buffers and
 * stream (tgemmSgemm's: the three types TGEMM_R_32F, computeType TGEMM_COMPUTE_32F), and
 * the byte alignment that the calls' A, B and C pointers will have: a power of two, or 0 for
 * 256 (what cudaMalloc returns; a pointer a few elements into a buffer has less). Alignments
 * past 16 bytes choose alike. A prepared problem serves calls of any alpha and beta. */
typedef struct {
  tgemmOperation_t op_a, op_b;
  int m, n, k;
  tgemmDataType_t Atype, Btype, Ctype;
  int lda, ldb, ldc;
  tgemmComputeType_t computeType;
  int Aalignment, Balignment, Calignment;
} tgemmProblem_t;

/* Does ahead, on the current device and under the handle's current math mode, what the first
 * call of each problem would do besides launching: chooses its kernel, loads it (from the
 * database, or compiled by NVRTC), plans its launches, reserves the workspace it needs (or
 * checks the lent one: TGEMM_STATUS_WORKSPACE_TOO_SMALL) and creates the cuBLAS handle
 * where cuBLAS serves. Then calls of these problems may be captured into CUDA graphs.
 * Every problem is checked before any is prepared (tgemmGetLastError names the bad one);
 * count == 0 does nothing. */
tgemmStatus_t tgemmPrepare(tgemmHandle_t handle, const tgemmProblem_t* problems, int count);

/* Lends `bytes` of device memory of the current device at `workspace` (256-byte aligned) to
 * the handle as that device's workspace, as cublasSetWorkspace: the library frees its own,
 * never allocates one again, and a problem needing more returns
 * TGEMM_STATUS_WORKSPACE_TOO_SMALL. The buffer must outlive the calls and graphs using it.
 * NULL with 0 bytes returns to the library's own workspace, allocated when needed. */
tgemmStatus_t tgemmSetWorkspace(tgemmHandle_t handle, void* workspace, size_t bytes);
/* The most workspace any problem prepared or called on the current device needed so far:
 * a buffer of this size, lent by tgemmSetWorkspace, serves them all. */
tgemmStatus_t tgemmGetWorkspaceSize(tgemmHandle_t handle, size_t* bytes);

tgemmStatus_t tgemmSetMathMode(tgemmHandle_t handle, tgemmMath_t mode);
tgemmStatus_t tgemmGetMathMode(tgemmHandle_t handle, tgemmMath_t* mode);

/* 0 turns the cuBLAS last resort off (then a problem no kernel can run is NOT_SUPPORTED). */
tgemmStatus_t tgemmSetCublasFallback(tgemmHandle_t handle, int enabled);

/* Which path tgemmSgemm takes for this problem (resolving and caching it if needed). */
tgemmStatus_t tgemmGetSelection(tgemmHandle_t handle, tgemmOperation_t op_a, tgemmOperation_t op_b,
                                int m, int n, int k, const float* A, int lda, const float* B,
                                int ldb, float* C, int ldc, tgemmSelection_t* selection);

/* Record mode (process-wide, all handles): from now on every problem a call serves without an
 * exact tuned entry goes once into the shape file `path` (configs/shapes format, with a
 * `calls` count), ready for `tgemm-tune --shapes path`. Several threads and processes may
 * record into one file. NULL or "" stops recording; counts are written on stop and at exit.
 * Setting $TGEMM_RECORD=path before the first tgemmCreate does the same. A path whose lock
 * file (path.lock) cannot be created is TGEMM_STATUS_INVALID_VALUE; a write failing later
 * stops recording with one warning on stderr, and never fails a GEMM call. */
tgemmStatus_t tgemmSetRecordFile(const char* path);
/* The file being recorded into ("" when none); valid until the next call on this thread. */
const char* tgemmGetRecordFile(void);

const char* tgemmGetStatusString(tgemmStatus_t status);
/* The message of the last failure on this thread (empty when none). */
const char* tgemmGetLastError(void);

#ifdef __cplusplus
}
#endif

#endif /* TGEMM_TGEMM_C_H_ */
