#include "src/templates/search_space.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "src/core/error.h"
#include "src/jit/kernel_source.h"
#include "src/templates/integer_expression.h"
#include "src/templates/space_evaluator.h"
#include "src/templates/space_file.h"
#include "src/templates/template_registry.h"

namespace tgemm {

using detail::as_int;
using detail::cause_of;
using detail::ExpressionError;
using detail::kHostNames;
using detail::Undefined;

SearchSpace::EvaluatorCache::EvaluatorCache() = default;
SearchSpace::EvaluatorCache::~EvaluatorCache() = default;
SearchSpace::EvaluatorCache::EvaluatorCache(const EvaluatorCache&) {}
SearchSpace::EvaluatorCache& SearchSpace::EvaluatorCache::operator=(const EvaluatorCache&) {
  evaluator.reset();
  return *this;
}
SearchSpace::EvaluatorCache::EvaluatorCache(EvaluatorCache&&) noexcept = default;
SearchSpace::EvaluatorCache& SearchSpace::EvaluatorCache::operator=(EvaluatorCache&&) noexcept =
    default;

std::optional<std::string> SearchSpace::types_unsupported(const GemmTypes& types,
                                                          const std::string& arch) const {
  if (dtypes_.empty()) return std::nullopt;  // the family's own types
  for (const auto& [name, lowest] : dtypes_) {
    if (name != types.name()) continue;
    if (arch_number(arch) >= arch_number(lowest)) return std::nullopt;
    return fmt::format("space {} computes {} from {} on, not on {}", path_, name, lowest, arch);
  }
  return fmt::format("space {} declares no {} (its dtypes:{})", path_, types.name(), [&] {
    std::string list;
    for (const auto& d : dtypes_) list += " " + d.first;
    return list;
  }());
}

namespace {

// Set by the tuner for each layout (NvrtcCompiler): a space tuning them would compile one
// config under two sets of -D flags.
constexpr const char* kLayoutMacros[] = {"TGEMM_OP_A", "TGEMM_OP_B"};

// Every parameter must be a macro the template declares with a default: otherwise the
// template silently uses its own value and every config compiles the same kernel.
void check_declared(const std::string& path, const SpaceFile& file,
                    const std::string& template_name, const std::vector<SpaceParameter>& params,
                    const std::string& template_text) {
  const std::vector<std::string> declared = declared_macros(template_text);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    if (std::find(std::begin(kLayoutMacros), std::end(kLayoutMacros), name) !=
        std::end(kLayoutMacros))
      fail(
          "{}:{}: parameter '{}' is set by the tuner from the problem's layout; a space cannot "
          "tune it",
          path, file.parameter_lines.at(i), name);
    if (std::find(declared.begin(), declared.end(), name) == declared.end())
      fail("{}:{}: parameter '{}' is not a tunable of template {} (its tunables: {})", path,
           file.parameter_lines.at(i), name, template_name,
           fmt::join(declared_tunables(template_text), ", "));
  }
}

// The walk visits every point of the cross product: refuse, before any work, a space that
// would take hours (at about a microsecond per point, the limit is about a minute).
void check_size(const std::string& path, const SpaceFile& file,
                const std::vector<SpaceParameter>& params) {
  uint64_t size = 1;
  bool beyond_64_bits = false;
  std::vector<size_t> sizes;
  for (const auto& p : params) {
    sizes.push_back(p.values.size());
    if (size > std::numeric_limits<uint64_t>::max() / p.values.size()) beyond_64_bits = true;
    size *= p.values.size();
  }
  if (beyond_64_bits || size > SearchSpace::kMaxSpacePoints)
    fail(
        "{}:{}: the space has {} points ({} values); at most {} can be enumerated: shorten the "
        "value lists or split the space",
        path, file.parameters_line,
        beyond_64_bits ? fmt::format("more than {}", std::numeric_limits<uint64_t>::max())
                       : std::to_string(size),
        fmt::join(sizes, " x "), SearchSpace::kMaxSpacePoints);
}

}  // namespace

SearchSpace SearchSpace::load(const std::string& path) { return read(path, nullptr, nullptr); }

SearchSpace SearchSpace::load(const std::string& path, const std::string& template_text) {
  return read(path, nullptr, &template_text);
}

SearchSpace SearchSpace::parse(const std::string& text, const std::string& origin) {
  return read(origin, &text, nullptr);
}

