#include "tuner/cli/db_copy_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "src/core/error.h"
#include "src/core/printable.h"
#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tuner/compile/code_refresh.h"
#include "tuner/output/output_file.h"
#include "tuner/report/text_columns.h"

namespace tgemm::cli::db_tool {

namespace {

// The best entries and trials of `judged` that this build would not serve: another template
// source or NVRTC, or a driver older than the one last seen on that device. `shown` names the
// database in messages.
void print_stale(TuningDb& judged, const std::string& shown) {
  const BuildsByDevice builds(judged.devices(),
                              [](const DeviceInfo& d) { return this_build(d.driver_version); });
  TextColumns table({"device", "problem", "kernel", "why it is stale"},
                    {false, false, false, false});
  for (const BestEntry& e : judged.best_entries())
    if (auto why = builds.stale_reason(e.device_name, e.arch, e.config.template_name,
                                       e.template_hash, e.measured_with))
      table.add({e.device_name, e.problem.key(), e.config.canonical_name(), *why});
  int64_t stale_trials = 0, trials = 0;
  for (const TrialRecord& t : judged.trials()) {
    ++trials;
    if (builds.stale_reason(t.device_name, t.arch, t.trial.config.template_name, t.template_hash,
                            t.measured_with))
      ++stale_trials;
  }
  if (table.empty())
    fmt::print("no stale best entries in '{}'\n", shown);
  else
    table.print();
  fmt::print(
      "{} of {} trial(s) stale; the dispatcher does not serve stale entries and tgemm-tune "
      "measures them again\n",
      stale_trials, trials);
}

// Refreshing by code with this build: its registered families, its NVRTC, each stored
// device's driver.
RefreshOptions this_builds_refresh() {
  RefreshOptions options;
  options.family = [](const std::string& name) { return find_template(name); };
  options.current = [](const DeviceInfo& d) { return this_build(d.driver_version); };
  options.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  return options;
}

// What refresh_by_code left stale for want of a build, if anything, as a sentence.
std::string not_built_note(const RefreshCounts& counts) {
  if (counts.not_built == 0) return "";
  return fmt::format(" ({} trial(s) could not be rebuilt to compare, e.g. {})", counts.not_built,
                     counts.example_not_built);
}

// Builds a new database at OUT (`build` fills the scratch file) and links it to OUT only when
// complete and intact: OUT is never overwritten, never half written, never a damaged copy.
void write_new_database(const std::string& what, const std::string& out_path,
                        const std::function<void(const std::string& scratch)>& build) {
  OutputFile out(out_path, Overwrite::never, what);
  try {
    build(out.scratch_path());
    const std::string problems =
        TuningDb(out.scratch_path(), TuningDb::Mode::read_write).integrity_problems();
    if (!problems.empty())
      fail("it fails the integrity check (is an input damaged?): {}", problems);
  } catch (const Error& e) {
    // The scratch file is the new OUT to be: named so, since the user never sees the scratch.
    std::string why = e.what();
    for (size_t at; (at = why.find(out.scratch_path())) != std::string::npos;)
      why.replace(at, out.scratch_path().size(), out_path);
    fail("{} '{}' was not written: {}", what, out_path, why);
  }
  out.commit();
}

// The database copied to `scratch`, after a full check: a damaged input is not copied.
void copy_intact(TuningDb& db, const std::string& scratch) {
  if (const std::string problems = db.integrity_problems(); !problems.empty())
    fail("'{}' is damaged, so no copy of it is written: {}", db.path(), problems);
  db.copy_to(scratch);
}

}  // namespace

// By default a trial whose template text changed is stale only where its config now builds to
// other machine code: judged on a scratch copy refreshed by code (the input is only read).
// by_text: as the library judges, without compiling.
int run_stale(TuningDb& db, bool by_text) {
  if (by_text) {
    print_stale(db, db.path());
    return 0;
  }
  const ScratchDir scratch(std::filesystem::temp_directory_path().string(), "stale check");
  db.copy_to(scratch.file("refreshed.db"));
  TuningDb copy(scratch.file("refreshed.db"), TuningDb::Mode::read_write);
  const RefreshCounts counts = refresh_by_code(copy, this_builds_refresh());
  print_stale(copy, db.path());
  if (counts.rekeyed > 0)
    fmt::print(
        "{} trial(s) whose template text changed still build to the same machine code: not "
        "stale, but the dispatcher serves them only once `tgemm-db refresh OUT` has re-keyed "
        "them\n",
        counts.rekeyed);
  if (counts.not_built > 0) fmt::print("stale without a code check{}\n", not_built_note(counts));
  return 0;
}

// A new file OUT: a copy of the database in which the trials whose template text changed but
// whose config builds to the same machine code are re-keyed to this build (served again). The
// input is never written.
int run_refresh(TuningDb& db, const std::string& out_path) {
  RefreshCounts counts;
  write_new_database("refreshed database", out_path, [&](const std::string& scratch) {
    copy_intact(db, scratch);
    TuningDb out(scratch, TuningDb::Mode::read_write);
    counts = refresh_by_code(out, this_builds_refresh());
  });
  fmt::print(
      "wrote '{}': {} trial(s) re-keyed to this build's templates (same machine code), {} left "
      "stale as their code changed, {} already measured again by tgemm-tune{}\n",
      out_path, counts.rekeyed, counts.changed, counts.superseded, not_built_note(counts));
  return 0;
}

// A new file OUT: a copy of the database, pruned (prune) or only compacted (vacuum). The input
// is never written.
int run_compact(TuningDb& db, const std::string& out_path, bool prune, bool stale) {
  PruneCounts counts;
  write_new_database(
      prune ? "pruned database" : "compacted database", out_path, [&](const std::string& scratch) {
        copy_intact(db, scratch);
        TuningDb out(scratch, TuningDb::Mode::read_write);
        PruneOptions options;
        options.failed = options.unused_cubins = prune;
        if (stale) options.stale = [](const DeviceInfo& d) { return this_build(d.driver_version); };
        counts = out.prune(options);
      });
  namespace fs = std::filesystem;
  fmt::print(
      "wrote '{}' ({} bytes, from {} bytes): dropped {} failed trial(s), {} failed binaries, {} "
      "cubin(s) no best uses, {} stale trial(s), {} unused kernel(s)\n",
      out_path, fs::file_size(out_path), fs::file_size(db.path()), counts.failed_trials,
      counts.failed_binaries, counts.cubins, counts.stale_trials, counts.kernels);
  return 0;
}

// Every IN merged into a new OUT (only read).
int run_merge(const std::string& out_path, const std::vector<std::string>& in_paths) {
  int64_t duplicates = 0;
  write_new_database("merged database", out_path, [&](const std::string& scratch) {
    TuningDb out(scratch, TuningDb::Mode::read_write);
    for (const std::string& in : in_paths) {
      const MergeCounts c = out.merge_from(in);
      duplicates += c.duplicate_trials;
      fmt::print(
          "merged '{}': {} run(s), {} device(s), {} problem(s), {} kernel(s), {} binaries, {} "
          "trial(s) new; {} trial(s) already there ({} replaced by a faster ok one)\n",
          in, c.runs, c.devices, c.problems, c.kernels, c.binaries, c.trials, c.duplicate_trials,
          c.replaced_trials);
      if (c.bests_not_kept > 0)
        fmt::print(stderr,
                   "tgemm-db: merge: {} best row(s) not kept from '{}': their trial is not an ok "
                   "one with a positive finite time, or is another problem's or device's; the "
                   "bests come from the trials\n",
                   c.bests_not_kept, printable(in));
    }
  });
  fmt::print(
      "wrote '{}' from {} database(s); {} duplicate trial(s) (the same problem, kernel and "
      "device in two inputs: the faster ok one kept, else the first)\n",
      out_path, in_paths.size(), duplicates);
  return 0;
}

}  // namespace tgemm::cli::db_tool
