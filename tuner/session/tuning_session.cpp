#include "tuner/session/tuning_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/kernel_source.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/launch/launch_plan.h"
#include "tuner/compile/compile_stage.h"
#include "tuner/input/problem_set.h"
#include "tuner/report/progress_line.h"
#include "tuner/search/search_space.h"
#include "tuner/search/strategy.h"
#include "tuner/evaluate/worker_client.h"

namespace tgemm {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string default_space_path(const std::string& exe_dir, const std::string& template_name) {
  const std::string file = template_name + ".yaml";
  // Installed: <prefix>/bin/tgemm-tune and <prefix>/share/tgemm/spaces/.
  fs::path installed = fs::path(exe_dir) / ".." / "share" / "tgemm" / "spaces" / file;
  if (fs::exists(installed)) return installed.lexically_normal().string();
  // Build tree inside the repository: walk up to the folder that holds configs/.
  for (fs::path dir = fs::path(exe_dir); !dir.empty(); dir = dir.parent_path()) {
    fs::path candidate = dir / "configs" / "spaces" / file;
    if (fs::exists(candidate)) return candidate.string();
    if (dir == dir.parent_path()) break;
  }
  fail("no default search space {} found near {}; pass --space", file, exe_dir);
}

namespace {

// A kernel whose warm run takes more than this many times the best so far cannot win; it is
// recorded with that one run instead of being timed in full.
constexpr double kCutoffFactor = 3.0;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Counts of trial outcomes over the whole session, for the summary line.
struct TrialCounts {
  std::map<TrialStatus, uint64_t> by_status;
  uint64_t skipped = 0;  // already in the database
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

class Session {
 public:
  explicit Session(const TuneOptions& options) : opt_(options) {}

  void run() {
    const auto started = Clock::now();
    auto problems = load_problem_set(opt_.shapes_path);
    space_ = SearchSpace::load(opt_.space_path);
    source_ = kernel_source(space_.template_name());
    pick_target();
    spdlog::info("target {}{}; {} shape(s) from {}; space {} ({} points)", limits_.arch,
                 device_ ? " on " + device_->name : " (compile only)", problems.size(),
                 opt_.shapes_path, opt_.space_path, space_.cartesian_size());

    TuningDb db(opt_.db_path, TuningDb::Mode::read_write);
    run_id_ = db.begin_run(opt_.command_line, "tgemm " TGEMM_VERSION, limits_.arch);
    auto enumeration = space_.enumerate(limits_);
    log_rejections(enumeration);
    auto configs = propose(enumeration.legal);
    spdlog::info("{} legal config(s); {} to try: strategy '{}' plus the shipped defaults",
                 enumeration.legal.size(), configs.size(), opt_.strategy);
    if (device_) device_id_ = db.upsert_device(*device_);

    CompileStage compile(db, run_id_, source_, limits_, opt_.jobs);
    std::vector<ShapeReport> reports;
    for (const std::string& layout : layouts_of(problems)) {
      Op op_a, op_b;
      parse_layout(layout, &op_a, &op_b);
      ProgressLine line;
      const auto t0 = Clock::now();
      auto outcomes = compile.run(configs, op_a, op_b, [&](size_t done, size_t total) {
        double eta = done ? seconds_since(t0) / double(done) * double(total - done) : 0;
        line.update(fmt::format("compile {} for {}: {}/{} ETA {}", layout, limits_.arch, done,
                                total, format_duration(eta)));
      });
      line.finish();
      for (auto& named : problems) {
        if (named.problem.layout() != layout) continue;
        const int64_t problem_id = db.upsert_problem(named.problem);
        if (!device_) continue;
        reports.push_back(tune_problem(db, named, problem_id, outcomes));
      }
    }
    const auto& cs = compile.stats();
    std::string summary = fmt::format(
        "configs: {} to try in {} layout(s); binaries: {} compiled, {} from cache, {} pruned by "
        "resources, {} failed to compile ({:.1f} s)",
        configs.size(), layouts_of(problems).size(), cs.compiled, cs.cached, cs.pruned, cs.failed,
        cs.seconds);
    if (device_) {
      summary +=
          fmt::format("; trials: {} run, {} already recorded", counts_.total(), counts_.skipped);
      for (auto& [status, n] : counts_.by_status)
        summary += fmt::format(", {} {}", n, to_string(status));
      if (client_) summary += fmt::format("; worker restarts: {}", client_->restarts());
    }
    summary += fmt::format("; total {}", format_duration(seconds_since(started)));
    db.finish_run(run_id_, summary);
    if (device_) print_table(reports);
    fmt::print("{}\n", summary);
  }

