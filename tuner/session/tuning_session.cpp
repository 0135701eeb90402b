#include "tuner/session/tuning_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tuner/compile/code_refresh.h"
#include "tuner/compile/compile_stage.h"
#include "tuner/evaluate/worker_client.h"
#include "tuner/input/problem_set.h"
#include "tuner/report/database_selector.h"
#include "tuner/report/explain.h"
#include "tuner/report/tuning_report.h"
#include "tuner/session/family_space.h"
#include "tuner/session/pair_pipeline.h"
#include "tuner/session/strategy_factory.h"
#include "tuner/session/time_budget.h"
#include "tuner/session/trial_measurer.h"
#include "tuner/session/trial_recorder.h"
#include "tuner/session/tuning_plan.h"

namespace tgemm {
namespace {

StrategyOptions strategy_options(const TuneOptions& opt) {
  return {opt.strategy, opt.budget,      opt.budget_fraction,
          opt.seed,     opt.exploration, opt.config_share};
}

// A variant group while it is tuned: its problems, and per family (the group's order) the
// proven candidates and what each problem measured of them.
struct GroupState {
  std::vector<ProblemState> problems;
  std::vector<std::shared_ptr<CandidateStrategy>> candidates;
};

class Session {
 public:
  explicit Session(const TuneOptions& options) : opt_(options) {}

  void run() {
    const double started = steady_seconds();
    problems_ = load_tunable_problem_set(opt_.shapes_path);
    if (!select_problems()) return;
    spaces_ = load_family_spaces(opt_.space_paths);
    pick_target();
    factory_.emplace(strategy_options(opt_), limits_);
    note_current_build();
    groups_ = group_by_variant(problems_, spaces_, limits_);
    spdlog::info("target {}{}; {} shape(s) from {}; {} space(s)", limits_.arch,
                 device_ ? " on " + device_->name : " (compile only)", problems_.size(),
                 opt_.shapes_path, spaces_.size());
    TuningDb db(opt_.db_path, TuningDb::Mode::read_write);
    db_ = &db;
    run_id_ = db.begin_run(opt_.command_line, "tgemm " TGEMM_VERSION, limits_.arch);
    if (device_) {
      device_id_ = db.upsert_device(*device_);
      store_ceilings_once();
    }
    rekey_unchanged_code();
    CompileStage compile(db, run_id_, limits_, opt_.jobs);
    compile_ = &compile;
    TrialRecorder recorder(db, run_id_, device_ ? &*device_ : nullptr, device_id_, current_);
    recorder_ = &recorder;
    TrialMeasurer measurer(compile, client_.get(), recorder, limits_, opt_.quiet);
    measurer_ = &measurer;
    const uint64_t configs_asked = tune();
    totals_ = {recorder.counts().total(), current_};
    const std::string summary = format_summary(summarize(configs_asked, started));
    db.finish_run(run_id_, summary);
    if (device_) fmt::print("{}", format_results_table(reports_));
    if (device_ && opt_.explain)
      for (const NamedProblem& p : problems_)
        fmt::print("\n{}", explain_problem(db, p.problem, device_->name));
    fmt::print("{}\n", summary);
  }

  SessionTotals totals() const { return totals_; }

 private:
  // Every (variant, family) pair through one pipeline: the next pair's first batch compiles
  // while the last batches of the one before are still compiling or measured. Returns the
  // configs asked.
  uint64_t tune() {
    time_.emplace(opt_.time_budget_s);
    if (time_->limited()) {  // the enumerations count against the time budget
      for (const VariantGroup& group : groups_)
        for (FamilySpace* fs : group.families) enumerate(*fs);
      time_->set_pair_weights(pair_time_weights(groups_, limits_.arch));
    }
    states_.resize(groups_.size());  // each filled as its group starts
    // Batches of a few compiles per job: the model strategy learns between them. Under a time
    // budget, one compile per job: the strategy chooses more often, and a batch cut short by
    // the deadline loses less of what was compiled for it.
    const size_t per_job = time_->limited() ? 1 : 4;
    const size_t batch = std::clamp<size_t>(size_t(opt_.jobs) * per_job, 8, 256);
    PairSequence pairs;
    pairs.next = [this] { return next_pair(); };
    pairs.can_start_early = [this] { return next_pair_may_start_early(); };
    return run_pipelined(batch, pairs);
  }

