// tgemm::Handle, the C++ face of the Dispatcher.
#include <string>
#include <type_traits>

#include "src/dispatch/dispatcher.h"
#include "src/dispatch/problem_recorder.h"
#include "tgemm/tgemm.h"

namespace tgemm {

namespace {

Op to_op(char op, const char* name) {
  if (op == 'N' || op == 'n') return Op::N;
  if (op == 'T' || op == 't') return Op::T;
  throw InvalidValueError(std::string(name) + " must be 'N' or 'T'");
}

GemmCall make_call(GemmTypes types, char op_a, char op_b, int m, int n, int k, float alpha,
                   const void* a, int lda, const void* b, int ldb, float beta, void* c, int ldc) {
  GemmCall call;
  call.types = types;
  call.op_a = to_op(op_a, "op_a");
  call.op_b = to_op(op_b, "op_b");
  call.m = m;
  call.n = n;
  call.k = k;
  call.alpha = alpha;
  call.beta = beta;
  call.a = a;
  call.lda = lda;
  call.b = b;
  call.ldb = ldb;
  call.c = c;
  call.ldc = ldc;
  return call;
}

GemmTypes types_of(DType in, DType out) {
  GemmTypes t;
  t.a = t.b = in;
  t.c = out;
  return t;
}

// The element type of a C++ operand: f32, the two 16-bit types and the two FP8 ones.
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, __half>) {
    return DType::f16;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return DType::bf16;
  } else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
    return DType::e4m3;
  } else if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) {
    return DType::e5m2;
  } else {
    static_assert(std::is_same_v<T, float>, "an element type tgemm has");
    return DType::f32;
  }
}

template <typename T>
GemmCall strided_call(char op_a, char op_b, int m, int n, int k, float alpha, const T* a, int lda,
                      long long stride_a, const T* b, int ldb, long long stride_b, float beta, T* c,
                      int ldc, long long stride_c, int batch_count) {
  GemmCall call = make_call(types_of(dtype_of<T>(), dtype_of<T>()), op_a, op_b, m, n, k, alpha, a,
                            lda, b, ldb, beta, c, ldc);
  call.batch = batch_count;
  call.stride_a = stride_a;
  call.stride_b = stride_b;
  call.stride_c = stride_c;
  return call;
}

template <typename T>
GemmCall pointer_array_call(char op_a, char op_b, int m, int n, int k, float alpha,
                            const T* const a[], int lda, const T* const b[], int ldb, float beta,
                            T* const c[], int ldc, int batch_count) {
  GemmCall call = make_call(types_of(dtype_of<T>(), dtype_of<T>()), op_a, op_b, m, n, k, alpha, a,
                            lda, b, ldb, beta, const_cast<T**>(c), ldc);
  call.batch = batch_count;
  call.batch_pointers = true;
  return call;
}

// A grouped call of T inputs and C: the groups' ops checked, their sizes left to the Dispatcher.
template <typename T>
GroupedGemmCall grouped_call(const GemmGroup* groups, int group_count, const T* const a[],
                             const T* const b[], T* const c[]) {
  if (group_count < 0)
    throw InvalidValueError("group_count = " + std::to_string(group_count) + " is negative");
  if (group_count > 0 && !groups) throw InvalidValueError("groups is a null pointer");
  GroupedGemmCall call;
  call.types = types_of(dtype_of<T>(), dtype_of<T>());
  for (int g = 0; g < group_count; ++g) {
    const GemmGroup& x = groups[g];
    Op op_a = Op::N, op_b = Op::N;
    try {
      op_a = to_op(x.op_a, "op_a");
      op_b = to_op(x.op_b, "op_b");
    } catch (const InvalidValueError& e) {
      throw InvalidValueError("groups[" + std::to_string(g) + "]." + e.what());
    }
    call.groups.push_back(
        {op_a, op_b, x.m, x.n, x.k, x.alpha, x.beta, x.lda, x.ldb, x.ldc, x.size});
  }
  call.a = reinterpret_cast<const void* const*>(a);
  call.b = reinterpret_cast<const void* const*>(b);
  call.c = reinterpret_cast<void* const*>(const_cast<T**>(c));
  return call;
}

