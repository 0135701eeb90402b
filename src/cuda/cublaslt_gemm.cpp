#include "src/cuda/cublaslt_gemm.h"

#include <fmt/format.h>

#include <cstdint>

#include "src/core/error.h"
#include "src/cuda/cublas_gemm.h"

namespace tgemm {

namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cuBLASLt {} failed: {}", what, cublasGetStatusString(status));
}

template <class T>
void set_algo(cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attribute,
              int64_t value) {
  const T typed = T(value);
  check(cublasLtMatmulAlgoConfigSetAttribute(algo, attribute, &typed, sizeof typed),
        "cublasLtMatmulAlgoConfigSetAttribute");
}

template <class T>
int64_t get_algo(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  size_t written = 0;
  check(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written),
        "cublasLtMatmulAlgoConfigGetAttribute");
  return int64_t(value);
}

// The attributes' types as cublasLt.h declares them.
LtAlgoConfig config_of(const cublasLtMatmulAlgo_t& algo) {
  LtAlgoConfig c;
  c.algo_id = get_algo<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  c.tile_id = get_algo<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  c.stages_id = get_algo<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  c.splitk_num = get_algo<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  c.reduction_scheme = get_algo<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  c.cta_swizzling = get_algo<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  c.custom_option = get_algo<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  c.inner_shape_id = get_algo<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster_shape_id = get_algo<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return c;
}

cublasOperation_t op_of(Op op) { return op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N; }

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
  check(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value),
        "cublasLtMatmulDescSetAttribute");
}

template <class T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attribute,
              T value) {
  check(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &value, sizeof value),
        "cublasLtMatmulPreferenceSetAttribute");
}

}  // namespace

std::optional<cublasLtEpilogue_t> lt_epilogue(const Epilogue& e) {
  if (e.bias == BiasAlong::m) return std::nullopt;
  const bool bias = e.bias == BiasAlong::n;
  switch (e.activation) {
    case Activation::none:
      if (e.aux) return std::nullopt;
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case Activation::relu:
      if (e.aux) return std::nullopt;
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu:
      if (e.aux) return bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::gelu_erf:
    case Activation::silu:
      return std::nullopt;
  }
  return std::nullopt;
}

bool lt_scales_aligned(const GemmCall& call) {
  const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return aligned(call.scale_a) && aligned(call.scale_b);
}

LtGemm::LtGemm(cublasLtHandle_t handle, const Problem& p, int64_t ldd)
    : handle_(handle),
      compute_(cublas_compute_type(p.types, CublasMath::matching)),
      a_type_(cuda_data_type(p.types.b)),
      b_type_(cuda_data_type(p.types.a)),
      c_type_(cuda_data_type(p.types.c)),
      align_a_(p.align_b),
      align_b_(p.align_a),
      align_c_(p.align_c),
      // D apart from C has an alignment the key does not hold (its element's at least); D
      // that is C has C's. Asking for less than the call has costs cuBLASLt its fast
      // algorithms (FP8 at 8192^3 has none for a 2-byte D).
      align_d_(p.epilogue.separate_d ? element_bytes(p.types.c) : p.align_c) {
  try {
    check(cublasLtMatmulDescCreate(&desc_, compute_, CUDA_R_32F), "cublasLtMatmulDescCreate");
    // cuBLAS's A is our B (N x K stored, or K x N when transposed), its B is our A.
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, op_of(p.op_b));
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, op_of(p.op_a));
    const bool a_n = p.op_b == Op::N, b_n = p.op_a == Op::N;
    check(cublasLtMatrixLayoutCreate(&a_, a_type_, uint64_t(a_n ? p.n : p.k),
                                     uint64_t(a_n ? p.k : p.n), p.ldb),
          "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&b_, b_type_, uint64_t(b_n ? p.k : p.m),
                                     uint64_t(b_n ? p.m : p.k), p.lda),
          "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&c_, c_type_, uint64_t(p.n), uint64_t(p.m), p.ldc),
          "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&d_, c_type_, uint64_t(p.n), uint64_t(p.m),
                                     ldd > 0 ? ldd : p.ldc),
          "cublasLtMatrixLayoutCreate");
    // FP8 keeps cuBLASLt's default accumulation, which promotes the tensor cores' partial
    // sums to f32 as our FP8 kernels do (CUBLASLT_MATMUL_DESC_FAST_ACCUM stays 0).
    scales_ = p.types.fp8();
    if (p.epilogue.rowwise_scales) {
      // Our A's m values are cuBLAS's B's (its N), our B's n its A's: one mode for both.
      const int32_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, outer);
      set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, outer);
    }
    if (p.epilogue.fused()) {
      const std::optional<cublasLtEpilogue_t> epilogue = lt_epilogue(p.epilogue);
      if (!epilogue) fail("cuBLASLt has no epilogue like {}", p.epilogue.name());
      set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, *epilogue);
      if (p.epilogue.bias != BiasAlong::none)
        set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                 p.epilogue.bias_f32 ? CUDA_R_32F : c_type_);
      if (p.epilogue.aux) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, c_type_);
      bias_ = p.epilogue.bias != BiasAlong::none;
      aux_ = p.epilogue.aux;
    }
  } catch (...) {
    release();
    throw;
  }
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  d_ = c_ = b_ = a_ = nullptr;
  desc_ = nullptr;
}