  TuningSummary summarize(uint64_t configs_asked, double started) const {
    TuningSummary s;
    s.configs_asked = configs_asked;
    s.variants = groups_.size();
    s.compile = compile_->stats();
    s.jobs = opt_.jobs;
    if (device_) s.trials = recorder_->counts();
    if (client_) s.worker_restarts = uint64_t(client_->restarts());
    s.time_budget_s = opt_.time_budget_s;
    s.exploring_s = time_->exploring_seconds();
    s.candidate_s = time_->candidate_seconds();
    s.pairs_finished = time_->pairs_finished();
    s.pairs_stopped = time_->pairs_stopped();
    s.total_s = steady_seconds() - started;
    return s;
  }

  // Drops the problems of other shards, then those not in an explicit list; false (after
  // saying so) when none is left.
  bool select_problems() {
    const Shard& shard = opt_.shard;
    if (shard.count > 1) {
      const size_t all = problems_.size();
      problems_ = shard_problems(problems_, shard);
      const std::string which =
          fmt::format("shard {}/{} of {}", shard.index, shard.count, opt_.shapes_path);
      if (problems_.empty()) {
        // Still leave a (schema-only) database, so a merge may list every shard's file.
        TuningDb db(opt_.db_path, TuningDb::Mode::read_write);
        fmt::print("{} holds none of its {} problem(s); nothing to tune\n", which, all);
        return false;
      }
      spdlog::info("{}: {} of {} problem(s)", which, problems_.size(), all);
    }
    // With opt_.problem_keys, only those problems, in the list's order (which sets the order
    // the variants are tuned in).
    if (opt_.problem_keys.empty()) return true;
    std::vector<NamedProblem> listed =
        listed_problems(problems_, opt_.problem_keys, opt_.shapes_path);
    spdlog::info("device {}: {} of {} problem(s)", opt_.device, listed.size(), problems_.size());
    problems_ = std::move(listed);
    return true;
  }

  // The family's space enumerated on the target, once; --explain prints what it pruned.
  void enumerate(FamilySpace& fs) {
    if (fs.enumeration) return;
    fs.enumeration = fs.space.enumerate(limits_);
    for (auto& [reason, count] : fs.enumeration->rejected_by_reason)
      spdlog::debug("{}: pruned {} config(s): {}", fs.space.path(), count, reason);
    if (opt_.explain)
      fmt::print("{}", format_pruning(fs.space.template_name(), limits_.arch, *fs.enumeration));
  }

  // The next pair's run for run_pipelined, nullopt after the last. Each group runs two pairs
  // per family: first every family's proven candidates (read, with the group's problem states,
  // when its first pair starts), measured on every problem whatever the budget; then every
  // family's exploration under the budget. Its last pair finishes its problems.
  std::optional<PairRun> next_pair() {
    if (next_group_ == groups_.size()) return std::nullopt;
    const VariantGroup& group = groups_[next_group_];
    GroupState& state = states_[next_group_];
    const size_t families = group.families.size();
    const size_t step = next_family_;
    if (step == 0) {
      time_->candidates_started();
      state.problems = problem_states(group);
      state.candidates = group_candidates(group, state.problems);
    }
    const bool last_of_group = ++next_family_ == 2 * families;
    if (last_of_group) {
      next_family_ = 0;
      ++next_group_;
    }
    FamilySpace& fs = *group.families[step % families];
    if (step == families) time_->candidates_finished();
    if (step < families)
      return start_candidates(group, fs, state.candidates[step], &state.problems);
    return start_pair(group, fs, *state.candidates[step - families], &state.problems,
                      last_of_group);
  }