 private:
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

  // The strategy's configs, preceded by the dispatcher's shipped defaults that are legal in
  // this space: every tuned shape then measures the kernel an untuned call would get, and a
  // small budget always contains a known-good starting point (Kernel Tuner's x0).
  std::vector<KernelConfig> propose(const std::vector<KernelConfig>& legal) {
    std::vector<KernelConfig> all;
    for (const DefaultKernel& d : shipped_default_kernels()) {
      if (d.arch != "*" && d.arch != limits_.arch) continue;
      KernelConfig config = in_space_order(d.config);
      if (config.params.empty() || space_.rejection(config, limits_)) continue;
      if (std::find(all.begin(), all.end(), config) == all.end()) all.push_back(config);
    }
    auto strategy = make_strategy(opt_.strategy, legal, opt_.budget, opt_.seed);
    for (auto batch = strategy->propose(256); !batch.empty(); batch = strategy->propose(256))
      for (auto& config : batch)
        if (std::find(all.begin(), all.end(), config) == all.end()) all.push_back(config);
    return all;
  }

  // `config` with its parameters in the space's order (empty when it lacks one of them or
  // belongs to another template), so it compares equal to the space's own points.
  KernelConfig in_space_order(const KernelConfig& config) const {
    KernelConfig out{space_.template_name(), {}};
    if (config.template_name != space_.template_name()) return out;
    for (const SpaceParameter& p : space_.parameters()) {
      if (!config.has(p.name)) return {space_.template_name(), {}};
      out.params.emplace_back(p.name, config.get(p.name));
    }
    return out;
  }

  static std::vector<std::string> layouts_of(const std::vector<NamedProblem>& problems) {
    std::vector<std::string> layouts;
    for (auto& p : problems)
      if (std::find(layouts.begin(), layouts.end(), p.problem.layout()) == layouts.end())
        layouts.push_back(p.problem.layout());
    return layouts;
  }

  void log_rejections(const SearchSpace::Enumeration& e) {
    for (auto& [reason, count] : e.rejected_by_reason)
      spdlog::debug("pruned {} config(s): {}", count, reason);
  }

