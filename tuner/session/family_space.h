// FamilySpace: one family's search space with the host side it is tuned through, and the
// questions a tuning run asks of the pair: its shipped defaults, its legal configs for some
// types, a stored config as the space spells it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"
#include "src/templates/gemm_template.h"
#include "src/templates/search_space.h"

namespace tgemm {

struct FamilySpace {
  SearchSpace space;
  const GemmTemplate* family = nullptr;
  std::unique_ptr<GemmTemplate> owned;  // set when the space names its own `source:`
  std::optional<SearchSpace::Enumeration> enumeration;  // on first use
};

// The spaces at `paths`, else (paths empty) the shipped space of every registered family,
// embedded in the library so any build folder or install has it. Throws Error naming a space
// or a `source:` file it cannot read.
std::vector<std::unique_ptr<FamilySpace>> load_family_spaces(const std::vector<std::string>& paths);

// `config` with its parameters in the space's order (empty when it lacks one of them or
// belongs to another template), so it compares equal to the space's own points.
// A parameter the config leaves out (one added to the family after it was stored) takes
// the template's default, which its kernel was built with.
KernelConfig in_space_order(const FamilySpace& fs, const KernelConfig& config);

// `config` as the space spells it when the space holds it legally on `limits` and the family
// runs it in `types`; nullopt otherwise.
std::optional<KernelConfig> admitted_config(const FamilySpace& fs, const KernelConfig& config,
                                            const GemmTypes& types, const ArchLimits& limits);

// The shipped defaults of this family, types and arch that are legal in the space.
std::vector<KernelConfig> default_configs(const FamilySpace& fs, const GemmTypes& types,
                                          const ArchLimits& limits);

// The space's legal configs (fs.enumeration, filled) that the family can run in these types
// (the space does not see the type: f32x3 needs more of a config than one pass does): the
// enumeration itself when the family refuses none, else `kept`, which then holds the rest.
const std::vector<KernelConfig>& legal_for_types(const FamilySpace& fs, const GemmTypes& types,
                                                 const std::string& arch,
                                                 std::vector<KernelConfig>* kept);

}  // namespace tgemm
