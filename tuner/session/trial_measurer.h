// TrialMeasurer: a tuning run's measuring. A batch compiled by the compile stage is collected,
// then verified and timed in the worker on each problem of its variant (those already recorded
// skipped), each trial recorded as it comes; a problem's best is finally timed once more
// interleaved beside cuBLAS for the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "tuner/compile/compile_stage.h"
#include "tuner/evaluate/worker_client.h"
#include "tuner/input/problem_set.h"
#include "tuner/report/tuning_report.h"
#include "tuner/search/budget.h"
#include "tuner/session/trial_recorder.h"

namespace tgemm {

// A kernel whose two warm runs each take more than this many times the best so far cannot
// win; it is recorded with the faster of them instead of being timed in full.
constexpr double kCutoffFactor = 3.0;

// What the run knows of one problem while its variant is tuned.
struct ProblemState {
  const NamedProblem* named = nullptr;
  int64_t problem_id = 0;
  double best_us = 0;  // kernels over kCutoffFactor x this are not timed in full
  double best_tflops = 0;
  double cublas_us = 0;       // cuBLAS's median for the problem, once prepared
  bool vendor_timed = false;  // the vendor calls raced once this run (record_vendor_trials)
  bool ran_any = false;
  std::string note;                         // why it could not be tuned
  std::vector<CompileOutcome> ok_outcomes;  // compiled kernels, for the final comparison
};

class TrialMeasurer {
 public:
  // `client` null: compile only, batches are collected and nothing is measured. `quiet`: no
  // progress lines.
  TrialMeasurer(CompileStage& compile, WorkerClient* client, TrialRecorder& recorder,
                ArchLimits limits, bool quiet);

  // Collects a submitted batch of `family` (its progress line says `what`), then measures it
  // on each problem in turn, each within an even share of what `deadline` leaves
  // (Deadline::share_of_left), so a time budget is shared over the problems instead of being
  // spent on the first ones. Element p holds problem p's results.
  std::vector<std::vector<TrialResult>> measure_batch(CompileStage::Ticket ticket,
                                                      const GemmTemplate& family,
                                                      const std::string& what,
                                                      std::vector<ProblemState>* states,
                                                      Deadline* deadline);
  // Verifies and times compiled outcomes on one problem; already recorded trials are skipped.
  // Stops at the deadline: what is left stays unmeasured (a rerun measures it), so a time
  // budget bounds the wall time however large the batch.
  std::vector<TrialResult> measure_on(const GemmTemplate& family,
                                      const std::vector<CompileOutcome>& outcomes, ProblemState* st,
                                      Deadline* deadline);
  // The problem's best over every family; with `retime`, and a kernel of this run the best, its
  // final number from an interleaved run beside cuBLAS.
  ShapeReport finish(ProblemState& st, bool retime);

 private:
  // cuBLAS's time for the problem (and once per run its vendor calls), recorded; false, with
  // the problem's note set, when the worker cannot prepare it.
  bool prepare(ProblemState* st);
  // The trial of one outcome on the problem: a refusal, or the worker's measurement.
  TrialResult trial_of(const GemmTemplate& family, const CompileOutcome& outcome, ProblemState* st,
                       bool overtime, bool* prepared);

  CompileStage& compile_;
  WorkerClient* client_;
  TrialRecorder& recorder_;
  ArchLimits limits_;
  bool quiet_;
};

}  // namespace tgemm
