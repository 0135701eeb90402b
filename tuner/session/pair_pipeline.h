// The ask/tell pipeline a tuning session runs over its (variant, family) pairs: batch i + 1 is
// asked and submitted to the compile stage before batch i is collected and measured, across
// the end of a pair as within one, so the compile pool waits neither for the worker, nor for a
// batch's slowest compile, nor for a pair's last batches before the next pair's first.
// Measuring stays on the calling thread, one batch after another in the order asked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tuner/compile/compile_stage.h"
#include "tuner/search/strategy.h"

namespace tgemm {

// One pair as the pipeline drives it.
struct PairRun {
  std::unique_ptr<Strategy> strategy;
  // Queues a batch of the strategy's configs for compiling; returns at once.
  std::function<CompileStage::Ticket(const std::vector<KernelConfig>&)> submit;
  // Collects and measures a submitted batch: element p holds problem p's results, told to the
  // strategy through Strategy::report_problem.
  std::function<std::vector<std::vector<TrialResult>>(CompileStage::Ticket)> measure;
  // Called once the strategy has no more configs and every batch of the pair is measured, the
  // pairs in the order they started; `asked`: the pair's configs. May be empty.
  std::function<void(uint64_t asked)> finished;
};

// The pairs in order, each started when the pair before has no more configs.
struct PairSequence {
  // Builds the next pair's run, nullopt once none is left. Batches of earlier pairs may still
  // be in flight, unless can_start_early() said no.
  std::function<std::optional<PairRun>()> next;
  // Whether next() may be called while batches of earlier pairs are still to be measured;
  // false makes the pipeline measure them first. Empty: always.
  std::function<bool()> can_start_early;
};

// Runs every pair of `pairs` to its end in batches of at most `batch_size`, at most two batches
// in flight; returns the configs asked. Each strategy hears of its own batches only, in order,
// and of its batch i before it is asked for batch i + 2.
uint64_t run_pipelined(size_t batch_size, const PairSequence& pairs);

}  // namespace tgemm
