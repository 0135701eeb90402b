// tgemm C++ API: a GEMM that launches the kernel tuned for each problem shape.
// Storage is ROW-MAJOR: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
// See tgemm_c.h for the layout rules and how column-major callers swap the operands.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace tgemm {

// Every failure the library reports to C++ callers; it never calls exit().
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

enum class Selection { exact, nearest, fallback_default, cublas };
const char* to_string(Selection selection);

class Dispatcher;

// A fused epilogue, as tgemm_c.h's tgemmEpilogue_t (its rules):
//   x = alpha op(A) op(B) + beta C + bias,   aux = x (where aux is given),   D = activation(x).
struct GemmEpilogue {
  enum class Activation { none, relu, gelu, gelu_erf, silu };  // gelu: the tanh approximation
  enum class BiasAlong { none, n, m };  // n: one value per column of C, m: one per row
  Activation activation = Activation::none;
  BiasAlong bias_along = BiasAlong::none;
  const void* bias = nullptr;  // device memory, C's type (or f32 with bias_f32)
  bool bias_f32 = false;       // an f32 bias for a 16-bit C
  void* d = nullptr;           // where the result goes, C's type; nullptr: into C
  int ldd = 0;
  void* aux = nullptr;  // where x is also stored, C's type; needs an activation
  int ldaux = 0;
};

// One group of a grouped GEMM, as tgemmGemmGroupedBatchedEx's per-group arrays at one index
// (its rules): `size` problems C = alpha op(A) op(B) + beta C of one shape, layout ('N' or 'T')
// and leading dimensions.
struct GemmGroup {
  char op_a = 'N', op_b = 'N';
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int size = 0;
};

// Record mode, process-wide: every problem a call serves without an exact tuned entry goes
// once into the shape file `path` (configs/shapes format, with a `calls` count) for
// `tgemm-tune --shapes path`; see tgemmSetRecordFile. An empty path stops. Throws Error when
// the file's lock (path.lock) cannot be created; later write failures only warn on stderr.
void record_problems(const std::string& path);
// The file being recorded into; empty when none.
std::string recorded_problems_file();

// A handle on a tuning database. Thread-safe; calls run on the calling thread's current device.
// Calls may use any streams: the few kernels that share state between calls (a workspace,
// per-call counters) are run in turn across streams, each after the one before it. Calls may
// be captured into CUDA graphs once their problems are prepared (prepare, or one eager call);
// tgemm_c.h has the rules.
class Handle {
 public:
  // db_path: the tuning database, else $TGEMM_DB, else "tgemm.db". A missing or corrupt
  // database still gives a working handle (defaults, then cuBLAS), logged once.
  explicit Handle(const std::string& db_path = "");
  ~Handle();
  // A moved-from handle throws Error on every call until a live handle is assigned to it.
  Handle(Handle&&) noexcept;
  Handle& operator=(Handle&&) noexcept;

