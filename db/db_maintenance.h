// Maintenance of a tuning database file by the tools: full integrity checks, copies, and
// removing what a scratch copy or a shipped file should not hold (forget, prune).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "db/db_connection.h"
#include "db/tuning_db_reader.h"
#include "src/core/current_build.h"
#include "src/core/device_info.h"

namespace tgemm {

// What DbMaintenance::prune drops (each on by default but `stale`, which needs a build to
// judge by).
struct PruneOptions {
  bool failed = true;  // trials that did not run ok (builds that failed or spilled: only their
                       // binaries), and failed or pruned binaries
  // Cubins of kernels no best runs, but the library's write-backs (rebuilt on demand if needed).
  bool unused_cubins = true;
  // Trials stale against the CurrentBuild made for each device (given its stored driver).
  std::function<CurrentBuild(const DeviceInfo&)> stale;
};
struct PruneCounts {
  int64_t failed_trials = 0, failed_binaries = 0, cubins = 0, stale_trials = 0, kernels = 0;
};

// What a full check finds wrong (PRAGMA integrity_check: pages, indexes against their tables,
// NOT NULL and, on a read_write connection, CHECK constraints; then PRAGMA foreign_key_check:
// references that do not resolve), or "" when nothing. Slower than the quick check on open:
// for what the tools copy or merge before it replaces anything.
std::string integrity_problems(DbConnection& db);

class DbMaintenance {
 public:
  DbMaintenance(DbConnection& db, TuningDbReader& reader) : db_(db), reader_(reader) {}

  // A consistent snapshot of the whole database written to `dest_path` (SQLite's online
  // backup), a new file: an existing one (or a link) is refused, never overwritten. Throws
  // when the copy fails the quick check, which on a writable file covers the CHECK
  // constraints.
  void copy_to(const std::string& dest_path);
  // Removes one problem and everything measured on it (best, trials, cuBLAS times, profiles),
  // as if it had never been tuned; kernels and binaries stay. Returns the trials removed (0
  // when the problem is not there).
  int64_t forget_problem(const std::string& problem_key);
  // Removes every vendor call's trial (src/core/vendor_call.h) and recomputes the bests they
  // held, so the file serves our own kernels only. Returns the trials removed.
  int64_t forget_vendor_calls();
  // Drops what `options` names, then kernels nothing refers to, and compacts the file
  // (VACUUM). Bests, problems, devices, runs and cuBLAS times stay.
  PruneCounts prune(const PruneOptions& options);

 private:
  // Deletes the trials `current_for` (per device, by its stored driver) finds stale, then
  // recomputes the best of every (problem, device) that lost one. Inside prune's transaction.
  int64_t drop_stale_trials(const std::function<CurrentBuild(const DeviceInfo&)>& current_for);

  DbConnection& db_;
  TuningDbReader& reader_;
};

}  // namespace tgemm