  // Whether the next pair may start while batches of earlier pairs are still to be measured.
  // Its strategy is built from what the run knows when it starts, which those batches
  // change through the database's trials and the problem states. A group's first pair reads
  // every family's trials (what the dispatcher serves its problems untuned, the nearest tuned
  // shapes) and its first exploring pair needs every candidate measured (their results teach
  // it, and its share of a time budget is of what they left): both wait for everything before
  // them, so a run asks for the same configs as without the overlap. Otherwise model and
  // nearest with a GPU read the trials of the pair's family on other shapes, which only pairs
  // of earlier groups add to, all measured by then; the rest never wait.
  bool next_pair_may_start_early() const {
    if (next_group_ == groups_.size()) return true;
    const bool waits = next_family_ == 0 || next_family_ == groups_[next_group_].families.size();
    return !waits || unfinished_pairs_ == 0;
  }

  // What the run knows of a group's problems before its first pair.
  std::vector<ProblemState> problem_states(const VariantGroup& group) {
    std::vector<ProblemState> states;
    for (const NamedProblem* named : group.problems) {
      ProblemState st;
      st.named = named;
      st.problem_id = recorder_->problem_id(named->problem);
      if (auto best = recorder_->best(st.problem_id, named->problem))
        st.best_us = best->trial.time_median_us;
      states.push_back(std::move(st));
    }
    return states;
  }

  // Every family's proven candidates for the group (its order), as the group starts: what the
  // dispatcher serves its problems untuned with this build (the database without them), the
  // shipped defaults, and the two nearest tuned shapes' fastest of each family.
  std::vector<std::shared_ptr<CandidateStrategy>> group_candidates(
      const VariantGroup& group, const std::vector<ProblemState>& states) {
    std::set<std::string> keys;
    for (const ProblemState& st : states) keys.insert(st.named->problem.key());
    std::vector<KernelConfig> served;
    std::vector<TrialRecord> other_shapes;
    if (device_) {
      const DatabaseSelector now = DatabaseSelector(*db_, *device_).served_now();
      const KernelSelector selector = now.selector(keys);
      for (const ProblemState& st : states)
        if (KernelChoice c = selector.choose(st.named->problem);
            c.path != Selection::cublas && !is_vendor_call(c.config))
          served.push_back(c.config);
      for (const TrialRecord& r : now.measured())
        if (!keys.count(r.problem.key())) other_shapes.push_back(r);
    }
    std::vector<std::shared_ptr<CandidateStrategy>> out;
    for (FamilySpace* fs : group.families) {
      enumerate(*fs);
      out.push_back(
          factory_->candidates(group, *fs, served, other_shapes, model_context(group, *fs)));
    }
    return out;
  }

  // The performance model of a family for the group's problems on the target.
  ModelContext model_context(const VariantGroup& group, const FamilySpace& fs) {
    ModelContext model;
    model.family = fs.family;
    for (const NamedProblem* p : group.problems) model.problems.push_back(p->problem);
    model.limits = limits_;
    model.sm_count = device_ ? device_->sm_count : default_sm_count(limits_.arch);
    const std::vector<DeviceCeiling> ceilings =
        device_ ? db_->ceilings(device_->name, device_->arch) : std::vector<DeviceCeiling>{};
    model.roofs = roofs_from(ceilings, limits_.arch, group.variant.types);
    return model;
  }

  // A family's proven candidates for one variant, measured on every problem: no budget stops
  // them (no deadline), so every problem has them before anything is explored.
  PairRun start_candidates(const VariantGroup& group, FamilySpace& fs,
                           std::shared_ptr<CandidateStrategy> candidates,
                           std::vector<ProblemState>* states) {
    PairRun run = pair_run(group, fs, states, std::make_shared<Deadline>());
    spdlog::info("{} {} for {}: {} proven candidate(s) first", fs.family->name(),
                 group.variant.types.name(), group.variant.layout(),
                 candidates->candidates().size());
    run.strategy = factory_->measuring(group, fs, std::move(candidates));
    run.finished = [this](uint64_t) { --unfinished_pairs_; };
    return run;
  }

