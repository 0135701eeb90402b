// KernelConfig: one point of a template's search space (template + ordered parameters),
// with the stable name and the -D list NVRTC sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tgemm {

struct KernelConfig {
  std::string template_name;  // the family: the stem of kernel_templates/<name>.cuh
  // Parameter name -> value, in the order the search space declares them; that
  // order makes canonical_name() stable.
  std::vector<std::pair<std::string, int64_t>> params;

  // "<template>_bm128_bn128_bk8_..." : template name, then lower-case name + value per parameter.
  std::string canonical_name() const;
  // {"-DBM=128", ...}
  std::vector<std::string> defines() const;
  bool has(const std::string& name) const;
  int64_t get(const std::string& name) const;  // throws Error when absent
  // A parameter the host side divides by: throws Error when absent or below 1.
  int64_t divisor(const std::string& name) const;
  int64_t get_or(const std::string& name, int64_t fallback) const;
  void set(const std::string& name, int64_t value);  // replaces or appends

  // Parameters as "BM=128,BN=128,..." and back; the form the database stores.
  std::string params_text() const;
  static KernelConfig from_params_text(const std::string& template_name, const std::string& text);

  bool operator==(const KernelConfig&) const = default;
};

// Hashes what operator== compares, for unordered containers: dedup of proposals in linear
// time instead of pairwise comparisons.
struct KernelConfigHash {
  size_t operator()(const KernelConfig& config) const noexcept;
};

}  // namespace tgemm
