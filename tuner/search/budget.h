// Budget: how much of a space a strategy may ask for, as `--budget` spells it: a count of
// configs, a share of the legal space ("10%"), or a time ("90s", "5m", "1h").
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "tuner/search/strategy.h"

namespace tgemm {

struct Budget {
  uint64_t configs = 0;  // a count per layout and family; 0 = the whole space
  double fraction = 0;   // of the legal space, in (0, 1]; 0 = not a share
  double seconds = 0;    // a time for the whole run; 0 = no time limit

  // The count cap for a space of `legal` configs (0 = no cap).
  uint64_t configs_for(size_t legal) const;
  std::string describe() const;  // "200 configs", "10% of the space", "90 s"
};

// "0".."1000000", "N%" with 0 < N <= 100, or "Ns" / "Nm" / "Nh" with 0 < N and at most a
// week (decimals allowed: "1.5m"). Throws Error naming --budget and what is allowed.
Budget parse_budget(const std::string& text);

// Seconds on a run's clock: the steady clock in a tuning run, a simulated one in a replay
// (which spends the recorded times instead of measuring).
using RunClock = std::function<double()>;
double steady_seconds();  // the steady clock, in seconds

// A time limit shared by a strategy's asking and the measuring of what it asked: a batch
// asked just before the deadline must not run on long after it.
struct Deadline {
  RunClock now = steady_seconds;
  double at = std::numeric_limits<double>::infinity();  // on `now`'s clock; infinity: none
  bool expired = false;                                 // set once passed() found the deadline gone

  bool passed() {
    if (!expired && now() >= at) expired = true;
    return expired;
  }
  // This deadline's time left split evenly `ways` ways: the first of them ends at the returned
  // deadline. Measuring a batch on each problem of a group in turn, each takes its share of
  // what the ones before it left, so the time is shared over the problems instead of running
  // out on the first.
  Deadline share_of_left(size_t ways) const;
};

// A run's weighted share of `left` seconds, where `weights_after` is the weight of the runs
// still to come after it: one that finishes early leaves its time to them.
double weighted_share(double left, double weight, double weights_after);

// A (layout, family) run's weight in sharing a time budget out: its legal configs that some
// problem of the layout can run, over kConfigsForAFullShare, at most 1. Seen on the H200:
// an even share gave the naive kernel's family (4 configs) a quarter of the
// model strategy's time, of which it used a fraction; a family that can run none of the shapes
// weighs 0.
constexpr size_t kConfigsForAFullShare = 64;
double time_share_weight(size_t runnable_configs);

// `inner` until the deadline: after it, propose() returns nothing (and the deadline is
// marked expired). `deadline` must outlive the strategy.
std::unique_ptr<Strategy> time_limited(std::unique_ptr<Strategy> inner, Deadline* deadline);

}  // namespace tgemm