  // Ask/tell over one family's space for one variant past its candidates, under the budget:
  // each batch compiled, then measured on every problem of the variant. The group's last pair
  // (`finishes_group`) finishes its problems into the report once it has finished.
  PairRun start_pair(const VariantGroup& group, FamilySpace& fs,
                     const CandidateStrategy& candidates, std::vector<ProblemState>* states,
                     bool finishes_group) {
    auto deadline = std::make_shared<Deadline>();  // no deadline without a time budget
    PairRun run = pair_run(group, fs, states, deadline);
    ModelContext model;
    std::vector<TrialRecord> trials;
    if (factory_->models_configs()) {
      model = model_context(group, fs);
      // What this database measured on other shapes of this device: the nearest shapes'
      // bests and the model's prior correction.
      if (device_) trials = db_->trials("", device_->name);
    }
    run.strategy =
        factory_->exploring(group, fs, candidates, factory_->context(group, fs, model, trials));
    if (time_->limited()) {
      deadline->at = time_->next_pair_deadline();
      run.strategy = time_limited(std::move(run.strategy), deadline.get());
    }
    run.finished = [this, &group, &fs, states, finishes_group, deadline](uint64_t asked) {
      --unfinished_pairs_;
      time_->pair_finished(deadline->expired);
      if (deadline->expired)
        spdlog::info("{} {} for {}: the time budget's share ran out after {} config(s)",
                     fs.family->name(), group.variant.types.name(), group.variant.layout(), asked);
      if (!finishes_group) return;
      if (device_)
        for (ProblemState& st : *states) reports_.push_back(measurer_->finish(st, !time_->spent()));
      *states = {};  // the group is done: let its kept cubins go
    };
    return run;
  }

  // A pair's compiling and measuring (its strategy and end are the caller's).
  PairRun pair_run(const VariantGroup& group, FamilySpace& fs, std::vector<ProblemState>* states,
                   std::shared_ptr<Deadline> deadline) {
    ++unfinished_pairs_;
    PairRun run;
    const std::string what =
        fmt::format("compile {} {} {} for {}", fs.family->name(), group.variant.types.name(),
                    group.variant.layout(), limits_.arch);
    run.submit = [this, &fs, &group](const std::vector<KernelConfig>& c) {
      return compile_->submit(*fs.family, c, group.variant);
    };
    run.measure = [this, &fs, states, what, deadline](CompileStage::Ticket ticket) {
      return measurer_->measure_batch(ticket, *fs.family, what, states, deadline.get());
    };
    return run;
  }

  // The device's roofs, measured by the worker the first time this database meets the GPU, so
  // the report's roofline uses what this GPU reached.
  void store_ceilings_once() {
    if (db_->has_ceilings(device_id_)) return;
    const CeilingMeasurements m = client_->measure_ceilings();
    if (!m.error.empty()) spdlog::warn("device ceilings: {}", m.error);
    const std::vector<DeviceCeiling> rows = ceiling_rows(m);
    if (rows.empty()) return;
    db_->store_ceilings(run_id_, device_id_, rows);
    spdlog::info(
        "device ceilings: copy {:.0f} GB/s, FFMA {:.1f} TFLOP/s ({}), f16 {:.0f}, "
        "bf16 {:.0f}, tf32 {:.0f} TFLOP/s",
        m.copy_bytes_per_s * 1e-9, m.ffma_flops * 1e-12, m.ffma_source, m.f16_flops * 1e-12,
        m.bf16_flops * 1e-12, m.tf32_flops * 1e-12);
  }

