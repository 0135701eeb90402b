// tgemm-simulate: replays a tuning database's recorded trials in place of a GPU, so search
// strategies are judged and compared on any machine (tuner/search/replay.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tuner/cli/checked_exit.h"
#include "tuner/cli/option_checks.h"
#include "tuner/search/replay.h"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(text.substr(start, comma - start));
  out.push_back(text.substr(start));
  return out;
}

}  // namespace

static int run_main(int argc, char** argv) {
  std::string db_path, strategies = "model", budgets = "10%", device;
  tgemm::ReplayOptions opt;
  uint64_t seeds = 1;
  bool details = false;
  CLI::App app{
      "tgemm-simulate: run search strategies against a database's recorded trials instead of "
      "a GPU; a proposed config without a trial counts as asked but unmeasured"};
  app.add_option("--db", db_path, "tuning database whose trials are replayed")->required();
  app.add_option("--strategy", strategies,
                 "strategies, comma-separated: exhaustive, random, model, nearest")
      ->capture_default_str();
  app.add_option("--budget", budgets,
                 "budgets, comma-separated: a count of configs or a share of each family's "
                 "recorded space (10%)")
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "first seed")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(0, INT64_MAX, "a seed"));
  app.add_option("--seeds", seeds, "seeds to average over (seed, seed+1, ...)")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(1, 1000, "a number of seeds"));
  app.add_option("--exploration", opt.exploration, "share of the model's picks drawn at random")
      ->capture_default_str()
      ->transform(tgemm::cli::number_from(0, 1, "a share"));
  app.add_option("--device", opt.device, "device name (default: the first with trials)");
  app.add_flag("--details", details, "the per-problem table of every run");
  app.add_flag("--per-problem", opt.per_problem,
               "tune each problem alone with the budget, the others' trials as the database's "
               "knowledge (default: as tgemm-tune, one group per layout)");
  bool predictions = false;
  app.add_flag("--predictions", predictions,
               "print the model's prediction beside every recorded ok time (CSV) and stop");
  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;
  spdlog::set_level(spdlog::level::warn);
  try {
    if (!std::filesystem::exists(db_path)) tgemm::fail("--db {}: no such file", db_path);
    tgemm::TuningDb db(db_path, tgemm::TuningDb::Mode::read_only);
    const tgemm::ReplayInput input = tgemm::load_replay_input(db);
    if (predictions) {
      fmt::print("{}", tgemm::model_predictions_csv(input, opt.device));
      return 0;
    }
    const bool one = split(strategies).size() * split(budgets).size() * seeds == 1;
    fmt::print("{:<12} {:>18} {:>7} {:>10} {:>10} {:>10}\n", "strategy", "budget", "asked",
               "geomean", "within 3%", "within 10%");
    for (const std::string& budget : split(budgets)) {
      opt.budget = tgemm::parse_budget(budget);
      for (const std::string& strategy : split(strategies)) {
        opt.strategy = strategy;
        double log_sum = 0, asked = 0, within3 = 0, within10 = 0;
        size_t problems = 0;
        const uint64_t first_seed = opt.seed;
        for (uint64_t s = 0; s < seeds; ++s, ++opt.seed) {
          const tgemm::ReplayResult r = tgemm::replay(input, opt);
          if (one || details) fmt::print("{}", tgemm::format_replay(r, opt));
          log_sum += std::log(r.geomean_ratio);
          asked += double(r.asked);
          within3 += double(r.within(0.03));
          within10 += double(r.within(0.10));
          problems = r.problems.size();
        }
        opt.seed = first_seed;
        const double n = double(seeds);
        fmt::print("{:<12} {:>18} {:>7.1f} {:>10.4f} {:>7.1f}/{} {:>7.1f}/{}\n", strategy,
                   opt.budget.describe(), asked / n, std::exp(log_sum / n), within3 / n, problems,
                   within10 / n, problems);
      }
    }
    if (seeds > 1) fmt::print("(means over seeds {}..{})\n", opt.seed, opt.seed + seeds - 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-simulate: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return tgemm::cli::checked_exit("tgemm-simulate", run_main(argc, argv));
}
