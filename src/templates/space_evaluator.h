// A search space's expressions parsed once and evaluated for one config after another: the
// parameters, the arch's limits, the values the family's host side gives and the derived
// values in one array the parsers read (SearchSpace's engine; not thread-safe).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"
#include "src/templates/integer_expression.h"
#include "src/templates/search_space.h"

namespace tgemm {

class GemmTemplate;

namespace detail {

// Names the expressions may use besides the space's own; filled from ArchLimits.
// ARCH is the compute capability as a number (sm_80 -> 80), for features an arch lacks.
inline constexpr const char* kArchLimitNames[] = {"MAX_THREADS_PER_BLOCK", "MAX_THREADS_PER_SM",
                                                  "REGS_PER_SM",           "SMEM_PER_BLOCK_OPTIN",
                                                  "SMEM_PER_SM",           "ARCH"};
inline constexpr size_t kArchLimitCount = std::size(kArchLimitNames);
// Names whose values the family's host side gives (GemmTemplate::block_resources), so that a
// block's threads and dynamic shared memory are computed in one place.
inline constexpr const char* kHostNames[] = {"THREADS", "DYNAMIC_SMEM"};
inline constexpr size_t kHostCount = std::size(kHostNames);
// An expression that failed to parse or to name known variables, located for the loader.
struct ExpressionError {
  bool in_derived;
  size_t index;
  std::string message;
};

// A space's family as its expressions see it: the host side that gives THREADS and
// DYNAMIC_SMEM (null for a name no family is registered under: then no expression may use
// them), and the template's defaults of the tunables the space does not list.
struct SpaceHost {
  const GemmTemplate* family = nullptr;
  std::string template_name;
  std::map<std::string, int64_t> defaults;
};

// The space's expressions parsed once, with the variable storage their parsers read:
// slots [0, P) parameters, then the arch limits, then the host side's values, then the derived
// values.
class SpaceEvaluator {
 public:
  struct Verdict {
    int constraint = -1;  // first failing constraint, -1 when all hold
    int derived = -1;     // first undefined derived value when all constraints hold
    // Why the failing constraint or the derived value is undefined; none when it is false.
    Undefined cause = Undefined::none;
  };

  // Parses every expression (throwing ExpressionError) with the parameters' first values and
  // the default arch's limits.
  SpaceEvaluator(const std::vector<SpaceParameter>& parameters,
                 const std::vector<std::pair<std::string, std::string>>& derived,
                 const std::vector<SpaceConstraint>& constraints, const SpaceHost& host);

  // The parameters' values, in the space's order: set them, then check().
  double* values() { return values_.get(); }
  void set_limits(const ArchLimits& limits);
  Verdict check();

  // "BM=64, BK=8, THREADS=256" for the variables a constraint or derived value reads.
  std::string shown_values(bool in_derived, size_t index) const;

  size_t derived_offset() const { return derived_offset_; }
  size_t host_offset() const { return host_offset_; }
  size_t host_count() const { return derived_offset_ - host_offset_; }

 private:
  struct Expression {
    std::unique_ptr<IntExprParser> parser;
    std::vector<size_t> shown_slots;
  };

  // Defines only the first `visible` slots, so a name used before it is declared is unknown.
  // Evaluates once (muParser parses on the first Eval) and, for a derived value, stores it
  // for the expressions below.
  Expression make_parser(const std::string& expression, size_t visible, bool in_derived,
                         size_t index);
  // The host side's values of the current parameters; undefined (host_refused) where it
  // throws for them.
  void set_host_values();

  size_t param_count_;
  size_t host_offset_;
  size_t derived_offset_;
  size_t slots_;
  std::unique_ptr<double[]> values_;  // the parsers hold pointers into this array
  const GemmTemplate* family_;
  // The space's parameters (first, in its order), then the template's defaults of the
  // tunables the space leaves out: what block_resources reads.
  KernelConfig host_config_;
  std::vector<std::string> names_;
  std::vector<Expression> derived_;
  std::vector<Expression> constraints_;
};

}  // namespace detail
}  // namespace tgemm
