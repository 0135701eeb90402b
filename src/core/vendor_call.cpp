#include "src/core/vendor_call.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <utility>

namespace tgemm {

namespace {

// The parameter names of a cublasLt call, in its config's order, with their fields.
using LtField = int64_t LtAlgoConfig::*;
constexpr std::array<std::pair<const char*, LtField>, 9> kLtParams = {{
    {"ALGO_ID", &LtAlgoConfig::algo_id},
    {"TILE_ID", &LtAlgoConfig::tile_id},
    {"STAGES_ID", &LtAlgoConfig::stages_id},
    {"SPLITK_NUM", &LtAlgoConfig::splitk_num},
    {"REDUCTION_SCHEME", &LtAlgoConfig::reduction_scheme},
    {"CTA_SWIZZLING", &LtAlgoConfig::cta_swizzling},
    {"CUSTOM_OPTION", &LtAlgoConfig::custom_option},
    {"INNER_SHAPE_ID", &LtAlgoConfig::inner_shape_id},
    {"CLUSTER_SHAPE_ID", &LtAlgoConfig::cluster_shape_id},
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
  for (const auto& [name, field] : kLtParams) config.params.emplace_back(name, algo.*field);
  return config;
}

std::optional<LtAlgoConfig> lt_algo_of(const KernelConfig& config) {
  if (config.template_name != kCublasLtCall || config.params.size() != kLtParams.size())
    return std::nullopt;
  LtAlgoConfig algo;
  for (const auto& [name, field] : kLtParams) {
    if (!config.has(name)) return std::nullopt;
    algo.*field = config.get(name);
  }
  return algo;
}

std::optional<std::string> vendor_call_rejection(const KernelConfig& config) {
  if (config.template_name == kCublasCall)
    return config.params.empty() ? std::nullopt
                                 : std::optional<std::string>("a cuBLAS call takes no parameters");
  if (!lt_algo_of(config))
    return fmt::format("a cuBLASLt call takes exactly {} parameters, {}", kLtParams.size(),
                       kLtParams[0].first + std::string(" to ") + kLtParams.back().first);
  for (const auto& [name, value] : config.params)
    if (value < 0 || value > UINT32_MAX)
      return fmt::format("{}={} is out of range (0 to {})", name, value, UINT32_MAX);
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
