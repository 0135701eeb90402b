// The shipped default table (configs/default_kernels.txt) against what the families claim:
// every (arch, type) that a family with default lines computes has a line that can serve it,
// so a type added to a family cannot be left to cuBLAS by a forgotten line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/kernel_source.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

// Every type a GEMM can have (GemmTypes::name() spellings).
const std::vector<std::string> kTypeNames = {"f32",         "tf32", "f32x3",       "f16",
                                             "f16_out_f32", "bf16", "bf16_out_f32"};

// A line of the table that serves `types` on `arch` with `family`'s kernel: of that arch or
// `*`, accepted by the family for those types there, and a legal point of its shipped space on
// that arch.
bool has_serving_line(const GemmTemplate& family, const std::string& arch, const GemmTypes& types) {
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if ((d.arch != arch && d.arch != "*") || d.types != types ||
        d.config.template_name != family.name())
      continue;
    if (family.types_unsupported(types, arch) || family.types_unsupported_by(d.config, types, arch))
      continue;
    for (const EmbeddedTemplate& t : embedded_templates())
      if (t.name == family.name() &&
          !SearchSpace::parse(t.space, t.name).rejection(d.config, arch_limits(arch)))
        return true;
  }
  return false;
}

// Whether some line of `family` serves some type on `arch`.
bool ships_lines_for(const GemmTemplate& family, const std::string& arch) {
  for (const DefaultKernel& d : shipped_default_kernels())
    if (d.config.template_name == family.name() && has_serving_line(family, arch, d.types))
      return true;
  return false;
}

// A family with no line for an arch (the naive rung, a family still being tuned, sgemm_warp
// on sm_75, whose lines need cp.async) serves there only where it was tuned; one with a line
// there has one for every type it claims there: another family's line would serve an untuned
// call a slower kernel (an f32-out problem on sm_90 got mma.sync's line where the wgmma family
// computes it), and none at all leaves the call to cuBLAS.
TEST(DefaultKernels, a_family_with_lines_for_an_arch_has_one_for_every_type_it_claims_there) {
  int claims = 0;
  for (const EmbeddedTemplate& t : embedded_templates()) {
    const SearchSpace space = SearchSpace::parse(t.space, t.name);
    const GemmTemplate& family = template_named(t.name);
    for (const std::string& arch : known_archs()) {
      if (!ships_lines_for(family, arch)) continue;
      for (const std::string& name : kTypeNames) {
        const GemmTypes types = parse_gemm_types(name);
        if (space.types_unsupported(types, arch) || family.types_unsupported(types, arch)) continue;
        ++claims;
        EXPECT_TRUE(has_serving_line(family, arch, types))
            << t.name << " computes " << name << " on " << arch
            << " but configs/default_kernels.txt has no line of it that serves it there";
      }
    }
  }
  EXPECT_GT(claims, 10);
}

}  // namespace
}  // namespace tgemm
