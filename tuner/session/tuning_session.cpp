#include "tuner/session/tuning_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/core/hash.h"
#include "src/core/vendor_call.h"
#include "src/core/yaml_input.h"
#include "src/cuda/cublas_gemm.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/kernel_source.h"
#include "src/templates/build_versions.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tuner/compile/code_refresh.h"
#include "tuner/compile/compile_stage.h"
#include "tuner/evaluate/worker_client.h"
#include "tuner/input/problem_set.h"
#include "tuner/report/database_selector.h"
#include "tuner/report/explain.h"
#include "tuner/report/progress_line.h"
#include "tuner/report/text_columns.h"
#include "tuner/search/ask_tell.h"
#include "tuner/search/budget.h"
#include "tuner/search/candidates.h"
#include "tuner/search/model_strategy.h"
#include "tuner/search/strategy.h"
#include "tuner/session/pair_pipeline.h"

namespace tgemm {

using Clock = std::chrono::steady_clock;

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

namespace {

// The shipped space of a registered family, embedded in the library with its template: a
// tuner in any build folder or install finds it.
SearchSpace shipped_space(const std::string& template_name) {
  for (const EmbeddedTemplate& t : embedded_templates())
    if (template_name == t.name && t.space && *t.space)
      return SearchSpace::parse(t.space, fmt::format("<embedded {}.yaml>", template_name));
  fail("family {} has no embedded search space (configs/spaces/{}.yaml); pass --space",
       template_name, template_name);
}

// A kernel whose two warm runs each take more than this many times the best so far cannot
// win; it is recorded with the faster of them instead of being timed in full.
constexpr double kCutoffFactor = 3.0;
// A cutoff (us) below any kernel's time: the trial is recorded after its first two runs.
constexpr double kOneRunOnly = 1e-6;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Counts of trial outcomes over the whole session, for the summary line.
struct TrialCounts {
  std::map<TrialStatus, uint64_t> by_status;
  uint64_t skipped = 0;  // already in the database
  uint64_t stale = 0;    // in the database but stale (another NVRTC or driver): measured again
  uint64_t total() const {
    uint64_t n = 0;
    for (auto& [s, c] : by_status) n += c;
    return n;
  }
};

struct ShapeReport {
  std::string name;
  Problem problem;
  std::optional<BestEntry> best;
  double cublas_us = 0;
  std::string note;  // why there is no best
};

// One family's search space, with the host side it is tuned through.
struct FamilySpace {
  SearchSpace space;
  const GemmTemplate* family = nullptr;
  std::unique_ptr<GemmTemplate> owned;  // set when the space names its own `source:`
  std::optional<SearchSpace::Enumeration> enumeration;  // on first use
};

// Problems of one variant (layout and types): they share every cubin.
struct VariantGroup {
  Problem variant;
  std::vector<const NamedProblem*> problems;
  std::vector<FamilySpace*> families;  // the spaces that compute it on the target
};

// What the session knows of one problem while its variant is tuned.
struct ProblemState {
  const NamedProblem* named = nullptr;
  int64_t problem_id = 0;
  double best_us = 0;  // kernels over kCutoffFactor x this are not timed in full
  double best_tflops = 0;
  double cublas_us = 0;  // cuBLAS's median for the problem, once prepared
  bool cublas_timed = false;
  bool vendor_timed = false;  // the vendor calls raced once this session (record_vendor_trials)
  bool ran_any = false;
  std::string note;                         // why it could not be tuned
  std::vector<CompileOutcome> ok_outcomes;  // compiled kernels, for the final comparison
};

// A strategy owned elsewhere, for the pipeline that takes ownership of the one it runs.
class Forwarding final : public Strategy {
 public:
  explicit Forwarding(std::shared_ptr<Strategy> inner) : inner_(std::move(inner)) {}
  std::vector<KernelConfig> propose(size_t max_count) override {
    return inner_->propose(max_count);
  }
  void report(const std::vector<TrialResult>& results) override { inner_->report(results); }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    inner_->report_problem(problem, results);
  }

 private:
  std::shared_ptr<Strategy> inner_;
};

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
    const auto started = Clock::now();
    problems_ = load_problem_set(opt_.shapes_path);
    if (!keep_shard()) return;
    load_spaces();
    pick_target();
    note_current_build();
    std::vector<VariantGroup> groups = group_by_variant();
    spdlog::info("target {}{}; {} shape(s) from {}; {} space(s)", limits_.arch,
                 device_ ? " on " + device_->name : " (compile only)", problems_.size(),
                 opt_.shapes_path, spaces_.size());

