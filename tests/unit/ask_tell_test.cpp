// The ask/tell loop: every batch is measured and told before the next is asked, and the
// seeded strategy hands out its known-good configs first, each config once.
#include "tuner/search/ask_tell.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tgemm {
namespace {

KernelConfig config(int64_t v) { return {"t", {{"A", v}}}; }

// Proposes 0..count-1 in batches and logs every call.
class RecordingStrategy : public Strategy {
 public:
  RecordingStrategy(int count, std::vector<std::string>* log) : count_(count), log_(log) {}
  std::vector<KernelConfig> propose(size_t max_count) override {
    std::vector<KernelConfig> batch;
    while (next_ < count_ && batch.size() < max_count) batch.push_back(config(next_++));
    log_->push_back("ask " + std::to_string(batch.size()));
    return batch;
  }
  void report(const std::vector<TrialResult>& results) override {
    log_->push_back("tell " + std::to_string(results.size()));
  }

 private:
  int count_, next_ = 0;
  std::vector<std::string>* log_;
};

TEST(AskTell, every_batch_is_told_before_the_next_is_asked) {
  std::vector<std::string> log;
  RecordingStrategy strategy(7, &log);
  const size_t asked = run_ask_tell(strategy, 3, [&](const std::vector<KernelConfig>& batch) {
    log.push_back("measure " + std::to_string(batch.size()));
    return std::vector<TrialResult>(batch.size());
  });
  EXPECT_EQ(asked, 7u);
  const std::vector<std::string> expected = {"ask 3",     "measure 3", "tell 3", "ask 3",
                                             "measure 3", "tell 3",    "ask 1",  "measure 1",
                                             "tell 1",    "ask 0"};
  EXPECT_EQ(log, expected);
}

TEST(AskTell, seeded_strategy_proposes_its_seeds_first_and_every_config_once) {
  std::vector<std::string> log;
  auto seeded = seeded_strategy({config(5), config(1), config(5)},
                                std::make_unique<RecordingStrategy>(4, &log));
  std::vector<int64_t> order;
  run_ask_tell(*seeded, 2, [&](const std::vector<KernelConfig>& batch) {
    for (const auto& c : batch) order.push_back(c.get("A"));
    return std::vector<TrialResult>(batch.size());
  });
  EXPECT_EQ(order, (std::vector<int64_t>{5, 1, 0, 2, 3}));  // 5 once; 1 not again from inner
  // The inner strategy hears every result.
  int told = 0;
  for (const auto& line : log)
    if (line.rfind("tell ", 0) == 0) told += std::stoi(line.substr(5));
  EXPECT_EQ(told, 5);
}

// The random strategy through the loop gives the same configs as proposed at once.
TEST(AskTell, random_strategy_gives_the_same_sample_in_batches) {
  std::vector<KernelConfig> legal;
  for (int i = 0; i < 100; ++i) legal.push_back(config(i));
  auto whole = make_strategy("random", legal, 30, 7)->propose(1000);
  auto strategy = make_strategy("random", legal, 30, 7);
  std::vector<KernelConfig> batched;
  run_ask_tell(*strategy, 4, [&](const std::vector<KernelConfig>& batch) {
    batched.insert(batched.end(), batch.begin(), batch.end());
    return std::vector<TrialResult>{};
  });
  EXPECT_EQ(batched, whole);
}

// Identical GPUs (--devices) each measure one share of the same seeded sample: the shares
// are disjoint, together the whole sample, and each about its fair part.
TEST(AskTell, shared_out_splits_one_sample_between_sessions_exactly_once) {
  std::vector<KernelConfig> legal;
  for (int i = 0; i < 400; ++i) legal.push_back(config(i));
  const auto whole = make_strategy("random", legal, 120, 3)->propose(1000);
  std::set<int64_t> seen;
  size_t total = 0;
  for (uint64_t share = 0; share < 3; ++share) {
    auto strategy = shared_out(make_strategy("random", legal, 120, 3), share, 3);
    std::vector<KernelConfig> mine;
    run_ask_tell(*strategy, 8, [&](const std::vector<KernelConfig>& batch) {
      EXPECT_LE(batch.size(), 8u);
      mine.insert(mine.end(), batch.begin(), batch.end());
      return std::vector<TrialResult>(batch.size());
    });
    EXPECT_GT(mine.size(), 20u);
    EXPECT_LT(mine.size(), 60u);
    for (const auto& c : mine) {
      EXPECT_TRUE(in_config_share(c, share, 3));
      EXPECT_TRUE(seen.insert(c.get("A")).second) << "in two shares: " << c.get("A");
    }
    total += mine.size();
  }
  EXPECT_EQ(total, whole.size());
  for (const auto& c : whole) EXPECT_TRUE(seen.count(c.get("A")));
  // One share is the strategy itself.
  auto plain = make_strategy("random", legal, 120, 3);
  Strategy* raw = plain.get();
  EXPECT_EQ(shared_out(std::move(plain), 0, 1).get(), raw);
}

}  // namespace
}  // namespace tgemm
