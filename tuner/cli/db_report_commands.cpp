#include "tuner/cli/db_report_commands.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "src/core/error.h"
#include "tuner/output/output_file.h"
#include "tuner/report/html_report.h"
#include "tuner/report/selection_replay.h"

namespace tgemm::cli::db_tool {

// The HTML report, written whole to a scratch file and renamed, so OUT is never half written.
int run_report(TuningDb& db, const std::string& out_path, int top) {
  const std::string html = html_report(db, {top});
  write_output_file(out_path, html, Overwrite::regular_file, "report file");
  fmt::print("wrote '{}' ({} bytes)\n", out_path, html.size());
  return 0;
}

// Which kernel libtgemm would pick from `db` for each problem tuned in `truth`, and its time
// there against the best; the geometric mean summarises how well untuned shapes are served.
int run_replay(TuningDb& db, const std::string& truth_path, bool leave_one_out) {
  if (leave_one_out == !truth_path.empty())
    fail("replay takes either --against FILE or --leave-one-out");
  std::optional<TuningDb> other;
  if (!leave_one_out) other.emplace(truth_path, TuningDb::Mode::read_only);
  TuningDb& truth = other ? *other : db;
  const auto rows = replay_selection(db, truth, leave_one_out);
  if (rows.empty()) fail("'{}' has no tuned problem to replay", truth.path());
  fmt::print("{:<34} {:<8} {:>10} {:>10} {:>8}  {}\n", "problem", "path", "best us", "chosen us",
             "ratio", "chosen kernel");
  double log_sum = 0;
  int measured = 0;
  for (const auto& r : rows) {
    const bool known = r.chosen_us > 0;
    fmt::print("{:<34} {:<8} {:>10.1f} {:>10} {:>8}  {}\n", r.problem_key, to_string(r.path),
               r.best_us, known ? fmt::format("{:.1f}", r.chosen_us) : "-",
               known ? fmt::format("{:.3f}", r.best_us / r.chosen_us) : "-",
               r.chosen.empty() ? "cuBLAS" : r.chosen);
    if (known) {
      log_sum += std::log(r.best_us / r.chosen_us);
      ++measured;
    }
  }
  fmt::print(
      "geometric mean of best / chosen: {:.3f} over {} problem(s); {} chosen kernel(s) were "
      "never measured in {}\n",
      measured ? std::exp(log_sum / measured) : 0.0, measured, rows.size() - measured,
      truth.path());
  return 0;
}

}  // namespace tgemm::cli::db_tool
