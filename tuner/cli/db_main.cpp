// tgemm-db: answers questions about a tuning database without ever writing it: the tuned
// problems, the best config of one shape, every trial of a shape, or all trials as CSV/JSON.
// What changes a database (merge, prune, vacuum, refresh) writes a new file and leaves the input
// as is.
// The one exception, `profile`, stores Nsight Compute profiles of the best kernels.
// This file is the command line: each subcommand's options and which function answers it; the
// answers live in the db_*_commands files.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tuner/cli/checked_exit.h"
#include "tuner/cli/db_copy_commands.h"
#include "tuner/cli/db_exit_codes.h"
#include "tuner/cli/db_profile_commands.h"
#include "tuner/cli/db_query_commands.h"
#include "tuner/cli/db_report_commands.h"
#include "tuner/cli/db_shape.h"
#include "tuner/cli/option_checks.h"

namespace tgemm::cli::db_tool {

namespace {

// Every subcommand and the options given to it, as CLI11 fills them while parsing.
struct DbCommandLine {
  std::string db_path = "tgemm.db";
  CLI::App *list, *best, *show, *explain, *exporter, *replay, *merge;
  CLI::App *report, *ceilings;
  CLI::App *stale, *refresh, *prune, *vacuum, *profile, *profiles;
  ShapeArgs best_args, show_args, explain_args;
  std::string format, output;  // export
  std::string truth_path;      // replay
  bool leave_one_out = false;
  std::string merge_out;
  std::vector<std::string> merge_in;
  std::string report_out, ceilings_device;
  int report_top = 5;
  bool stale_by_text = false;
  std::string refresh_out, prune_out, vacuum_out;
  bool prune_stale = false;
  ProfileArgs profile_args;
  std::string profiles_device;
};

// The shape options that `best`, `show` and `explain` share.
void add_shape_options(CLI::App* cmd, ShapeArgs& args) {
  cmd->add_option("--m", args.m, "rows of C")->required();
  cmd->add_option("--n", args.n, "columns of C")->required();
  cmd->add_option("--k", args.k, "inner dimension")->required();
  cmd->add_option("--dtype", args.dtype, "f32, tf32, f32x3, f16 or bf16 (as in shape files)")
      ->capture_default_str();
  cmd->add_option("--out", args.out, "C's type when it differs from the inputs' (f32)");
  cmd->add_option("--layout", args.layout, "op(A) op(B): NN, NT, TN or TT")->capture_default_str();
  cmd->add_option("--device", args.device,
                  "GPU name as stored, e.g. \"NVIDIA H200\" (default: all)");
}

// The subcommands are added in the order --help lists them.
void add_query_subcommands(CLI::App& app, DbCommandLine& cl) {
  cl.list = app.add_subcommand("list", "every tuned problem and device with its best kernel");
  cl.best = app.add_subcommand("best", "the best config for one shape (exit 3 when untuned)");
  add_shape_options(cl.best, cl.best_args);
  cl.show = app.add_subcommand("show", "every trial of one shape, fastest first");
  add_shape_options(cl.show, cl.show_args);
  cl.explain = app.add_subcommand(
      "explain",
      "how the dispatcher serves one shape (tuned, from which nearest tuned shape, a default, "
      "or cuBLAS) and, where it was tuned, why its best won");
  add_shape_options(cl.explain, cl.explain_args);
  cl.exporter = app.add_subcommand("export", "every trial with its problem, kernel and device");
  cl.exporter->add_option("--format", cl.format, "csv or json")->required();
  cl.exporter->add_option("--output,-o", cl.output, "file to write (default: standard output)");
}

void add_replay_and_merge_subcommands(CLI::App& app, DbCommandLine& cl) {
  cl.replay = app.add_subcommand(
      "replay",
      "the kernels libtgemm would pick from --db for the problems tuned in --against "
      "(or in --db, each left out in turn), timed there against their best");
  cl.replay->add_option("--against", cl.truth_path, "a database tuned on the problems to replay");
  cl.replay->add_flag("--leave-one-out", cl.leave_one_out,
                      "replay --db's own problems, each as if it had not been tuned");
  cl.merge = app.add_subcommand(
      "merge",
      "merge tuning databases (e.g. the shards of tgemm-tune --shard) into a new file OUT; "
      "the inputs are only read");
  cl.merge->add_option("OUT", cl.merge_out, "the merged database to create (must not exist)")
      ->required();
  cl.merge->add_option("IN", cl.merge_in, "the databases to merge, one or more")->required();
}

void add_report_subcommands(CLI::App& app, DbCommandLine& cl) {
  cl.report = app.add_subcommand(
      "report",
      "one self-contained HTML page per database: roofline, tgemm/cuBLAS ratios, tuning spread, "
      "top configs and failures per device");
  cl.report->add_option("--out", cl.report_out, "the HTML file to write")->required();
  cl.report->add_option("--top", cl.report_top, "configs listed per problem (1 to 100)")
      ->capture_default_str();
  cl.ceilings = app.add_subcommand("ceilings",
                                   "the measured copy bandwidth and peak rates stored per device");
  cl.ceilings->add_option("--device", cl.ceilings_device, "GPU name as stored (default: all)");
}

void add_copy_subcommands(CLI::App& app, DbCommandLine& cl) {
  cl.stale = app.add_subcommand(
      "stale",
      "best entries and trials whose kernels this build runs differently (machine code, NVRTC "
      "or driver changed); a template whose text changed is rebuilt with NVRTC to compare its "
      "code, so a comment edit leaves nothing stale");
  cl.stale->add_flag("--by-text", cl.stale_by_text,
                     "judge by the template text alone, as the dispatcher does (fast, no "
                     "compiling): any edit of a template makes its trials stale");
  cl.refresh = app.add_subcommand(
      "refresh",
      "write a copy OUT in which the trials whose template text changed but whose machine code "
      "did not (rebuilt with NVRTC to compare) belong to this build, so the dispatcher serves "
      "them again; the input is only read");
  cl.refresh->add_option("OUT", cl.refresh_out, "the refreshed database to create (must not exist)")
      ->required();
  cl.prune = app.add_subcommand(
      "prune",
      "write a smaller copy OUT: without failed trials and binaries and the cubins no best uses "
      "(--stale: without stale trials too); bests, problems and cuBLAS times stay");
  cl.prune->add_option("OUT", cl.prune_out, "the pruned database to create (must not exist)")
      ->required();
  cl.prune->add_flag("--stale", cl.prune_stale,
                     "also drop the stale trials, judged by text (`tgemm-db stale --by-text`); "
                     "`tgemm-db refresh` first keeps those whose machine code did not change");
  cl.vacuum = app.add_subcommand("vacuum", "write a compacted copy OUT, dropping nothing");
  cl.vacuum->add_option("OUT", cl.vacuum_out, "the compacted database to create (must not exist)")
      ->required();
}

void add_profile_subcommands(CLI::App& app, DbCommandLine& cl) {
  ProfileArgs& args = cl.profile_args;
  cl.profile = app.add_subcommand(
      "profile",
      "Nsight Compute (ncu) metrics of the best kernel and of cuBLAS's on chosen problems of this "
      "GPU, stored in the database (the one subcommand that writes it)");
  cl.profile->add_option("--m", args.m, "rows of C");
  cl.profile->add_option("--n", args.n, "columns of C");
  cl.profile->add_option("--k", args.k, "inner dimension");
  cl.profile->add_option("--dtype", args.dtype, "f32, tf32, f32x3, f16 or bf16")
      ->capture_default_str();
  cl.profile->add_option("--out", args.out, "C's type when it differs from the inputs'");
  cl.profile->add_option("--layout", args.layout, "op(A) op(B): NN, NT, TN or TT")
      ->capture_default_str();
  cl.profile->add_flag("--all", args.all, "every problem tuned on this GPU");
  cl.profile->add_option("--ncu", args.ncu,
                         "Nsight Compute's ncu (default: PATH, then "
                         "/opt/nvidia/nsight-compute/*/ncu)");
  cl.profile->add_option("--warmup", args.warmup, "calls before the profiled one (0 to 100)")
      ->capture_default_str();
  cl.profiles = app.add_subcommand("profiles", "the stored kernel profiles as a table");
  cl.profiles->add_option("--device", cl.profiles_device, "GPU name as stored (default: all)");
}

// Checks the arguments before touching the database, so a typo is named as such.
void check_arguments(const DbCommandLine& cl) {
  if (*cl.best) parse_shape(cl.best_args);
  if (*cl.show) parse_shape(cl.show_args);
  if (*cl.explain) parse_shape(cl.explain_args);
  if (*cl.exporter && cl.format != "csv" && cl.format != "json")
    fail("unknown export format '{}' (expected csv or json)", cl.format);
  if (*cl.report && (cl.report_top < 1 || cl.report_top > 100))
    fail("--top must be from 1 to 100, got {}", cl.report_top);
  if (*cl.report && cl.report_out.empty()) fail("--out needs a file name");
}

// Runs the one subcommand given; every one but merge and profile reads --db read-only.
int run_subcommand(const DbCommandLine& cl) {
  if (*cl.merge) return run_merge(cl.merge_out, cl.merge_in);
  if (*cl.profile) return run_profile(cl.db_path, cl.profile_args);
  TuningDb db(cl.db_path, TuningDb::Mode::read_only);
  if (*cl.list) return run_list(db);
  if (*cl.best) return run_best(db, cl.best_args);
  if (*cl.show) return run_show(db, cl.show_args);
  if (*cl.explain) return run_explain(db, cl.explain_args);
  if (*cl.replay) return run_replay(db, cl.truth_path, cl.leave_one_out);
  if (*cl.report) return run_report(db, cl.report_out, cl.report_top);
  if (*cl.ceilings) return run_ceilings(db, cl.ceilings_device);
  if (*cl.stale) return run_stale(db, cl.stale_by_text);
  if (*cl.refresh) return run_refresh(db, cl.refresh_out);
  if (*cl.prune) return run_compact(db, cl.prune_out, true, cl.prune_stale);
  if (*cl.vacuum) return run_compact(db, cl.vacuum_out, false, false);
  if (*cl.profiles) return run_profiles(db, cl.profiles_device);
  return run_export(db, cl.format, cl.output);
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "tgemm-db: query a tgemm tuning database (opened read-only, never modified, except by "
      "profile)"};
  app.require_subcommand(1);
  app.fallthrough();  // so --db may also follow the subcommand
  DbCommandLine cl;
  app.add_option("--db", cl.db_path, "the tuning database file")->capture_default_str();
  add_query_subcommands(app, cl);
  add_replay_and_merge_subcommands(app, cl);
  add_report_subcommands(app, cl);
  add_copy_subcommands(app, cl);
  add_profile_subcommands(app, cl);

  if (int exit_code = parse(app, argc, argv); exit_code >= 0) return exit_code;
  // Warnings (rows skipped as unreadable) go to stderr: stdout is the answer, a table, CSV or
  // JSON that another program may read.
  spdlog::set_default_logger(spdlog::stderr_color_st("tgemm-db"));

  try {
    check_arguments(cl);
    return run_subcommand(cl);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tgemm-db: error: {}\n", e.what());
    return kExitError;
  }
}

}  // namespace

}  // namespace tgemm::cli::db_tool

int main(int argc, char** argv) {
  return tgemm::cli::checked_exit("tgemm-db", tgemm::cli::db_tool::run_main(argc, argv));
}
