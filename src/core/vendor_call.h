// Vendor calls: the vendor library's GEMM as a contender for a problem's best. A vendor call is
// stored as a kernel of a pseudo-family without device code: "cublas" (the matching cublasGemmEx
// call with its default algorithm, SGEMM for f32 and f32x3: the call every ratio divides by) or
// "cublasLt" (cublasLtMatmul with one algorithm of its heuristic, whose configuration the
// parameters hold). Where one is a problem's best, the dispatcher calls the library. Their
// "source hash" is the cuBLAS version (cublas_version()), so a library upgrade makes them stale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/core/kernel_config.h"

namespace tgemm {

inline constexpr const char kCublasCall[] = "cublas";
inline constexpr const char kCublasLtCall[] = "cublasLt";
// What kernels.library holds for a kernel of ours.
inline constexpr const char kTgemmLibrary[] = "tgemm";

bool is_vendor_family(const std::string& family);
bool is_vendor_call(const KernelConfig& config);
// The library a family's kernels belong to: kTgemmLibrary, or the vendor family itself.
std::string library_of(const std::string& family);

// The matching cuBLAS call with its default algorithm.
KernelConfig cublas_default_call();

// One cuBLASLt algorithm as its configuration attributes (cublasLtMatmulAlgoConfigAttributes_t),
// which rebuild it (cublasLtMatmulAlgoInit, then ...ConfigSetAttribute) for the same types.
struct LtAlgoConfig {
  int64_t algo_id = 0;
  int64_t tile_id = 0;
  int64_t stages_id = 0;
  int64_t splitk_num = 1;
  int64_t reduction_scheme = 0;
  int64_t cta_swizzling = 0;
  int64_t custom_option = 0;
  int64_t inner_shape_id = 0;
  int64_t cluster_shape_id = 0;
  bool operator==(const LtAlgoConfig&) const = default;
};

KernelConfig cublaslt_call(const LtAlgoConfig& algo);
// The algorithm of a cublasLt call; nullopt for any other config or one missing a parameter.
std::optional<LtAlgoConfig> lt_algo_of(const KernelConfig& config);

// Why a stored vendor call cannot be rebuilt: cuBLAS with parameters, or a cuBLASLt algorithm
// missing one or holding one past its attribute's 32 bits; nullopt when it can.
std::optional<std::string> vendor_call_rejection(const KernelConfig& config);

// "cuBLAS (cublasGemmEx, its default algorithm)", "cuBLASLt (cublasLtMatmul, algorithm 21,
// tile 18, ...)": what a vendor call is, for people.
std::string describe_vendor_call(const KernelConfig& config);

}  // namespace tgemm
