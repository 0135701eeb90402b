#include "src/templates/stored_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "src/jit/kernel_source.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"

namespace tgemm {

namespace {

// What a family's shipped files say about its configs: the space (with the template's integer
// defaults) and the template's tunables.
struct FamilyRules {
  SearchSpace space;
  std::vector<std::string> tunables;
};

class ShippedRules {
 public:
  ShippedRules() {
    for (const EmbeddedTemplate& t : embedded_templates()) {
      by_family_.emplace(
          t.name,
          FamilyRules{SearchSpace::parse(t.space, fmt::format("<embedded {}.yaml>", t.name)),
                      declared_tunables(t.source)});
    }
  }
  const FamilyRules* find(const std::string& family) const {
    auto it = by_family_.find(family);
    return it == by_family_.end() ? nullptr : &it->second;
  }
  // SearchSpace::rejection reuses the space's parsed expressions: one caller at a time.
  std::optional<std::string> rejection(const FamilyRules& rules, const KernelConfig& config,
                                       const ArchLimits& limits) {
    std::lock_guard lock(mutex_);
    return rules.space.rejection(config, limits);
  }

 private:
  std::map<std::string, FamilyRules> by_family_;
  std::mutex mutex_;
};

// Parsed once, on first use; leaked so that a check from a static destructor still finds it.
ShippedRules& shipped_rules() {
  static auto* rules = new ShippedRules;
  return *rules;
}

// The least value a stored `name` may take: 1 when the space lists no value below 1 (the host
// side may divide by it; a tuner's own space may reach past the listed values, never below 1),
// else 0.
int64_t least_value(const SearchSpace& space, const std::string& name) {
  for (const SpaceParameter& p : space.parameters())
    if (p.name == name)
      return std::all_of(p.values.begin(), p.values.end(), [](int64_t v) { return v >= 1; }) ? 1
                                                                                             : 0;
  return 0;
}

// Names and values alone: each parameter once, declared by the template, in range.
std::optional<std::string> parameter_rejection(const KernelConfig& config,
                                               const FamilyRules& rules) {
  std::set<std::string> seen;
  for (const auto& [name, value] : config.params) {
    if (!seen.insert(name).second) return fmt::format("parameter {} is given twice", name);
    if (std::find(rules.tunables.begin(), rules.tunables.end(), name) == rules.tunables.end())
      return fmt::format("{} is not a tunable of template {} (its tunables: {})", name,
                         config.template_name, fmt::join(rules.tunables, ", "));
    const int64_t least = least_value(rules.space, name);
    if (value < least || value > INT_MAX)
      return fmt::format("{}={} is out of range ({} to {})", name, value, least, INT_MAX);
  }
  return std::nullopt;
}

// The config with every parameter of the space, in its order: the config's value, else the
// template's default. nullopt (and `missing` named) when one has neither.
std::optional<KernelConfig> in_space(const KernelConfig& config, const FamilyRules& rules,
                                     std::string* missing) {
  const std::map<std::string, int64_t>& defaults = rules.space.template_defaults();
  KernelConfig full{config.template_name, {}};
  for (const SpaceParameter& p : rules.space.parameters()) {
    auto fallback = defaults.find(p.name);
    if (config.has(p.name)) {
      full.params.emplace_back(p.name, config.get(p.name));
    } else if (fallback != defaults.end()) {
      full.params.emplace_back(p.name, fallback->second);
    } else {
      *missing = p.name;
      return std::nullopt;
    }
  }
  return full;
}

// The questions readers ask of a config, over problems of every type the family computes on
// the arch, every layout, square, skinny and misaligned: a parameter the host side needs and
// the config leaves out (the template's default serves the kernel, not the host side) is an
// Error here, where the row is named, rather than in the dispatcher.
std::optional<std::string> host_side_rejection(const GemmTemplate& family,
                                               const KernelConfig& config,
                                               const std::string& arch) {
  constexpr int64_t kShapes[][3] = {
      {1024, 1024, 1024}, {999, 1001, 997}, {8, 4096, 4096}, {4096, 1, 4096}};
  constexpr int kSomeSmCount = 132;  // a GPU's width, so a family's stream-tail plan runs too
  try {
    family.block_resources(config);
    family.entries(config, GemmTypes{});
    for (const GemmTypes& types : every_gemm_types()) {
      if (family.types_unsupported(types, arch)) continue;
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          for (const auto& [m, n, k] : kShapes) {
            const Problem problem = Problem::packed(types, op_a, op_b, m, n, k);
            family.describe(config, problem);
            if (!family.unsupported_reason(config, problem, arch))
              family.plan_launch(config, problem, kSomeSmCount);
          }
    }
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> stored_config_rejection(const KernelConfig& config,
                                                   const std::string& arch) {
  if (is_vendor_call(config)) return vendor_call_rejection(config);
  const GemmTemplate* family = find_template(config.template_name);
  ShippedRules& shipped = shipped_rules();
  const FamilyRules* rules = shipped.find(config.template_name);
  if (!family || !rules) return fmt::format("unknown template family '{}'", config.template_name);
  ArchLimits limits;
  try {
    limits = arch_limits(arch);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  if (auto why = parameter_rejection(config, *rules)) return why;
  std::string missing;
  const std::optional<KernelConfig> full = in_space(config, *rules, &missing);
  if (!full)
    return fmt::format("parameter {} is missing and template {} gives it no default", missing,
                       config.template_name);
  if (auto why = shipped.rejection(*rules, *full, limits)) return why;
  return host_side_rejection(*family, config, arch);
}

}  // namespace tgemm