  // The arch and its limits: the GPU's own when there is one (probed in the worker, so this
  // process never initialises CUDA), else --arch or sm_75 for compile-only work.
  void pick_target() {
    std::string why;
    if (!opt_.compile_only || opt_.arch.empty()) {
      client_ = std::make_unique<WorkerClient>(
          opt_.worker_path, opt_.device, std::chrono::milliseconds(int64_t(opt_.timeout_s * 1000)));
      device_ = client_->probe_device(&why);
    }
    if (!opt_.arch.empty()) arch_limits(opt_.arch);  // rejects an unknown arch up front
    if (opt_.compile_only) {
      limits_ =
          arch_limits(opt_.arch.empty() ? (device_ ? device_->arch : kDefaultArch) : opt_.arch);
      device_.reset();  // compile-only never measures
      client_.reset();
      return;
    }
    if (!device_)
      fail("no GPU to tune on ({}); pass --compile-only to compile and prune without one", why);
    if (!opt_.arch.empty() && opt_.arch != device_->arch)
      fail("--arch {} does not match GPU {} ({}); use --compile-only to build for another arch",
           opt_.arch, opt_.device, device_->arch);
    limits_ = device_->limits;
  }

  // What a stored trial must match to count as current: this build's families (a space's own
  // source for those it replaces), its NVRTC and the GPU's driver.
  void note_current_build() {
    current_ = this_build(device_ ? device_->driver_version : 0);
    for (const auto& fs : spaces_)
      current_.template_hashes[fs->family->name()] = fs->family->source().hash;
  }

  // The stored trials of this arch whose family's text changed but whose config builds to the
  // same machine code are re-keyed to this build first, so they count as recorded instead of
  // being measured again (and their new binaries are found in the cache).
  void rekey_unchanged_code() {
    RefreshOptions options;
    options.family = [this](const std::string& name) -> const GemmTemplate* {
      for (const auto& fs : spaces_)
        if (fs->family->name() == name) return fs->family;
      return find_template(name);
    };
    options.current = [this](const DeviceInfo& d) {
      CurrentBuild build = current_;
      build.driver_version = d.driver_version;
      return build;
    };
    options.arch = limits_.arch;
    options.run_id = run_id_;
    options.jobs = opt_.jobs;
    const RefreshCounts c = refresh_by_code(*db_, options);
    if (c.rekeyed + c.changed + c.not_built > 0)
      spdlog::info(
          "trials whose template text changed: {} kept (same machine code), {} to measure again "
          "(code changed), {} not rebuilt to compare",
          c.rekeyed, c.changed, c.not_built);
  }

  const TuneOptions& opt_;
  std::vector<NamedProblem> problems_;
  std::vector<std::unique_ptr<FamilySpace>> spaces_;
  std::vector<VariantGroup> groups_;  // of problems_ and spaces_
  ArchLimits limits_;
  std::unique_ptr<WorkerClient> client_;  // null: compile only
  std::optional<DeviceInfo> device_;
  CurrentBuild current_;
  std::optional<StrategyFactory> factory_;
  // The run's parts while run() runs (its locals).
  TuningDb* db_ = nullptr;
  CompileStage* compile_ = nullptr;
  TrialRecorder* recorder_ = nullptr;
  TrialMeasurer* measurer_ = nullptr;
  int64_t run_id_ = 0;
  int64_t device_id_ = 0;
  std::optional<TimeBudget> time_;
  std::vector<GroupState> states_;    // per group, while it is tuned
  std::vector<ShapeReport> reports_;  // per problem, as its group finishes
  SessionTotals totals_;
  // The pair sequence's place: the group and family of the next pair to start.
  size_t next_group_ = 0, next_family_ = 0;
  size_t unfinished_pairs_ = 0;  // pairs started, not finished
};

}  // namespace

SessionTotals run_tuning_session(const TuneOptions& options) {
  Session session(options);
  session.run();
  return session.totals();
}

}  // namespace tgemm
