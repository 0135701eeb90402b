// The registry of template families: name -> host side (GemmTemplate). Every
// kernel_templates/<name>.cuh with its src/templates/<name>.cpp is registered by the build
// (cmake/embed_templates.cmake), so adding a family edits nothing here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/templates/gemm_template.h"

namespace tgemm {

struct TemplateFactory {
  const char* name;
  std::unique_ptr<GemmTemplate> (*make)(KernelSource source);
};
// Defined in the generated template_families.cpp.
const std::vector<TemplateFactory>& template_factories();

// Every registered family, in name order.
const std::vector<const GemmTemplate*>& all_templates();
// nullptr when no family has this name.
const GemmTemplate* find_template(const std::string& name);
// Throws Error naming the registered families when there is none of this name.
const GemmTemplate& template_named(const std::string& name);

// The family's host side over another text of its device code (a template under
// development, or a test's variant); owned by the caller.
std::unique_ptr<GemmTemplate> make_template(const std::string& family, KernelSource source);

}  // namespace tgemm
