// tgemm-tune: compile a kernel template's search space with NVRTC, verify and time each
// config on the GPU against cuBLAS, and store every trial and the best per shape in SQLite.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "src/core/error.h"
#include "tuner/cli/checked_exit.h"
#include "tuner/cli/executable_dir.h"
#include "tuner/cli/option_checks.h"
#include "tuner/search/budget.h"
#include "tuner/search/strategy.h"
#include "tuner/session/device_split.h"
#include "tuner/session/multi_device_run.h"
#include "tuner/session/tuning_session.h"

namespace {

// A count, a share of the space or a time (tgemm::parse_budget); the text is kept and parsed
// again after CLI11 is done, so its message names --budget and what is allowed.
CLI::Validator budget_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          tgemm::parse_budget(text);
          return "";
        } catch (const tgemm::Error& e) {
          const std::string msg = e.what();
          return msg.substr(msg.find("must be"));
        }
      },
      fmt::format("0..{} | N% | Ns | Nm | Nh", tgemm::kMaxBudget));
}

// --devices: the GPUs listed (or all there are), one session each; one GPU, or compile-only
// work (which measures on none), is a plain session on the first of them, as --device N.
void tune_on_devices(tgemm::TuneOptions opt, const std::string& devices) {
  const tgemm::DeviceList list = tgemm::parse_device_list(devices);
  std::string why_none;
  const auto timeout = std::chrono::milliseconds(int64_t(opt.timeout_s * 1000));
  const std::vector<tgemm::DeviceInfo> gpus = tgemm::resolve_devices(
      list, tgemm::visible_gpus(opt.worker_path, timeout, &why_none), why_none);
  if (gpus.size() > 1 && !opt.compile_only) {
    tgemm::run_on_devices(opt, gpus);
    return;
  }
  if (gpus.size() > 1)
    spdlog::info("--compile-only measures on no GPU: one session compiles for GPU {}'s arch",
                 gpus.front().ordinal);
  if (!gpus.empty()) opt.device = gpus.front().ordinal;
  tgemm::run_tuning_session(opt);
}

}  // namespace

static int run_main(int argc, char** argv) {
  tgemm::TuneOptions opt;
  opt.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  std::string log_level = "info";

  CLI::App app{"tgemm-tune: autotune CUDA GEMM kernels per problem shape"};
  app.add_option("--shapes", opt.shapes_path, "shape set (YAML), e.g. configs/shapes/square.yaml")
      ->required();
  app.add_option("--space", opt.space_paths,
                 "search space (YAML), repeatable; default: the shipped space of every family");
  app.add_option("--db", opt.db_path, "tuning database (SQLite)")->capture_default_str();
  app.add_option("--arch", opt.arch,
                 "target arch, e.g. sm_90 (default: the GPU's; sm_75 without one)");
  app.add_option("--strategy", opt.strategy,
                 "exhaustive | random | model (ranked by a performance model, refined from each "
                 "batch) | nearest (the nearest tuned shapes' bests first, then as model)")
      ->capture_default_str();
  std::string budget = std::to_string(opt.budget);
  app.add_option("--budget", budget,
                 fmt::format("per layout and family: configs to try, 0 to {} (0 = all); or a "
                             "share of the legal space (10%); or a time for the whole run "
                             "(90s, 5m, 1h), shared evenly over the layouts and families",
                             tgemm::kMaxBudget))
      ->capture_default_str()
      ->transform(budget_check());
  app.add_option("--exploration", opt.exploration,
                 "model and nearest: share of the proposals drawn at random (seeded)")
      ->capture_default_str()
      ->transform(tgemm::cli::number_from(0, 1, "a share"));
  app.add_option("--seed", opt.seed, "seed of the random sample and of the model's exploration")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(0, INT64_MAX, "a seed"));
  app.add_option("--jobs", opt.jobs, "parallel NVRTC compiles")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(1, 1024, "a number of parallel compiles"));
  auto* device_option = app.add_option("--device", opt.device, "CUDA device ordinal")
                            ->capture_default_str()
                            ->transform(tgemm::cli::device_ordinal());
  std::string devices;
  auto* devices_option = app.add_option(
      "--devices", devices,
      "all | 0,1,...: tune on several GPUs of this host at once, the problems shared out "
      "between them (a worker each), into one database; --compile-only compiles once");
  app.add_option("--timeout", opt.timeout_s, "seconds before a kernel run counts as hung")
      ->capture_default_str()
      ->transform(tgemm::cli::number_from(0.001, 3600, "seconds"));
  std::string shard;
  auto* shard_option =
      app.add_option("--shard", shard,
                     "I/N: tune only share I of N (0 <= I < N) of the shapes, split by a stable "
                     "hash of each problem; merge the N databases with tgemm-db merge");
  app.add_flag("--compile-only", opt.compile_only,
               "compile and prune for --arch, store the cubins; no GPU needed");
  app.add_option("--log-level", log_level, "trace | debug | info | warn | error")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_flag("--explain", opt.explain,
               "print what each constraint pruned and, per problem, why its best won and how "
               "the dispatcher serves it");
  auto* quiet = app.add_flag("--quiet,-q", opt.quiet,
                             "no progress lines, warnings and errors only (the results still "
                             "print on stdout)");
  auto* level_option = app.get_option("--log-level");
  quiet->excludes(level_option);
  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;

  spdlog::set_level(spdlog::level::from_str(opt.quiet ? "warn" : log_level));
  spdlog::set_pattern("[%H:%M:%S] %^%l%$ %v");
  for (int i = 0; i < argc; ++i) opt.command_line += (i ? " " : "") + std::string(argv[i]);
  opt.worker_path = tgemm::cli::executable_dir() + "/tgemm-worker";
  try {
    if (*shard_option) opt.shard = tgemm::parse_shard(shard);
    const tgemm::Budget b = tgemm::parse_budget(budget);
    opt.budget = b.configs;
    opt.budget_fraction = b.fraction;
    opt.time_budget_s = b.seconds;
    if (*devices_option && device_option->count() > 0)
      tgemm::fail(
          "--device {} and --devices {} cannot be used together: --devices lists every GPU to "
          "tune on (--devices {} for that GPU alone)",
          opt.device, devices, opt.device);
    if (*devices_option)
      tune_on_devices(opt, devices);
    else
      tgemm::run_tuning_session(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-tune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return tgemm::cli::checked_exit("tgemm-tune", run_main(argc, argv));
}
