#include "tuner/report/tuning_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "src/core/vendor_call.h"
#include "tuner/report/progress_line.h"
#include "tuner/report/text_columns.h"

namespace tgemm {

std::string format_summary(const TuningSummary& s) {
  const CompileStats& cs = s.compile;
  // configs/s: fresh NVRTC compiles over the wall time the pool had any compile to do; per
  // compile, wall against CPU and waiting tells slow compiles from blocked ones (CompileStats).
  std::string out = fmt::format(
      "configs: {} asked over {} variant(s); binaries: {} compiled, {} from cache, {} pruned by "
      "resources, {} failed to compile ({:.1f} s, {:.1f} configs/s with {} job(s))",
      s.configs_asked, s.variants, cs.compiled, cs.cached, cs.pruned, cs.failed, cs.seconds,
      cs.configs_per_second(), s.jobs);
  if (cs.built > 0)
    out += fmt::format("; per compile {:.2f} s wall: {:.2f} s CPU, {:.2f} s waiting for a core",
                       cs.wall_seconds_per_compile(), cs.cpu_seconds_per_compile(),
                       cs.wait_seconds_per_compile());
  if (s.trials) {
    const TrialCounts& t = *s.trials;
    out += fmt::format("; trials: {} run, {} already recorded, {} stale re-measured", t.total(),
                       t.skipped, t.stale);
    for (auto& [status, n] : t.by_status) out += fmt::format(", {} {}", n, to_string(status));
    if (s.worker_restarts) out += fmt::format("; worker restarts: {}", *s.worker_restarts);
  }
  if (s.time_budget_s > 0)
    out += fmt::format(
        "; time budget {:g} s: {:.1f} s spent exploring past the candidates ({:.1f} s on "
        "those), {} of {} family run(s) stopped by it",
        s.time_budget_s, s.exploring_s, s.candidate_s, s.pairs_stopped, s.pairs_finished);
  out += fmt::format("; total {}", format_duration(s.total_s));
  return out;
}

std::string format_results_table(const std::vector<ShapeReport>& reports) {
  std::string out =
      fmt::format("\n{:<22} {:<6} {:<4} {:>10} {:>9} {:>9} {:>7} {:>7}  {}\n", "shape", "type",
                  "lay", "best us", "TFLOP/s", "cuBLAS", "ratio", "ours", "best config");
  for (const ShapeReport& r : reports) {
    if (!r.best) {
      out += fmt::format("{:<22} {:<6} {:<4} {}\n", r.name, r.problem.types.name(),
                         r.problem.layout(), r.note);
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
    out += fmt::format("{:<22} {:<6} {:<4} {:>10.1f} {:>9.2f} {:>9.2f} {:>6.2f}x {:>7}  {}\n",
                       r.name, r.problem.types.name(), r.problem.layout(), us, tflops,
                       cublas_tflops, ratio, ours, r.best->config.canonical_name());
  }
  out +=
      "(TFLOP/s at the median; cuBLAS is the matching cuBLAS call (SGEMM for f32 and f32x3) "
      "timed in the same process; ratio = "
      "cuBLAS time / best time; the best may be a vendor call (cublas, cublasLt with its "
      "algorithm), and ours is our own fastest kernel's ratio)\n";
  return out;
}

std::string format_pruning(const std::string& family, const std::string& arch,
                           const SearchSpace::Enumeration& enumeration) {
  uint64_t pruned = 0;
  for (const auto& [reason, count] : enumeration.rejected_by_reason) pruned += count;
  std::string out = fmt::format("{} on {}: {} legal config(s), {} pruned\n", family, arch,
                                enumeration.legal.size(), pruned);
  std::vector<std::pair<uint64_t, std::string>> rows;
  for (const auto& [reason, count] : enumeration.rejected_by_reason)
    rows.emplace_back(count, reason);
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first > b.first; });
  TextColumns table({"pruned", "constraint"}, {true, false});
  for (const auto& [count, reason] : rows) table.add({std::to_string(count), reason});
  if (pruned) out += table.text();
  return out;
}

}  // namespace tgemm
