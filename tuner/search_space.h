// SearchSpace: a template's tunable parameters with their values, derived quantities and
// named constraints (each with a readable reason), read from configs/spaces/*.yaml.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"

namespace tgemm {

struct SpaceParameter {
  std::string name;
  std::vector<int64_t> values;
};

struct SpaceConstraint {
  std::string expression;  // "BM % TM == 0"
  std::string reason;      // "BM must be a multiple of TM"
};

class SearchSpace {
 public:
  // Throws Error naming the file (and line where known) for malformed YAML, unknown keys,
  // empty value lists, an expression that does not parse or names an unknown variable.
  static SearchSpace load(const std::string& path);

  const std::string& template_name() const { return template_name_; }
  const std::vector<SpaceParameter>& parameters() const { return parameters_; }
  const std::vector<SpaceConstraint>& constraints() const { return constraints_; }
  // Number of points before constraints (product of the value-list sizes).
  uint64_t cartesian_size() const;
  // The point at `index` in mixed-radix order (last parameter fastest).
  KernelConfig config_at(uint64_t index) const;

  // Why `config` is illegal on an arch: the first failing constraint's reason followed by
  // the values it saw ("BM must be a multiple of TM (BM=32, TM=..)"), or nullopt when legal.
  std::optional<std::string> rejection(const KernelConfig& config, const ArchLimits& limits) const;

  struct Enumeration {
    std::vector<KernelConfig> legal;                 // in config_at order
    std::map<std::string, uint64_t> rejected_by_reason;  // constraint reason -> count
  };
  // Throws Error when no config of the space is legal on this arch.
  Enumeration enumerate(const ArchLimits& limits) const;

 private:
  std::string path_;
  std::string template_name_;
  std::vector<SpaceParameter> parameters_;
  std::vector<std::pair<std::string, std::string>> derived_;  // name, expression
  std::vector<SpaceConstraint> constraints_;
};

}  // namespace tgemm
