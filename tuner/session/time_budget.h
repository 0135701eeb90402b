// TimeBudget: --budget as a time, which buys exploring as a count does. Each group's proven
// candidates are measured whatever it is and their time is not counted against it; what is
// left is shared out over the (variant, family) pairs still to explore by their weights, so
// what one pair leaves over goes to the rest.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "tuner/search/budget.h"

namespace tgemm {

class TimeBudget {
 public:
  // Starts the clock. `seconds` 0: no time budget (the time spent is still kept).
  explicit TimeBudget(double seconds, RunClock now = steady_seconds);

  // The weight of every pair (pair_time_weights), in the order they start.
  void set_pair_weights(const std::vector<double>& weights);
  // A group's candidates start, and its first exploring pair starts after them: the time
  // between is the candidates', not counted against the budget.
  void candidates_started();
  void candidates_finished();

  // The next pair's deadline on the clock: its weighted share of what is left for it and the
  // pairs after it (weighted_share). Needs a weight for it from set_pair_weights.
  double next_pair_deadline();
  // A pair has finished, stopped by its deadline or not.
  void pair_finished(bool stopped);

  bool limited() const { return seconds_ > 0; }
  double seconds() const { return seconds_; }
  double exploring_seconds() const;  // since the start, less the candidates' time
  double candidate_seconds() const { return candidate_seconds_; }
  bool spent() const { return limited() && exploring_seconds() >= seconds_; }
  size_t pairs_finished() const { return pairs_finished_; }
  size_t pairs_stopped() const { return pairs_stopped_; }

 private:
  double seconds_;
  RunClock now_;
  double started_;             // the budget's start on now_'s clock
  double candidates_started_;  // the current group's first pair
  double candidate_seconds_ = 0;
  std::deque<double> weights_;  // of the pairs not yet started
  size_t pairs_finished_ = 0, pairs_stopped_ = 0;
};

}  // namespace tgemm
