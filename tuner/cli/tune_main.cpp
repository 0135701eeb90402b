// tgemm-tune: compile a kernel template's search space with NVRTC, verify and time each
// config on the GPU against cuBLAS, and store every trial and the best per shape in SQLite.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <thread>

#include "src/core/error.h"
#include "tuner/cli/option_checks.h"
#include "tuner/search/strategy.h"
#include "tuner/session/tuning_session.h"

namespace {

std::string executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// Decimal digits up to kMaxBudget only: CLI11 alone would wrap "-5" to 2^64 - 5, clamp
// 99999999999999999999 and read "010" as octal.
CLI::Validator budget_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);
        const std::string number = text.empty() ? text : text.substr(first);  // "010" is ten
        if (!number.empty() && number.size() <= 7 &&
            number.find_first_not_of("0123456789") == std::string::npos &&
            std::stoull(number) <= tgemm::kMaxBudget) {
          text = number;  // CLI11 reads a leading 0 as octal
          return "";
        }
        return fmt::format("must be a whole number from 0 (the whole space) to {}, not '{}'",
                           tgemm::kMaxBudget, text);
      },
      fmt::format("0..{}", tgemm::kMaxBudget));
}

}  // namespace

int main(int argc, char** argv) {
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
  app.add_option("--strategy", opt.strategy, "exhaustive | random")->capture_default_str();
  app.add_option("--budget", opt.budget,
                 fmt::format("configs to try per layout, 0 to {} (0 = all)", tgemm::kMaxBudget))
      ->capture_default_str()
      ->transform(budget_check());
  app.add_option("--seed", opt.seed, "seed of the random strategy")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(0, INT64_MAX, "a seed"));
  app.add_option("--jobs", opt.jobs, "parallel NVRTC compiles")
      ->capture_default_str()
      ->transform(tgemm::cli::whole_number(1, 1024, "a number of parallel compiles"));
  app.add_option("--device", opt.device, "CUDA device ordinal")
      ->capture_default_str()
      ->transform(tgemm::cli::device_ordinal());
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
  opt.worker_path = executable_dir() + "/tgemm-worker";
  try {
    if (*shard_option) opt.shard = tgemm::parse_shard(shard);
    tgemm::run_tuning_session(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-tune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
