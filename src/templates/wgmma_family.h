// What the Hopper wgmma families share on the host side: sm_90a builds, shared tiles of
// 128-byte rows in the 128-byte swizzle, and the types Hopper's tensor cores compute.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"
#include "src/templates/gemm_template.h"

namespace tgemm::wgmma_family {

constexpr int64_t kRowBytes = 128;    // one swizzled shared row: a slice's K depth in bytes
constexpr int64_t kAlignSmem = 1024;  // the kernels align their tiles to the swizzle period

// f16 and bf16 (C in the input type or f32) and tf32 on sm_90 only, with f32x3 where the family
// runs its three passes and FP8 (every pair of formats, C bf16, f16 or f32) where it has k32
// steps.
inline FamilyTypes tensor_types(bool with_f32x3, bool with_fp8) {
  FamilyTypes t{{{"f16", 90, 90},
                 {"f16_out_f32", 90, 90},
                 {"bf16", 90, 90},
                 {"bf16_out_f32", 90, 90},
                 {"tf32", 90, 90}},
                "Hopper's tensor cores: wgmma and setmaxnreg are sm_90a only, and the mma.sync "
                "family serves other archs"};
  if (with_f32x3) t.rules.push_back({"f32x3", 90, 90});
  if (with_fp8)
    for (const GemmTypes& types : every_gemm_types())
      if (types.fp8()) t.rules.push_back({types.name(), 90, 90});
  return t;
}

// The host side both families build on: their types, sm_90a builds, their tiles.
class WgmmaFamily : public GemmTemplate {
 public:
  WgmmaFamily(KernelSource source, bool with_f32x3, bool with_fp8)
      : GemmTemplate(std::move(source)), types_(tensor_types(with_f32x3, with_fp8)) {}

  const FamilyTypes& computed_types() const override { return types_; }

  KernelDescription describe(const KernelConfig& config, const Problem&) const override {
    return tiled_description(tile(config));
  }

  // wgmma and setmaxnreg exist only in sm_90's arch-specific target.
  std::string nvrtc_arch(const std::string& arch) const override {
    return arch_number(arch) == 90 ? arch + "a" : arch;
  }

  // BM x BN of C, K slices of one row (in 16-bit elements; tf32's hold half).
  static TileShape tile(const KernelConfig& config) {
    return {config.get("BM"), config.get("BN"), kRowBytes / 2, split_k(config), 1};
  }
  static int64_t split_k(const KernelConfig& config) { return config.get_or("SPLIT_K", 1); }

 private:
  FamilyTypes types_;
};

}  // namespace tgemm::wgmma_family