std::vector<LtAlgoConfig> LtGemm::heuristic(int count, size_t max_workspace) const {
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  std::vector<cublasLtMatmulHeuristicResult_t> results(size_t(std::max(count, 0)));
  int returned = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  try {
    set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(max_workspace));
    // The alignment every later call of the problem has (part of its key).
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(align_a_));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t(align_b_));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t(align_c_));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t(align_d_));
    if (count > 0)
      status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, d_, pref, count,
                                              results.data(), &returned);
  } catch (...) {
    cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  std::vector<LtAlgoConfig> out;
  if (status != CUBLAS_STATUS_SUCCESS) return out;  // none for this problem
  for (int i = 0; i < returned; ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS)
      out.push_back(config_of(results[size_t(i)].algo));
  return out;
}

std::optional<LtReadyAlgo> LtGemm::ready(const LtAlgoConfig& c, std::string* why) const {
  LtReadyAlgo ready{};
  cublasStatus_t status = cublasLtMatmulAlgoInit(handle_, compute_, CUDA_R_32F, a_type_, b_type_,
                                                 c_type_, c_type_, int(c.algo_id), &ready.algo);
  if (status != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("cublasLtMatmulAlgoInit: {}", cublasGetStatusString(status));
    return std::nullopt;
  }
  try {
    set_algo<uint32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile_id);
    set_algo<uint32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages_id);
    set_algo<int32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk_num);
    set_algo<uint32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction_scheme);
    set_algo<uint32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.cta_swizzling);
    set_algo<uint32_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom_option);
    set_algo<uint16_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner_shape_id);
    set_algo<uint16_t>(&ready.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster_shape_id);
  } catch (const Error& e) {
    *why = e.what();
    return std::nullopt;
  }
  cublasLtMatmulHeuristicResult_t result{};
  status = cublasLtMatmulAlgoCheck(handle_, desc_, a_, b_, c_, d_, &ready.algo, &result);
  if (status != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("cublasLtMatmulAlgoCheck: {}", cublasGetStatusString(status));
    return std::nullopt;
  }
  ready.workspace_bytes = result.workspaceSize;
  return ready;
}

cublasStatus_t LtGemm::run(const LtReadyAlgo& algo, const GemmCall& x, void* workspace,
                           cudaStream_t stream) const {
  void* const d = x.d ? x.d : x.c;
  if (!bias_ && !aux_ && !scales_)
    return cublasLtMatmul(handle_, desc_, &x.alpha, x.b, a_, x.a, b_, &x.beta, x.c, c_, d, d_,
                          &algo.algo, workspace, algo.workspace_bytes, stream);
  std::lock_guard lock(desc_mutex_);
  const auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value) {
    return cublasLtMatmulDescSetAttribute(desc_, attribute, &value, sizeof value);
  };
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (bias_) status = set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, x.bias);
  // cuBLAS's A is our B: its scale is ours of B. A null pointer is a scale of 1, as ours.
  if (scales_ && status == CUBLAS_STATUS_SUCCESS)
    status = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, x.scale_b);
  if (scales_ && status == CUBLAS_STATUS_SUCCESS)
    status = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, x.scale_a);
  // aux is column-major n x m to cuBLAS as C is: its ld is ours.
  if (aux_ && status == CUBLAS_STATUS_SUCCESS)
    status = set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, x.aux);
  if (aux_ && status == CUBLAS_STATUS_SUCCESS)
    status = set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(x.ldaux));
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  return cublasLtMatmul(handle_, desc_, &x.alpha, x.b, a_, x.a, b_, &x.beta, x.c, c_, d, d_,
                        &algo.algo, workspace, algo.workspace_bytes, stream);
}

}  // namespace tgemm