  // op_a / op_b: 'N' or 'T'. Throws Error for bad arguments or a failed launch.
  void sgemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
             const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream = nullptr);

  // Typed GEMMs (cublasGemmEx's types), f32 accumulation; alpha and beta are floats.
  // float: FP32-accurate (FFMA, or 3xTF32 under Math::f32_via_3xtf32 where it was faster).
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
            const __half* b, int ldb, float beta, __half* c, int ldc,
            cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a, int lda,
            const __nv_bfloat16* b, int ldb, float beta, __nv_bfloat16* c, int ldc,
            cudaStream_t stream = nullptr);
  // 16-bit inputs with an f32 C.
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
            const __half* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a, int lda,
            const __nv_bfloat16* b, int ldb, float beta, float* c, int ldc,
            cudaStream_t stream = nullptr);

  // The typed GEMMs with a fused epilogue, as tgemmGemmEpilogueEx (one GEMM).
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc, const GemmEpilogue& epilogue,
            cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
            const __half* b, int ldb, float beta, __half* c, int ldc, const GemmEpilogue& epilogue,
            cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a, int lda,
            const __nv_bfloat16* b, int ldb, float beta, __nv_bfloat16* c, int ldc,
            const GemmEpilogue& epilogue, cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
            const __half* b, int ldb, float beta, float* c, int ldc, const GemmEpilogue& epilogue,
            cudaStream_t stream = nullptr);
  void gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a, int lda,
            const __nv_bfloat16* b, int ldb, float beta, float* c, int ldc,
            const GemmEpilogue& epilogue, cudaStream_t stream = nullptr);

  // FP8 inputs, as tgemmGemmScaledEx: C = scale_a scale_b alpha op(A) op(B) + beta C, A and B
  // each __nv_fp8_e4m3 or __nv_fp8_e5m2, C __nv_bfloat16, __half or float, the scales one float
  // each in device memory (nullptr: 1), read when the kernel runs. Defined for those types.
  template <typename TA, typename TB, typename TC>
  void gemm_fp8(char op_a, char op_b, int m, int n, int k, float alpha, const TA* a, int lda,
                const float* scale_a, const TB* b, int ldb, const float* scale_b, float beta, TC* c,
                int ldc, cudaStream_t stream = nullptr);
  // The same with the scales' mode (tgemmScaleMode_t): rowwise, scale_a holds m floats (one per
  // row of C) and scale_b n (one per column), neither null.
  enum class ScaleMode { tensor, rowwise };
  template <typename TA, typename TB, typename TC>
  void gemm_fp8(char op_a, char op_b, int m, int n, int k, float alpha, const TA* a, int lda,
                const float* scale_a, const TB* b, int ldb, const float* scale_b, float beta, TC* c,
                int ldc, ScaleMode mode, cudaStream_t stream = nullptr);

  // batch_count GEMMs of one shape, as cublasGemmStridedBatchedEx (tgemmGemmStridedBatchedEx's
  // rules): member i at a + i * stride_a, b + i * stride_b, c + i * stride_c (elements).
  void gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha, const float* a,
                            int lda, long long stride_a, const float* b, int ldb,
                            long long stride_b, float beta, float* c, int ldc, long long stride_c,
                            int batch_count, cudaStream_t stream = nullptr);
  void gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a,
                            int lda, long long stride_a, const __half* b, int ldb,
                            long long stride_b, float beta, __half* c, int ldc, long long stride_c,
                            int batch_count, cudaStream_t stream = nullptr);
  void gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                            const __nv_bfloat16* a, int lda, long long stride_a,
                            const __nv_bfloat16* b, int ldb, long long stride_b, float beta,
                            __nv_bfloat16* c, int ldc, long long stride_c, int batch_count,
                            cudaStream_t stream = nullptr);
  // The same with device arrays of batch_count device pointers, as cublasGemmBatchedEx
  // (tgemmGemmBatchedEx's rules).
  void gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha, const float* const a[],
                    int lda, const float* const b[], int ldb, float beta, float* const c[], int ldc,
                    int batch_count, cudaStream_t stream = nullptr);
  void gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha, const __half* const a[],
                    int lda, const __half* const b[], int ldb, float beta, __half* const c[],
                    int ldc, int batch_count, cudaStream_t stream = nullptr);
  void gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                    const __nv_bfloat16* const a[], int lda, const __nv_bfloat16* const b[],
                    int ldb, float beta, __nv_bfloat16* const c[], int ldc, int batch_count,
                    cudaStream_t stream = nullptr);

  // Groups of GEMMs of their own shapes, as cublasGemmGroupedBatchedEx
  // (tgemmGemmGroupedBatchedEx's rules): `groups` (host memory, group_count of them) and device
  // arrays of one device pointer per problem, group 0's problems first.
  void gemm_grouped_batched(const GemmGroup* groups, int group_count, const float* const a[],
                            const float* const b[], float* const c[],
                            cudaStream_t stream = nullptr);
  void gemm_grouped_batched(const GemmGroup* groups, int group_count, const __half* const a[],
                            const __half* const b[], __half* const c[],
                            cudaStream_t stream = nullptr);
  void gemm_grouped_batched(const GemmGroup* groups, int group_count,
                            const __nv_bfloat16* const a[], const __nv_bfloat16* const b[],
                            __nv_bfloat16* const c[], cudaStream_t stream = nullptr);

  // Opt-in modes, as cublasSetMathMode.
  enum class Math { standard, f32_via_3xtf32 };
  void set_math(Math math);

  // Which path sgemm takes for this problem with these pointers (their alignment matters).
  Selection selection(char op_a, char op_b, int m, int n, int k, const float* a, int lda,
                      const float* b, int ldb, float* c, int ldc);

  void set_cublas_fallback(bool enabled);

  // CUDA graphs, as tgemmPrepare: does ahead, on the current device, what the first call of
  // this problem does besides launching, so that its calls (any alpha and beta) may be
  // captured. types: "f32", "tf32", "f32x3" (float inputs and C, the compute type), "f16",
  // "bf16", "f16_out_f32", "bf16_out_f32", or FP8's "e4m3_out_bf16" (configs/shapes/README.md
  // names them all); alignment: the bytes (a power of two) every A,
  // B and C pointer of the calls is aligned to. A call on a capturing stream of a problem not
  // prepared throws Error, launching nothing.
  void prepare(const std::string& types, char op_a, char op_b, int m, int n, int k, int lda,
               int ldb, int ldc, size_t alignment = 256);
  // As tgemmSetWorkspace: lends `bytes` of device memory (256-byte aligned) as the current
  // device's workspace; nullptr and 0 return to the handle's own.
  void set_workspace(void* workspace, size_t bytes);
  // As tgemmGetWorkspaceSize: the workspace the problems prepared or called so far need.
  size_t workspace_size();

 private:
  // The dispatcher; throws Error naming the call on a moved-from handle, which holds none.
  Dispatcher& live(const char* call) const;

  std::unique_ptr<Dispatcher> dispatcher_;
};

}  // namespace tgemm
