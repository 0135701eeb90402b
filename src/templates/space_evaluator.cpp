#include "src/templates/space_evaluator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "src/templates/gemm_template.h"

namespace tgemm::detail {

namespace {

void arch_limit_values(const ArchLimits& limits, double* out) {
  out[0] = limits.max_threads_per_block;
  out[1] = limits.max_threads_per_sm;
  out[2] = limits.regs_per_sm;
  out[3] = limits.smem_per_block_optin;
  out[4] = limits.smem_per_sm;
  out[5] = limits.arch.empty() ? 0 : arch_number(limits.arch);  // unnamed: no features
}

}  // namespace

SpaceEvaluator::SpaceEvaluator(const std::vector<SpaceParameter>& parameters,
                               const std::vector<std::pair<std::string, std::string>>& derived,
                               const std::vector<SpaceConstraint>& constraints,
                               const SpaceHost& host)
    : param_count_(parameters.size()),
      host_offset_(parameters.size() + kArchLimitCount),
      derived_offset_(host_offset_ + (host.family ? kHostCount : 0)),
      slots_(derived_offset_ + derived.size()),
      values_(std::make_unique<double[]>(slots_)),
      family_(host.family) {
  for (const auto& p : parameters) names_.push_back(p.name);
  for (const char* name : kArchLimitNames) names_.push_back(name);
  if (family_)
    for (const char* name : kHostNames) names_.push_back(name);
  for (const auto& d : derived) names_.push_back(d.first);
  for (size_t i = 0; i < param_count_; ++i) values_[i] = double(parameters[i].values.at(0));
  arch_limit_values(arch_limits(kDefaultArch), &values_[param_count_]);
  host_config_.template_name = host.template_name;
  for (const auto& p : parameters) host_config_.params.emplace_back(p.name, 0);
  for (const auto& [name, value] : host.defaults)
    if (!host_config_.has(name)) host_config_.params.emplace_back(name, value);
  if (family_) set_host_values();

  // A derived value may use the parameters, the limits and the derived values above it.
  for (size_t d = 0; d < derived.size(); ++d)
    derived_.push_back(make_parser(derived[d].second, derived_offset_ + d, true, d));
  for (size_t c = 0; c < constraints.size(); ++c)
    constraints_.push_back(make_parser(constraints[c].expression, slots_, false, c));
}

void SpaceEvaluator::set_limits(const ArchLimits& limits) {
  arch_limit_values(limits, &values_[param_count_]);
}

SpaceEvaluator::Verdict SpaceEvaluator::check() {
  if (family_) set_host_values();
  for (size_t d = 0; d < derived_.size(); ++d)
    values_[derived_offset_ + d] = derived_[d].parser->Eval();
  Verdict verdict;
  for (size_t c = 0; c < constraints_.size(); ++c) {
    const double result = constraints_[c].parser->Eval();
    if (result == 0 || std::isnan(result)) {
      verdict.constraint = int(c);
      verdict.cause = cause_of(result);
      return verdict;
    }
  }
  // A derived value that divides by zero would not compile even if no constraint uses it.
  for (size_t d = 0; d < derived_.size(); ++d)
    if (std::isnan(values_[derived_offset_ + d])) {
      verdict.derived = int(d);
      verdict.cause = cause_of(values_[derived_offset_ + d]);
      return verdict;
    }
  return verdict;
}

std::string SpaceEvaluator::shown_values(bool in_derived, size_t index) const {
  const Expression& e = in_derived ? derived_[index] : constraints_[index];
  std::string text;
  for (size_t slot : e.shown_slots) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{}={}", names_[slot], show_value(values_[slot]));
  }
  return text;
}

SpaceEvaluator::Expression SpaceEvaluator::make_parser(const std::string& expression,
                                                       size_t visible, bool in_derived,
                                                       size_t index) {
  auto error = [&](std::string message) {
    return ExpressionError{in_derived, index, std::move(message)};
  };
  if (expression.find('.') != std::string::npos)
    throw error(fmt::format("'{}' is not an integer expression (no decimal points)", expression));
  if (std::string why = grammar_violation(expression); !why.empty())
    throw error(fmt::format("'{}' is outside the expression language: {}", expression, why));
  Expression e{std::make_unique<IntExprParser>(), {}};
  for (const auto& [name, called] : identifiers_in(expression)) {
    if (called) continue;  // min or max: the grammar refused any other call
    auto it = std::find(names_.begin(), names_.begin() + long(visible), name);
    if (it == names_.begin() + long(visible)) {
      std::vector<std::string> known(names_.begin(), names_.begin() + long(visible));
      throw error(fmt::format("'{}' uses unknown variable '{}' (known: {})", expression, name,
                              fmt::join(known, ", ")));
    }
    e.shown_slots.push_back(size_t(it - names_.begin()));
  }
  try {
    for (size_t slot = 0; slot < visible; ++slot) e.parser->DefineVar(names_[slot], &values_[slot]);
    e.parser->SetExpr(expression);
    const double value = e.parser->Eval();
    if (in_derived) values_[visible] = value;
  } catch (const mu::ParserError& pe) {
    throw error(fmt::format("'{}' does not parse: {}", expression, pe.GetMsg()));
  }
  return e;
}

void SpaceEvaluator::set_host_values() {
  for (size_t i = 0; i < param_count_; ++i) host_config_.params[i].second = int64_t(values_[i]);
  try {
    const BlockResources r = family_->block_resources(host_config_);
    values_[host_offset_] = double(r.threads);
    values_[host_offset_ + 1] = double(r.dynamic_smem_bytes);
  } catch (const std::exception&) {
    values_[host_offset_] = values_[host_offset_ + 1] = undefined(Undefined::host_refused);
  }
}

}  // namespace tgemm::detail
