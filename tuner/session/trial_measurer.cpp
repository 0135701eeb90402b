#include "tuner/session/trial_measurer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "tuner/report/progress_line.h"

namespace tgemm {
namespace {

using Clock = std::chrono::steady_clock;

// A cutoff (us) below any kernel's time: the trial is recorded after its first two runs.
constexpr double kOneRunOnly = 1e-6;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

TrialMeasurer::TrialMeasurer(CompileStage& compile, WorkerClient* client, TrialRecorder& recorder,
                             ArchLimits limits, bool quiet)
    : compile_(compile),
      client_(client),
      recorder_(recorder),
      limits_(std::move(limits)),
      quiet_(quiet) {}

std::vector<std::vector<TrialResult>> TrialMeasurer::measure_batch(
    CompileStage::Ticket ticket, const GemmTemplate& family, const std::string& what,
    std::vector<ProblemState>* states, Deadline* deadline) {
  ProgressLine line(ProgressLine::mode_for_stderr(quiet_));
  const auto t0 = Clock::now();
  auto outcomes = compile_.collect(ticket, [&](size_t done, size_t total) {
    line.update({what, done, total, seconds_since(t0)});
  });
  line.finish();
  std::vector<std::vector<TrialResult>> results(states->size());
  if (!client_) return results;
  for (size_t p = 0; p < states->size(); ++p) {
    Deadline share = deadline->share_of_left(states->size() - p);
    results[p] = measure_on(family, outcomes, &(*states)[p], &share);
  }
  deadline->passed();  // the pair's share is gone once the last problem's is
  return results;
}

std::vector<TrialResult> TrialMeasurer::measure_on(const GemmTemplate& family,
                                                   const std::vector<CompileOutcome>& outcomes,
                                                   ProblemState* st, Deadline* deadline) {
  const Problem& problem = st->named->problem;
  std::vector<TrialResult> results;
  if (!st->note.empty()) return results;  // could not be prepared earlier
  bool prepared = false;
  ProgressLine line(ProgressLine::mode_for_stderr(quiet_));
  const auto t0 = Clock::now();
  const std::string what =
      fmt::format("{} ({} {})", st->named->name, problem.types.name(), problem.layout());
  size_t done = 0;
  for (const CompileOutcome& outcome : outcomes) {
    // A problem without a timed kernel yet measures on past the deadline until it has one,
    // each trial then one run (a slow first kernel timed in full can take seconds): a
    // deadline that passes before a problem's turn in the batch must not leave it without a
    // best.
    const bool overtime = deadline->passed();
    if (overtime && st->best_us > 0) break;
    ++done;
    if (recorder_.has_current_trial(st->problem_id, outcome.kernel_id, family)) continue;
    TrialResult trial = trial_of(family, outcome, st, overtime, &prepared);
    if (!st->note.empty()) return results;
    recorder_.record(st->problem_id, outcome, trial);
    results.push_back(trial);
    const double vs_cublas = st->best_us > 0 ? st->cublas_us / st->best_us : 0;
    line.update({what, done, outcomes.size(), seconds_since(t0), st->best_tflops, vs_cublas});
  }
  line.finish();
  return results;
}

TrialResult TrialMeasurer::trial_of(const GemmTemplate& family, const CompileOutcome& outcome,
                                    ProblemState* st, bool overtime, bool* prepared) {
  TrialResult trial;
  trial.config = outcome.config;
  if (outcome.status != BinaryStatus::ok) {
    trial.status = outcome.status == BinaryStatus::compile_failed ? TrialStatus::compile_failed
                                                                  : TrialStatus::resource_exceeded;
    trial.error = outcome.reason;
    return trial;
  }
  if (auto why = family.unsupported_reason(outcome.config, st->named->problem, limits_.arch)) {
    trial.status = TrialStatus::invalid;
    trial.error = *why;
    return trial;
  }
  if (!*prepared && !(*prepared = prepare(st))) return trial;
  trial = client_->evaluate(outcome.config, outcome.compiled,
                            overtime ? kOneRunOnly : kCutoffFactor * st->best_us);
  st->ran_any = true;
  if (trial.status == TrialStatus::ok && (trial.runs > 1 || overtime) &&
      (st->best_us == 0 || trial.time_median_us < st->best_us))
    st->best_us = trial.time_median_us;
  if (trial.status == TrialStatus::ok) {
    st->best_tflops = std::max(st->best_tflops, trial.tflops);
    st->ok_outcomes.push_back(outcome);
  }
  return trial;
}

bool TrialMeasurer::prepare(ProblemState* st) {
  auto cublas = client_->prepare_problem(st->named->problem, !st->vendor_timed);
  if (!cublas.ok) {
    st->note = "cannot prepare problem: " + cublas.error;
    spdlog::error("{}: {}", st->named->name, st->note);
    return false;
  }
  if (!st->vendor_timed) {
    recorder_.record_vendor_trials(st->problem_id, cublas.vendor_trials);
    st->vendor_timed = true;
  }
  recorder_.record_cublas_time(st->problem_id, cublas.median_us, cublas.sgemm_rel_error);
  st->cublas_us = cublas.median_us;
  return true;
}

ShapeReport TrialMeasurer::finish(ProblemState& st, bool retime) {
  const Problem& problem = st.named->problem;
  ShapeReport report{st.named->name, problem, std::nullopt, 0, st.note};
  report.best = recorder_.best(st.problem_id, problem);
  if (!report.best) {
    if (report.note.empty()) report.note = "no config ran correctly";
    return report;
  }
  report.cublas_us = report.best->cublas_median_us;
  if (!st.ran_any || !retime) return report;
  for (const CompileOutcome& outcome : st.ok_outcomes) {
    if (outcome.config != report.best->config) continue;
    const CublasTiming prepared = client_->prepare_problem(problem);
    if (!prepared.ok) break;
    Comparison cmp = client_->compare(outcome.config, outcome.compiled);
    if (cmp.ok) {
      report.cublas_us = cmp.cublas_median_us;
      report.best->trial.time_median_us = cmp.tgemm_median_us;
      recorder_.record_cublas_time(st.problem_id, cmp.cublas_median_us, prepared.sgemm_rel_error);
    } else {
      spdlog::warn("{}: interleaved comparison failed: {}", st.named->name, cmp.error);
    }
    break;
  }
  return report;
}

}  // namespace tgemm
