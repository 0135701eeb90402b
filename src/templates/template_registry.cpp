#include "src/templates/template_registry.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "src/core/error.h"

namespace tgemm {

namespace {

const TemplateFactory& factory_named(const std::string& name) {
  for (const TemplateFactory& f : template_factories())
    if (name == f.name) return f;
  std::vector<std::string> names;
  for (const TemplateFactory& f : template_factories()) names.emplace_back(f.name);
  fail("unknown template family '{}' (registered: {})", name, fmt::join(names, ", "));
}

// Built once, on first use; lives as long as the process (kernels point at it).
const std::vector<std::unique_ptr<GemmTemplate>>& registry() {
  static const std::vector<std::unique_ptr<GemmTemplate>> templates = [] {
    std::vector<std::unique_ptr<GemmTemplate>> out;
    for (const TemplateFactory& f : template_factories())
      out.push_back(f.make(kernel_source(f.name)));
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a->name() < b->name(); });
    return out;
  }();
  return templates;
}

}  // namespace

const std::vector<const GemmTemplate*>& all_templates() {
  static const std::vector<const GemmTemplate*> list = [] {
    std::vector<const GemmTemplate*> out;
    for (const auto& t : registry()) out.push_back(t.get());
    return out;
  }();
  return list;
}

const GemmTemplate* find_template(const std::string& name) {
  for (const GemmTemplate* t : all_templates())
    if (t->name() == name) return t;
  return nullptr;
}

const GemmTemplate& template_named(const std::string& name) {
  if (const GemmTemplate* t = find_template(name)) return *t;
  factory_named(name);  // throws with the list of families
  fail("unknown template family '{}'", name);
}

std::unique_ptr<GemmTemplate> make_template(const std::string& family, KernelSource source) {
  return factory_named(family).make(std::move(source));
}

}  // namespace tgemm
