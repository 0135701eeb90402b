// Shard: one run's share of a shape file (--shard I/N) or of a family's proposals (--devices),
// chosen by a stable hash so that N runs given 0/N .. N-1/N take each item exactly once.
#pragma once

#include <cstdint>
#include <string>

namespace tgemm {

// --shard I/N: this run tunes only the problems whose stable hash of Problem::key() is I
// modulo N, so N machines given 0/N .. N-1/N share a shape file, each problem exactly once.
struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;  // 1: every problem
};

// "I/N" in decimal with 0 <= I < N; throws Error naming --shard for anything else.
Shard parse_shard(const std::string& text);
// Whether the problem with this key (Problem::key()) belongs to the shard.
bool in_shard(const std::string& problem_key, const Shard& shard);

}  // namespace tgemm