// A typed call (In inputs, Out C) with the C++ API's epilogue.
template <typename In, typename Out>
GemmCall epilogue_call(char op_a, char op_b, int m, int n, int k, float alpha, const In* a, int lda,
                       const In* b, int ldb, float beta, Out* c, int ldc, const GemmEpilogue& e) {
  const GemmCall call = make_call(types_of(dtype_of<In>(), dtype_of<Out>()), op_a, op_b, m, n, k,
                                  alpha, a, lda, b, ldb, beta, c, ldc);
  EpilogueArgs args;
  args.activation = Activation(int(e.activation));  // the same order (tgemm.h, epilogue.h)
  args.bias_along = BiasAlong(int(e.bias_along));
  args.bias = e.bias;
  args.bias_type = e.bias_f32 ? DType::f32 : dtype_of<Out>();
  args.d = e.d;
  args.ldd = e.ldd;
  args.aux = e.aux;
  args.ldaux = e.ldaux;
  return with_epilogue(call, args);
}
static_assert(int(GemmEpilogue::Activation::silu) == int(Activation::silu) &&
                  int(GemmEpilogue::BiasAlong::m) == int(BiasAlong::m),
              "tgemm.h's epilogue enums are the library's");

}  // namespace

void record_problems(const std::string& path) { problem_recorder().start(path); }
std::string recorded_problems_file() { return problem_recorder().path(); }

Handle::Handle(const std::string& db_path)
    : dispatcher_(std::make_unique<Dispatcher>(DispatcherOptions{db_path, {}, true})) {}
Handle::~Handle() = default;
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&&) noexcept = default;

Dispatcher& Handle::live(const char* call) const {
  if (!dispatcher_)
    throw NotInitializedError(std::string("tgemm::Handle::") + call +
                              ": the handle was moved from and holds no database");
  return *dispatcher_;
}

