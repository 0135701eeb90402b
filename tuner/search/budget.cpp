#include "tuner/search/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "src/core/error.h"

namespace tgemm {

namespace {

constexpr double kMaxSeconds = 7 * 24 * 3600.0;

// Digits with at most one '.', not empty, neither sign nor exponent.
bool plain_decimal(const std::string& text) {
  return !text.empty() && text.size() <= 12 &&
         text.find_first_not_of("0123456789.") == std::string::npos &&
         std::count(text.begin(), text.end(), '.') <= 1 && text != ".";
}

[[noreturn]] void bad_budget(const std::string& text) {
  fail(
      "--budget must be a whole number from 0 (the whole space) to {}, a share of the space "
      "over 0% up to 100% (e.g. 10%), or a time over 0 (e.g. 90s, 5m, 1h), not '{}'",
      kMaxBudget, text);
}

}  // namespace

Budget parse_budget(const std::string& text) {
  Budget b;
  if (text.empty()) bad_budget(text);
  const char unit = text.back();
  const std::string number = text.substr(0, text.size() - 1);
  if (unit == '%' || unit == 's' || unit == 'm' || unit == 'h') {
    if (!plain_decimal(number)) bad_budget(text);
    const double value = std::stod(number);
    if (unit == '%') {
      if (!(value > 0 && value <= 100)) bad_budget(text);
      b.fraction = value / 100;
      return b;
    }
    const double seconds = value * (unit == 'h' ? 3600 : unit == 'm' ? 60 : 1);
    if (!(seconds > 0 && seconds <= kMaxSeconds)) bad_budget(text);
    b.seconds = seconds;
    return b;
  }
  if (text.find_first_not_of("0123456789") != std::string::npos) bad_budget(text);
  const std::string digits = text.substr(std::min(text.find_first_not_of('0'), text.size() - 1));
  if (digits.size() > 7 || std::stoull(digits) > kMaxBudget) bad_budget(text);
  b.configs = std::stoull(digits);  // decimal: "010" is ten
  return b;
}

uint64_t Budget::configs_for(size_t legal) const {
  if (fraction > 0) return std::max<uint64_t>(1, uint64_t(std::ceil(fraction * double(legal))));
  return configs;
}

std::string Budget::describe() const {
  if (fraction > 0) return fmt::format("{:g}% of the space", fraction * 100);
  if (seconds > 0) return fmt::format("{:g} s", seconds);
  return configs ? fmt::format("{} configs", configs) : "the whole space";
}

namespace {

class TimeLimited final : public Strategy {
 public:
  TimeLimited(std::unique_ptr<Strategy> inner, Deadline* deadline)
      : inner_(std::move(inner)), deadline_(deadline) {}

  std::vector<KernelConfig> propose(size_t max_count) override {
    if (deadline_->passed()) return {};
    return inner_->propose(max_count);
  }
  void report(const std::vector<TrialResult>& results) override { inner_->report(results); }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    inner_->report_problem(problem, results);
  }

 private:
  std::unique_ptr<Strategy> inner_;
  Deadline* deadline_;
};

}  // namespace

std::unique_ptr<Strategy> time_limited(std::unique_ptr<Strategy> inner, Deadline* deadline) {
  return std::make_unique<TimeLimited>(std::move(inner), deadline);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Deadline Deadline::share_of_left(size_t ways) const {
  Deadline share = *this;
  share.expired = false;
  const double start = now();
  if (std::isfinite(at))
    share.at = start + std::max(0.0, at - start) / double(std::max<size_t>(1, ways));
  return share;
}

double weighted_share(double left, double weight, double weights_after) {
  const double all = weight + weights_after;
  return all > 0 ? std::max(0.0, left) * weight / all : 0.0;
}

double time_share_weight(size_t runnable_configs) {
  return std::min(1.0, double(runnable_configs) / double(kConfigsForAFullShare));
}

}  // namespace tgemm
