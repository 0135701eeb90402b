// Budget: how much of a space a strategy may ask for, as `--budget` spells it: a count of
// configs, a share of the legal space ("10%"), or a time ("90s", "5m", "1h").
#pragma once

#include <chrono>
#include <cstdint>
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

// A time limit shared by a strategy's asking and the measuring of what it asked: a batch
// asked just before the deadline must not run on long after it.
struct Deadline {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  bool expired = false;  // set once passed() found the deadline gone

  bool passed() {
    if (!expired && std::chrono::steady_clock::now() >= at) expired = true;
    return expired;
  }
};

// A (layout, family) run's weight in sharing a time budget out: its legal configs that some
// problem of the layout can run, over kConfigsForAFullShare, at most 1. Seen on the H200
// (session 14): an even share gave the naive kernel's family (4 configs) a quarter of the
// model strategy's time, of which it used a fraction; a family that can run none of the shapes
// weighs 0.
constexpr size_t kConfigsForAFullShare = 64;
double time_share_weight(size_t runnable_configs);

// `inner` until `deadline->at`: after it, propose() returns nothing (and the deadline is
// marked expired). `deadline` must outlive the strategy.
std::unique_ptr<Strategy> time_limited(std::unique_ptr<Strategy> inner, Deadline* deadline);

}  // namespace tgemm