  ShapeReport tune_problem(TuningDb& db, const NamedProblem& named, int64_t problem_id,
                           const std::vector<CompileOutcome>& outcomes) {
    const Problem& problem = named.problem;
    ShapeReport report{named.name, problem, std::nullopt, 0, ""};
    bool prepared = false, ran_any = false;
    double best_tflops = 0;
    // Kernels over kCutoffFactor x the best time so far are not timed in full.
    double best_us = 0;
    if (auto stored = db.best_entries(problem.key(), device_->name, device_->arch); !stored.empty())
      best_us = stored.front().trial.time_median_us;
    ProgressLine line;
    const auto t0 = Clock::now();
    size_t done = 0;
    for (const CompileOutcome& outcome : outcomes) {
      ++done;
      if (db.has_trial(problem_id, outcome.kernel_id, device_id_)) {
        ++counts_.skipped;
        continue;
      }
      TrialResult trial;
      trial.config = outcome.config;
      if (outcome.status != BinaryStatus::ok) {
        trial.status = outcome.status == BinaryStatus::compile_failed
                           ? TrialStatus::compile_failed
                           : TrialStatus::resource_exceeded;
        trial.error = outcome.reason;
      } else if (auto why = unsupported_reason(outcome.config, problem)) {
        trial.status = TrialStatus::invalid;
        trial.error = *why;
      } else {
        if (!prepared) {
          auto cublas = client_->prepare_problem(problem);
          if (!cublas.ok) {
            report.note = "cannot prepare problem: " + cublas.error;
            spdlog::error("{}: {}", named.name, report.note);
            return report;
          }
          db.record_cublas_time(run_id_, problem_id, device_id_, cublas.median_us);
          prepared = true;
        }
        trial = client_->evaluate(outcome.config, outcome.compiled, kCutoffFactor * best_us);
        ran_any = true;
        if (trial.status == TrialStatus::ok && trial.runs > 1 &&
            (best_us == 0 || trial.time_median_us < best_us))
          best_us = trial.time_median_us;
        if (trial.status == TrialStatus::ok) best_tflops = std::max(best_tflops, trial.tflops);
      }
      db.record_trial(run_id_, problem_id, outcome.kernel_id, device_id_, outcome.binary_id, trial);
      ++counts_.by_status[trial.status];
      double eta = seconds_since(t0) / double(done) * double(outcomes.size() - done);
      line.update(fmt::format("{} ({}): {}/{} best {:.2f} TFLOP/s ETA {}", named.name,
                              problem.layout(), done, outcomes.size(), best_tflops,
                              format_duration(eta)));
    }
    line.finish();
    db.update_best(problem_id, device_id_);
    auto best = db.best_entries(problem.key(), device_->name, device_->arch);
    if (best.empty()) {
      report.note = "no config ran correctly";
      return report;
    }
    report.best = best.front();
    report.cublas_us = report.best->cublas_median_us;
    // A fresh best gets its final number from an interleaved run beside cuBLAS; a rerun
    // that measured nothing reports what the database holds.
    if (ran_any) {
      for (const CompileOutcome& outcome : outcomes) {
        if (outcome.config != report.best->config || outcome.status != BinaryStatus::ok) continue;
        Comparison cmp = client_->compare(outcome.config, outcome.compiled);
        if (cmp.ok) {
          report.cublas_us = cmp.cublas_median_us;
          report.best->trial.time_median_us = cmp.tgemm_median_us;
          db.record_cublas_time(run_id_, problem_id, device_id_, cmp.cublas_median_us);
        } else {
          spdlog::warn("{}: interleaved comparison failed: {}", named.name, cmp.error);
        }
        break;
      }
    }
    return report;
  }

  void print_table(const std::vector<ShapeReport>& reports) {
    fmt::print("\n{:<22} {:<4} {:>10} {:>9} {:>9} {:>7}  {}\n", "shape", "lay", "tgemm us",
               "TFLOP/s", "cuBLAS", "ratio", "best config");
    for (const ShapeReport& r : reports) {
      if (!r.best) {
        fmt::print("{:<22} {:<4} {}\n", r.name, r.problem.layout(), r.note);
        continue;
      }
      const double us = r.best->trial.time_median_us;
      const double tflops = r.problem.flops() / (us * 1e6);
      const double cublas_tflops = r.cublas_us > 0 ? r.problem.flops() / (r.cublas_us * 1e6) : 0;
      const double ratio = r.cublas_us > 0 ? r.cublas_us / us : 0;
      fmt::print("{:<22} {:<4} {:>10.1f} {:>9.2f} {:>9.2f} {:>6.2f}x  {}\n", r.name,
                 r.problem.layout(), us, tflops, cublas_tflops, ratio,
                 r.best->config.canonical_name());
    }
    fmt::print(
        "(TFLOP/s at the median; cuBLAS is FP32 SGEMM timed in the same process; ratio = "
        "cuBLAS time / tgemm time)\n");
  }

  const TuneOptions& opt_;
  SearchSpace space_;
  KernelSource source_;
  ArchLimits limits_;
  std::unique_ptr<WorkerClient> client_;
  std::optional<DeviceInfo> device_;
  int64_t run_id_ = 0;
  int64_t device_id_ = 0;
  TrialCounts counts_;
};

}  // namespace

void run_tuning_session(const TuneOptions& options) { Session(options).run(); }

}  // namespace tgemm
