// The pipeline over a session's (variant, family) pairs: the next pair's first batch is
// submitted before the last batch of the pair before is measured, every batch is measured
// once in the order asked, each strategy hears of its own batches only, and the pairs finish
// in order.
#include "tuner/session/pair_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tgemm {
namespace {

constexpr size_t kProblems = 2;  // each batch is measured on two problems

// Proposes `count` configs of its pair (A = pair * 100 + i) and keeps, per problem, the
// configs it is told of.
class PairStrategy : public Strategy {
 public:
  PairStrategy(int pair, int count, std::vector<std::vector<int64_t>>* told)
      : pair_(pair), count_(count), told_(told) {}
  std::vector<KernelConfig> propose(size_t max_count) override {
    std::vector<KernelConfig> batch;
    while (next_ < count_ && batch.size() < max_count)
      batch.push_back({"t", {{"A", pair_ * 100 + next_++}}});
    return batch;
  }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    for (const TrialResult& r : results) (*told_)[problem].push_back(r.config.get("A"));
  }

 private:
  int pair_, count_, next_ = 0;
  std::vector<std::vector<int64_t>>* told_;
};

// Fake compile stage and worker. The log names pair p's batch b "p.b".
class FakeSession {
 public:
  // Pair i + 1 proposes counts[i] configs.
  explicit FakeSession(std::vector<int> counts) : counts_(std::move(counts)) {
    told_.assign(counts_.size() + 1, std::vector<std::vector<int64_t>>(kProblems));
    sequence.next = [this]() -> std::optional<PairRun> {
      ++next_calls;
      if (started_ == counts_.size()) return std::nullopt;
      ++started_;
      return pair(int(started_), counts_[started_ - 1]);
    };
  }

  std::vector<std::string> log;
  PairSequence sequence;
  int next_calls = 0;

  // What pair `p`'s strategy was told, per problem.
  const std::vector<std::vector<int64_t>>& told(int p) const { return told_[size_t(p)]; }
  // Every config pair `p` proposes, in order.
  std::vector<int64_t> configs_of(int p) const {
    std::vector<int64_t> out;
    for (int i = 0; i < counts_[size_t(p - 1)]; ++i) out.push_back(p * 100 + i);
    return out;
  }

 private:
  struct Submitted {
    std::string name;
    std::vector<KernelConfig> configs;
    bool measured = false;
  };

  PairRun pair(int p, int count) {
    PairRun run;
    run.strategy = std::make_unique<PairStrategy>(p, count, &told_[size_t(p)]);
    run.submit = [this, p, batches = 0](const std::vector<KernelConfig>& configs) mutable {
      const std::string name = std::to_string(p) + "." + std::to_string(batches++);
      log.push_back("submit " + name);
      submitted_.push_back({name, configs});
      return CompileStage::Ticket(submitted_.size());
    };
    run.measure = [this](CompileStage::Ticket ticket) {
      Submitted& batch = submitted_.at(ticket - 1);
      EXPECT_FALSE(batch.measured) << batch.name << " measured twice";
      batch.measured = true;
      log.push_back("measure " + batch.name);
      std::vector<TrialResult> results;
      for (const KernelConfig& c : batch.configs) {
        TrialResult r;
        r.config = c;
        results.push_back(r);
      }
      return std::vector<std::vector<TrialResult>>(kProblems, results);
    };
    run.finished = [this, p](uint64_t asked) {
      log.push_back("finished " + std::to_string(p) + " after " + std::to_string(asked));
    };
    return run;
  }

  std::vector<int> counts_;
  size_t started_ = 0;
  std::vector<Submitted> submitted_;
  std::vector<std::vector<std::vector<int64_t>>> told_;  // [pair][problem]
};

size_t position(const std::vector<std::string>& log, const std::string& event) {
  const auto it = std::find(log.begin(), log.end(), event);
  EXPECT_NE(it, log.end()) << event;
  return size_t(it - log.begin());
}

TEST(PairPipeline, next_pairs_first_batch_is_submitted_before_the_last_batch_is_measured) {
  FakeSession session({5, 3, 4});
  EXPECT_EQ(run_pipelined(2, session.sequence), 12u);
  // The pool is never left without a batch queued: pair 2 and 3 start while the pair before
  // still has a batch in flight.
  EXPECT_LT(position(session.log, "submit 2.0"), position(session.log, "measure 1.2"));
  EXPECT_LT(position(session.log, "submit 3.0"), position(session.log, "measure 2.1"));
  const std::vector<std::string> expected = {
      "submit 1.0",  "submit 1.1",        "measure 1.0",        "submit 1.2", "measure 1.1",
      "submit 2.0",  "measure 1.2",       "finished 1 after 5", "submit 2.1", "measure 2.0",
      "submit 3.0",  "measure 2.1",       "finished 2 after 3", "submit 3.1", "measure 3.0",
      "measure 3.1", "finished 3 after 4"};
  EXPECT_EQ(session.log, expected);
  EXPECT_EQ(session.next_calls, 4);  // three pairs, then none; not asked again after that
}

TEST(PairPipeline, every_batch_is_measured_once_in_the_order_submitted) {
  FakeSession session({3, 1, 6, 2});
  run_pipelined(2, session.sequence);
  std::vector<std::string> submitted, measured;
  for (const std::string& event : session.log) {
    if (event.rfind("submit ", 0) == 0) submitted.push_back(event.substr(7));
    if (event.rfind("measure ", 0) == 0) measured.push_back(event.substr(8));
  }
  EXPECT_EQ(measured, submitted);  // the fake's measure fails a batch measured twice
  EXPECT_EQ(submitted.size(), 2u + 1 + 3 + 1);
}

TEST(PairPipeline, each_strategy_hears_only_its_own_results_on_every_problem) {
  FakeSession session({5, 3, 4});
  run_pipelined(2, session.sequence);
  for (int p = 1; p <= 3; ++p)
    for (size_t problem = 0; problem < kProblems; ++problem)
      EXPECT_EQ(session.told(p)[problem], session.configs_of(p)) << "pair " << p;
}

// A pair with no configs finishes after the pairs before it (a group's last family finishing
// its problems must not overtake the measuring of an earlier family).
TEST(PairPipeline, pairs_finish_in_order_also_one_without_configs) {
  FakeSession session({3, 0, 2});
  run_pipelined(2, session.sequence);
  const std::vector<std::string> expected = {
      "submit 1.0",         "submit 1.1",         "measure 1.0", "submit 3.0",        "measure 1.1",
      "finished 1 after 3", "finished 2 after 0", "measure 3.0", "finished 3 after 2"};
  EXPECT_EQ(session.log, expected);
}

// A pair that must not start early (its strategy reads what the batches in flight record)
// starts once they are measured.
TEST(PairPipeline, a_pair_that_cannot_start_early_waits_for_the_batches_in_flight) {
  FakeSession session({3, 2});
  session.sequence.can_start_early = [] { return false; };
  EXPECT_EQ(run_pipelined(2, session.sequence), 5u);
  const std::vector<std::string> expected = {"submit 1.0",  "submit 1.1",         "measure 1.0",
                                             "measure 1.1", "finished 1 after 3", "submit 2.0",
                                             "measure 2.0", "finished 2 after 2"};
  EXPECT_EQ(session.log, expected);
}

TEST(PairPipeline, no_pairs_ask_nothing) {
  FakeSession session({});
  EXPECT_EQ(run_pipelined(4, session.sequence), 0u);
  EXPECT_TRUE(session.log.empty());
  EXPECT_EQ(session.next_calls, 1);
}

}  // namespace
}  // namespace tgemm
