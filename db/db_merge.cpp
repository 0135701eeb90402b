#include "db/db_merge.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "db/db_maintenance.h"
#include "db/sqlite_statement.h"
#include "db/stored_rows.h"
#include "db/trial_store.h"

namespace tgemm {

namespace {

// The schema a file being merged in is copied into, on the merging connection.
constexpr const char* kMergeSchema = "merge_in";

// One table as merge_from copies it: its natural key, and the columns holding ids of rows
// that get new ids here (the kind they are mapped as in temp.merge_map).
struct MergedTable {
  const char* name;
  const char* kind;              // this table's ids in temp.merge_map; nullptr: not mapped
  std::vector<std::string> key;  // UNIQUE columns; empty: every row is new (runs)
  std::vector<std::pair<std::string, const char*>> references;  // column, kind
};

// Every column of a table but its id, in declaration order (PRAGMA table_info), so columns a
// later migration adds are merged without this code naming them.
std::vector<std::string> merged_columns(sqlite3* db, const std::string& path,
                                        const std::string& table) {
  Statement s(db, path, "read the columns to merge",
              "SELECT name FROM pragma_table_info(?1, 'main') ORDER BY cid");
  s.bind(1, table);
  std::vector<std::string> columns;
  while (s.step())
    if (s.text("name") != "id") columns.push_back(s.text("name"));
  if (columns.empty()) fail("tuning database '{}' has no table {} to merge into", path, table);
  return columns;
}

// The SELECT list that reads a row of merge_in.<table> (alias s) with its references mapped
// to the ids they have here.
std::string mapped_select(const MergedTable& table, const std::vector<std::string>& columns) {
  std::string list;
  for (const std::string& c : columns) {
    std::string expr = "s." + c;
    for (const auto& [column, kind] : table.references)
      if (column == c)
        expr = fmt::format("(SELECT new FROM temp.merge_map WHERE kind = '{}' AND old = s.{})",
                           kind, c);
    list += (list.empty() ? "" : ", ") + expr + " AS " + c;  // names merge_trials' columns
  }
  return list;
}

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Inserts the other file's rows that are not here yet (by natural key), then maps each of
// its ids to the id of the row with that key here. Returns the rows added.
int64_t merge_keyed_table(sqlite3* db, const std::string& path, const MergedTable& table) {
  const auto columns = merged_columns(db, path, table.name);
  const std::string what = fmt::format("merge the {}", table.name);
  exec(db, path, what,
       fmt::format("INSERT INTO main.{0} ({1}) SELECT {2} FROM {3}.{0} s WHERE true ORDER BY "
                   "s.id ON CONFLICT ({4}) DO NOTHING",
                   table.name, joined(columns), mapped_select(table, columns), kMergeSchema,
                   joined(table.key)));
  const int64_t added = sqlite3_changes64(db);
  std::vector<std::string> match;
  for (const std::string& k : table.key) match.push_back(fmt::format("h.{0} = s.{0}", k));
  exec(db, path, what,
       fmt::format("INSERT INTO temp.merge_map SELECT '{}', s.id, h.id FROM {}.{} s JOIN "
                   "main.{} h ON {}",
                   table.kind, kMergeSchema, table.name, table.name, joined(match, " AND ")));
  return added;
}

// Every run of the other file, under ids after this file's last one.
int64_t merge_runs(sqlite3* db, const std::string& path) {
  const auto columns = merged_columns(db, path, "runs");
  const int64_t base =
      Statement(db, path, "merge the runs", "SELECT coalesce(max(id), 0) FROM main.runs")
          .single_int();
  exec(db, path, "merge the runs",
       fmt::format("INSERT INTO main.runs (id, {0}) SELECT s.id + {1}, s.{2} FROM {3}.runs s "
                   "ORDER BY s.id",
                   joined(columns), base, joined(columns, ", s."), kMergeSchema));
  const int64_t added = sqlite3_changes64(db);
  exec(db, path, "merge the runs",
       fmt::format("INSERT INTO temp.merge_map SELECT 'run', id, id + {} FROM {}.runs", base,
                   kMergeSchema));
  return added;
}

const MergedTable kMergedTrials{"trials",
                                nullptr,
                                {"problem_id", "kernel_id", "device_id"},
                                {{"run_id", "run"},
                                 {"problem_id", "problem"},
                                 {"kernel_id", "kernel"},
                                 {"device_id", "device"},
                                 {"binary_id", "binary"}}};

// The other file's trials, staged in temp.merge_trials with ids mapped: a triple already here
// takes the other trial only when that one is ok and strictly faster.
void merge_trials(sqlite3* db, const std::string& path, MergeCounts* counts) {
  const auto columns = merged_columns(db, path, "trials");
  const char* what = "merge the trials";
  exec(db, path, what,
       fmt::format("CREATE TEMP TABLE merge_trials AS SELECT {} FROM {}.trials s ORDER BY s.id",
                   mapped_select(kMergedTrials, columns), kMergeSchema));
  const char* same =
      "n.problem_id = t.problem_id AND n.kernel_id = t.kernel_id AND "
      "n.device_id = t.device_id";
  counts->duplicate_trials =
      Statement(
          db, path, what,
          fmt::format("SELECT count(*) FROM temp.merge_trials n JOIN main.trials t ON {}", same))
          .single_int();
  std::vector<std::string> sets;
  for (const std::string& c : columns) sets.push_back(fmt::format("{0} = n.{0}", c));
  exec(db, path, what,
       fmt::format("UPDATE main.trials AS t SET {} FROM temp.merge_trials n WHERE {} AND "
                   "n.status = 'ok' AND n.time_median_us > 0 AND NOT (t.status = 'ok' AND "
                   "t.time_median_us > 0 AND t.time_median_us <= n.time_median_us)",
                   joined(sets), same));
  counts->replaced_trials = sqlite3_changes64(db);
  exec(db, path, what,
       fmt::format("INSERT INTO main.trials ({0}) SELECT {0} FROM temp.merge_trials WHERE true "
                   "ON CONFLICT (problem_id, kernel_id, device_id) DO NOTHING",
                   joined(columns)));
  counts->trials = sqlite3_changes64(db);
}

// cuBLAS times: the later measurement of a (problem, device) wins; a tie keeps this file's.
int64_t merge_cublas_times(sqlite3* db, const std::string& path) {
  const MergedTable table{"cublas_times",
                          nullptr,
                          {"problem_id", "device_id"},
                          {{"run_id", "run"}, {"problem_id", "problem"}, {"device_id", "device"}}};
  const auto columns = merged_columns(db, path, table.name);
  std::vector<std::string> sets;
  for (const std::string& c : columns)
    if (c != "problem_id" && c != "device_id") sets.push_back(fmt::format("{0} = excluded.{0}", c));
  exec(db, path, "merge the cuBLAS times",
       fmt::format("INSERT INTO main.cublas_times ({}) SELECT {} FROM {}.cublas_times s WHERE "
                   "true ON CONFLICT (problem_id, device_id) DO UPDATE SET {} WHERE "
                   "excluded.measured_at > cublas_times.measured_at",
                   joined(columns), mapped_select(table, columns), kMergeSchema, joined(sets)));
  return sqlite3_changes64(db);
}

// Device ceilings: this file's are kept; the other file's fill the (device, kind)s missing here.
int64_t merge_device_ceilings(sqlite3* db, const std::string& path) {
  const MergedTable table{"device_ceilings",
                          nullptr,
                          {"device_id", "kind"},
                          {{"run_id", "run"}, {"device_id", "device"}}};
  const auto columns = merged_columns(db, path, table.name);
  exec(db, path, "merge the device ceilings",
       fmt::format("INSERT INTO main.device_ceilings ({}) SELECT {} FROM {}.device_ceilings s "
                   "WHERE true ON CONFLICT (device_id, kind) DO NOTHING",
                   joined(columns), mapped_select(table, columns), kMergeSchema));
  return sqlite3_changes64(db);
}

// Kernel profiles: this file's are kept; the other file's fill the (problem, device)s missing
// here, both contenders together so a pair never mixes two profiling runs.
int64_t merge_kernel_profiles(sqlite3* db, const std::string& path) {
  const MergedTable table{"kernel_profiles",
                          nullptr,
                          {"problem_id", "device_id", "contender"},
                          {{"problem_id", "problem"}, {"device_id", "device"}}};
  const auto columns = merged_columns(db, path, table.name);
  exec(db, path, "merge the kernel profiles",
       fmt::format("INSERT INTO main.kernel_profiles ({0}) SELECT * FROM (SELECT {1} FROM "
                   "{2}.kernel_profiles s) n WHERE NOT EXISTS (SELECT 1 FROM "
                   "main.kernel_profiles h WHERE h.problem_id = n.problem_id AND h.device_id = "
                   "n.device_id) ON CONFLICT DO NOTHING",
                   joined(columns), mapped_select(table, columns), kMergeSchema));
  return sqlite3_changes64(db);
}

// A copy of `source` (the whole "main" schema, as SQLite's backup reads it) attached to `db`
// as kMergeSchema: a temporary file SQLite deletes on detach, so a migrated in-memory copy
// and an immutable install are read alike.
void attach_copy(sqlite3* db, const std::string& path, sqlite3* source,
                 const std::string& source_path) {
  exec(db, path, "attach a scratch copy of the file to merge",
       fmt::format("ATTACH '' AS {}", kMergeSchema));
  sqlite3_backup* copy = sqlite3_backup_init(db, kMergeSchema, source, "main");
  const int rc = copy ? sqlite3_backup_step(copy, -1) : sqlite3_errcode(db);
  if (copy) sqlite3_backup_finish(copy);
  if (rc != SQLITE_DONE) {
    const std::string message = sqlite3_errstr(rc);
    sqlite3_exec(db, fmt::format("DETACH {}", kMergeSchema).c_str(), nullptr, nullptr, nullptr);
    fail("cannot read tuning database '{}' to merge it into '{}': {}", source_path, path, message);
  }
}

void merge_attached(sqlite3* db, const std::string& path, MergeCounts* counts) {
  counts->bests_not_kept =
      Statement(db, path, "merge the best trials",
                fmt::format("SELECT count(*) FROM {0}.best b WHERE NOT EXISTS (SELECT 1 FROM "
                            "{0}.trials t WHERE t.id = b.trial_id AND t.problem_id = "
                            "b.problem_id AND t.device_id = b.device_id AND {1})",
                            kMergeSchema, measured_trials()))
          .single_int();
  exec(db, path, "prepare the merge",
       "CREATE TEMP TABLE merge_map (kind TEXT, old INTEGER, new INTEGER, "
       "PRIMARY KEY (kind, old)) WITHOUT ROWID");
  counts->runs = merge_runs(db, path);
  counts->devices =
      merge_keyed_table(db, path, {"devices", "device", {"name", "arch", "sm_count"}, {}});
  counts->kernels =
      merge_keyed_table(db, path, {"kernels", "kernel", {"template_hash", "canonical_name"}, {}});
  counts->problems = merge_keyed_table(db, path, {"problems", "problem", {"key"}, {}});
  counts->binaries = merge_keyed_table(
      db, path,
      {"binaries", "binary", {"cache_key"}, {{"kernel_id", "kernel"}, {"run_id", "run"}}});
  merge_trials(db, path, counts);
  counts->cublas_times = merge_cublas_times(db, path);
  counts->ceilings = merge_device_ceilings(db, path);
  counts->profiles = merge_kernel_profiles(db, path);
}

}  // namespace

MergeCounts merge_from(DbConnection& db, const std::string& other_path) {
  sqlite3* const handle = db.handle();
  const std::string& path = db.path();
  if (db.mode() != DbConnection::Mode::read_write)
    fail("cannot merge '{}' into tuning database '{}': it is open read-only", other_path, path);
  DbConnection other(other_path, DbConnection::Mode::read_only);  // an older file: a migrated copy
  if (const std::string problems = integrity_problems(other); !problems.empty())
    fail("tuning database '{}' is damaged, so it is not merged: {}", other_path, problems);
  attach_copy(handle, path, other.handle(), other.path());
  MergeCounts counts;
  db.begin_transaction();
  try {
    merge_attached(handle, path, &counts);
    std::vector<std::pair<int64_t, int64_t>> pairs;
    {
      Statement s(handle, path, "merge the best trials",
                  "SELECT DISTINCT problem_id, device_id FROM temp.merge_trials");
      while (s.step()) pairs.emplace_back(s.integer("problem_id"), s.integer("device_id"));
    }
    TrialStore trials(db);
    for (auto [problem_id, device_id] : pairs) trials.update_best(problem_id, device_id);
    exec(handle, path, "finish the merge",
         "DROP TABLE temp.merge_map; DROP TABLE temp.merge_trials");
    db.commit();
  } catch (const Error& e) {
    db.rollback();
    sqlite3_exec(handle,
                 "DROP TABLE IF EXISTS temp.merge_map; DROP TABLE IF EXISTS temp.merge_trials",
                 nullptr, nullptr, nullptr);
    sqlite3_exec(handle, fmt::format("DETACH {}", kMergeSchema).c_str(), nullptr, nullptr, nullptr);
    // A row this file's schema refuses (a CHECK, a reference) comes from the other file.
    fail("cannot merge tuning database '{}': {}", other_path, e.what());
  }
  exec(handle, path, "detach the merged file", fmt::format("DETACH {}", kMergeSchema));
  return counts;
}

}  // namespace tgemm