    TuningDb db(opt_.db_path, TuningDb::Mode::read_write);
    run_id_ = db.begin_run(opt_.command_line, "tgemm " TGEMM_VERSION, limits_.arch);
    if (device_) {
      device_id_ = db.upsert_device(*device_);
      store_ceilings_once(db);
    }
    rekey_unchanged_code(db);
    CompileStage compile(db, run_id_, limits_, opt_.jobs);
    std::vector<ShapeReport> reports;
    std::vector<GroupState> states(groups.size());  // each filled as it starts
    time_started_ = Clock::now();
    if (opt_.time_budget_s > 0) weigh_pairs(groups);  // its enumerations count against it
    // Batches of a few compiles per job: the model strategy learns between them. Under a time
    // budget, one compile per job: the strategy chooses more often, and a batch cut short by
    // the deadline loses less of what was compiled for it.
    const size_t per_job = opt_.time_budget_s > 0 ? 1 : 4;
    const size_t batch = std::clamp<size_t>(size_t(opt_.jobs) * per_job, 8, 256);
    // One pipeline over every (variant, family) pair: the next pair's first batch compiles
    // while the last batches of the one before are still compiling or measured.
    PairSequence pairs;
    pairs.next = [&] { return next_pair(db, compile, groups, &states, &reports); };
    pairs.can_start_early = [&] { return next_pair_may_start_early(groups); };
    const uint64_t configs_asked = run_pipelined(batch, pairs);
    const CompileStats cs = compile.stats();
    totals_ = {counts_.total(), current_};
    // configs/s: fresh NVRTC compiles over the wall time the pool had any compile to do; per
    // compile, wall against CPU and waiting tells slow compiles from blocked ones (CompileStats).
    std::string summary = fmt::format(
        "configs: {} asked over {} variant(s); binaries: {} compiled, {} from cache, {} pruned by "
        "resources, {} failed to compile ({:.1f} s, {:.1f} configs/s with {} job(s))",
        configs_asked, groups.size(), cs.compiled, cs.cached, cs.pruned, cs.failed, cs.seconds,
        cs.configs_per_second(), opt_.jobs);
    if (cs.built > 0)
      summary +=
          fmt::format("; per compile {:.2f} s wall: {:.2f} s CPU, {:.2f} s waiting for a core",
                      cs.wall_seconds_per_compile(), cs.cpu_seconds_per_compile(),
                      cs.wait_seconds_per_compile());
    if (device_) {
      summary += fmt::format("; trials: {} run, {} already recorded, {} stale re-measured",
                             counts_.total(), counts_.skipped, counts_.stale);
      for (auto& [status, n] : counts_.by_status)
        summary += fmt::format(", {} {}", n, to_string(status));
      if (client_) summary += fmt::format("; worker restarts: {}", client_->restarts());
    }
    if (opt_.time_budget_s > 0)
      summary += fmt::format(
          "; time budget {:g} s: {:.1f} s spent exploring past the candidates ({:.1f} s on "
          "those), {} of {} family run(s) stopped by it",
          opt_.time_budget_s, exploring_seconds(), candidate_seconds_, pairs_stopped_,
          pairs_total_);
    summary += fmt::format("; total {}", format_duration(seconds_since(started)));
    db.finish_run(run_id_, summary);
    if (device_) print_table(reports);
    if (device_ && opt_.explain)
      for (const NamedProblem& p : problems_)
        fmt::print("\n{}", explain_problem(db, p.problem, device_->name));
    fmt::print("{}\n", summary);
  }

  SessionTotals totals() const { return totals_; }

 private:
  // Drops the problems of other shards, then those not in an explicit list; false (after
  // saying so) when none is left.
  bool keep_shard() {
    const Shard& shard = opt_.shard;
    if (shard.count == 1) return keep_listed();
    const size_t all = problems_.size();
    std::erase_if(problems_,
                  [&](const NamedProblem& p) { return !in_shard(p.problem.key(), shard); });
    const std::string which =
        fmt::format("shard {}/{} of {}", shard.index, shard.count, opt_.shapes_path);
    if (problems_.empty()) {
      // Still leave a (schema-only) database, so a merge may list every shard's file.
      TuningDb db(opt_.db_path, TuningDb::Mode::read_write);
      fmt::print("{} holds none of its {} problem(s); nothing to tune\n", which, all);
      return false;
    }
    spdlog::info("{}: {} of {} problem(s)", which, problems_.size(), all);
    return keep_listed();
  }

  // With opt_.problem_keys, only those problems, in the list's order (which sets the order
  // the variants are tuned in); a key the shape file or shard lacks is an error.
  bool keep_listed() {
    if (opt_.problem_keys.empty()) return true;
    std::vector<NamedProblem> listed;
    for (const std::string& key : opt_.problem_keys) {
      auto it = std::find_if(problems_.begin(), problems_.end(),
                             [&](const NamedProblem& p) { return p.problem.key() == key; });
      if (it == problems_.end())
        fail("problem {} is not among the {} problem(s) of {} this run tunes", key,
             problems_.size(), opt_.shapes_path);
      listed.push_back(*it);
    }
    spdlog::info("device {}: {} of {} problem(s)", opt_.device, listed.size(), problems_.size());
    problems_ = std::move(listed);
    return true;
  }

  // --space files, else the shipped (embedded) space of every registered family.
  void load_spaces() {
    std::vector<SearchSpace> spaces;
    for (const std::string& path : opt_.space_paths) spaces.push_back(SearchSpace::load(path));
    if (opt_.space_paths.empty())
      for (const GemmTemplate* t : all_templates()) spaces.push_back(shipped_space(t->name()));
    for (SearchSpace& space : spaces) {
      const std::string path = space.path();
      auto fs = std::make_unique<FamilySpace>();
      fs->space = std::move(space);
      const std::string& name = fs->space.template_name();
      if (fs->space.source_path().empty()) {
        fs->family = &template_named(name);
      } else {
        fs->owned = make_template(
            name, kernel_source_from_text(name, read_text_file(fs->space.source_path())));
        fs->family = fs->owned.get();
      }
      spdlog::info("space {}: family {} ({} points)", path, name, fs->space.cartesian_size());
      spaces_.push_back(std::move(fs));
    }
  }

  // Problems grouped by variant, in first-seen order, each with the families that compute
  // it on the target; a variant no family computes is an error naming types and arch.
  std::vector<VariantGroup> group_by_variant() {
    std::vector<VariantGroup> groups;
    for (const NamedProblem& named : problems_) {
      const Problem variant = build_variant(named.problem);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const VariantGroup& g) {
        return g.variant.functional_key() == variant.functional_key();
      });
      if (it == groups.end()) it = groups.insert(groups.end(), VariantGroup{variant, {}, {}});
      it->problems.push_back(&named);
    }
    for (VariantGroup& g : groups) {
      std::vector<std::string> why_not;
      for (auto& fs : spaces_) {
        auto why = fs->space.types_unsupported(g.variant.types, limits_.arch);
        if (!why) why = fs->family->types_unsupported(g.variant.types, limits_.arch);
        if (why)
          why_not.push_back(*why);
        else
          g.families.push_back(fs.get());
      }
      if (g.families.empty())
        fail("no template family computes {} ({} layout) on {}: {}", g.variant.types.name(),
             g.variant.layout(), limits_.arch, fmt::join(why_not, "; "));
      // Families with shipped defaults for these types go first: their known-good kernels
      // set a best early, so a slow family's configs are cut off after two warm runs instead
      // of being timed in full.
      std::stable_sort(g.families.begin(), g.families.end(), [&](FamilySpace* a, FamilySpace* b) {
        return !default_configs(*a, g.variant.types).empty() &&
               default_configs(*b, g.variant.types).empty();
      });
    }
    return groups;
  }

  // --explain: what each constraint of a family's space pruned on this arch (the first
  // constraint a config fails is the one it counts under).
  void print_pruning(const FamilySpace& fs) const {
    uint64_t pruned = 0;
    for (const auto& [reason, count] : fs.enumeration->rejected_by_reason) pruned += count;
    fmt::print("{} on {}: {} legal config(s), {} pruned\n", fs.space.template_name(), limits_.arch,
               fs.enumeration->legal.size(), pruned);
    std::vector<std::pair<uint64_t, std::string>> rows;
    for (const auto& [reason, count] : fs.enumeration->rejected_by_reason)
      rows.emplace_back(count, reason);
    std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first > b.first; });
    TextColumns table({"pruned", "constraint"}, {true, false});
    for (const auto& [count, reason] : rows) table.add({std::to_string(count), reason});
    if (pruned) table.print();
  }

  // The shipped defaults of this family, types and arch that are legal in the space.
  std::vector<KernelConfig> default_configs(const FamilySpace& fs, const GemmTypes& types) {
    std::vector<KernelConfig> out;
    for (const DefaultKernel& d : shipped_default_kernels()) {
      if (d.arch != "*" && d.arch != limits_.arch) continue;
      if (d.types != types || d.config.template_name != fs.space.template_name()) continue;
      KernelConfig config = in_space_order(fs, d.config);
      if (!config.params.empty() && !fs.space.rejection(config, limits_)) out.push_back(config);
    }
    return out;
  }

  // The space's legal configs that the family can run in these types (the space does not see
  // the type: f32x3 needs more of a config than one pass does): the enumeration itself when
  // the family refuses none, else `kept`, which then holds the rest.
  const std::vector<KernelConfig>& legal_for_types(const FamilySpace& fs, const GemmTypes& types,
                                                   std::vector<KernelConfig>* kept) const {
    const std::vector<KernelConfig>& all = fs.enumeration->legal;
    auto refused = [&](const KernelConfig& c) {
      return fs.family->types_unsupported_by(c, types, limits_.arch).has_value();
    };
    const auto first = std::find_if(all.begin(), all.end(), refused);
    if (first == all.end()) return all;
    kept->assign(all.begin(), first);  // each config is asked once
    std::copy_if(std::next(first), all.end(), std::back_inserter(*kept),
                 [&](const KernelConfig& c) { return !refused(c); });
    spdlog::info("{}: {} of {} legal config(s) cannot run {} (left out)", fs.family->name(),
                 all.size() - kept->size(), all.size(), types.name());
    return *kept;
  }

  // The next pair's run for run_pipelined, nullopt after the last. Each group runs two pairs
  // per family: first every family's proven candidates (read, with the group's problem states,
  // when its first pair starts), measured on every problem whatever the budget; then every
  // family's exploration under the budget. Its last pair finishes its problems.
  std::optional<PairRun> next_pair(TuningDb& db, CompileStage& compile,
                                   const std::vector<VariantGroup>& groups,
                                   std::vector<GroupState>* states,
                                   std::vector<ShapeReport>* reports) {
    if (next_group_ == groups.size()) return std::nullopt;
    const VariantGroup& group = groups[next_group_];
    GroupState& state = (*states)[next_group_];
    const size_t families = group.families.size();
    const size_t step = next_family_;
    if (step == 0) {
      candidates_started_ = Clock::now();
      state.problems = problem_states(db, group);
      state.candidates = group_candidates(db, group, state.problems);
    }
    const bool last_of_group = ++next_family_ == 2 * families;
    if (last_of_group) {
      next_family_ = 0;
      ++next_group_;
    }
    FamilySpace& fs = *group.families[step % families];
    if (step == families) candidate_seconds_ += seconds_since(candidates_started_);
    if (step < families)
      return start_candidates(db, compile, group, fs, state.candidates[step], &state.problems);
    return start_pair(db, compile, group, fs, *state.candidates[step - families], &state.problems,
                      last_of_group ? reports : nullptr);
  }

  // Whether the next pair may start while batches of earlier pairs are still to be measured.
  // Its strategy is built from what the session knows when it starts, which those batches
  // change through the database's trials and the problem states. A group's first pair reads
  // every family's trials (what the dispatcher serves its problems untuned, the nearest tuned
  // shapes) and its first exploring pair needs every candidate measured (their results teach
  // it, and its share of a time budget is of what they left): both wait for everything before
  // them, so a run asks for the same configs as without the overlap. Otherwise model and
  // nearest with a GPU read the trials of the pair's family on other shapes, which only pairs
  // of earlier groups add to, all measured by then; the rest never wait.
  bool next_pair_may_start_early(const std::vector<VariantGroup>& groups) const {
    if (next_group_ == groups.size()) return true;
    const bool waits = next_family_ == 0 || next_family_ == groups[next_group_].families.size();
    return !waits || unfinished_pairs_ == 0;
  }

  // What the session knows of a group's problems before its first pair.
  std::vector<ProblemState> problem_states(TuningDb& db, const VariantGroup& group) {
    std::vector<ProblemState> states;
    for (const NamedProblem* named : group.problems) {
      ProblemState st;
      st.named = named;
      st.problem_id = db.upsert_problem(named->problem);
      if (device_) {
        db.update_best(st.problem_id, device_id_, &current_);  // a stale best is no yardstick
        auto stored = db.best_entries(named->problem.key(), device_->name, device_->arch);
        if (!stored.empty()) st.best_us = stored.front().trial.time_median_us;
      }
      states.push_back(std::move(st));
    }
    return states;
  }

  // A family's proven candidates for one variant, measured on every problem: no budget stops
  // them (no deadline), so every problem has them before anything is explored.
  PairRun start_candidates(TuningDb& db, CompileStage& compile, const VariantGroup& group,
                           FamilySpace& fs, std::shared_ptr<CandidateStrategy> candidates,
                           std::vector<ProblemState>* states) {
    PairRun run = pair_run(db, compile, group, fs, states, std::make_shared<Deadline>());
    spdlog::info("{} {} for {}: {} proven candidate(s) first", fs.family->name(),
                 group.variant.types.name(), group.variant.layout(),
                 candidates->candidates().size());
    run.strategy = shared_out(filtered(std::make_unique<Forwarding>(std::move(candidates)),
                                       [this, &fs, &group](const KernelConfig& c) {
                                         return some_problem_runs(fs, group, c);
                                       }),
                              opt_.config_share.index, opt_.config_share.count);
    run.finished = [this](uint64_t) { --unfinished_pairs_; };
    return run;
  }

  // Ask/tell over one family's space for one variant past its candidates, under the budget:
  // each batch compiled, then measured on every problem of the variant. With `reports` (the
  // group's last pair), the group's problems are finished into it once the pair has finished.
  PairRun start_pair(TuningDb& db, CompileStage& compile, const VariantGroup& group,
                     FamilySpace& fs, const CandidateStrategy& candidates,
                     std::vector<ProblemState>* states, std::vector<ShapeReport>* reports) {
    auto deadline = std::make_shared<Deadline>();  // no deadline without a time budget
    PairRun run = pair_run(db, compile, group, fs, states, deadline);
    run.strategy = pair_strategy(db, group, fs, candidates, *states, deadline.get());
    run.finished = [this, &db, &group, &fs, states, reports, deadline](uint64_t asked) {
      --unfinished_pairs_;
      ++pairs_total_;
      if (deadline->expired) {
        ++pairs_stopped_;
        spdlog::info("{} {} for {}: the time budget's share ran out after {} config(s)",
                     fs.family->name(), group.variant.types.name(), group.variant.layout(), asked);
      }
      if (!reports) return;
      if (device_)
        for (ProblemState& st : *states) reports->push_back(finish_problem(db, st));
      *states = {};  // the group is done: let its kept cubins go
    };
    return run;
  }

  // A pair's compiling and measuring (its strategy and end are the caller's). Each batch is
  // measured on the problems in turn, each within an even share of what the deadline leaves
  // (Deadline::share_of_left), so a time budget is shared over the problems of the variant
  // instead of being spent on the first ones.
  PairRun pair_run(TuningDb& db, CompileStage& compile, const VariantGroup& group, FamilySpace& fs,
                   std::vector<ProblemState>* states, std::shared_ptr<Deadline> deadline) {
    ++unfinished_pairs_;
    PairRun run;
    const std::string what =
        fmt::format("compile {} {} {} for {}", fs.family->name(), group.variant.types.name(),
                    group.variant.layout(), limits_.arch);
    run.submit = [&compile, &fs, &group](const std::vector<KernelConfig>& c) {
      return compile.submit(*fs.family, c, group.variant);
    };
    run.measure = [this, &db, &compile, &fs, states, what, deadline](CompileStage::Ticket ticket) {
      ProgressLine line(ProgressLine::mode_for_stderr(opt_.quiet));
      const auto t0 = Clock::now();
      auto outcomes = compile.collect(ticket, [&](size_t done, size_t total) {
        line.update({what, done, total, seconds_since(t0)});
      });
      line.finish();
      std::vector<std::vector<TrialResult>> results(states->size());
      if (!device_) return results;
      for (size_t p = 0; p < states->size(); ++p) {
        Deadline share = deadline->share_of_left(states->size() - p);
        results[p] = measure_batch(db, *fs.family, outcomes, &(*states)[p], &share);
      }
      deadline->passed();  // the pair's share is gone once the last problem's is
      return results;
    };
    return run;
  }

  void enumerate_once(FamilySpace& fs) {
    if (fs.enumeration) return;
    fs.enumeration = fs.space.enumerate(limits_);
    for (auto& [reason, count] : fs.enumeration->rejected_by_reason)
      spdlog::debug("{}: pruned {} config(s): {}", fs.space.path(), count, reason);
    if (opt_.explain) print_pruning(fs);
  }

  // Whether some problem of the group can run `config` (its types and layout included).
  bool some_problem_runs(const FamilySpace& fs, const VariantGroup& group,
                         const KernelConfig& config) const {
    return std::any_of(group.problems.begin(), group.problems.end(), [&](const NamedProblem* p) {
      return !fs.family->unsupported_reason(config, p->problem, limits_.arch);
    });
  }

  // Each pair's weight in sharing the time budget out (time_share_weight), in the order the
  // pairs start: its legal configs that some problem of its group can run, counted up to a
  // full share.
  void weigh_pairs(const std::vector<VariantGroup>& groups) {
    for (const VariantGroup& group : groups)
      for (FamilySpace* fs : group.families) {
        enumerate_once(*fs);
        size_t runnable = 0;
        for (const KernelConfig& c : fs->enumeration->legal) {
          if (runnable == kConfigsForAFullShare) break;
          runnable += some_problem_runs(*fs, group, c);
        }
        pair_weights_.push_back(time_share_weight(runnable));
      }
  }

  // The pair's strategy: the configured strategy over the legal configs past the family's
  // candidates, this session's share of them and, with a time budget, this pair's share of it.
  std::unique_ptr<Strategy> pair_strategy(TuningDb& db, const VariantGroup& group, FamilySpace& fs,
                                          const CandidateStrategy& candidates,
                                          const std::vector<ProblemState>& states,
                                          Deadline* deadline) {
    std::vector<KernelConfig> kept;
    const std::vector<KernelConfig>& legal = legal_for_types(fs, group.variant.types, &kept);
    const uint64_t budget = opt_.budget_fraction > 0
                                ? Budget{0, opt_.budget_fraction, 0}.configs_for(legal.size())
                                : opt_.budget;
    std::unique_ptr<Strategy> strategy =
        exploring_strategy(opt_.strategy, legal, candidates, budget, opt_.seed,
                           strategy_context(db, group, fs, states));
    // A config that no problem of the group can run (a small side wider than a GEMV's ROWS, a
    // parameter this layout's loop ignores) would be compiled only to be refused. It is left
    // out after the strategy asks, not before, so what the strategy asks (its random sample,
    // the shares of --shard and --devices) stays what the seed and the space give.
    strategy = filtered(std::move(strategy), [this, &fs, &group](const KernelConfig& config) {
      return some_problem_runs(fs, group, config);
    });
    // Identical GPUs share the configs out (--devices): this session measures its share.
    strategy = shared_out(std::move(strategy), opt_.config_share.index, opt_.config_share.count);
    if (opt_.time_budget_s > 0) {
      // This pair's weighted share of what is left for it and those after it (the
      // candidates measured so far have spent theirs); the pairs before have asked for all
      // they will.
      const double weight = pair_weights_.front();
      pair_weights_.pop_front();
      const double after = std::accumulate(pair_weights_.begin(), pair_weights_.end(), 0.0);
      const double left = opt_.time_budget_s - exploring_seconds();
      deadline->at = steady_seconds() + weighted_share(left, weight, after);
      strategy = time_limited(std::move(strategy), deadline);
    }
    spdlog::info("{} {} for {}: {} legal config(s), strategy '{}' past the candidates",
                 fs.family->name(), group.variant.types.name(), group.variant.layout(),
                 legal.size(), opt_.strategy);
    return strategy;
  }

  // Every family's proven candidates for the group (its order), as the group starts: what the
  // dispatcher serves its problems untuned with this build (the database without them), the
  // shipped defaults, and the two nearest tuned shapes' fastest of each family.
  std::vector<std::shared_ptr<CandidateStrategy>> group_candidates(
      TuningDb& db, const VariantGroup& group, const std::vector<ProblemState>& states) {
    std::vector<Problem> problems;
    std::set<std::string> keys;
    for (const ProblemState& st : states) {
      problems.push_back(st.named->problem);
      keys.insert(st.named->problem.key());
    }
    CandidateSources common;
    std::vector<TrialRecord> trials;
    if (device_) {
      const DatabaseSelector now = DatabaseSelector(db, *device_).served_now();
      const KernelSelector selector = now.selector(keys);
      for (const Problem& p : problems)
        if (KernelChoice c = selector.choose(p);
            c.path != Selection::cublas && !is_vendor_call(c.config))
          common.served.push_back(c.config);
      for (const TrialRecord& r : now.measured())
        if (!keys.count(r.problem.key())) trials.push_back(r);
    }
    std::vector<std::shared_ptr<CandidateStrategy>> out;
    for (FamilySpace* fs : group.families) {
      enumerate_once(*fs);
      CandidateSources sources = common;
      sources.defaults = default_configs(*fs, group.variant.types);
      sources.nearest =
          nearest_tuned_configs(problems, trials, fs->space.template_name(), 2, kNearestPerShape);
      const AdmitConfig admit = [this, fs, &group](const KernelConfig& c) {
        KernelConfig ordered = in_space_order(*fs, c);
        if (ordered.params.empty() || fs->space.rejection(ordered, limits_) ||
            fs->family->types_unsupported_by(ordered, group.variant.types, limits_.arch))
          return std::optional<KernelConfig>();
        return std::optional<KernelConfig>(std::move(ordered));
      };
      std::vector<KernelConfig> kept;
      ModelContext model = model_context(db, group, *fs, problems);
      out.push_back(std::make_shared<CandidateStrategy>(
          proven_candidates(sources, admit, legal_for_types(*fs, group.variant.types, &kept),
                            model),
          problems.size()));
    }
    return out;
  }

  // The performance model of a family for the group's problems on the target.
  ModelContext model_context(TuningDb& db, const VariantGroup& group, const FamilySpace& fs,
                             std::vector<Problem> problems) {
    ModelContext model;
    model.family = fs.family;
    model.problems = std::move(problems);
    model.limits = limits_;
    model.sm_count = device_ ? device_->sm_count : default_sm_count(limits_.arch);
    const std::vector<DeviceCeiling> ceilings =
        device_ ? db.ceilings(device_->name, device_->arch) : std::vector<DeviceCeiling>{};
    model.roofs = roofs_from(ceilings, limits_.arch, group.variant.types);
    return model;
  }

  // What the model strategies need besides the configs: the problems, the family, the
  // target and its roofs, and the recorded bests of the nearest tuned shapes.
  StrategyContext strategy_context(TuningDb& db, const VariantGroup& group, const FamilySpace& fs,
                                   const std::vector<ProblemState>& states) {
    StrategyContext ctx;
    ctx.exploration = opt_.exploration;
    if (opt_.strategy != "model" && opt_.strategy != "nearest") return ctx;
    std::vector<Problem> problems;
    for (const ProblemState& st : states) problems.push_back(st.named->problem);
    ctx.model = model_context(db, group, fs, std::move(problems));
    // What this database measured on other shapes of this device: the nearest shapes' bests
    // and the model's prior correction.
    std::vector<TrialRecord> trials;
    if (device_)
      for (TrialRecord& r : db.trials("", device_->name))
        if (r.arch == limits_.arch && r.trial.config.template_name == fs.space.template_name())
          trials.push_back(std::move(r));
    for (const TrialRecord& r : trials) {
      const bool in_group = std::any_of(states.begin(), states.end(), [&](const ProblemState& st) {
        return st.named->problem.key() == r.problem.key();
      });
      if (!in_group && r.trial.status == TrialStatus::ok)
        ctx.prior.push_back({r.trial.config, r.problem, r.trial.time_median_us});
    }
    if (opt_.strategy == "nearest") {
      for (const KernelConfig& c :
           nearest_tuned_configs(ctx.model.problems, trials, fs.space.template_name())) {
        KernelConfig ordered = in_space_order(fs, c);
        if (!ordered.params.empty() && !fs.space.rejection(ordered, limits_))
          ctx.nearest.push_back(std::move(ordered));
      }
    }
    return ctx;
  }

  // The device's roofs, measured by the worker the first time this database meets the GPU, so
  // the report's roofline uses what this GPU reached.
  void store_ceilings_once(TuningDb& db) {
    if (db.has_ceilings(device_id_)) return;
    const CeilingMeasurements m = client_->measure_ceilings();
    if (!m.error.empty()) spdlog::warn("device ceilings: {}", m.error);
    const std::vector<DeviceCeiling> rows = ceiling_rows(m);
    if (rows.empty()) return;
    db.store_ceilings(run_id_, device_id_, rows);
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
  void rekey_unchanged_code(TuningDb& db) {
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
    const RefreshCounts c = refresh_by_code(db, options);
    if (c.rekeyed + c.changed + c.not_built > 0)
      spdlog::info(
          "trials whose template text changed: {} kept (same machine code), {} to measure again "
          "(code changed), {} not rebuilt to compare",
          c.rekeyed, c.changed, c.not_built);
  }

  // `config` with its parameters in the space's order (empty when it lacks one of them or
  // belongs to another template), so it compares equal to the space's own points.
  // A parameter the config leaves out (one added to the family after it was stored) takes
  // the template's default, which its kernel was built with.
  static KernelConfig in_space_order(const FamilySpace& fs, const KernelConfig& config) {
    const SearchSpace& space = fs.space;
    KernelConfig out{space.template_name(), {}};
    if (config.template_name != space.template_name()) return out;
    for (const SpaceParameter& p : space.parameters()) {
      std::optional<int64_t> value = declared_integer_default(fs.family->source().text, p.name);
      if (config.has(p.name)) value = config.get(p.name);
      if (!value) return {space.template_name(), {}};
      out.params.emplace_back(p.name, *value);
    }
    return out;
  }

  // Verifies and times one compiled batch on one problem; already recorded trials are skipped.
  // Stops at the pair's deadline: what is left of the batch stays unmeasured (a rerun measures
  // it), so a time budget bounds the wall time however large the batch.
  std::vector<TrialResult> measure_batch(TuningDb& db, const GemmTemplate& family,
                                         const std::vector<CompileOutcome>& outcomes,
                                         ProblemState* st, Deadline* deadline) {
    const Problem& problem = st->named->problem;
    std::vector<TrialResult> results;
    if (!st->note.empty()) return results;  // could not be prepared earlier
    bool prepared = false;
    ProgressLine line(ProgressLine::mode_for_stderr(opt_.quiet));
    const auto t0 = Clock::now();
    const std::string what =
        fmt::format("{} ({} {})", st->named->name, problem.types.name(), problem.layout());
    size_t done = 0;
    for (const CompileOutcome& outcome : outcomes) {
      // A problem without a timed kernel yet measures on past the deadline until it has one,
      // each trial then one run (a slow first kernel timed in full took 4 s on 512x8x500000):
      // seen on the H200, a 12 s budget over five GEMV-like shapes left
      // 6144x4x2048 with no best, the deadline having passed before its turn in the batch.
      const bool overtime = deadline->passed();
      if (overtime && st->best_us > 0) break;
      ++done;
      if (auto with = db.trial_measured_with(st->problem_id, outcome.kernel_id, device_id_)) {
        if (!current_.stale_reason(family.name(), family.source().hash, *with)) {
          ++counts_.skipped;
          continue;
        }
        ++counts_.stale;
      }
      TrialResult trial;
      trial.config = outcome.config;
      if (outcome.status != BinaryStatus::ok) {
        trial.status = outcome.status == BinaryStatus::compile_failed
                           ? TrialStatus::compile_failed
                           : TrialStatus::resource_exceeded;
        trial.error = outcome.reason;
      } else if (auto why = family.unsupported_reason(outcome.config, problem, limits_.arch)) {
        trial.status = TrialStatus::invalid;
        trial.error = *why;
      } else {
        if (!prepared) {
          auto cublas = client_->prepare_problem(problem, !st->vendor_timed);
          if (!cublas.ok) {
            st->note = "cannot prepare problem: " + cublas.error;
            spdlog::error("{}: {}", st->named->name, st->note);
            return results;
          }
          if (!st->vendor_timed) record_vendor_trials(db, cublas.vendor_trials, *st);
          db.record_cublas_time(run_id_, st->problem_id, device_id_, cublas.median_us,
                                cublas.sgemm_rel_error);
          st->cublas_us = cublas.median_us;
          prepared = true;
        }
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
      }
      db.record_trial(run_id_, st->problem_id, outcome.kernel_id, device_id_, outcome.binary_id,
                      trial, {current_.nvrtc_version, current_.driver_version});
      ++counts_.by_status[trial.status];
      results.push_back(trial);
      const double vs_cublas = st->best_us > 0 ? st->cublas_us / st->best_us : 0;
      line.update({what, done, outcomes.size(), seconds_since(t0), st->best_tflops, vs_cublas});
    }
    line.finish();
    return results;
  }

  // The vendor calls raced on the problem (CublasTiming::vendor_trials) as trials of their
  // pseudo-families, whose code is the cuBLAS version: contenders for the best like any kernel.
  void record_vendor_trials(TuningDb& db, const std::vector<TrialResult>& trials,
                            ProblemState& st) {
    const std::string version = cublas_version();
    for (const TrialResult& t : trials)
      db.record_trial(run_id_, st.problem_id, db.upsert_kernel(t.config, version), device_id_,
                      std::nullopt, t, {current_.nvrtc_version, current_.driver_version});
    st.vendor_timed = true;
  }

  // The problem's best over every family, timed once more interleaved beside cuBLAS.
  ShapeReport finish_problem(TuningDb& db, ProblemState& st) {
    const Problem& problem = st.named->problem;
    ShapeReport report{st.named->name, problem, std::nullopt, 0, st.note};
    db.update_best(st.problem_id, device_id_, &current_);
    auto best = db.best_entries(problem.key(), device_->name, device_->arch);
    if (best.empty()) {
      if (report.note.empty()) report.note = "no config ran correctly";
      return report;
    }
    report.best = best.front();
    report.cublas_us = report.best->cublas_median_us;
    // A fresh best gets its final number from an interleaved run beside cuBLAS; a rerun
    // that measured nothing reports what the database holds, and so does a run past its time
    // budget: on the H200 those re-timings of deepbench's 16 shapes took 12 s of
    // a 10 s budget, a slow best on 512x8x500000 alone seconds.
    if (!st.ran_any || time_budget_spent()) return report;
    for (const CompileOutcome& outcome : st.ok_outcomes) {
      if (outcome.config != report.best->config) continue;
      const CublasTiming prepared = client_->prepare_problem(problem);
      if (!prepared.ok) break;
      Comparison cmp = client_->compare(outcome.config, outcome.compiled);
      if (cmp.ok) {
        report.cublas_us = cmp.cublas_median_us;
        report.best->trial.time_median_us = cmp.tgemm_median_us;
        db.record_cublas_time(run_id_, st.problem_id, device_id_, cmp.cublas_median_us,
                              prepared.sgemm_rel_error);
      } else {
        spdlog::warn("{}: interleaved comparison failed: {}", st.named->name, cmp.error);
      }
      break;
    }
    return report;
  }

  // A time budget buys exploring, as a count does: the candidates are measured whatever it is,
  // and their time (each group's, from its first pair to its first exploring one) is not
  // counted against it.
  double exploring_seconds() const { return seconds_since(time_started_) - candidate_seconds_; }

  bool time_budget_spent() const {
    return opt_.time_budget_s > 0 && exploring_seconds() >= opt_.time_budget_s;
  }

  void print_table(const std::vector<ShapeReport>& reports) {
    fmt::print("\n{:<22} {:<6} {:<4} {:>10} {:>9} {:>9} {:>7} {:>7}  {}\n", "shape", "type", "lay",
               "best us", "TFLOP/s", "cuBLAS", "ratio", "ours", "best config");
    for (const ShapeReport& r : reports) {
      if (!r.best) {
        fmt::print("{:<22} {:<6} {:<4} {}\n", r.name, r.problem.types.name(), r.problem.layout(),
                   r.note);
        continue;
      }
      const double us = r.best->trial.time_median_us;
      const double tflops = r.problem.flops() / (us * 1e6);
      const double cublas_tflops = r.cublas_us > 0 ? r.problem.flops() / (r.cublas_us * 1e6) : 0;
      const double ratio = r.cublas_us > 0 ? r.cublas_us / us : 0;
      // Our own fastest kernel's ratio, the same as the best's unless a vendor call won.
      const double own_us = is_vendor_call(r.best->config) ? r.best->own_best_us() : us;
      const std::string ours =
          own_us > 0 && r.cublas_us > 0 ? fmt::format("{:.2f}x", r.cublas_us / own_us) : "-";
      fmt::print("{:<22} {:<6} {:<4} {:>10.1f} {:>9.2f} {:>9.2f} {:>6.2f}x {:>7}  {}\n", r.name,
                 r.problem.types.name(), r.problem.layout(), us, tflops, cublas_tflops, ratio, ours,
                 r.best->config.canonical_name());
    }
    fmt::print(
        "(TFLOP/s at the median; cuBLAS is the matching cuBLAS call (SGEMM for f32 and f32x3) "
        "timed in the same process; ratio = "
        "cuBLAS time / best time; the best may be a vendor call (cublas, cublasLt with its "
        "algorithm), and ours is our own fastest kernel's ratio)\n");
  }

  const TuneOptions& opt_;
  std::vector<NamedProblem> problems_;
  std::vector<std::unique_ptr<FamilySpace>> spaces_;
  ArchLimits limits_;
  std::unique_ptr<WorkerClient> client_;
  std::optional<DeviceInfo> device_;
  int64_t run_id_ = 0;
  int64_t device_id_ = 0;
  CurrentBuild current_;
  TrialCounts counts_;
  SessionTotals totals_;
  Clock::time_point time_started_;        // the time budget's start
  Clock::time_point candidates_started_;  // the current group's first pair
  double candidate_seconds_ = 0;          // spent on the groups' candidates
  std::deque<double> pair_weights_;       // time_share_weight of the pairs not yet started
  size_t pairs_total_ = 0, pairs_stopped_ = 0;
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