SearchSpace SearchSpace::read(const std::string& path, const std::string* text,
                              const std::string* template_text) {
  SearchSpace space;
  space.path_ = path;
  const SpaceFile file = read_space_file(path, text);
  space.template_name_ = file.template_name;
  space.parameters_ = file.parameters;
  space.derived_ = file.derived;
  space.constraints_ = file.constraints;
  space.dtypes_ = file.dtypes;
  // A relative `source:` is relative to the space file's folder; its text is what the
  // parameters must be declared in.
  std::string embedded;
  if (!file.source.empty()) {
    std::filesystem::path source(file.source);
    if (source.is_relative()) source = std::filesystem::path(path).parent_path() / source;
    space.source_path_ = source.lexically_normal().string();
    if (!template_text) {
      std::ifstream in(space.source_path_);
      if (!in) fail("{}: cannot read its source: {}", path, space.source_path_);
      std::ostringstream text;
      text << in.rdbuf();
      embedded = text.str();
      template_text = &embedded;
    }
  }
  if (!template_text) {
    try {
      embedded = kernel_source(space.template_name_).text;
    } catch (const Error& e) {
      fail("{}:{}: {}", path, file.template_line, e.what());
    }
  }
  const std::string& source_text = template_text ? *template_text : embedded;
  check_declared(path, file, space.template_name_, space.parameters_, source_text);
  check_size(path, file, space.parameters_);
  for (const std::string& name : declared_tunables(source_text))
    if (auto value = declared_integer_default(source_text, name))
      space.template_defaults_[name] = *value;
  if (find_template(space.template_name_))
    for (size_t d = 0; d < space.derived_.size(); ++d)
      for (const char* name : kHostNames)
        if (space.derived_[d].first == name)
          fail(
              "{}:{}: derived {}: the family's host side gives {} (its block_resources); the "
              "space's expressions read it, and must not define it again",
              path, file.line_of_expression(true, d), name, name);
  // Parsing every expression now, with the first values and a known arch's limits, reports
  // typos and unknown names at load time with their line.
  try {
    space.cache_.evaluator = std::make_unique<detail::SpaceEvaluator>(
        space.parameters_, space.derived_, space.constraints_, space.host());
  } catch (const ExpressionError& e) {
    fail("{}:{}: {} {}", path, file.line_of_expression(e.in_derived, e.index),
         e.in_derived ? fmt::format("derived {}:", space.derived_[e.index].first)
                      : std::string("constraint"),
         e.message);
  }
  return space;
}

detail::SpaceHost SearchSpace::host() const {
  return {find_template(template_name_), template_name_, template_defaults_};
}

detail::SpaceEvaluator& SearchSpace::evaluator() const {
  if (!cache_.evaluator)
    cache_.evaluator =
        std::make_unique<detail::SpaceEvaluator>(parameters_, derived_, constraints_, host());
  return *cache_.evaluator;
}

uint64_t SearchSpace::cartesian_size() const {
  uint64_t size = 1;
  for (const auto& p : parameters_) {
    if (size > std::numeric_limits<uint64_t>::max() / p.values.size())
      fail("{}: the search space has more than 2^64 points", path_);
    size *= p.values.size();
  }
  return size;
}

KernelConfig SearchSpace::config_at(uint64_t index) const {
  const uint64_t size = cartesian_size();
  if (index >= size) fail("config index {} is outside {} (size {})", index, path_, size);
  KernelConfig config{template_name_, {}};
  config.params.resize(parameters_.size());
  for (size_t i = parameters_.size(); i-- > 0;) {
    const auto& values = parameters_[i].values;
    config.params[i] = {parameters_[i].name, values[index % values.size()]};
    index /= values.size();
  }
  return config;
}

namespace {

// Rejection text without the values: the key enumerate() counts by.
std::string reason_key(const SearchSpace& space, const detail::SpaceEvaluator::Verdict& v) {
  if (v.constraint >= 0) {
    const SpaceConstraint& c = space.constraints()[size_t(v.constraint)];
    if (v.cause == Undefined::division_by_zero)
      return fmt::format("{}: division or modulo by zero in {}", c.reason, c.expression);
    if (v.cause == Undefined::overflow)
      return fmt::format("{}: overflow (beyond 2^53) in {}", c.reason, c.expression);
    if (v.cause == Undefined::host_refused)
      return fmt::format("{}: the host side refuses the config (in {})", c.reason, c.expression);
    return c.reason;
  }
  const auto& d = space.derived()[size_t(v.derived)];
  if (v.cause == Undefined::overflow)
    return fmt::format("derived {} = {} overflows (beyond 2^53)", d.first, d.second);
  if (v.cause == Undefined::host_refused)
    return fmt::format("derived {} = {}: the host side refuses the config", d.first, d.second);
  return fmt::format("derived {} = {} divides by zero", d.first, d.second);
}

}  // namespace

std::optional<std::string> SearchSpace::rejection(const KernelConfig& config,
                                                  const ArchLimits& limits) const {
  if (config.template_name != template_name_)
    fail("config {} is for template '{}', not for {}'s template '{}'", config.canonical_name(),
         config.template_name, path_, template_name_);
  for (const auto& param : config.params) {
    const bool known = std::any_of(parameters_.begin(), parameters_.end(),
                                   [&](const SpaceParameter& p) { return p.name == param.first; });
    if (!known)
      return fmt::format("{} is not a parameter of {} ({})", param.first, template_name_, path_);
  }
  detail::SpaceEvaluator& eval = evaluator();
  for (size_t i = 0; i < parameters_.size(); ++i)
    eval.values()[i] = double(config.get(parameters_[i].name));
  eval.set_limits(limits);
  const auto verdict = eval.check();
  if (verdict.constraint < 0 && verdict.derived < 0) return std::nullopt;
  const bool in_derived = verdict.constraint < 0;
  return fmt::format(
      "{} ({})", reason_key(*this, verdict),
      eval.shown_values(in_derived, size_t(in_derived ? verdict.derived : verdict.constraint)));
}

