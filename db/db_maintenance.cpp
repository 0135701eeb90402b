#include "db/db_maintenance.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "db/cubin_store.h"
#include "db/sqlite_statement.h"
#include "db/trial_store.h"

namespace tgemm {

std::string integrity_problems(DbConnection& db) {
  std::string problems = integrity_report(db.handle(), db.path(), "PRAGMA integrity_check(5)");
  if (!problems.empty()) problems = "PRAGMA integrity_check: " + problems;
  Statement s(db.handle(), db.path(), "check its references (PRAGMA foreign_key_check)",
              "PRAGMA foreign_key_check");
  for (int shown = 0; s.step() && shown < 5; ++shown)
    problems += fmt::format("{}{} row {} refers to a missing {} row",
                            problems.empty() ? "PRAGMA foreign_key_check: " : "; ", s.text("table"),
                            s.integer("rowid"), s.text("parent"));
  return problems;
}

void DbMaintenance::copy_to(const std::string& dest_path) {
  const std::string& path = db_.path();
  if (std::filesystem::exists(dest_path))
    fail("cannot copy tuning database '{}' to '{}': that file exists", path, dest_path);
  sqlite3* dest = nullptr;
  int rc =
      sqlite3_open_v2(dest_path.c_str(), &dest,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, nullptr);
  // sqlite3_close is safe on the handle even when the open failed.
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(dest, sqlite3_close);
  if (rc != SQLITE_OK)
    fail("cannot copy tuning database '{}' to '{}': {}", path, dest_path, sqlite3_errmsg(dest));
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", db_.handle(), "main");
  if (!backup)
    fail("cannot copy tuning database '{}' to '{}': {}", path, dest_path, sqlite3_errmsg(dest));
  rc = sqlite3_backup_step(backup, -1);  // every page in one step: one consistent snapshot
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE)
    fail("cannot copy tuning database '{}' to '{}': {}", path, dest_path, sqlite3_errstr(rc));
  // A writable connection checks the CHECK constraints a reader of the source could not.
  if (const std::string problems = integrity_report(dest, dest_path, "PRAGMA quick_check(3)");
      !problems.empty())
    fail("tuning database '{}' is damaged: its copy fails PRAGMA quick_check: {}", path, problems);
}

int64_t DbMaintenance::forget_problem(const std::string& problem_key) {
  return in_transaction(db_, [&] {
    const char* what = "forget a problem";
    const int64_t trials = Statement(db_.handle(), db_.path(), what,
                                     "SELECT count(*) FROM trials t JOIN problems p ON "
                                     "p.id = t.problem_id WHERE p.key = ?1")
                               .bind(1, problem_key)
                               .single_int();
    for (const char* sql :
         {"DELETE FROM best WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM trials WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM cublas_times WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM kernel_profiles WHERE problem_id IN "
          "(SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM problems WHERE key = ?1"})
      Statement(db_.handle(), db_.path(), what, sql).bind(1, problem_key).run();
    return trials;
  });
}

int64_t DbMaintenance::forget_vendor_calls() {
  return in_transaction(db_, [&] {
    const char* what = "forget the vendor calls";
    const char* vendor = "SELECT id FROM kernels WHERE library != 'tgemm'";
    std::vector<std::pair<int64_t, int64_t>> touched;
    Statement pairs(db_.handle(), db_.path(), what,
                    fmt::format("SELECT DISTINCT problem_id, device_id FROM trials "
                                "WHERE kernel_id IN ({})",
                                vendor));
    while (pairs.step())
      touched.emplace_back(pairs.integer("problem_id"), pairs.integer("device_id"));
    const int64_t trials =
        Statement(db_.handle(), db_.path(), what,
                  fmt::format("SELECT count(*) FROM trials WHERE kernel_id IN ({})", vendor))
            .single_int();
    exec(db_.handle(), db_.path(), what,
         fmt::format("DELETE FROM best WHERE trial_id IN "
                     "(SELECT id FROM trials WHERE kernel_id IN ({}))",
                     vendor));
    exec(db_.handle(), db_.path(), what,
         fmt::format("DELETE FROM trials WHERE kernel_id IN ({})", vendor));
    TrialStore store(db_);
    for (auto [problem_id, device_id] : touched) store.update_best(problem_id, device_id);
    return trials;
  });
}

