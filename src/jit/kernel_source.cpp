#include "src/jit/kernel_source.h"

#include <fmt/ranges.h>

#include "src/core/error.h"
#include "src/core/hash.h"

namespace tgemm {

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  for (const auto& t : embedded_templates()) names.emplace_back(t.name);
  return names;
}

KernelSource kernel_source(const std::string& name) {
  for (const auto& t : embedded_templates()) {
    if (name == t.name) return {t.name, t.source, stable_hash(t.source)};
  }
  fail("unknown kernel template '{}' (known: {})", name, fmt::join(template_names(), ", "));
}

}  // namespace tgemm