std::map<std::string, int64_t> SearchSpace::derived_values(const KernelConfig& config,
                                                           const ArchLimits& limits) const {
  detail::SpaceEvaluator& eval = evaluator();
  for (size_t i = 0; i < parameters_.size(); ++i)
    eval.values()[i] = double(config.get(parameters_[i].name));
  eval.set_limits(limits);
  eval.check();
  std::map<std::string, int64_t> values;
  for (size_t i = 0; i < parameters_.size(); ++i)
    values[parameters_[i].name] = config.get(parameters_[i].name);
  for (size_t h = 0; h < eval.host_count(); ++h) {
    const double value = eval.values()[eval.host_offset() + h];
    if (std::isnan(value))
      fail("the host side of {} refuses {} (its block_resources throws)", template_name_,
           config.canonical_name());
    values[kHostNames[h]] = int64_t(value);
  }
  for (size_t d = 0; d < derived_.size(); ++d) {
    const double value = eval.values()[eval.derived_offset() + d];
    int64_t v = 0;
    if (!as_int(value, &v))
      fail("derived {} = {} is undefined for {} ({})", derived_[d].first, derived_[d].second,
           config.canonical_name(),
           cause_of(value) == Undefined::overflow ? "overflow beyond 2^53"
                                                  : "division or modulo by zero");
    values[derived_[d].first] = v;
  }
  return values;
}

SearchSpace::Enumeration SearchSpace::enumerate(const ArchLimits& limits,
                                                std::chrono::milliseconds progress_every) const {
  detail::SpaceEvaluator& eval = evaluator();
  eval.set_limits(limits);
  const uint64_t size = cartesian_size();
  const size_t count = parameters_.size();
  // An odometer over the value lists (last parameter fastest), the order of config_at():
  // only the legal points are kept.
  std::vector<size_t> digit(count, 0);
  double* values = eval.values();
  for (size_t i = 0; i < count; ++i) values[i] = double(parameters_[i].values[0]);

  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto next_report = started + progress_every;
  Enumeration result;
  // Counted by (constraint, cause, derived) and named once at the end: cheaper than
  // building a reason string per rejected point.
  std::map<std::tuple<int, Undefined, int>, uint64_t> rejected;
  for (uint64_t index = 0; index < size; ++index) {
    if (index % 65536 == 0 && index > 0 && Clock::now() >= next_report) {
      spdlog::info("enumerating {}: {} of {} points, {} legal ({:.0f} s)", path_, index, size,
                   result.legal.size(),
                   std::chrono::duration<double>(Clock::now() - started).count());
      next_report = Clock::now() + progress_every;
    }
    const auto verdict = eval.check();
    if (verdict.constraint < 0 && verdict.derived < 0) {
      if (result.legal.size() == kMaxLegalConfigs)
        fail(
            "{}: more than {} legal configs for {} (found at point {} of {}); a space may keep "
            "at most {}: shorten the value lists or add constraints",
            path_, kMaxLegalConfigs, limits.arch, index + 1, size, kMaxLegalConfigs);
      KernelConfig config{template_name_, {}};
      config.params.reserve(count);
      for (size_t i = 0; i < count; ++i)
        config.params.emplace_back(parameters_[i].name, parameters_[i].values[digit[i]]);
      result.legal.push_back(std::move(config));
    } else {
      ++rejected[{verdict.constraint, verdict.cause, verdict.derived}];
    }
    for (size_t i = count; i-- > 0;) {
      if (++digit[i] < parameters_[i].values.size()) {
        values[i] = double(parameters_[i].values[digit[i]]);
        break;
      }
      digit[i] = 0;
      values[i] = double(parameters_[i].values[0]);
    }
  }

  for (const auto& [key, n] : rejected) {
    const auto [constraint, cause, derived] = key;
    result.rejected_by_reason[reason_key(*this, {constraint, derived, cause})] += n;
  }

  if (result.legal.empty()) {
    std::vector<std::pair<std::string, uint64_t>> top(result.rejected_by_reason.begin(),
                                                      result.rejected_by_reason.end());
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string reasons;
    for (size_t i = 0; i < top.size() && i < 3; ++i)
      reasons += fmt::format("\n  {} ({} of {})", top[i].first, top[i].second, size);
    fail("no legal config in {} for {}; most common reasons:{}", path_, limits.arch, reasons);
  }
  return result;
}

}  // namespace tgemm
