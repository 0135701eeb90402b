#include "tuner/session/pair_pipeline.h"

#include <deque>
#include <utility>

namespace tgemm {

namespace {

// A pair that has started and not yet finished.
struct StartedPair {
  PairRun run;
  uint64_t asked = 0;
  size_t in_flight = 0;    // batches submitted, not yet measured
  bool exhausted = false;  // its strategy proposed nothing more
};

struct Batch {
  StartedPair* pair;
  CompileStage::Ticket ticket;
};

class PairPipeline {
 public:
  PairPipeline(size_t batch_size, const PairSequence& pairs)
      : batch_size_(batch_size), pairs_(pairs) {}

  uint64_t run() {
    for (;;) {
      // Two batches in flight: one measured while the next compiles.
      while (in_flight_.size() < 2 && submit_next()) {
      }
      if (in_flight_.empty()) return asked_;
      measure_oldest();
    }
  }

 private:
  // Asks the newest pair for a batch and submits it; once that pair has no more configs, the
  // next pair is started and asked. False when no pair is left, or when the next one must wait
  // for the batches in flight.
  bool submit_next() {
    for (;;) {
      if (newest_ && !newest_->exhausted) {
        std::vector<KernelConfig> configs = newest_->run.strategy->propose(batch_size_);
        if (!configs.empty()) {
          newest_->asked += configs.size();
          asked_ += configs.size();
          ++newest_->in_flight;
          in_flight_.push_back({newest_, newest_->run.submit(configs)});
          return true;
        }
        newest_->exhausted = true;
        finish_done_pairs();  // before next(): a pair with nothing in flight is done now
      }
      if (no_more_pairs_) return false;
      if (!in_flight_.empty() && pairs_.can_start_early && !pairs_.can_start_early()) return false;
      std::optional<PairRun> run = pairs_.next();
      if (!run) {
        no_more_pairs_ = true;
        return false;
      }
      started_.push_back({std::move(*run)});
      newest_ = &started_.back();
    }
  }

  void measure_oldest() {
    const Batch batch = in_flight_.front();
    in_flight_.pop_front();
    const auto per_problem = batch.pair->run.measure(batch.ticket);
    for (size_t p = 0; p < per_problem.size(); ++p)
      batch.pair->run.strategy->report_problem(p, per_problem[p]);
    --batch.pair->in_flight;
    finish_done_pairs();
  }

  // Finishes, oldest first, the pairs with no more configs and none in flight. Batches are
  // measured in the order asked, so a pair is done only after every pair before it.
  void finish_done_pairs() {
    while (!started_.empty() && started_.front().exhausted && started_.front().in_flight == 0) {
      StartedPair& pair = started_.front();
      if (pair.run.finished) pair.run.finished(pair.asked);
      if (newest_ == &pair) newest_ = nullptr;
      started_.pop_front();  // a deque: the other pairs stay where the batches point
    }
  }

  const size_t batch_size_;
  const PairSequence& pairs_;
  std::deque<StartedPair> started_;  // oldest first
  StartedPair* newest_ = nullptr;    // the pair being asked; null before the first
  std::deque<Batch> in_flight_;      // oldest first
  bool no_more_pairs_ = false;
  uint64_t asked_ = 0;
};

}  // namespace

uint64_t run_pipelined(size_t batch_size, const PairSequence& pairs) {
  return PairPipeline(batch_size, pairs).run();
}

}  // namespace tgemm
