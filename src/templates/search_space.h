// SearchSpace: a template's tunable parameters with their values, derived quantities and
// named constraints (each with a readable reason), read from configs/spaces/*.yaml. In the
// library because the shipped spaces also check every config a database holds (stored_config.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/dtype.h"
#include "src/core/kernel_config.h"

namespace tgemm {

namespace detail {
class SpaceEvaluator;
struct SpaceHost;
}  // namespace detail

struct SpaceParameter {
  std::string name;
  std::vector<int64_t> values;
};

struct SpaceConstraint {
  std::string expression;  // "BM % TM == 0"
  std::string reason;      // "BM must be a multiple of TM"
};

// Expressions use C integer semantics: / truncates, % is the C remainder, comparisons and
// && || give 0 or 1; division or modulo by zero, or a value beyond 2^53, makes the
// constraint fail, naming which. Only + - * / % ( ) == != < <= > >= && || ! min(a, b)
// max(a, b), decimal integers and names are accepted (no ',' between conditions, no ?:).
// Variables: the parameters, the derived names, the arch limits MAX_THREADS_PER_BLOCK,
// MAX_THREADS_PER_SM, REGS_PER_SM, SMEM_PER_BLOCK_OPTIN, SMEM_PER_SM and ARCH, and for a space
// of a registered family THREADS and DYNAMIC_SMEM, which its host side gives
// (GemmTemplate::block_resources: one place states a block's threads and shared memory).
// Not thread-safe: rejection() and enumerate() reuse parsed expressions kept inside the
// object; use one SearchSpace (or a copy) per thread.
class SearchSpace {
 public:
  // Cross products larger than this are refused by load(): enumerating them would take
  // more than about a minute.
  static constexpr uint64_t kMaxSpacePoints = 50'000'000;
  // enumerate() refuses a space with more legal configs than this (about 0.6 GB of them).
  static constexpr uint64_t kMaxLegalConfigs = 1'000'000;

  // Throws Error naming the file (and line where known) for malformed YAML, unknown keys,
  // empty value lists, an expression outside the grammar or naming an unknown variable, an
  // unknown template, a parameter the template does not declare (listing its tunables),
  // and more than kMaxSpacePoints points.
  static SearchSpace load(const std::string& path);
  // As load(path), but the parameters are checked against `template_text` (a template's
  // source) instead of the embedded template the file names.
  static SearchSpace load(const std::string& path, const std::string& template_text);
  // As load(), from the text of a space file (a shipped space embedded in the library);
  // `origin` stands for the path in messages and path(), e.g. "<embedded NAME.yaml>".
  // A relative `source:` is relative to the current folder.
  static SearchSpace parse(const std::string& text, const std::string& origin);

  const std::string& template_name() const { return template_name_; }
  // Why the space's `dtypes:` does not cover these types on `arch`, or nullopt (always, for a
  // space without one: its family's types_unsupported decides).
  std::optional<std::string> types_unsupported(const GemmTypes& types,
                                               const std::string& arch) const;
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
    std::vector<KernelConfig> legal;                     // in config_at order
    std::map<std::string, uint64_t> rejected_by_reason;  // constraint reason -> count
  };
  // Walks the cross product without holding it, logging progress at info level every
  // `progress_every`. Throws Error when no config of the space is legal on this arch, or
  // more than kMaxLegalConfigs are.
  Enumeration enumerate(const ArchLimits& limits,
                        std::chrono::milliseconds progress_every = std::chrono::seconds(5)) const;

  const std::string& path() const { return path_; }
  // `source:` of the file: device code to tune with the family's host side instead of the
  // embedded template (a template under development, a test's variant); empty when none.
  const std::string& source_path() const { return source_path_; }
  // Derived names and their expressions, in declaration order.
  const std::vector<std::pair<std::string, std::string>>& derived() const { return derived_; }
  // The integer defaults of the template's tunables (`#define NAME value`), by name.
  const std::map<std::string, int64_t>& template_defaults() const { return template_defaults_; }
  // Parameters plus derived values of `config` on an arch, e.g. {"THREADS", 256}; throws
  // Error when the config lacks a parameter or a derived value divides by zero.
  std::map<std::string, int64_t> derived_values(const KernelConfig& config,
                                                const ArchLimits& limits) const;

 private:
  // `text`: the file's content, or null to read `path`.
  static SearchSpace read(const std::string& path, const std::string* text,
                          const std::string* template_text);

  // Parsed expressions, built once; copies start without them because each evaluator's
  // parsers point into its own variable storage.
  class EvaluatorCache {
   public:
    EvaluatorCache();
    ~EvaluatorCache();
    EvaluatorCache(const EvaluatorCache&);
    EvaluatorCache& operator=(const EvaluatorCache&);
    EvaluatorCache(EvaluatorCache&&) noexcept;
    EvaluatorCache& operator=(EvaluatorCache&&) noexcept;
    std::unique_ptr<detail::SpaceEvaluator> evaluator;
  };
  detail::SpaceEvaluator& evaluator() const;
  detail::SpaceHost host() const;

  std::string path_;
  std::string template_name_;
  std::vector<SpaceParameter> parameters_;
  std::vector<std::pair<std::string, std::string>> derived_;  // name, expression
  std::vector<SpaceConstraint> constraints_;
  std::vector<std::pair<std::string, std::string>> dtypes_;  // type name, lowest arch
  std::string source_path_;
  std::map<std::string, int64_t> template_defaults_;  // of the template's tunables
  mutable EvaluatorCache cache_;
};

}  // namespace tgemm
