#include "src/core/vendor_call.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <utility>

namespace tgemm {

namespace {

// The parameter names of a cublasLt call, in its config's order, with their fields and the
// range of the C type cublasLt.h gives each attribute (a stored value outside it was not
// written by the tuner; SPLITK_NUM and ALGO_ID are signed, and cuBLASLt reports -1 for some).
using LtField = int64_t LtAlgoConfig::*;
struct LtParam {
  const char* name;
  LtField field;
  int64_t min;
  int64_t max;
};
constexpr int64_t kInt32Min = INT32_MIN, kInt32Max = INT32_MAX, kUint32Max = UINT32_MAX,
                  kUint16Max = UINT16_MAX;
constexpr std::array<LtParam, 9> kLtParams = {{
    {"ALGO_ID", &LtAlgoConfig::algo_id, kInt32Min, kInt32Max},
    {"TILE_ID", &LtAlgoConfig::tile_id, 0, kUint32Max},
    {"STAGES_ID", &LtAlgoConfig::stages_id, 0, kUint32Max},
    {"SPLITK_NUM", &LtAlgoConfig::splitk_num, kInt32Min, kInt32Max},
    {"REDUCTION_SCHEME", &LtAlgoConfig::reduction_scheme, 0, kUint32Max},
    {"CTA_SWIZZLING", &LtAlgoConfig::cta_swizzling, 0, kUint32Max},
    {"CUSTOM_OPTION", &LtAlgoConfig::custom_option, 0, kUint32Max},
    {"INNER_SHAPE_ID", &LtAlgoConfig::inner_shape_id, 0, kUint16Max},
    {"CLUSTER_SHAPE_ID", &LtAlgoConfig::cluster_shape_id, 0, kUint16Max},
}};

}  // namespace

bool is_vendor_family(const std::string& family) {
  return family == kCublasCall || family == kCublasLtCall;
}

bool is_vendor_call(const KernelConfig& config) { return is_vendor_family(config.template_name); }

std::string library_of(const std::string& family) {
  return is_vendor_family(family) ? family : kTgemmLibrary;
}

KernelConfig cublas_default_call() { return {kCublasCall, {}}; }

KernelConfig cublaslt_call(const LtAlgoConfig& algo) {
  KernelConfig config{kCublasLtCall, {}};
  for (const LtParam& p : kLtParams) config.params.emplace_back(p.name, algo.*p.field);
  return config;
}

std::optional<LtAlgoConfig> lt_algo_of(const KernelConfig& config) {
  if (config.template_name != kCublasLtCall || config.params.size() != kLtParams.size())
    return std::nullopt;
  LtAlgoConfig algo;
  for (const LtParam& p : kLtParams) {
    if (!config.has(p.name)) return std::nullopt;
    algo.*p.field = config.get(p.name);
  }
  return algo;
}

std::optional<std::string> vendor_call_rejection(const KernelConfig& config) {
  if (config.template_name == kCublasCall)
    return config.params.empty() ? std::nullopt
                                 : std::optional<std::string>("a cuBLAS call takes no parameters");
  if (!lt_algo_of(config))
    return fmt::format("a cuBLASLt call takes exactly {} parameters, {}", kLtParams.size(),
                       kLtParams[0].name + std::string(" to ") + kLtParams.back().name);
  for (const LtParam& p : kLtParams)
    if (const int64_t value = config.get(p.name); value < p.min || value > p.max)
      return fmt::format("{}={} is out of range ({} to {})", p.name, value, p.min, p.max);
  return std::nullopt;
}

std::string describe_vendor_call(const KernelConfig& config) {
  if (config.template_name == kCublasCall) return "cuBLAS (cublasGemmEx, its default algorithm)";
  if (auto algo = lt_algo_of(config))
    return fmt::format(
        "cuBLASLt (cublasLtMatmul, algorithm {}, tile {}, stages {}, {} K split(s), reduction {}, "
        "swizzle {}, custom {}, inner shape {}, cluster shape {})",
        algo->algo_id, algo->tile_id, algo->stages_id, algo->splitk_num, algo->reduction_scheme,
        algo->cta_swizzling, algo->custom_option, algo->inner_shape_id, algo->cluster_shape_id);
  return config.canonical_name();
}

}  // namespace tgemm
