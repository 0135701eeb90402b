// The classic sgemm_simt config the tests start from (128x128x8 tiles, 8x8 per thread,
// float4 loads, double buffered), with the parameters a test cares about overridden.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/jit/compiled_kernel.h"
#include "src/templates/gemm_template.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"

namespace tgemm::testing {

inline KernelConfig sgemm_config(
    std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c{"sgemm_simt",
                 {{"BM", 128},
                  {"BN", 128},
                  {"BK", 8},
                  {"TM", 8},
                  {"TN", 8},
                  {"WARP_N", 8},
                  {"VEC", 4},
                  {"PAD_A", 4},
                  {"PAD_B", 4},
                  {"STAGES", 2},
                  {"SPLIT_K", 1},
                  {"SPLIT_MODE", 0},
                  {"SWIZZLE", 1},
                  {"MIN_BLOCKS", 1}}};
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

// A legal sgemm_simt config told apart by `label` (its SWIZZLE, legal at any value from 1):
// what a database fixture stores, as readers skip a config its family's space refuses.
inline KernelConfig labelled_sgemm_config(int64_t label) {
  return sgemm_config({{"SWIZZLE", label}});
}

// A config's cubin for an f32 problem of this layout, as the tuner builds it.
inline CompiledKernel compile_f32(const KernelConfig& config, Op op_a, Op op_b,
                                  const std::string& arch) {
  return build_kernel(template_named(config.template_name), config,
                      Problem::packed(GemmTypes{}, op_a, op_b, 1, 1, 1), arch);
}

// What one block of a config needs, as its family says.
inline BlockResources block_of(const KernelConfig& config) {
  return template_named(config.template_name).block_resources(config);
}

}  // namespace tgemm::testing
