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

namespace {

// The text and its headers; the hash covers all of them.
KernelSource with_headers(const std::string& name, const std::string& text,
                          std::vector<NamedHeader> headers) {
  KernelSource source{name, text, std::move(headers), ""};
  std::string everything = text;
  for (const NamedHeader& h : source.headers)
    everything += fmt::format("\n// ---- {}\n{}", h.include_name, h.text);
  source.hash = stable_hash(everything);
  return source;
}

std::vector<NamedHeader> common_headers() {
  std::vector<NamedHeader> headers;
  for (const EmbeddedHeader& h : embedded_common_headers())
    headers.push_back({h.include_name, h.text});
  return headers;
}

}  // namespace

KernelSource kernel_source_from_text(const std::string& name, const std::string& text) {
  std::vector<NamedHeader> headers = common_headers();
  for (const auto& t : embedded_templates())
    headers.push_back({std::string(t.name) + ".cuh", t.source});
  return with_headers(name, text, std::move(headers));
}

// A shipped template's version covers only itself and the common headers: editing one
// family never makes another's tuned entries stale.
KernelSource kernel_source(const std::string& name) {
  for (const auto& t : embedded_templates()) {
    if (name == t.name) return with_headers(t.name, t.source, common_headers());
  }
  fail("unknown kernel template '{}' (known: {})", name, fmt::join(template_names(), ", "));
}

}  // namespace tgemm