void Handle::sgemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream) {
  gemm(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream) {
  live("gemm").gemm(
      make_call(GemmTypes{}, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), stream);
}

template <typename TA, typename TB, typename TC>
void Handle::gemm_fp8(char op_a, char op_b, int m, int n, int k, float alpha, const TA* a, int lda,
                      const float* scale_a, const TB* b, int ldb, const float* scale_b, float beta,
                      TC* c, int ldc, cudaStream_t stream) {
  gemm_fp8(op_a, op_b, m, n, k, alpha, a, lda, scale_a, b, ldb, scale_b, beta, c, ldc,
           ScaleMode::tensor, stream);
}

template <typename TA, typename TB, typename TC>
void Handle::gemm_fp8(char op_a, char op_b, int m, int n, int k, float alpha, const TA* a, int lda,
                      const float* scale_a, const TB* b, int ldb, const float* scale_b, float beta,
                      TC* c, int ldc, ScaleMode mode, cudaStream_t stream) {
  GemmTypes types;
  types.a = dtype_of<TA>();
  types.b = dtype_of<TB>();
  types.c = dtype_of<TC>();
  GemmCall call = make_call(types, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  call.scale_a = scale_a;
  call.scale_b = scale_b;
  call.epilogue.rowwise_scales = mode == ScaleMode::rowwise;
  live("gemm_fp8").gemm(call, stream);
}

// Every pair of FP8 inputs into each C type, with and without a scale mode.
#define TGEMM_GEMM_FP8(TA, TB, TC)                                                              \
  template void Handle::gemm_fp8<TA, TB, TC>(char, char, int, int, int, float, const TA*, int,  \
                                             const float*, const TB*, int, const float*, float, \
                                             TC*, int, cudaStream_t);                           \
  template void Handle::gemm_fp8<TA, TB, TC>(char, char, int, int, int, float, const TA*, int,  \
                                             const float*, const TB*, int, const float*, float, \
                                             TC*, int, ScaleMode, cudaStream_t);
#define TGEMM_GEMM_FP8_INTO(TC)                    \
  TGEMM_GEMM_FP8(__nv_fp8_e4m3, __nv_fp8_e4m3, TC) \
  TGEMM_GEMM_FP8(__nv_fp8_e4m3, __nv_fp8_e5m2, TC) \
  TGEMM_GEMM_FP8(__nv_fp8_e5m2, __nv_fp8_e4m3, TC) \
  TGEMM_GEMM_FP8(__nv_fp8_e5m2, __nv_fp8_e5m2, TC)
TGEMM_GEMM_FP8_INTO(__nv_bfloat16)
TGEMM_GEMM_FP8_INTO(__half)
TGEMM_GEMM_FP8_INTO(float)
#undef TGEMM_GEMM_FP8_INTO
#undef TGEMM_GEMM_FP8

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
                  const __half* b, int ldb, float beta, __half* c, int ldc, cudaStream_t stream) {
  live("gemm").gemm(make_call(types_of(DType::f16, DType::f16), op_a, op_b, m, n, k, alpha, a, lda,
                              b, ldb, beta, c, ldc),
                    stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a,
                  int lda, const __nv_bfloat16* b, int ldb, float beta, __nv_bfloat16* c, int ldc,
                  cudaStream_t stream) {
  live("gemm").gemm(make_call(types_of(DType::bf16, DType::bf16), op_a, op_b, m, n, k, alpha, a,
                              lda, b, ldb, beta, c, ldc),
                    stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
                  const __half* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream) {
  live("gemm").gemm(make_call(types_of(DType::f16, DType::f32), op_a, op_b, m, n, k, alpha, a, lda,
                              b, ldb, beta, c, ldc),
                    stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a,
                  int lda, const __nv_bfloat16* b, int ldb, float beta, float* c, int ldc,
                  cudaStream_t stream) {
  live("gemm").gemm(make_call(types_of(DType::bf16, DType::f32), op_a, op_b, m, n, k, alpha, a, lda,
                              b, ldb, beta, c, ldc),
                    stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc,
                  const GemmEpilogue& epilogue, cudaStream_t stream) {
  live("gemm").gemm(
      epilogue_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue), stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
                  const __half* b, int ldb, float beta, __half* c, int ldc,
                  const GemmEpilogue& epilogue, cudaStream_t stream) {
  live("gemm").gemm(
      epilogue_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue), stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a,
                  int lda, const __nv_bfloat16* b, int ldb, float beta, __nv_bfloat16* c, int ldc,
                  const GemmEpilogue& epilogue, cudaStream_t stream) {
  live("gemm").gemm(
      epilogue_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue), stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __half* a, int lda,
                  const __half* b, int ldb, float beta, float* c, int ldc,
                  const GemmEpilogue& epilogue, cudaStream_t stream) {
  live("gemm").gemm(
      epilogue_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue), stream);
}

void Handle::gemm(char op_a, char op_b, int m, int n, int k, float alpha, const __nv_bfloat16* a,
                  int lda, const __nv_bfloat16* b, int ldb, float beta, float* c, int ldc,
                  const GemmEpilogue& epilogue, cudaStream_t stream) {
  live("gemm").gemm(
      epilogue_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue), stream);
}

void Handle::gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                                  const float* a, int lda, long long stride_a, const float* b,
                                  int ldb, long long stride_b, float beta, float* c, int ldc,
                                  long long stride_c, int batch_count, cudaStream_t stream) {
  live("gemm_strided_batched")
      .gemm(strided_call(op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                         ldc, stride_c, batch_count),
            stream);
}

void Handle::gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                                  const __half* a, int lda, long long stride_a, const __half* b,
                                  int ldb, long long stride_b, float beta, __half* c, int ldc,
                                  long long stride_c, int batch_count, cudaStream_t stream) {
  live("gemm_strided_batched")
      .gemm(strided_call(op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                         ldc, stride_c, batch_count),
            stream);
}

void Handle::gemm_strided_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                                  const __nv_bfloat16* a, int lda, long long stride_a,
                                  const __nv_bfloat16* b, int ldb, long long stride_b, float beta,
                                  __nv_bfloat16* c, int ldc, long long stride_c, int batch_count,
                                  cudaStream_t stream) {
  live("gemm_strided_batched")
      .gemm(strided_call(op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                         ldc, stride_c, batch_count),
            stream);
}