PruneCounts DbMaintenance::prune(const PruneOptions& options) {
  PruneCounts counts;
  const char* what = "prune the database";
  auto run = [&](const char* sql) {
    exec(db_.handle(), db_.path(), what, sql);
    return int64_t(sqlite3_changes64(db_.handle()));
  };
  in_transaction(db_, [&] {
    if (options.stale) counts.stale_trials = drop_stale_trials(options.stale);
    if (options.failed) {
      // A build that spilled or failed to compile stays, without its cubin: the dispatcher
      // does not serve that config untuned in that layout and types (KernelSelector).
      counts.failed_trials = run(
          "DELETE FROM trials WHERE status NOT IN ('ok', 'resource_exceeded', 'compile_failed')");
      run("UPDATE trials SET binary_id = NULL WHERE status != 'ok'");
      counts.failed_binaries =
          run("DELETE FROM binaries WHERE status != 'ok' AND id NOT IN "
              "(SELECT binary_id FROM trials WHERE binary_id IS NOT NULL)");
    }
    if (options.unused_cubins) {
      // Cubins of kernels no best runs (a best's kernel keeps its cubins of every layout and
      // type), whether or not a trial names them (older files' trials do not, and a pruned
      // trial leaves its cubin behind); the library's write-backs serve its callers.
      Statement(db_.handle(), db_.path(), what,
                "CREATE TEMP TABLE prune_binaries AS SELECT id FROM binaries "
                "WHERE id NOT IN (SELECT t.binary_id FROM best b JOIN trials t "
                "ON t.id = b.trial_id WHERE t.binary_id IS NOT NULL) "
                "AND kernel_id NOT IN (SELECT t.kernel_id FROM best b JOIN trials t "
                "ON t.id = b.trial_id) "
                "AND (run_id IS NULL OR run_id NOT IN "
                "(SELECT id FROM runs WHERE command_line = ?1))")
          .bind(1, kCubinWriteBackRun)
          .run();
      run("UPDATE trials SET binary_id = NULL WHERE binary_id IN (SELECT id FROM prune_binaries)");
      counts.cubins = run("DELETE FROM binaries WHERE id IN (SELECT id FROM prune_binaries)");
      run("DROP TABLE temp.prune_binaries");
    }
    counts.kernels =
        run("DELETE FROM kernels WHERE id NOT IN (SELECT kernel_id FROM trials) AND id NOT IN "
            "(SELECT kernel_id FROM binaries)");
  });
  exec(db_.handle(), db_.path(), "compact the database", "VACUUM");
  return counts;
}

int64_t DbMaintenance::drop_stale_trials(
    const std::function<CurrentBuild(const DeviceInfo&)>& current_for) {
  const BuildsByDevice builds(reader_.devices(), current_for);
  std::set<std::pair<int64_t, int64_t>> touched;  // (problem, device)
  int64_t dropped = 0;
  for (const TrialRecord& t : reader_.trials()) {
    if (!builds.stale_reason(t.device_name, t.arch, t.trial.config.template_name, t.template_hash,
                             t.measured_with))
      continue;
    Statement(db_.handle(), db_.path(), "drop a stale trial",
              "DELETE FROM best WHERE trial_id = ?1")
        .bind(1, t.id)
        .run();
    Statement drop(db_.handle(), db_.path(), "drop a stale trial",
                   "DELETE FROM trials WHERE id = ?1 RETURNING problem_id, device_id");
    drop.bind(1, t.id);
    if (drop.step()) touched.insert({drop.integer("problem_id"), drop.integer("device_id")});
    ++dropped;
  }
  TrialStore store(db_);
  for (auto [problem_id, device_id] : touched) store.update_best(problem_id, device_id);
  return dropped;
}

}  // namespace tgemm
