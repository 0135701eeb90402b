#include "tuner/session/time_budget.h"

#include <numeric>
#include <utility>

#include "src/core/error.h"

namespace tgemm {

TimeBudget::TimeBudget(double seconds, RunClock now)
    : seconds_(seconds), now_(std::move(now)), started_(now_()), candidates_started_(started_) {}

void TimeBudget::set_pair_weights(const std::vector<double>& weights) {
  weights_.assign(weights.begin(), weights.end());
}

void TimeBudget::candidates_started() { candidates_started_ = now_(); }

void TimeBudget::candidates_finished() { candidate_seconds_ += now_() - candidates_started_; }

double TimeBudget::next_pair_deadline() {
  if (weights_.empty()) fail("internal: a pair started past the weighed ones");
  const double weight = weights_.front();
  weights_.pop_front();
  const double after = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  const double left = seconds_ - exploring_seconds();
  return now_() + weighted_share(left, weight, after);
}

void TimeBudget::pair_finished(bool stopped) {
  ++pairs_finished_;
  pairs_stopped_ += stopped;
}

double TimeBudget::exploring_seconds() const { return now_() - started_ - candidate_seconds_; }

}  // namespace tgemm
