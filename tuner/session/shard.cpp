#include "tuner/session/shard.h"

#include "src/core/error.h"
#include "src/core/hash.h"

namespace tgemm {

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  const auto whole = [](const std::string& digits) {
    return !digits.empty() && digits.size() <= 9 &&
           digits.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash != std::string::npos && whole(text.substr(0, slash)) && whole(text.substr(slash + 1))) {
    const Shard shard{std::stoull(text.substr(0, slash)), std::stoull(text.substr(slash + 1))};
    if (shard.index < shard.count) return shard;
  }
  fail(
      "--shard must be I/N, this run's share I of N, with whole numbers 0 <= I < N (e.g. 0/4 "
      "to 3/4 for four machines), not '{}'",
      text);
}

bool in_shard(const std::string& problem_key, const Shard& shard) {
  return std::stoull(stable_hash(problem_key), nullptr, 16) % shard.count == shard.index;
}

}  // namespace tgemm
