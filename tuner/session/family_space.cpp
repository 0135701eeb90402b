#include "tuner/session/family_space.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "src/core/error.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/kernel_source.h"
#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

// The shipped space of a registered family, embedded in the library with its template: a
// tuner in any build folder or install finds it.
SearchSpace shipped_space(const std::string& template_name) {
  for (const EmbeddedTemplate& t : embedded_templates())
    if (template_name == t.name && t.space && *t.space)
      return SearchSpace::parse(t.space, fmt::format("<embedded {}.yaml>", template_name));
  fail("family {} has no embedded search space (configs/spaces/{}.yaml); pass --space",
       template_name, template_name);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<std::unique_ptr<FamilySpace>> load_family_spaces(
    const std::vector<std::string>& paths) {
  std::vector<SearchSpace> spaces;
  for (const std::string& path : paths) spaces.push_back(SearchSpace::load(path));
  if (paths.empty())
    for (const GemmTemplate* t : all_templates()) spaces.push_back(shipped_space(t->name()));
  std::vector<std::unique_ptr<FamilySpace>> out;
  for (SearchSpace& space : spaces) {
    const std::string path = space.path();
    auto fs = std::make_unique<FamilySpace>();
    fs->space = std::move(space);
    const std::string& name = fs->space.template_name();
    if (fs->space.source_path().empty()) {
      fs->family = &template_named(name);
    } else {
      fs->owned = make_template(
          name, kernel_source_from_text(name, read_text_file(fs->space.source_path())));
      fs->family = fs->owned.get();
    }
    spdlog::info("space {}: family {} ({} points)", path, name, fs->space.cartesian_size());
    out.push_back(std::move(fs));
  }
  return out;
}

KernelConfig in_space_order(const FamilySpace& fs, const KernelConfig& config) {
  const SearchSpace& space = fs.space;
  KernelConfig out{space.template_name(), {}};
  if (config.template_name != space.template_name()) return out;
  for (const SpaceParameter& p : space.parameters()) {
    std::optional<int64_t> value = declared_integer_default(fs.family->source().text, p.name);
    if (config.has(p.name)) value = config.get(p.name);
    if (!value) return {space.template_name(), {}};
    out.params.emplace_back(p.name, *value);
  }
  return out;
}

std::optional<KernelConfig> admitted_config(const FamilySpace& fs, const KernelConfig& config,
                                            const GemmTypes& types, const ArchLimits& limits) {
  KernelConfig ordered = in_space_order(fs, config);
  if (ordered.params.empty() || fs.space.rejection(ordered, limits) ||
      fs.family->types_unsupported_by(ordered, types, limits.arch))
    return std::nullopt;
  return ordered;
}

std::vector<KernelConfig> default_configs(const FamilySpace& fs, const GemmTypes& types,
                                          const ArchLimits& limits) {
  std::vector<KernelConfig> out;
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.arch != "*" && d.arch != limits.arch) continue;
    if (d.types != types || d.config.template_name != fs.space.template_name()) continue;
    KernelConfig config = in_space_order(fs, d.config);
    if (!config.params.empty() && !fs.space.rejection(config, limits)) out.push_back(config);
  }
  return out;
}

const std::vector<KernelConfig>& legal_for_types(const FamilySpace& fs, const GemmTypes& types,
                                                 const std::string& arch,
                                                 std::vector<KernelConfig>* kept) {
  const std::vector<KernelConfig>& all = fs.enumeration->legal;
  auto refused = [&](const KernelConfig& c) {
    return fs.family->types_unsupported_by(c, types, arch).has_value();
  };
  const auto first = std::find_if(all.begin(), all.end(), refused);
  if (first == all.end()) return all;
  kept->assign(all.begin(), first);  // each config is asked once
  std::copy_if(std::next(first), all.end(), std::back_inserter(*kept),
               [&](const KernelConfig& c) { return !refused(c); });
  spdlog::info("{}: {} of {} legal config(s) cannot run {} (left out)", fs.family->name(),
               all.size() - kept->size(), all.size(), types.name());
  return *kept;
}

}  // namespace tgemm