void Handle::gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                          const float* const a[], int lda, const float* const b[], int ldb,
                          float beta, float* const c[], int ldc, int batch_count,
                          cudaStream_t stream) {
  live("gemm_batched")
      .gemm(
          pointer_array_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch_count),
          stream);
}

void Handle::gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                          const __half* const a[], int lda, const __half* const b[], int ldb,
                          float beta, __half* const c[], int ldc, int batch_count,
                          cudaStream_t stream) {
  live("gemm_batched")
      .gemm(
          pointer_array_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch_count),
          stream);
}

void Handle::gemm_batched(char op_a, char op_b, int m, int n, int k, float alpha,
                          const __nv_bfloat16* const a[], int lda, const __nv_bfloat16* const b[],
                          int ldb, float beta, __nv_bfloat16* const c[], int ldc, int batch_count,
                          cudaStream_t stream) {
  live("gemm_batched")
      .gemm(
          pointer_array_call(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch_count),
          stream);
}

void Handle::gemm_grouped_batched(const GemmGroup* groups, int group_count, const float* const a[],
                                  const float* const b[], float* const c[], cudaStream_t stream) {
  live("gemm_grouped_batched").gemm_grouped(grouped_call(groups, group_count, a, b, c), stream);
}

void Handle::gemm_grouped_batched(const GemmGroup* groups, int group_count, const __half* const a[],
                                  const __half* const b[], __half* const c[], cudaStream_t stream) {
  live("gemm_grouped_batched").gemm_grouped(grouped_call(groups, group_count, a, b, c), stream);
}

void Handle::gemm_grouped_batched(const GemmGroup* groups, int group_count,
                                  const __nv_bfloat16* const a[], const __nv_bfloat16* const b[],
                                  __nv_bfloat16* const c[], cudaStream_t stream) {
  live("gemm_grouped_batched").gemm_grouped(grouped_call(groups, group_count, a, b, c), stream);
}

void Handle::set_math(Math math) {
  live("set_math")
      .set_math_mode(math == Math::f32_via_3xtf32 ? MathMode::f32_via_3xtf32 : MathMode::standard);
}

Selection Handle::selection(char op_a, char op_b, int m, int n, int k, const float* a, int lda,
                            const float* b, int ldb, float* c, int ldc) {
  return live("selection")
      .selection(make_call(GemmTypes{}, op_a, op_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc));
}

void Handle::set_cublas_fallback(bool enabled) {
  live("set_cublas_fallback").set_cublas_fallback(enabled);
}

void Handle::prepare(const std::string& types, char op_a, char op_b, int m, int n, int k, int lda,
                     int ldb, int ldc, size_t alignment) {
  Dispatcher& dispatcher = live("prepare");
  GemmTypes parsed;
  try {
    parsed = parse_gemm_types(types);
  } catch (const Error& e) {
    throw InvalidValueError(std::string("types: ") + e.what());
  }
  PrepareRequest request;
  request.call =
      make_call(parsed, op_a, op_b, m, n, k, 1.0f, nullptr, lda, nullptr, ldb, 0.0f, nullptr, ldc);
  request.align_a = request.align_b = request.align_c = alignment;
  dispatcher.prepare({request});
}

void Handle::set_workspace(void* workspace, size_t bytes) {
  live("set_workspace").set_workspace(workspace, bytes);
}

size_t Handle::workspace_size() { return live("workspace_size").needed_workspace_bytes(); }

const char* to_string(Selection selection) {
  switch (selection) {
    case Selection::exact:
      return "exact";
    case Selection::nearest:
      return "nearest";
    case Selection::fallback_default:
      return "default";
    case Selection::cublas:
      return "cublas";
  }
  return "?";
}

}  // namespace tgemm
