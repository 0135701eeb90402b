// What tgemm-tune prints: the table of each problem's best against cuBLAS (a note where there
// is none, our own ratio where a vendor call won), the summary line, and --explain's pruning.
#include "tuner/report/tuning_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/vendor_call.h"

namespace tgemm {
namespace {

ShapeReport report_of(const std::string& name, double best_us, double cublas_us,
                      KernelConfig config = KernelConfig{"gemm_naive", {{"BLOCK_X", 16}}}) {
  ShapeReport r;
  r.name = name;
  r.problem = Problem::packed(GemmTypes{}, Op::N, Op::T, 1000, 1000, 1000);  // 2 GFLOP
  BestEntry best;
  best.config = std::move(config);
  best.trial.config = best.config;
  best.trial.time_median_us = best_us;
  r.best = best;
  r.cublas_us = cublas_us;
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(TuningReport, the_table_gives_each_problem_its_best_against_cublas) {
  const std::string table = format_results_table({report_of("square", 1000, 500)});
  const auto lines = lines_of(table);
  ASSERT_EQ(lines.size(), 4u);  // blank, header, row, legend
  EXPECT_EQ(lines[0], "");
  EXPECT_EQ(lines[1].rfind("shape ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2],
            "square                 f32    NT       1000.0      2.00      4.00   0.50x   0.50x  "
            "gemm_naive_block_x16");
  EXPECT_EQ(lines[3].rfind("(TFLOP/s at the median", 0), 0u) << lines[3];
}

TEST(TuningReport, a_problem_without_a_best_shows_why) {
  ShapeReport r = report_of("lost", 1, 1);
  r.best.reset();
  r.note = "no config ran correctly";
  const auto lines = lines_of(format_results_table({r}));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "lost                   f32    NT   no config ran correctly");
}

TEST(TuningReport, where_a_vendor_call_won_ours_is_our_own_fastest_kernels_ratio) {
  ShapeReport r = report_of("vendor", 400, 500, cublas_default_call());
  TrialResult own;
  own.time_median_us = 1000;
  r.best->tgemm_best = own;
  const auto lines = lines_of(format_results_table({r}));
  EXPECT_NE(lines[2].find("1.25x   0.50x"), std::string::npos) << lines[2];
  r.best->tgemm_best.reset();  // none of ours ran
  EXPECT_NE(lines_of(format_results_table({r}))[2].find("1.25x       -"), std::string::npos);
}

TEST(TuningReport, the_summary_tells_trials_only_when_measured_and_the_time_budget_when_set) {
  TuningSummary s;
  s.configs_asked = 12;
  s.variants = 2;
  s.jobs = 4;
  s.compile.compiled = 10;
  s.compile.cached = 2;
  s.total_s = 3;
  const std::string compile_only = format_summary(s);
  EXPECT_EQ(compile_only.rfind("configs: 12 asked over 2 variant(s); binaries: 10 compiled, 2 "
                               "from cache, 0 pruned by resources, 0 failed to compile",
                               0),
            0u)
      << compile_only;
  EXPECT_EQ(compile_only.find("trials:"), std::string::npos);
  EXPECT_EQ(compile_only.find("time budget"), std::string::npos);
  EXPECT_NE(compile_only.find("; total "), std::string::npos);

  TrialCounts counts;
  counts.by_status[TrialStatus::ok] = 2;
  counts.by_status[TrialStatus::wrong_result] = 1;
  counts.skipped = 5;
  s.trials = counts;
  s.worker_restarts = 1;
  s.time_budget_s = 90;
  s.exploring_s = 80;
  s.candidate_s = 5;
  s.pairs_finished = 4;
  s.pairs_stopped = 1;
  const std::string measured = format_summary(s);
  EXPECT_NE(measured.find("; trials: 3 run, 5 already recorded, 0 stale re-measured, 2 ok, 1 "
                          "wrong_result; worker restarts: 1"),
            std::string::npos)
      << measured;
  EXPECT_NE(measured.find("; time budget 90 s: 80.0 s spent exploring past the candidates (5.0 "
                          "s on those), 1 of 4 family run(s) stopped by it"),
            std::string::npos)
      << measured;
}

TEST(TuningReport, pruning_lists_each_constraint_by_what_it_pruned_most_first) {
  SearchSpace::Enumeration e;
  e.legal.resize(3);
  e.rejected_by_reason = {{"a few", 2}, {"many", 40}};
  EXPECT_EQ(format_pruning("gemm_naive", "sm_75", e),
            "gemm_naive on sm_75: 3 legal config(s), 42 pruned\n"
            "pruned  constraint\n"
            "    40  many\n"
            "     2  a few\n");
  e.rejected_by_reason.clear();
  EXPECT_EQ(format_pruning("gemm_naive", "sm_75", e),
            "gemm_naive on sm_75: 3 legal config(s), 0 pruned\n");
}

}  // namespace
}  // namespace tgemm
