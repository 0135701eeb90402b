#include "db/tuning_db.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <thread>
#include <utility>

#include "src/core/error.h"
#include "src/core/hash.h"
#include "src/core/library_log.h"
#include "src/core/printable.h"
#include "src/core/vendor_call.h"
#include "src/jit/cubin_check.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql, embedded at build time

namespace {

// Version 2: every cubin carries its checksum (cubin_checksum), verified before it is used.
// tgemm_checksum is the SQL function that connect registers on every connection.
constexpr const char* kAddCubinChecksums =
    "ALTER TABLE binaries ADD COLUMN checksum TEXT;  -- cubin_checksum(cubin); NULL: no cubin\n"
    "UPDATE binaries SET checksum = tgemm_checksum(cubin) WHERE cubin IS NOT NULL;";

// 2 -> 3: typed problems. `dtype` holds GemmTypes::name() (the shape-file dtype, with
// "_out_f32" for an f32 C of 16-bit inputs), alignments move from elements to bytes, the
// key gets its new form (functional key, then "_a" and the byte alignments), and binaries
// record the types they were built for.
constexpr const char* kTypedProblems = R"sql(
UPDATE problems SET
  align_a = align_a * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END),
  align_b = align_b * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END),
  align_c = align_c * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END);
UPDATE problems SET key = dtype || '_' || layout || '_m' || m || '_n' || n || '_k' || k ||
  '_b' || (1 - beta_zero) || '_a' || align_a || '.' || align_b || '.' || align_c;
ALTER TABLE binaries ADD COLUMN types TEXT NOT NULL DEFAULT 'f32';
)sql";

// 3 -> 4: beside cuBLAS's time, SGEMM's own error against an FP64 reference on the same
// inputs (f32x3 problems; NULL for others and for files tuned before): the figure an f32x3
// kernel's max_rel_error (also against FP64) is compared with.
constexpr const char* kCublasErrors = "ALTER TABLE cublas_times ADD COLUMN sgemm_rel_error REAL;";

// 4 -> 5: the measured roofs of each device (copy bandwidth, FFMA and tensor peaks), so a
// roofline uses what the GPU reached rather than a datasheet. One row per (device, kind).
constexpr const char* kDeviceCeilings = R"sql(
CREATE TABLE device_ceilings (
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  kind        TEXT NOT NULL,   -- copy_bandwidth, f32_ffma, f16, bf16, tf32
  value       REAL NOT NULL CHECK (value > 0),  -- bytes/s for copy_bandwidth, else FLOP/s
  source      TEXT NOT NULL,   -- cudaMemcpyAsync, nvrtc_ffma_kernel, cublasSgemm, cublasGemmEx
  detail      TEXT NOT NULL,   -- what was measured: sizes, repetitions
  run_id      INTEGER REFERENCES runs (id),
  measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (device_id, kind)
);
)sql";

// 5 -> 6: what each trial was measured with beyond its kernel's source (whose hash the kernel
// row holds): the NVRTC version that compiled it and the CUDA driver that ran it, so a trial
// can be found stale after an upgrade. NULL for trials recorded before: not known.
constexpr const char* kTrialVersions =
    "ALTER TABLE trials ADD COLUMN nvrtc_version TEXT;\n"
    "ALTER TABLE trials ADD COLUMN driver_version INTEGER;";

// 6 -> 7: Nsight Compute profiles of the best kernel and of cuBLAS's per (problem, device), so
// the report can show why one is faster. Metrics ncu could not collect are NULL; the stall
// reasons are "name=value" pairs, the largest first, joined by ';'.
constexpr const char* kKernelProfiles = R"sql(
CREATE TABLE kernel_profiles (
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  contender   TEXT NOT NULL CHECK (contender IN ('tgemm', 'cublas')),
  config      TEXT NOT NULL,   -- tgemm: the best kernel's canonical name; cuBLAS: ''
  kernel_name TEXT NOT NULL,   -- the profiled kernel as ncu names it
  ncu_version TEXT NOT NULL,
  duration_us REAL,            -- gpu__time_duration.sum
  sm_throughput_pct REAL,      -- sm__throughput.avg.pct_of_peak_sustained_elapsed
  memory_throughput_pct REAL,  -- gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  dram_read_bytes REAL,
  dram_write_bytes REAL,
  global_load_sectors REAL,    -- l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  global_load_requests REAL,
  global_store_sectors REAL,
  global_excess_sectors REAL,  -- smsp__sass_sectors_mem_global minus its _ideal
  shared_load_bank_conflicts REAL,
  shared_store_bank_conflicts REAL,
  achieved_occupancy_pct REAL, -- sm__warps_active.avg.pct_of_peak_sustained_active
  fma_pipe_pct REAL,
  tensor_pipe_pct REAL,
  registers REAL,              -- per thread
  stall_reasons TEXT NOT NULL DEFAULT '',  -- warps stalled per issued instruction
  profiled_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (problem_id, device_id, contender)
);
)sql";

// 7 -> 8: the vendor library as a contender (src/core/vendor_call.h). A kernel row says which
// library it is (ours, or a vendor call stored as a pseudo-kernel without a cubin, its "source
// hash" the cuBLAS version), so a problem's best may be the vendor call; best_kernels says
// which library serves it, and tgemm_best_kernels keeps our own fastest kernel per problem in
// view beside it. A build before this one refuses the file (a newer schema) rather than taking
// a vendor row for a kernel.
constexpr const char* kVendorCalls = R"sql(
ALTER TABLE kernels ADD COLUMN library TEXT NOT NULL DEFAULT 'tgemm'
  CHECK (library IN ('tgemm', 'cublas', 'cublasLt'));
DROP VIEW IF EXISTS best_kernels;
CREATE VIEW best_kernels AS
SELECT d.name                                           AS device,
       d.arch                                           AS arch,
       p.dtype                                          AS dtype,
       p.layout                                         AS layout,
       p.m                                              AS m,
       p.n                                              AS n,
       p.k                                              AS k,
       kr.canonical_name                                AS kernel,
       round(t.time_median_us, 2)                       AS us,
       round(t.tflops, 2)                               AS tflops,
       round(c.median_us, 2)                            AS cublas_us,
       round(c.median_us / t.time_median_us, 3)         AS vs_cublas,
       kr.params                                        AS params,
       p.key                                            AS problem_key,
       (SELECT count(*) FROM trials a
         WHERE a.problem_id = p.id AND a.device_id = d.id) AS trials,
       t.id                                             AS trial_id,
       kr.library                                       AS library
FROM best bs
JOIN trials t ON t.id = bs.trial_id
JOIN problems p ON p.id = bs.problem_id
JOIN devices d ON d.id = bs.device_id
JOIN kernels kr ON kr.id = t.kernel_id
LEFT JOIN cublas_times c ON c.problem_id = bs.problem_id AND c.device_id = bs.device_id;
-- Our fastest ok kernel per (problem, device), whatever the best (stale or not: a view cannot
-- know the build), so the gap of our kernels to the vendor stays visible.
CREATE VIEW tgemm_best_kernels AS
SELECT d.name                                   AS device,
       d.arch                                   AS arch,
       p.dtype                                  AS dtype,
       p.layout                                 AS layout,
       p.m                                      AS m,
       p.n                                      AS n,
       p.k                                      AS k,
       kr.canonical_name                        AS kernel,
       round(r.time_median_us, 2)               AS us,
       round(r.tflops, 2)                       AS tflops,
       round(c.median_us, 2)                    AS cublas_us,
       round(c.median_us / r.time_median_us, 3) AS vs_cublas,
       kr.params                                AS params,
       p.key                                    AS problem_key,
       r.id                                     AS trial_id
FROM (SELECT t.*, row_number() OVER (PARTITION BY t.problem_id, t.device_id
                                     ORDER BY t.time_median_us, t.time_min_us, t.id) AS rank
      FROM trials t JOIN kernels k ON k.id = t.kernel_id
      WHERE t.status = 'ok' AND t.time_median_us > 0 AND k.library = 'tgemm') r
JOIN problems p ON p.id = r.problem_id
JOIN devices d ON d.id = r.device_id
JOIN kernels kr ON kr.id = r.kernel_id
LEFT JOIN cublas_times c ON c.problem_id = r.problem_id AND c.device_id = r.device_id
WHERE r.rank = 1;
)sql";

// 8 -> 9: the code hash of every cubin compiled from now on (src/jit/code_hash.h), so a trial
// whose template text changed can be kept when its config still builds to the same machine
// code (tgemm-db refresh). Stored, not only recomputed, because a pruned file drops the cubins
// no best uses. NULL for cubins stored before: not known (their bytes are hashed instead).
// The trials of a binary are found by an index: re-keying moves them binary by binary.
constexpr const char* kCodeHashes =
    "ALTER TABLE binaries ADD COLUMN code_hash TEXT;\n"
    "CREATE INDEX trials_by_binary ON trials (binary_id);";

// Step i takes a database from user_version i to i + 1, in the same transaction as the new
// user_version; a new file runs them all. A schema change is one more step here, never an
// edit of an earlier one (db/schema.sql stays the version-1 baseline).
struct MigrationStep {
  const char* what;  // "migrate the schema from version i to i + 1: <what>"
  const char* sql;
};
const MigrationStep kMigrations[] = {
    {"create the first schema (db/schema.sql)", kSchemaSql},                // 0 -> 1
    {"add a checksum to every cubin", kAddCubinChecksums},                  // 1 -> 2
    {"type the problems (GemmTypes, alignment in bytes)", kTypedProblems},  // 2 -> 3
    {"store cuBLAS SGEMM's error against FP64", kCublasErrors},             // 3 -> 4
    {"add the measured device ceilings", kDeviceCeilings},                  // 4 -> 5
    {"record each trial's NVRTC and driver versions", kTrialVersions},      // 5 -> 6
    {"add the Nsight Compute kernel profiles", kKernelProfiles},            // 6 -> 7
    {"record vendor library calls as contenders", kVendorCalls},            // 7 -> 8
    {"add the code hash of every cubin", kCodeHashes},                      // 8 -> 9
};
constexpr int kSchemaVersion = int(std::size(kMigrations));
// A read-only open reads files from this version up (it cannot migrate them); read_only
// queries that touch a newer column say what an older file has instead (binary_columns).
constexpr int kOldestReadableVersion = 1;
constexpr int kChecksumVersion = 2;  // the first version with binaries.checksum
constexpr int kCodeHashVersion = 9;  // the first version with binaries.code_hash

// Two tuners may write the same file; a writer waits this long for the other's transaction
// (set_busy_timeout_ms changes it per connection).
constexpr int kBusyTimeoutMs = 10000;

// Wraps the connection's last error in a message that names the file and what failed.
[[noreturn]] void fail_sqlite(sqlite3* db, const std::string& path, int rc, std::string_view what) {
  const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      fail("'{}' is not a SQLite database or is corrupt ({}) while trying to {}", path, message,
           what);
    case SQLITE_CORRUPT:
      fail("tuning database '{}' is corrupt ({}) while trying to {}", path, message, what);
    case SQLITE_READONLY:
      // A hot journal: a writer stopped mid-transaction, and only a writer may roll it back.
      if (db && sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK)
        fail(
            "cannot {} in tuning database '{}': its journal '{}-journal' holds a transaction "
            "a writer left unfinished, which a read-only open cannot roll back; open the "
            "database once read-write (e.g. with tgemm-tune), or move the journal away if it "
            "is not this database's",
            what, path, path);
      fail("cannot {} in tuning database '{}': it is open read-only ({})", what, path, message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      fail("tuning database '{}' is locked by another writer; gave up waiting to {} ({})", path,
           what, message);
    default:
      fail("tuning database '{}': cannot {}: {}", path, what, message);
  }
}

// One prepared statement; values are always bound, never spliced into the SQL text.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, std::string_view what, std::string_view sql)
      : db_(db), path_(path), what_(what) {
    int rc = sqlite3_prepare_v2(db, sql.data(), int(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) fail_sqlite(db_, path_, rc, what_);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value) {
    return check_bind(sqlite3_bind_int64(stmt_, index, value));
  }
  Statement& bind(int index, int value) { return bind(index, int64_t(value)); }
  Statement& bind(int index, bool value) { return bind(index, int64_t(value ? 1 : 0)); }
  Statement& bind(int index, double value) {
    return check_bind(sqlite3_bind_double(stmt_, index, value));
  }
  Statement& bind(int index, std::string_view value) {
    return check_bind(sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                                          SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::optional<int64_t> value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind_null(int index) { return check_bind(sqlite3_bind_null(stmt_, index)); }
  // An empty blob is stored as NULL: "no cubin".
  Statement& bind_blob(int index, const std::vector<char>& bytes) {
    if (bytes.empty()) return bind_null(index);
    return check_bind(
        sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  // Rows that point at a run keep NULL instead when there is none (id 0).
  Statement& bind_run(int index, int64_t run_id) {
    return run_id > 0 ? bind(index, run_id) : bind_null(index);
  }

  // True when a row is ready, false when the statement is done.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail_sqlite(db_, path_, rc, what_);
  }
  void run() {
    while (step()) {
    }
  }
  // Ready to be bound and stepped again.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  // Steps to the single row a statement must produce (RETURNING id, count(*)).
  int64_t single_int() {
    if (!step()) fail("tuning database '{}': {} returned no row", path_, what_);
    int64_t value = int_at(0);
    run();
    return value;
  }

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t int_at(int col) const { return sqlite3_column_int64(stmt_, col); }
  double double_at(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string text_at(int col) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return text ? std::string(text, size_t(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  std::vector<char> blob_at(int col) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return data ? std::vector<char>(data, data + sqlite3_column_bytes(stmt_, col))
                : std::vector<char>();
  }
  int column_count() const { return sqlite3_column_count(stmt_); }
  const std::string& path() const { return path_; }
  std::string column_name(int col) const { return sqlite3_column_name(stmt_, col); }

 private:
  Statement& check_bind(int rc) {
    if (rc != SQLITE_OK) fail_sqlite(db_, path_, rc, what_);
    return *this;
  }

  sqlite3* db_;
  const std::string& path_;
  std::string_view what_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs SQL without values (pragmas, transaction control, the schema).
void exec(sqlite3* db, const std::string& path, std::string_view what, const char* sql) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(db, path, rc, what);
}

// A file's schema version as read. tgemm writes 0 (a new file) to kSchemaVersion: a negative
// one is damage or another program's, and no migration starts from it.
int checked_schema_version(int64_t version, const std::string& path) {
  if (version < 0)
    fail(
        "tuning database '{}' has schema version {}, which no tgemm writes (a damaged file, or "
        "another program's); use another database file",
        path, version);
  return int(version);
}

int user_version(sqlite3* db, const std::string& path) {
  return checked_schema_version(
      Statement(db, path, "read the schema version", "PRAGMA user_version").single_int(), path);
}

BinaryStatus parse_binary_status(const std::string& text) {
  if (text == "ok") return BinaryStatus::ok;
  if (text == "compile_failed") return BinaryStatus::compile_failed;
  if (text == "resource_exceeded") return BinaryStatus::resource_exceeded;
  fail("unknown binary status '{}' (expected ok, compile_failed or resource_exceeded)", text);
}

TrialStatus parse_stored_trial_status(const std::string& text) {
  try {
    return parse_trial_status(text);
  } catch (const Error&) {
    std::string allowed;
    for (int i = 0; to_string(TrialStatus(i)) != "?"; ++i)
      allowed += (i ? ", " : "") + to_string(TrialStatus(i));
    fail("unknown trial status '{}' (expected one of {})", text, allowed);
  }
}

// A row holding a value the reader cannot use (a hand edit, a foreign writer, damage): the
// read skips it (SkippedRows), never trusts it.
struct BadRow : Error {
  using Error::Error;
};

[[noreturn]] void bad_row(const Statement& s, const char* table, int64_t id, const char* column,
                          const std::string& why) {
  throw BadRow(fmt::format("tuning database '{}': table {}, row id {}: column {}: {}", s.path(),
                           table, id, column, why));
}

// Runs `decode` on a column of one row; what it cannot use makes the row a BadRow naming the
// file, the table, the row id and the column.
template <typename Decode>
auto decoded(const Statement& s, const char* table, int64_t id, const char* column,
             Decode&& decode) {
  try {
    return decode();
  } catch (const Error& e) {
    bad_row(s, table, id, column, e.what());
  }
}

// The rows one read skipped, told in one warning when the read is done.
class SkippedRows {
 public:
  SkippedRows(const std::string& path, std::string_view what) : path_(path), what_(what) {}
  ~SkippedRows() {
    if (count_ > 0)
      library_log().warn("tgemm: skipped {} row(s) of tuning database '{}' to {}, e.g. {}", count_,
                         path_, what_, first_.substr(first_.find(": table ") + 2));
  }
  SkippedRows(const SkippedRows&) = delete;
  SkippedRows& operator=(const SkippedRows&) = delete;

  // Runs `read` on one row; false (and counted) when the row is bad.
  template <typename Read>
  bool keep(Read&& read) {
    try {
      read();
      return true;
    } catch (const BadRow& e) {
      if (count_++ == 0) first_ = e.what();
      return false;
    }
  }

 private:
  const std::string& path_;
  std::string_view what_;
  int64_t count_ = 0;
  std::string first_;
};

// SQL for "a finite number" after a value: SQLite stores infinities (never a NaN).
constexpr const char* kFiniteReal = "BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308";
// The trials (columns unqualified) whose time is a measurement: ok, positive and finite.
std::string measured_trials() {
  return fmt::format("status = 'ok' AND time_median_us > 0 AND time_median_us {}", kFiniteReal);
}

// Problem columns in this order, so every query that rebuilds a Problem selects the same.
constexpr const char* kProblemColumns =
    "p.id, p.dtype, p.layout, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.align_a, p.align_b, "
    "p.align_c, p.beta_zero";
constexpr int kProblemColumnCount = 13;

Problem problem_at(const Statement& s, int first) {
  Problem p;
  const int64_t id = s.int_at(first++);
  p.types = decoded(s, "problems", id, "dtype", [&] { return parse_gemm_types(s.text_at(first)); });
  decoded(s, "problems", id, "layout",
          [&] { parse_layout(s.text_at(first + 1), &p.op_a, &p.op_b); });
  p.m = s.int_at(first + 2);
  p.n = s.int_at(first + 3);
  p.k = s.int_at(first + 4);
  p.lda = s.int_at(first + 5);
  p.ldb = s.int_at(first + 6);
  p.ldc = s.int_at(first + 7);
  p.align_a = int(s.int_at(first + 8));
  p.align_b = int(s.int_at(first + 9));
  p.align_c = int(s.int_at(first + 10));
  // The schema's CHECKs, which SQLite does not apply on a read-only connection.
  for (auto [column, value] : {std::pair{"m", p.m}, {"n", p.n}, {"k", p.k}})
    if (value < 1) bad_row(s, "problems", id, column, fmt::format("{} is below 1", value));
  const int64_t beta_zero = s.int_at(first + 11);
  if (beta_zero != 0 && beta_zero != 1)
    bad_row(s, "problems", id, "beta_zero", fmt::format("{} is neither 0 nor 1", beta_zero));
  p.beta_zero = beta_zero != 0;
  return p;
}

// Trial columns in this order (the ids name a row that fails to decode).
constexpr const char* kTrialColumns =
    "t.id, kr.id, kr.template, kr.params, t.status, t.error, t.time_min_us, t.time_median_us, "
    "t.time_max_us, t.runs, t.tflops, t.max_rel_error, t.nvrtc_version, t.driver_version";
constexpr int kTrialColumnCount = 14;

// `text` with each line made printable() and the line breaks kept: a compiler log stays a log
// of lines, and none of them can move the cursor or rewrite the terminal.
std::string printable_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out += printable(std::string_view(text).substr(start, end - start)) + '\n';
  return out + printable(std::string_view(text).substr(start));
}

TrialResult trial_at(const Statement& s, int first) {
  TrialResult t;
  const int64_t id = s.int_at(first++);
  const int64_t kernel_id = s.int_at(first++);
  t.config = decoded(s, "kernels", kernel_id, "params", [&] {
    return KernelConfig::from_params_text(s.text_at(first), s.text_at(first + 1));
  });
  t.status = decoded(s, "trials", id, "status",
                     [&] { return parse_stored_trial_status(s.text_at(first + 2)); });
  t.error = printable_lines(s.text_at(first + 3));  // for people only: a log of lines
  t.time_min_us = s.double_at(first + 4);
  t.time_median_us = s.double_at(first + 5);
  t.time_max_us = s.double_at(first + 6);
  t.runs = int(s.int_at(first + 7));
  t.tflops = s.double_at(first + 8);
  t.max_rel_error = s.double_at(first + 9);
  return t;
}

// The versions of the trial whose columns start at `first` (kTrialColumns' order).
MeasuredWith measured_with_at(const Statement& s, int first) {
  MeasuredWith w;
  if (!s.is_null(first + 12)) w.nvrtc_version = s.text_at(first + 12);
  if (!s.is_null(first + 13)) w.driver_version = int(s.int_at(first + 13));
  return w;
}

// Then b.checksum and b.code_hash, or NULL in a file older than each (binary_columns).
constexpr const char* kBinaryColumns =
    "b.id, b.kernel_id, b.status, b.reason, b.arch, b.nvrtc_version, b.op_a, b.op_b, b.entry, "
    "b.options, b.cache_key, b.cubin, b.registers, b.smem_bytes, b.stack_bytes, "
    "b.spill_store_bytes, b.spill_load_bytes, b.resources_found, b.compile_ms, b.log, b.types";

BinaryRecord binary_at(const Statement& s) {
  BinaryRecord r;
  r.id = s.int_at(0);
  r.kernel_id = s.int_at(1);
  r.status =
      decoded(s, "binaries", r.id, "status", [&] { return parse_binary_status(s.text_at(2)); });
  r.reason = s.text_at(3);
  CompiledKernel& c = r.compiled;
  // NVRTC produced a cubin unless compilation failed; a resource prune still compiled.
  c.ok = r.status != BinaryStatus::compile_failed;
  c.error = r.status == BinaryStatus::compile_failed ? r.reason : "";
  c.arch = s.text_at(4);
  c.nvrtc_version = s.text_at(5);
  c.op_a = decoded(s, "binaries", r.id, "op_a", [&] { return parse_op(s.text_at(6)); });
  c.op_b = decoded(s, "binaries", r.id, "op_b", [&] { return parse_op(s.text_at(7)); });
  c.entry = s.text_at(8);
  c.options = s.text_at(9);
  c.cache_key = s.text_at(10);
  c.cubin = s.blob_at(11);
  c.resources.registers = int(s.int_at(12));
  c.resources.smem_bytes = int(s.int_at(13));
  c.resources.stack_frame_bytes = int(s.int_at(14));
  c.resources.spill_store_bytes = int(s.int_at(15));
  c.resources.spill_load_bytes = int(s.int_at(16));
  c.resources.found = s.int_at(17) != 0;
  c.compile_ms = s.double_at(18);
  c.log = s.text_at(19);
  c.types = decoded(s, "binaries", r.id, "types", [&] { return parse_gemm_types(s.text_at(20)); });
  c.code_hash = s.text_at(22);  // "" for NULL: not known
  // A cubin that does not match its checksum (damage, a hand edit, a file without checksums)
  // is never handed out: the caller sees checksum_ok false and no bytes.
  if (!c.cubin.empty()) {
    r.checksum_ok = !s.is_null(21) && s.text_at(21) == cubin_checksum(c.cubin);
    // A checksum recomputed over planted bytes proves nothing: the bytes must be a cubin.
    r.cubin_rejected =
        r.checksum_ok ? cubin_problem(c.cubin, c.arch, {c.entry}) : "it fails its checksum";
    r.checksum_ok = r.cubin_rejected.empty();
    if (!r.checksum_ok) c.cubin.clear();
  }
  return r;
}

// The binary of the row `s` is on, or nullopt (and a warning) when the row is bad: for the
// tuner and the dispatcher, a binary they do not have.
std::optional<BinaryRecord> checked_binary_at(const Statement& s) {
  std::optional<BinaryRecord> out;
  SkippedRows(s.path(), "look up a binary").keep([&] { out = binary_at(s); });
  return out;
}

// tgemm_checksum(blob): cubin_checksum of the bytes, NULL for NULL (used by migrations).
void sql_checksum(sqlite3_context* context, int, sqlite3_value** args) {
  if (sqlite3_value_type(args[0]) == SQLITE_NULL) return sqlite3_result_null(context);
  const auto* data = static_cast<const char*>(sqlite3_value_blob(args[0]));
  const std::string sum = stable_hash(std::string_view(data, size_t(sqlite3_value_bytes(args[0]))));
  sqlite3_result_text(context, sum.c_str(), int(sum.size()), SQLITE_TRANSIENT);
}

void register_checksum_function(sqlite3* db, const std::string& path) {
  const int rc =
      sqlite3_create_function(db, "tgemm_checksum", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                              sql_checksum, nullptr, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(db, path, rc, "register the checksum function");
}

// Takes a database from schema version `from` to this build's (the user_version is the
// caller's to set).
void apply_migrations(sqlite3* db, const std::string& path, int from) {
  for (int v = from; v < kSchemaVersion; ++v)
    exec(db, path,
         fmt::format("migrate the schema from version {} to {}: {}", v, v + 1, kMigrations[v].what),
         kMigrations[v].sql);
}

// SQL without its comments and with single spaces, so schema texts that differ only there
// (schema.sql's comments were reworded over time) compare equal.
std::string normalized_sql(std::string_view sql) {
  std::string out;
  char quote = 0;
  auto space = [&out] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      out += c;
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
      out += c;
    } else if (sql.substr(i, 2) == "--") {
      i = std::min(sql.find('\n', i), sql.size());
      space();
    } else if (sql.substr(i, 2) == "/*") {
      i = std::min(sql.find("*/", i + 2), sql.size()) + 1;
      space();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      space();
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct SchemaObject {
  std::string type;           // table, index, view
  std::set<std::string> sql;  // normalized_sql at each schema version; empty for SQLite's own
};

// Every object tgemm creates, by name, with its text at every schema version (a file of an
// older version still holds the views and indexes of its day): a new file, made in memory and
// migrated one version at a time.
const std::map<std::string, SchemaObject>& tgemm_schema() {
  static const std::map<std::string, SchemaObject> objects = [] {
    const std::string path = ":memory:";
    sqlite3* memory = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &memory, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
    std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(memory, sqlite3_close);
    if (rc != SQLITE_OK) fail_sqlite(memory, path, rc, "make this build's schema in memory");
    register_checksum_function(memory, path);
    std::map<std::string, SchemaObject> out;
    for (int v = 0; v < kSchemaVersion; ++v) {
      exec(memory, path, fmt::format("make schema version {}", v + 1), kMigrations[v].sql);
      Statement s(memory, path, "read this build's schema",
                  "SELECT type, name, coalesce(sql, '') FROM sqlite_schema");
      while (s.step()) {
        SchemaObject& object = out[s.text_at(1)];
        object.type = s.text_at(0);
        object.sql.insert(normalized_sql(s.text_at(2)));
      }
    }
    return out;
  }();
  return objects;
}

// A tuning database holds only what tgemm creates: a trigger would run its SQL inside the
// tuner, a changed view or index would change what queries read. Such a file is refused
// before any statement runs on it. Tables are matched by name (an older schema has fewer
// columns); what their rows hold is checked as they are read.
void refuse_foreign_objects(sqlite3* db, const std::string& path) {
  const auto& expected = tgemm_schema();
  Statement s(db, path, "inspect the schema",
              "SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY rowid");
  while (s.step()) {
    const std::string type = s.text_at(0), name = s.text_at(1);
    // SQLite's own statistics (an ANALYZE in the sqlite3 shell).
    if (type == "table" && (name == "sqlite_stat1" || name == "sqlite_stat4")) continue;
    const auto it = expected.find(name);
    const bool foreign = it == expected.end() || it->second.type != type;
    if (foreign || (type != "table" && !it->second.sql.count(normalized_sql(s.text_at(2)))))
      fail(
          "tuning database '{}' holds {} '{}' {}; a tuning database runs no SQL of its own: "
          "remove it (sqlite3 '{}' 'DROP {} \"{}\"') or use another file",
          path, type, name, foreign ? "that tgemm does not create" : "changed from tgemm's own",
          path, type, name);
  }
}

// "file:" URI of a path for sqlite3_open_v2 (SQLITE_OPEN_URI): absolute, and every byte
// but the plainest percent-encoded, so '?', '#' and '%' in a name stay part of it.
std::string file_uri(const std::string& path) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).string();
  if (ec) abs = path;
  std::string uri = "file://";
  for (unsigned char c : abs) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~')
      uri += char(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}

// SQLite would wait forever on a FIFO (or read a device) given as the database or found beside
// it as its journal, and refuses a linked journal with only "unable to open database file".
void refuse_special_files(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail("tuning database '{}' is not a regular file (a FIFO, device or socket); name a file",
         path);
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    const std::string side = path + suffix;
    if (::lstat(side.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail(
          "'{}' beside tuning database '{}' is not a regular file (a link, FIFO, device or "
          "socket); SQLite keeps its journal there: remove it",
          side, path);
  }
}

bool non_empty_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > 0;
}

}  // namespace

std::string cubin_checksum(const std::vector<char>& cubin) {
  return stable_hash(std::string_view(cubin.data(), cubin.size()));
}

std::string to_string(BinaryStatus status) {
  switch (status) {
    case BinaryStatus::ok:
      return "ok";
    case BinaryStatus::compile_failed:
      return "compile_failed";
    case BinaryStatus::resource_exceeded:
      return "resource_exceeded";
  }
  return "?";
}

int TuningDb::schema_version() { return kSchemaVersion; }

TuningDb::TuningDb(const std::string& path, Mode mode) : path_(path), mode_(mode) {
  namespace fs = std::filesystem;
  if (path.empty()) fail("tuning database path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) fail("tuning database '{}' is a directory, not a file", path);
  refuse_special_files(path);
  if (!fs::exists(st)) {
    if (mode == Mode::read_only) fail("tuning database '{}' does not exist", path);
    // SQLite says only "unable to open database file"; say which part of the path is wrong.
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const fs::file_status dir_st = fs::status(dir, ec);
    if (!fs::exists(dir_st))
      fail("cannot create tuning database '{}': directory '{}' does not exist", path, dir.string());
    if (!fs::is_directory(dir_st))
      fail("cannot create tuning database '{}': '{}' is not a directory", path, dir.string());
  }
  connect(false);
  try {
    open_checks();
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

void TuningDb::connect(bool immutable) {
  // Readers open by URI: mode=ro, and immutable=1 for an install nobody writes (see
  // read_only_version); writers by plain path.
  const bool ro = mode_ == Mode::read_only;
  const std::string name =
      ro ? file_uri(path_) + "?mode=ro" + (immutable ? "&immutable=1" : "") : path_;
  const int flags =
      ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    const int err = db_ ? sqlite3_system_errno(db_) : 0;
    if (err != 0) message += fmt::format(" ({})", std::strerror(err));
    sqlite3_close_v2(db_);
    db_ = nullptr;
    fail("cannot {} tuning database '{}': {}", ro ? "open" : "open or create", path_, message);
  }
  sqlite3_extended_result_codes(db_, 1);
  busy_ms_ = kBusyTimeoutMs;
  sqlite3_busy_timeout(db_, busy_ms_);
  register_checksum_function(db_, path_);
}

// The schema version, for a reader. A WAL-mode file in a folder this user cannot write (an
// install: root-owned /opt/app, mode 644) fails the first read, since SQLite cannot create
// the -shm index beside it. Without a -wal log the main file holds every commit, so it is
// read as immutable (which assumes nobody writes it meanwhile: an install, not a folder a
// tuner is working in); a log that cannot be read is named rather than silently skipped.
int TuningDb::read_only_version() {
  int64_t version = 0;
  int rc = SQLITE_OK;
  {
    sqlite3_stmt* stmt = nullptr;
    rc = sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) version = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  if (rc == SQLITE_ROW) return checked_schema_version(version, path_);
  const int primary = rc & 0xff;
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path_).parent_path();
  if (dir.empty()) dir = ".";
  const bool cannot_write_folder = ::access(dir.c_str(), W_OK) != 0;
  if ((primary != SQLITE_READONLY && primary != SQLITE_CANTOPEN) || !cannot_write_folder)
    fail_sqlite(db_, path_, rc, "read the schema version");
  if (non_empty_file(path_ + "-wal"))
    fail(
        "cannot read tuning database '{}': its write-ahead log '{}-wal' holds changes, but "
        "'{}-shm' is missing or unreadable and this user cannot write the folder '{}' to "
        "rebuild it; install the three files together, or open the database once read-write "
        "(e.g. with tgemm-tune) so the log is folded into the file",
        path_, path_, path_, dir.string());
  sqlite3_close_v2(db_);
  db_ = nullptr;
  connect(true);
  return user_version(db_, path_);
}

// Everything after sqlite3_open: nothing here writes before the file is known to be an
// undamaged tgemm database of a version this build understands, so a refused file keeps its
// bytes.
void TuningDb::open_checks() {
  if (mode_ == Mode::read_write && sqlite3_db_readonly(db_, "main") == 1)
    fail(
        "cannot open tuning database '{}' for writing: permission denied (tgemm-db and the "
        "dispatcher can still read it)",
        path_);
  exec(db_, path_, "enable foreign keys", "PRAGMA foreign_keys = ON");

  // The first read: "not a database" shows here.
  const int version = mode_ == Mode::read_only ? read_only_version() : user_version(db_, path_);
  if (version > kSchemaVersion)
    fail(
        "tuning database '{}' has schema version {}, newer than this build of tgemm supports "
        "(version {}); use a newer tgemm, or another database file",
        path_, version, kSchemaVersion);
  check_integrity();
  if (version > 0) refuse_foreign_objects(db_, path_);
  file_version_ = version;

  if (mode_ == Mode::read_only) {
    if (version == 0)
      fail("'{}' is not a tgemm tuning database (it has no tgemm schema; tgemm-tune creates one)",
           path_);
    if (version < kOldestReadableVersion)
      fail(
          "tuning database '{}' has schema version {} but this build reads versions {} to {}; "
          "open it once read-write (e.g. with tgemm-tune) to migrate it",
          path_, version, kOldestReadableVersion, kSchemaVersion);
    if (version < kSchemaVersion) migrate_a_copy_in_memory();
    return;
  }
  // A current file needs no write lock, so opening never waits behind a running tuner.
  if (version < kSchemaVersion) migrate();
  file_version_ = kSchemaVersion;
  // WAL lets the dispatcher read while a tuner writes; NORMAL sync is safe under WAL. The last
  // writer to close goes back to a rollback journal (leave_wal_mode).
  enter_wal_mode();
  exec(db_, path_, "set synchronous mode", "PRAGMA synchronous = NORMAL");
}

namespace {

// What `pragma` (quick_check or integrity_check) finds wrong, "" when nothing. A page too
// damaged to walk fails the check itself (SQLITE_CORRUPT): the same verdict.
std::string integrity_report(sqlite3* db, const std::string& path, const char* pragma) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, pragma, -1, &stmt, nullptr);
  std::string problems;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) break;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    const std::string line = text ? text : "";
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
    fail_sqlite(db, path, rc, fmt::format("check it for damage ({})", pragma));
  if (rc != SQLITE_DONE)
    problems += (problems.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db));
  return problems;
}

}  // namespace

// PRAGMA quick_check: damaged pages are reported on open, not when a query happens on them.
void TuningDb::check_integrity() {
  const std::string problems = integrity_report(db_, path_, "PRAGMA quick_check(3)");
  if (!problems.empty())
    fail(
        "tuning database '{}' is damaged (PRAGMA quick_check: {}); restore it from a copy, or "
        "move it aside and tune again",
        path_, problems);
}

std::string TuningDb::integrity_problems() {
  std::string problems = integrity_report(db_, path_, "PRAGMA integrity_check(5)");
  if (!problems.empty()) problems = "PRAGMA integrity_check: " + problems;
  Statement s(db_, path_, "check its references (PRAGMA foreign_key_check)",
              "PRAGMA foreign_key_check");
  for (int shown = 0; s.step() && shown < 5; ++shown)
    problems += fmt::format("{}{} row {} refers to a missing {} row",
                            problems.empty() ? "PRAGMA foreign_key_check: " : "; ", s.text_at(0),
                            s.int_at(1), s.text_at(2));
  return problems;
}

// A reader of an older file (an installed database, read-only) reads a migrated copy held in
// memory, so every query sees this build's schema and the file itself is never written.
void TuningDb::migrate_a_copy_in_memory() {
  sqlite3* memory = nullptr;
  int rc =
      sqlite3_open_v2(":memory:", &memory, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(memory);
    fail("cannot open an in-memory copy of tuning database '{}' to migrate it", path_);
  }
  sqlite3_backup* copy = sqlite3_backup_init(memory, "main", db_, "main");
  rc = copy ? sqlite3_backup_step(copy, -1) : sqlite3_errcode(memory);
  if (copy) sqlite3_backup_finish(copy);
  if (rc != SQLITE_DONE) {
    sqlite3_close_v2(memory);
    fail_sqlite(db_, path_, rc, "copy the database into memory to migrate it");
  }
  sqlite3_close_v2(db_);
  db_ = memory;
  sqlite3_extended_result_codes(db_, 1);
  register_checksum_function(db_, path_);
  exec(db_, path_, "enable foreign keys", "PRAGMA foreign_keys = ON");
  migrate();
  file_version_ = kSchemaVersion;
}

void TuningDb::migrate() {
  exec(db_, path_, "start the schema migration", "BEGIN IMMEDIATE");
  try {
    // Read again under the write lock: another tuner may have created or migrated the schema
    // since the first look, and only now can the check and the creation not be split.
    const int version = user_version(db_, path_);
    if (version > kSchemaVersion)
      fail(
          "tuning database '{}' has schema version {}, newer than this build of tgemm supports "
          "(version {})",
          path_, version, kSchemaVersion);
    if (version == 0) {
      Statement objects(db_, path_, "inspect the schema",
                        "SELECT type, name FROM sqlite_schema ORDER BY type = 'table' DESC, name "
                        "LIMIT 1");
      if (objects.step())
        fail(
            "'{}' is a SQLite database but not a tgemm tuning database (user_version 0, has "
            "{} '{}'); refusing to add tables to it",
            path_, objects.text_at(0), objects.text_at(1));
    }
    apply_migrations(db_, path_, version);
    if (version < kSchemaVersion) {
      // PRAGMA takes no bound values; the number is this build's constant.
      const std::string set_version = fmt::format("PRAGMA user_version = {}", kSchemaVersion);
      exec(db_, path_, "record the schema version", set_version.c_str());
    }
    exec(db_, path_, "commit the schema migration", "COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

TuningDb::~TuningDb() {
  if (!db_) return;
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (mode_ == Mode::read_write) leave_wal_mode();
  sqlite3_close_v2(db_);
}

// Changing the journal mode needs the file to itself for a moment, and SQLite fails it as
// busy without calling the busy handler; so wait here, as long as any other write would.
void TuningDb::enter_wal_mode() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms_);
  while (true) {
    const int rc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
      fail_sqlite(db_, path_, rc, "switch to WAL mode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A finished file in rollback-journal mode is one self-contained file that any user can read
// from a read-only folder. Only the last connection can switch (it needs the file to itself),
// so any other one fails at once and leaves it to that one.
void TuningDb::leave_wal_mode() {
  sqlite3_busy_timeout(db_, 0);
  sqlite3_exec(db_, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
}

std::string TuningDb::binary_columns() const {
  return std::string(kBinaryColumns) +
         (file_version_ >= kChecksumVersion ? ", b.checksum" : ", NULL") +
         (file_version_ >= kCodeHashVersion ? ", b.code_hash" : ", NULL");
}

int64_t TuningDb::begin_run(const std::string& command_line, const std::string& tool_version,
                            const std::string& arch) {
  Statement s(db_, path_, "record a run",
              "INSERT INTO runs (command_line, tool_version, arch) VALUES (?1, ?2, ?3) "
              "RETURNING id");
  s.bind(1, command_line).bind(2, tool_version).bind(3, arch);
  return s.single_int();
}

void TuningDb::finish_run(int64_t run_id, const std::string& summary) {
  Statement s(db_, path_, "finish a run",
              "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), summary = ?2 "
              "WHERE id = ?1");
  s.bind(1, run_id).bind(2, summary).run();
  if (sqlite3_changes(db_) == 0)
    fail("tuning database '{}' has no run {} to finish", path_, run_id);
}

int64_t TuningDb::upsert_device(const DeviceInfo& d) {
  // The natural key keeps the id; clocks and versions follow the latest run (driver upgrades).
  Statement s(db_, path_, "record a device",
              "INSERT INTO devices (name, arch, sm_count, l2_bytes, clock_khz, memory_clock_khz, "
              "driver_version, runtime_version, smem_per_block_optin, smem_per_sm, regs_per_sm, "
              "max_threads_per_block) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
              "ON CONFLICT (name, arch, sm_count) DO UPDATE SET l2_bytes = excluded.l2_bytes, "
              "clock_khz = excluded.clock_khz, memory_clock_khz = excluded.memory_clock_khz, "
              "driver_version = excluded.driver_version, "
              "runtime_version = excluded.runtime_version, "
              "smem_per_block_optin = excluded.smem_per_block_optin, "
              "smem_per_sm = excluded.smem_per_sm, regs_per_sm = excluded.regs_per_sm, "
              "max_threads_per_block = excluded.max_threads_per_block RETURNING id");
  s.bind(1, d.name).bind(2, d.arch).bind(3, d.sm_count).bind(4, d.l2_bytes).bind(5, d.clock_khz);
  s.bind(6, d.memory_clock_khz).bind(7, d.driver_version).bind(8, d.runtime_version);
  s.bind(9, d.limits.smem_per_block_optin).bind(10, d.limits.smem_per_sm);
  s.bind(11, d.limits.regs_per_sm).bind(12, d.limits.max_threads_per_block);
  return s.single_int();
}

std::vector<DeviceInfo> TuningDb::devices() {
  Statement s(db_, path_, "read the devices",
              "SELECT name, arch, sm_count, l2_bytes, clock_khz, memory_clock_khz, "
              "driver_version, id FROM devices ORDER BY id");
  std::vector<DeviceInfo> out;
  while (s.step()) {
    if (!device_usable(s.int_at(7))) continue;
    DeviceInfo d;
    d.name = s.text_at(0);
    d.arch = s.text_at(1);
    d.sm_count = int(s.int_at(2));
    d.l2_bytes = s.int_at(3);
    d.clock_khz = int(s.int_at(4));
    d.memory_clock_khz = int(s.int_at(5));
    d.driver_version = int(s.int_at(6));
    out.push_back(std::move(d));
  }
  return out;
}

int64_t TuningDb::upsert_kernel(const KernelConfig& config, const std::string& template_hash) {
  const std::string name = config.canonical_name();
  // Look first: the tuner asks for every config of every run, and a read takes no write lock.
  {
    Statement find(db_, path_, "look up a kernel",
                   "SELECT id FROM kernels WHERE template_hash = ?1 AND canonical_name = ?2");
    find.bind(1, template_hash).bind(2, name);
    if (find.step()) return find.int_at(0);
  }
  Statement s(db_, path_, "record a kernel",
              "INSERT INTO kernels (template, template_hash, canonical_name, params, library) "
              "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (template_hash, canonical_name) "
              "DO UPDATE SET template = kernels.template RETURNING id");
  s.bind(1, config.template_name)
      .bind(2, template_hash)
      .bind(3, name)
      .bind(4, config.params_text())
      .bind(5, library_of(config.template_name));
  return s.single_int();
}

int64_t TuningDb::upsert_problem(const Problem& problem) {
  problem.validate();
  const std::string key = problem.key();
  {
    Statement find(db_, path_, "look up a problem", "SELECT id FROM problems WHERE key = ?1");
    find.bind(1, key);
    if (find.step()) return find.int_at(0);
  }
  Statement s(db_, path_, "record a problem",
              "INSERT INTO problems (key, dtype, layout, m, n, k, lda, ldb, ldc, align_a, "
              "align_b, align_c, beta_zero) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
              "?12, ?13) ON CONFLICT (key) DO UPDATE SET key = problems.key RETURNING id");
  s.bind(1, key).bind(2, problem.types.name()).bind(3, problem.layout());
  s.bind(4, problem.m).bind(5, problem.n).bind(6, problem.k);
  s.bind(7, problem.lda).bind(8, problem.ldb).bind(9, problem.ldc);
  s.bind(10, problem.align_a).bind(11, problem.align_b).bind(12, problem.align_c);
  s.bind(13, problem.beta_zero);
  return s.single_int();
}

std::optional<BinaryRecord> TuningDb::find_binary(const std::string& cache_key) {
  Statement s(db_, path_, "look up a binary",
              fmt::format("SELECT {} FROM binaries b WHERE b.cache_key = ?1", binary_columns()));
  s.bind(1, cache_key);
  return s.step() ? checked_binary_at(s) : std::nullopt;
}

int64_t TuningDb::store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                               BinaryStatus status, const std::string& reason) {
  if (compiled.cache_key.empty()) fail("cannot store a binary without a cache key");
  if (status == BinaryStatus::ok && compiled.cubin.empty())
    fail("cannot store binary {} as ok: it has no cubin", compiled.cache_key);
  const std::string why = reason.empty() && status != BinaryStatus::ok ? compiled.error : reason;
  // The same key compiled again (a second tuner, a forced rebuild) replaces the row, keeping
  // its id so trials that point at it stay valid.
  Statement s(db_, path_, "store a binary",
              "INSERT INTO binaries (kernel_id, arch, nvrtc_version, op_a, op_b, entry, options, "
              "cache_key, cubin, registers, smem_bytes, stack_bytes, spill_store_bytes, "
              "spill_load_bytes, resources_found, compile_ms, status, reason, log, run_id, "
              "types, checksum, code_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
              "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23) "
              "ON CONFLICT (cache_key) DO UPDATE SET "
              "types = excluded.types, "
              "kernel_id = excluded.kernel_id, arch = excluded.arch, "
              "nvrtc_version = excluded.nvrtc_version, op_a = excluded.op_a, op_b = excluded.op_b, "
              "entry = excluded.entry, options = excluded.options, cubin = excluded.cubin, "
              "registers = excluded.registers, smem_bytes = excluded.smem_bytes, "
              "stack_bytes = excluded.stack_bytes, spill_store_bytes = excluded.spill_store_bytes, "
              "spill_load_bytes = excluded.spill_load_bytes, "
              "resources_found = excluded.resources_found, compile_ms = excluded.compile_ms, "
              "status = excluded.status, reason = excluded.reason, log = excluded.log, "
              "run_id = excluded.run_id, checksum = excluded.checksum, "
              "code_hash = excluded.code_hash, "
              "created_at = excluded.created_at RETURNING id");
  const PtxasResources& r = compiled.resources;
  s.bind(1, kernel_id).bind(2, compiled.arch).bind(3, compiled.nvrtc_version);
  s.bind(4, to_string(compiled.op_a)).bind(5, to_string(compiled.op_b)).bind(6, compiled.entry);
  s.bind(7, compiled.options).bind(8, compiled.cache_key).bind_blob(9, compiled.cubin);
  s.bind(10, r.registers).bind(11, r.smem_bytes).bind(12, r.stack_frame_bytes);
  s.bind(13, r.spill_store_bytes).bind(14, r.spill_load_bytes).bind(15, r.found);
  s.bind(16, compiled.compile_ms).bind(17, to_string(status)).bind(18, why);
  s.bind(19, compiled.log).bind_run(20, run_id).bind(21, compiled.types.name());
  if (compiled.cubin.empty())
    s.bind_null(22);
  else
    s.bind(22, cubin_checksum(compiled.cubin));
  if (compiled.code_hash.empty())
    s.bind_null(23);
  else
    s.bind(23, compiled.code_hash);
  return s.single_int();
}

std::vector<TrialBinary> TuningDb::trial_binaries() {
  Statement s(db_, path_, "read the binaries trials ran",
              fmt::format("SELECT {}, kr.id, kr.template, kr.params, kr.template_hash, r.trials "
                          "FROM (SELECT binary_id, count(*) AS trials FROM trials "
                          "WHERE binary_id IS NOT NULL GROUP BY binary_id) r "
                          "JOIN binaries b ON b.id = r.binary_id "
                          "JOIN kernels kr ON kr.id = b.kernel_id ORDER BY b.id",
                          binary_columns()));
  constexpr int kernel = 23;  // the first column after binary_columns()
  std::vector<TrialBinary> out;
  SkippedRows skipped(path_, "read the binaries trials ran");
  while (s.step()) {
    TrialBinary b;
    if (!skipped.keep([&] {
          b.binary = binary_at(s);
          b.config = decoded(s, "kernels", s.int_at(kernel), "params", [&] {
            return KernelConfig::from_params_text(s.text_at(kernel + 1), s.text_at(kernel + 2));
          });
        }))
      continue;
    const std::string& arch = b.binary.compiled.arch;
    if (!checks_.usable(fmt::format("kernels row {} (on {})", s.int_at(kernel), arch),
                        checks_.config_rejection(s.int_at(kernel), b.config, arch)))
      continue;
    b.template_hash = s.text_at(kernel + 3);
    b.trials = s.int_at(kernel + 4);
    out.push_back(std::move(b));
  }
  return out;
}

int64_t TuningDb::rekey_trials(int64_t run_id, const TrialBinary& stored,
                               const std::string& template_hash, const CompiledKernel& current,
                               const std::function<CurrentBuild(const DeviceInfo&)>& current_for) {
  const int64_t kernel = upsert_kernel(stored.config, template_hash);
  const int64_t binary =
      store_binary(run_id, kernel, current, stored.binary.status, stored.binary.reason);
  // The trials to move, with what judging them current takes: status, versions, device.
  Statement movable(
      db_, path_, "find the trials to re-key",
      "SELECT t.id, t.problem_id, t.device_id, t.status = 'ok' AND t.time_median_us > 0, "
      "t.nvrtc_version, t.driver_version, d.name, d.arch, d.sm_count, d.driver_version "
      "FROM trials t JOIN devices d ON d.id = t.device_id "
      "WHERE t.binary_id = ?1 AND t.kernel_id = ?2 AND NOT EXISTS (SELECT 1 FROM trials o "
      "WHERE o.problem_id = t.problem_id AND o.device_id = t.device_id AND o.kernel_id = ?3)");
  movable.bind(1, stored.binary.id).bind(2, stored.binary.kernel_id).bind(3, kernel);
  struct Movable {
    int64_t trial, problem, device;
    bool measured_ok;
    MeasuredWith with;
  };
  std::vector<Movable> trials;             // read whole before any is updated
  std::map<int64_t, CurrentBuild> builds;  // by device id
  while (movable.step()) {
    Movable m{movable.int_at(0), movable.int_at(1), movable.int_at(2), movable.int_at(3) != 0, {}};
    if (!movable.is_null(4)) m.with.nvrtc_version = movable.text_at(4);
    if (!movable.is_null(5)) m.with.driver_version = int(movable.int_at(5));
    if (!builds.count(m.device)) {
      DeviceInfo d;
      d.name = movable.text_at(6);
      d.arch = movable.text_at(7);
      d.sm_count = int(movable.int_at(8));
      d.driver_version = int(movable.int_at(9));
      builds[m.device] = current_for(d);
    }
    trials.push_back(std::move(m));
  }
  Statement move(db_, path_, "re-key a trial",
                 "UPDATE trials SET kernel_id = ?2, binary_id = ?3 WHERE id = ?1");
  std::set<std::pair<int64_t, int64_t>> gained;  // (problem, device) with a current ok trial
  for (const Movable& m : trials) {
    move.reset();
    move.bind(1, m.trial).bind(2, kernel).bind(3, binary).run();
    if (m.measured_ok &&
        !builds[m.device].stale_reason(stored.config.template_name, template_hash, m.with))
      gained.insert({m.problem, m.device});
  }
  // Only where a current ok trial now exists: there the best stays a row, never dropped.
  for (auto [problem, device] : gained) update_best(problem, device, &builds[device]);
  return int64_t(trials.size());
}

bool TuningDb::has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id) {
  Statement s(db_, path_, "look up a trial",
              "SELECT 1 FROM trials WHERE problem_id = ?1 AND kernel_id = ?2 AND device_id = ?3");
  s.bind(1, problem_id).bind(2, kernel_id).bind(3, device_id);
  return s.step();
}

int64_t TuningDb::record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id,
                               int64_t device_id, std::optional<int64_t> binary_id,
                               const TrialResult& trial, const MeasuredWith& with) {
  // Recording the same (problem, kernel, device) again replaces the result and keeps the id,
  // so a deliberate re-measurement wins; call update_best afterwards.
  Statement s(db_, path_, "record a trial",
              "INSERT INTO trials (run_id, problem_id, kernel_id, device_id, binary_id, status, "
              "error, time_min_us, time_median_us, time_max_us, runs, tflops, max_rel_error, "
              "nvrtc_version, driver_version) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
              "ON CONFLICT (problem_id, kernel_id, device_id) DO UPDATE SET "
              "run_id = excluded.run_id, binary_id = excluded.binary_id, status = excluded.status, "
              "error = excluded.error, time_min_us = excluded.time_min_us, "
              "time_median_us = excluded.time_median_us, time_max_us = excluded.time_max_us, "
              "runs = excluded.runs, tflops = excluded.tflops, "
              "max_rel_error = excluded.max_rel_error, nvrtc_version = excluded.nvrtc_version, "
              "driver_version = excluded.driver_version, created_at = excluded.created_at "
              "RETURNING id");
  s.bind_run(1, run_id).bind(2, problem_id).bind(3, kernel_id).bind(4, device_id);
  s.bind(5, binary_id).bind(6, to_string(trial.status)).bind(7, trial.error);
  s.bind(8, trial.time_min_us).bind(9, trial.time_median_us).bind(10, trial.time_max_us);
  s.bind(11, trial.runs).bind(12, trial.tflops).bind(13, trial.max_rel_error);
  if (with.nvrtc_version.empty())
    s.bind_null(14);
  else
    s.bind(14, with.nvrtc_version);
  if (with.driver_version == 0)
    s.bind_null(15);
  else
    s.bind(15, with.driver_version);
  return s.single_int();
}

void TuningDb::record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id,
                                  double median_us, std::optional<double> sgemm_rel_error) {
  // A time without an error (a comparison run) keeps the error measured before.
  Statement s(db_, path_, "record a cuBLAS time",
              "INSERT INTO cublas_times (problem_id, device_id, run_id, median_us, "
              "sgemm_rel_error) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (problem_id, device_id) "
              "DO UPDATE SET run_id = excluded.run_id, median_us = excluded.median_us, "
              "sgemm_rel_error = coalesce(excluded.sgemm_rel_error, "
              "cublas_times.sgemm_rel_error), measured_at = excluded.measured_at");
  s.bind(1, problem_id).bind(2, device_id).bind_run(3, run_id).bind(4, median_us);
  s.bind(5, sgemm_rel_error).run();
}

void TuningDb::store_ceilings(int64_t run_id, int64_t device_id,
                              const std::vector<DeviceCeiling>& ceilings) {
  for (const DeviceCeiling& c : ceilings) {
    if (!(c.value > 0))
      fail("cannot store device ceiling '{}' of {}: it must be positive", c.kind, c.value);
    Statement s(db_, path_, "store a device ceiling",
                "INSERT INTO device_ceilings (device_id, kind, value, source, detail, run_id) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (device_id, kind) DO UPDATE SET "
                "value = excluded.value, source = excluded.source, detail = excluded.detail, "
                "run_id = excluded.run_id, measured_at = excluded.measured_at");
    s.bind(1, device_id).bind(2, c.kind).bind(3, c.value).bind(4, c.source).bind(5, c.detail);
    s.bind_run(6, run_id).run();
  }
}

bool TuningDb::has_ceilings(int64_t device_id) {
  Statement s(db_, path_, "look up the device ceilings",
              "SELECT 1 FROM device_ceilings WHERE device_id = ?1 LIMIT 1");
  s.bind(1, device_id);
  return s.step();
}

std::vector<DeviceCeiling> TuningDb::ceilings(const std::string& device_name,
                                              const std::string& arch) {
  Statement s(db_, path_, "read the device ceilings",
              "SELECT d.name, d.arch, c.kind, c.value, c.source, c.detail, c.measured_at, "
              "d.id FROM device_ceilings c JOIN devices d ON d.id = c.device_id "
              "WHERE (?1 = '' OR d.name = ?1) AND (?2 = '' OR d.arch = ?2) "
              "ORDER BY d.name, d.arch, c.kind");
  s.bind(1, device_name).bind(2, arch);
  std::vector<DeviceCeiling> out;
  while (s.step()) {
    const double value = s.double_at(3);
    if (!device_usable(s.int_at(7)) ||
        !checks_.usable(
            fmt::format("device_ceilings row '{}' of devices row {}", s.text_at(2), s.int_at(7)),
            std::isfinite(value) && value > 0
                ? std::nullopt
                : std::optional(fmt::format("{} is not a positive finite rate", value))))
      continue;
    DeviceCeiling c;
    c.device_name = s.text_at(0);
    c.arch = s.text_at(1);
    c.kind = s.text_at(2);
    c.value = s.double_at(3);
    c.source = printable(s.text_at(4));
    c.detail = printable(s.text_at(5));
    c.measured_at = s.text_at(6);
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// The metric columns of kernel_profiles, in the order store_profiles binds them.
constexpr const char* kProfileMetricColumns =
    "duration_us, sm_throughput_pct, memory_throughput_pct, dram_read_bytes, dram_write_bytes, "
    "global_load_sectors, global_load_requests, global_store_sectors, global_excess_sectors, "
    "shared_load_bank_conflicts, shared_store_bank_conflicts, achieved_occupancy_pct, "
    "fma_pipe_pct, tensor_pipe_pct, registers";

std::vector<std::optional<double>*> profile_metrics_of(KernelProfile& p) {
  return {&p.duration_us,
          &p.sm_throughput_pct,
          &p.memory_throughput_pct,
          &p.dram_read_bytes,
          &p.dram_write_bytes,
          &p.global_load_sectors,
          &p.global_load_requests,
          &p.global_store_sectors,
          &p.global_excess_sectors,
          &p.shared_load_bank_conflicts,
          &p.shared_store_bank_conflicts,
          &p.achieved_occupancy_pct,
          &p.fma_pipe_pct,
          &p.tensor_pipe_pct,
          &p.registers};
}

std::string stalls_text(const std::vector<StallReason>& stalls) {
  std::string out;
  for (const StallReason& s : stalls)
    out += fmt::format("{}{}={:.6g}", out.empty() ? "" : ";", s.name, s.value);
  return out;
}

std::vector<StallReason> parse_stalls(const std::string& text) {
  std::vector<StallReason> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(';', at), text.size());
    const std::string pair = text.substr(at, end - at);
    const size_t eq = pair.find('=');
    if (eq == std::string::npos) fail("stall reason '{}' is not name=value", pair);
    char* stop = nullptr;
    const double value = std::strtod(pair.c_str() + eq + 1, &stop);
    if (stop == pair.c_str() + eq + 1) fail("stall reason '{}' has no number", pair);
    out.push_back({pair.substr(0, eq), value});
    at = end + 1;
  }
  return out;
}

}  // namespace

void TuningDb::store_profiles(int64_t problem_id, int64_t device_id,
                              const std::vector<KernelProfile>& profiles) {
  begin_transaction();
  try {
    Statement(db_, path_, "replace the kernel profiles",
              "DELETE FROM kernel_profiles WHERE problem_id = ?1 AND device_id = ?2")
        .bind(1, problem_id)
        .bind(2, device_id)
        .run();
    for (KernelProfile p : profiles) {
      if (p.contender != kTgemmContender && p.contender != kCublasContender)
        fail("cannot store a kernel profile of '{}' (expected {} or {})", p.contender,
             kTgemmContender, kCublasContender);
      Statement s(db_, path_, "store a kernel profile",
                  fmt::format("INSERT INTO kernel_profiles (problem_id, device_id, contender, "
                              "config, kernel_name, ncu_version, stall_reasons, {}) VALUES (?1, "
                              "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                              "?17, ?18, ?19, ?20, ?21, ?22)",
                              kProfileMetricColumns));
      s.bind(1, problem_id).bind(2, device_id).bind(3, p.contender).bind(4, p.config);
      s.bind(5, p.kernel_name).bind(6, p.ncu_version).bind(7, stalls_text(p.stalls));
      int index = 8;
      for (std::optional<double>* metric : profile_metrics_of(p)) s.bind(index++, *metric);
      s.run();
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
}

std::vector<KernelProfile> TuningDb::profiles(const std::string& device_name,
                                              const std::string& arch) {
  Statement s(db_, path_, "read the kernel profiles",
              fmt::format("SELECT x.rowid, p.key, d.name, d.arch, x.contender, x.config, "
                          "x.kernel_name, x.ncu_version, x.stall_reasons, x.profiled_at, {} "
                          "FROM kernel_profiles x JOIN problems p ON p.id = x.problem_id JOIN "
                          "devices d ON d.id = x.device_id WHERE (?1 = '' OR d.name = ?1) AND "
                          "(?2 = '' OR d.arch = ?2) ORDER BY d.name, d.arch, p.key, "
                          "x.contender = 'cublas'",
                          kProfileMetricColumns));
  s.bind(1, device_name).bind(2, arch);
  std::vector<KernelProfile> out;
  SkippedRows skipped(path_, "read the kernel profiles");
  while (s.step()) {
    KernelProfile p;
    const int64_t id = s.int_at(0);
    if (!skipped.keep([&] {
          p.stalls = decoded(s, "kernel_profiles", id, "stall_reasons",
                             [&] { return parse_stalls(s.text_at(8)); });
          if (s.text_at(4) != kTgemmContender && s.text_at(4) != kCublasContender)
            bad_row(s, "kernel_profiles", id, "contender",
                    fmt::format("'{}' is neither {} nor {}", s.text_at(4), kTgemmContender,
                                kCublasContender));
        }))
      continue;
    p.problem_key = s.text_at(1);
    p.device_name = s.text_at(2);
    p.arch = s.text_at(3);
    p.contender = s.text_at(4);
    p.config = s.text_at(5);
    p.kernel_name = s.text_at(6);
    p.ncu_version = s.text_at(7);
    p.profiled_at = s.text_at(9);
    int col = 10;
    for (std::optional<double>* metric : profile_metrics_of(p)) {
      if (!s.is_null(col)) *metric = s.double_at(col);
      ++col;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void TuningDb::update_best(int64_t problem_id, int64_t device_id, const CurrentBuild* current) {
  // The fastest ok trial (one without a time is not a measurement), skipping stale ones when
  // `current` says what is current. Replacing or deleting the row are single statements, so
  // a reader never sees a wrong best.
  Statement ranked(db_, path_, "update the best trial",
                   fmt::format("SELECT t.id, kr.template, kr.template_hash, t.nvrtc_version, "
                               "t.driver_version FROM trials t JOIN kernels kr ON kr.id = "
                               "t.kernel_id WHERE t.problem_id = ?1 AND t.device_id = ?2 AND {} "
                               "ORDER BY t.time_median_us, t.time_min_us, t.id",
                               measured_trials()));
  ranked.bind(1, problem_id).bind(2, device_id);
  std::optional<int64_t> best;
  while (!best && ranked.step()) {
    MeasuredWith with;
    if (!ranked.is_null(3)) with.nvrtc_version = ranked.text_at(3);
    if (!ranked.is_null(4)) with.driver_version = int(ranked.int_at(4));
    if (!current || !current->stale_reason(ranked.text_at(1), ranked.text_at(2), with))
      best = ranked.int_at(0);
  }
  if (best) {
    Statement pick(db_, path_, "update the best trial",
                   "INSERT OR REPLACE INTO best (problem_id, device_id, trial_id) "
                   "VALUES (?1, ?2, ?3)");
    pick.bind(1, problem_id).bind(2, device_id).bind(3, *best).run();
  } else {
    Statement drop(db_, path_, "update the best trial",
                   "DELETE FROM best WHERE problem_id = ?1 AND device_id = ?2");
    drop.bind(1, problem_id).bind(2, device_id).run();
  }
}

std::optional<MeasuredWith> TuningDb::trial_measured_with(int64_t problem_id, int64_t kernel_id,
                                                          int64_t device_id) {
  Statement s(db_, path_, "look up a trial",
              "SELECT nvrtc_version, driver_version FROM trials WHERE problem_id = ?1 AND "
              "kernel_id = ?2 AND device_id = ?3");
  s.bind(1, problem_id).bind(2, kernel_id).bind(3, device_id);
  if (!s.step()) return std::nullopt;
  MeasuredWith with;
  if (!s.is_null(0)) with.nvrtc_version = s.text_at(0);
  if (!s.is_null(1)) with.driver_version = int(s.int_at(1));
  return with;
}

void TuningDb::copy_to(const std::string& dest_path) {
  if (std::filesystem::exists(dest_path))
    fail("cannot copy tuning database '{}' to '{}': that file exists", path_, dest_path);
  sqlite3* dest = nullptr;
  int rc =
      sqlite3_open_v2(dest_path.c_str(), &dest,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, nullptr);
  // sqlite3_close is safe on the handle even when the open failed.
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(dest, sqlite3_close);
  if (rc != SQLITE_OK)
    fail("cannot copy tuning database '{}' to '{}': {}", path_, dest_path, sqlite3_errmsg(dest));
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", db_, "main");
  if (!backup)
    fail("cannot copy tuning database '{}' to '{}': {}", path_, dest_path, sqlite3_errmsg(dest));
  rc = sqlite3_backup_step(backup, -1);  // every page in one step: one consistent snapshot
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE)
    fail("cannot copy tuning database '{}' to '{}': {}", path_, dest_path, sqlite3_errstr(rc));
  // A writable connection checks the CHECK constraints a reader of the source could not.
  if (const std::string problems = integrity_report(dest, dest_path, "PRAGMA quick_check(3)");
      !problems.empty())
    fail("tuning database '{}' is damaged: its copy fails PRAGMA quick_check: {}", path_, problems);
}

PruneCounts TuningDb::prune(const PruneOptions& options) {
  PruneCounts counts;
  const char* what = "prune the database";
  auto run = [&](const char* sql) {
    exec(db_, path_, what, sql);
    return int64_t(sqlite3_changes64(db_));
  };
  begin_transaction();
  try {
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
      Statement(db_, path_, what,
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
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  exec(db_, path_, "compact the database", "VACUUM");
  return counts;
}

// Deletes the trials `current_for` (per device, by its stored driver) finds stale, then
// recomputes the best of every (problem, device) that lost one. Inside prune's transaction.
int64_t TuningDb::drop_stale_trials(
    const std::function<CurrentBuild(const DeviceInfo&)>& current_for) {
  const BuildsByDevice builds(devices(), current_for);
  std::set<std::pair<int64_t, int64_t>> touched;  // (problem, device)
  int64_t dropped = 0;
  for (const TrialRecord& t : trials()) {
    if (!builds.stale_reason(t.device_name, t.arch, t.trial.config.template_name, t.template_hash,
                             t.measured_with))
      continue;
    Statement(db_, path_, "drop a stale trial", "DELETE FROM best WHERE trial_id = ?1")
        .bind(1, t.id)
        .run();
    Statement drop(db_, path_, "drop a stale trial",
                   "DELETE FROM trials WHERE id = ?1 RETURNING problem_id, device_id");
    drop.bind(1, t.id);
    if (drop.step()) touched.insert({drop.int_at(0), drop.int_at(1)});
    ++dropped;
  }
  for (auto [problem_id, device_id] : touched) update_best(problem_id, device_id);
  return dropped;
}

int64_t TuningDb::forget_problem(const std::string& problem_key) {
  begin_transaction();
  try {
    const char* what = "forget a problem";
    auto count = Statement(db_, path_, what,
                           "SELECT count(*) FROM trials t JOIN problems p ON p.id = t.problem_id "
                           "WHERE p.key = ?1");
    const int64_t trials = count.bind(1, problem_key).single_int();
    for (const char* sql :
         {"DELETE FROM best WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM trials WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM cublas_times WHERE problem_id IN (SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM kernel_profiles WHERE problem_id IN "
          "(SELECT id FROM problems WHERE key = ?1)",
          "DELETE FROM problems WHERE key = ?1"})
      Statement(db_, path_, what, sql).bind(1, problem_key).run();
    commit();
    return trials;
  } catch (...) {
    rollback();
    throw;
  }
}

bool TuningDb::device_usable(int64_t device_id) {
  if (!checks_.unusable_devices) {
    checks_.unusable_devices.emplace();
    // A GPU's name and arch hold no control characters: such a row is planted (escape
    // sequences for the terminal that prints it) or damaged.
    Statement names(db_, path_, "read the devices", "SELECT id, name, arch FROM devices");
    while (names.step())
      for (const std::string& text : {names.text_at(1), names.text_at(2)})
        if (printable(text) != text)
          (*checks_.unusable_devices)[names.int_at(0)] =
              fmt::format("'{}' holds control characters", printable(text));
    // The dispatcher and the tools know a GPU by its name and arch: a later row with both is
    // a second copy of every best (the schema's key adds the SM count, which differs there).
    Statement s(db_, path_, "read the devices",
                "SELECT d.id, d.name, d.arch, f.id FROM devices d JOIN devices f ON f.name = "
                "d.name AND f.arch = d.arch AND f.id < d.id GROUP BY d.id");
    while (s.step())
      checks_.unusable_devices->try_emplace(
          s.int_at(0), fmt::format("device '{}' ({}) repeats devices row {}",
                                   printable(s.text_at(1)), printable(s.text_at(2)), s.int_at(3)));
  }
  auto it = checks_.unusable_devices->find(device_id);
  return it == checks_.unusable_devices->end() ||
         checks_.usable(fmt::format("devices row {}", device_id), it->second);
}

bool TuningDb::trial_usable(int64_t trial_id, int64_t kernel_id, const TrialResult& trial,
                            int64_t device_id, const std::string& arch) {
  return device_usable(device_id) &&
         checks_.usable(fmt::format("kernels row {} (on {})", kernel_id, arch),
                        checks_.config_rejection(kernel_id, trial.config, arch)) &&
         checks_.usable(fmt::format("trials row {}", trial_id), implausible_measurement(trial));
}

namespace {

// A cuBLAS time, or an f32x3 problem's SGEMM error, that is no measurement.
std::optional<std::string> implausible_cublas(const std::optional<double>& median_us,
                                              const std::optional<double>& sgemm_rel_error) {
  if (median_us && !(std::isfinite(*median_us) && *median_us > 0))
    return fmt::format("a median time of {} us is not a positive finite time", *median_us);
  if (sgemm_rel_error && !(std::isfinite(*sgemm_rel_error) && *sgemm_rel_error >= 0))
    return fmt::format("an SGEMM error of {} is not a finite non-negative number",
                       *sgemm_rel_error);
  return std::nullopt;
}

}  // namespace

int64_t TuningDb::forget_vendor_calls() {
  begin_transaction();
  try {
    const char* what = "forget the vendor calls";
    const char* vendor = "SELECT id FROM kernels WHERE library != 'tgemm'";
    std::vector<std::pair<int64_t, int64_t>> touched;
    Statement pairs(db_, path_, what,
                    fmt::format("SELECT DISTINCT problem_id, device_id FROM trials "
                                "WHERE kernel_id IN ({})",
                                vendor));
    while (pairs.step()) touched.emplace_back(pairs.int_at(0), pairs.int_at(1));
    Statement count(db_, path_, what,
                    fmt::format("SELECT count(*) FROM trials WHERE kernel_id IN ({})", vendor));
    const int64_t trials = count.single_int();
    Statement(db_, path_, what,
              fmt::format("DELETE FROM best WHERE trial_id IN "
                          "(SELECT id FROM trials WHERE kernel_id IN ({}))",
                          vendor))
        .run();
    Statement(db_, path_, what, fmt::format("DELETE FROM trials WHERE kernel_id IN ({})", vendor))
        .run();
    for (auto [problem_id, device_id] : touched) update_best(problem_id, device_id);
    commit();
    return trials;
  } catch (...) {
    rollback();
    throw;
  }
}

std::vector<BestEntry> TuningDb::best_entries(const std::string& problem_key,
                                              const std::string& device_name,
                                              const std::string& arch) {
  Statement s(db_, path_, "read the best trials",
              fmt::format("SELECT {}, {}, d.name, d.arch, kr.template_hash, c.median_us, "
                          "(SELECT count(*) FROM trials a WHERE a.problem_id = bs.problem_id "
                          "AND a.device_id = bs.device_id), c.sgemm_rel_error, d.id, "
                          "t.problem_id, t.device_id, kr.library "
                          "FROM best bs JOIN trials t ON t.id = bs.trial_id "
                          "JOIN problems p ON p.id = bs.problem_id "
                          "JOIN devices d ON d.id = bs.device_id "
                          "JOIN kernels kr ON kr.id = t.kernel_id "
                          "LEFT JOIN cublas_times c ON c.problem_id = bs.problem_id "
                          "AND c.device_id = bs.device_id "
                          "WHERE (?1 = '' OR p.key = ?1) AND (?2 = '' OR d.name = ?2) "
                          "AND (?3 = '' OR d.arch = ?3) "
                          "ORDER BY d.name, d.arch, p.dtype, p.layout, p.m, p.n, p.k, p.key",
                          kProblemColumns, kTrialColumns));
  s.bind(1, problem_key).bind(2, device_name).bind(3, arch);
  std::vector<BestEntry> out;
  constexpr int rest = kProblemColumnCount + kTrialColumnCount;
  SkippedRows skipped(path_, "read the best trials");
  // Our own fastest usable kernel beside a vendor best.
  Statement own(db_, path_, "read the fastest tgemm kernel",
                fmt::format("SELECT {}, kr.template_hash FROM trials t "
                            "JOIN kernels kr ON kr.id = t.kernel_id "
                            "WHERE t.problem_id = ?1 AND t.device_id = ?2 AND {} "
                            "AND kr.library = ?3 ORDER BY t.time_median_us, t.time_min_us, t.id",
                            kTrialColumns, measured_trials()));
  while (s.step()) {
    BestEntry e;
    if (!skipped.keep([&] {
          e.problem = problem_at(s, 0);
          e.trial = trial_at(s, kProblemColumnCount);
        }))
      continue;
    e.measured_with = measured_with_at(s, kProblemColumnCount);
    e.config = e.trial.config;
    e.device_name = s.text_at(rest);
    e.arch = s.text_at(rest + 1);
    e.template_hash = s.text_at(rest + 2);
    e.trial_count = s.int_at(rest + 4);
    const int64_t problem_id = s.int_at(0), device_id = s.int_at(rest + 6);
    const int64_t trial_id = s.int_at(kProblemColumnCount);
    std::optional<std::string> foreign;
    if (s.int_at(rest + 7) != problem_id || s.int_at(rest + 8) != device_id)
      foreign = fmt::format("its trial, trials row {}, is another problem's or device's", trial_id);
    if (!checks_.usable(
            fmt::format("best row of problems row {} on devices row {}", problem_id, device_id),
            foreign) ||
        !trial_usable(trial_id, s.int_at(kProblemColumnCount + 1), e.trial, device_id, e.arch))
      continue;
    std::optional<double> cublas_us, sgemm_error;
    if (!s.is_null(rest + 3)) cublas_us = s.double_at(rest + 3);
    if (!s.is_null(rest + 5)) sgemm_error = s.double_at(rest + 5);
    // A cuBLAS figure that is no measurement leaves the best without one.
    if (checks_.usable(fmt::format("cublas_times row of problems row {} on devices row {}",
                                   problem_id, device_id),
                       implausible_cublas(cublas_us, sgemm_error))) {
      e.cublas_median_us = cublas_us.value_or(0);
      e.cublas_rel_error = sgemm_error;
    }
    if (s.text_at(rest + 9) != kTgemmLibrary) {
      own.reset();
      own.bind(1, problem_id).bind(2, device_id).bind(3, kTgemmLibrary);
      while (own.step()) {
        TrialResult trial;
        if (!skipped.keep([&] { trial = trial_at(own, 0); }) ||
            !trial_usable(own.int_at(0), own.int_at(1), trial, device_id, e.arch))
          continue;
        e.tgemm_best = std::move(trial);
        e.tgemm_best_hash = own.text_at(kTrialColumnCount);
        break;
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<TrialRecord> TuningDb::trials(const std::string& problem_key,
                                          const std::string& device_name) {
  Statement s(db_, path_, "read the trials",
              fmt::format("SELECT {}, {}, t.id, d.name, d.arch, kr.template_hash, t.created_at, "
                          "d.id FROM trials t JOIN problems p ON p.id = t.problem_id "
                          "JOIN devices d ON d.id = t.device_id "
                          "JOIN kernels kr ON kr.id = t.kernel_id "
                          "WHERE (?1 = '' OR p.key = ?1) AND (?2 = '' OR d.name = ?2) "
                          "ORDER BY p.key, d.name, d.arch, t.status != 'ok', t.time_median_us, "
                          "kr.canonical_name",
                          kProblemColumns, kTrialColumns));
  s.bind(1, problem_key).bind(2, device_name);
  std::vector<TrialRecord> out;
  constexpr int rest = kProblemColumnCount + kTrialColumnCount;
  SkippedRows skipped(path_, "read the trials");
  while (s.step()) {
    TrialRecord r;
    if (!skipped.keep([&] {
          r.problem = problem_at(s, 0);
          r.trial = trial_at(s, kProblemColumnCount);
        }))
      continue;
    r.measured_with = measured_with_at(s, kProblemColumnCount);
    r.id = s.int_at(rest);
    r.device_name = s.text_at(rest + 1);
    r.arch = s.text_at(rest + 2);
    r.template_hash = s.text_at(rest + 3);
    r.created_at = s.text_at(rest + 4);
    if (!trial_usable(r.id, s.int_at(kProblemColumnCount + 1), r.trial, s.int_at(rest + 5), r.arch))
      continue;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The ids of `trials` as a JSON array, for "trial_id IN (SELECT value FROM json_each(?))": an
// export holds the trials that trials() could read, and its warning names the others.
std::string trial_ids_json(const std::vector<TrialRecord>& trials) {
  std::string json = "[";
  for (const TrialRecord& t : trials) json += fmt::format("{}{}", json.size() > 1 ? "," : "", t.id);
  return json + "]";
}

}  // namespace

TextTable TuningDb::trial_table() {
  Statement s(db_, path_, "export the trials",
              "SELECT * FROM trial_details WHERE trial_id IN (SELECT value FROM json_each(?1)) "
              "ORDER BY trial_id");
  s.bind(1, trial_ids_json(trials()));
  TextTable table;
  for (int c = 0; c < s.column_count(); ++c) table.columns.push_back(s.column_name(c));
  while (s.step()) {
    auto& row = table.rows.emplace_back();
    for (int c = 0; c < s.column_count(); ++c) {
      if (s.is_null(c))
        row.emplace_back(std::nullopt);
      else
        row.emplace_back(s.text_at(c));
    }
  }
  return table;
}

std::string TuningDb::trial_table_json() {
  // SQLite writes the JSON (escaping, numbers); the keys are the trial_details columns. It
  // writes an infinity as Inf, which is no JSON: a figure that is not finite is null.
  const auto finite = [](const char* column) {
    return fmt::format("CASE WHEN {0} {1} THEN {0} END", column, kFiniteReal);
  };
  Statement s(db_, path_, "export the trials as JSON",
              fmt::format("SELECT json_group_array(json_object("
                          "'trial_id', trial_id, 'device', device, 'arch', arch, "
                          "'problem_key', problem_key, 'dtype', dtype, 'layout', layout, "
                          "'m', m, 'n', n, 'k', k, 'lda', lda, 'ldb', ldb, 'ldc', ldc, "
                          "'beta_zero', beta_zero, 'template', template, "
                          "'template_hash', template_hash, 'kernel', kernel, 'params', params, "
                          "'status', status, 'error', error, 'min_us', {}, 'median_us', {}, "
                          "'max_us', {}, 'runs', runs, 'tflops', {}, 'max_rel_error', {}, "
                          "'registers', registers, 'smem_bytes', smem_bytes, 'cublas_us', {}, "
                          "'run_id', run_id, 'created_at', created_at)) "
                          "FROM (SELECT * FROM trial_details WHERE trial_id IN "
                          "(SELECT value FROM json_each(?1)) ORDER BY trial_id)",
                          finite("min_us"), finite("median_us"), finite("max_us"), finite("tflops"),
                          finite("max_rel_error"), finite("cublas_us")));
  s.bind(1, trial_ids_json(trials()));
  if (!s.step()) return "[]";
  std::string json = s.text_at(0);
  s.run();
  return json;
}

std::optional<BinaryRecord> TuningDb::find_binary_for(const KernelConfig& config,
                                                      const std::string& template_hash,
                                                      const Problem& variant,
                                                      const std::string& arch,
                                                      const std::string& nvrtc_version) {
  Statement s(
      db_, path_, "look up a kernel's binary",
      fmt::format("SELECT {} FROM binaries b JOIN kernels kr ON kr.id = b.kernel_id "
                  "WHERE kr.template_hash = ?1 AND kr.canonical_name = ?2 "
                  "AND b.op_a = ?3 AND b.op_b = ?4 AND b.arch = ?5 "
                  "AND (?6 = '' OR b.nvrtc_version = ?6) AND b.types = ?7 AND b.status = 'ok' "
                  "AND b.cubin IS NOT NULL ORDER BY b.id DESC LIMIT 1",
                  binary_columns()));
  s.bind(1, template_hash).bind(2, config.canonical_name()).bind(3, to_string(variant.op_a));
  s.bind(4, to_string(variant.op_b)).bind(5, arch).bind(6, nvrtc_version);
  s.bind(7, variant.types.name());
  return s.step() ? checked_binary_at(s) : std::nullopt;
}

void TuningDb::set_busy_timeout_ms(int ms) {
  busy_ms_ = ms;
  sqlite3_busy_timeout(db_, ms);
}

void TuningDb::begin_transaction() {
  // IMMEDIATE takes the write lock now (waiting up to the busy timeout), so a writer never
  // fails halfway through; a reader's plain BEGIN gives one consistent snapshot.
  if (mode_ == Mode::read_write)
    exec(db_, path_, "begin a write transaction", "BEGIN IMMEDIATE");
  else
    exec(db_, path_, "begin a read transaction", "BEGIN");
}

void TuningDb::commit() { exec(db_, path_, "commit", "COMMIT"); }

void TuningDb::rollback() {
  // Called from error paths: with no open transaction (SQLite may have rolled back already)
  // there is nothing to undo.
  if (sqlite3_get_autocommit(db_)) return;
  exec(db_, path_, "roll back", "ROLLBACK");
}

}  // namespace tgemm

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
    if (s.text_at(0) != "id") columns.push_back(s.text_at(0));
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
                   joined(table.key))
           .c_str());
  const int64_t added = sqlite3_changes64(db);
  std::vector<std::string> match;
  for (const std::string& k : table.key) match.push_back(fmt::format("h.{0} = s.{0}", k));
  exec(db, path, what,
       fmt::format("INSERT INTO temp.merge_map SELECT '{}', s.id, h.id FROM {}.{} s JOIN "
                   "main.{} h ON {}",
                   table.kind, kMergeSchema, table.name, table.name, joined(match, " AND "))
           .c_str());
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
                   joined(columns), base, joined(columns, ", s."), kMergeSchema)
           .c_str());
  const int64_t added = sqlite3_changes64(db);
  exec(db, path, "merge the runs",
       fmt::format("INSERT INTO temp.merge_map SELECT 'run', id, id + {} FROM {}.runs", base,
                   kMergeSchema)
           .c_str());
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
                   mapped_select(kMergedTrials, columns), kMergeSchema)
           .c_str());
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
                   joined(sets), same)
           .c_str());
  counts->replaced_trials = sqlite3_changes64(db);
  exec(db, path, what,
       fmt::format("INSERT INTO main.trials ({0}) SELECT {0} FROM temp.merge_trials WHERE true "
                   "ON CONFLICT (problem_id, kernel_id, device_id) DO NOTHING",
                   joined(columns))
           .c_str());
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
                   joined(columns), mapped_select(table, columns), kMergeSchema, joined(sets))
           .c_str());
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
                   joined(columns), mapped_select(table, columns), kMergeSchema)
           .c_str());
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
                   joined(columns), mapped_select(table, columns), kMergeSchema)
           .c_str());
  return sqlite3_changes64(db);
}

// A copy of `source` (the whole "main" schema, as SQLite's backup reads it) attached to `db`
// as kMergeSchema: a temporary file SQLite deletes on detach, so a migrated in-memory copy
// and an immutable install are read alike.
void attach_copy(sqlite3* db, const std::string& path, sqlite3* source,
                 const std::string& source_path) {
  exec(db, path, "attach a scratch copy of the file to merge",
       fmt::format("ATTACH '' AS {}", kMergeSchema).c_str());
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

MergeCounts TuningDb::merge_from(const std::string& other_path) {
  if (mode_ != Mode::read_write)
    fail("cannot merge '{}' into tuning database '{}': it is open read-only", other_path, path_);
  TuningDb other(other_path, Mode::read_only);  // checks it; an older file: a migrated copy
  if (const std::string problems = other.integrity_problems(); !problems.empty())
    fail("tuning database '{}' is damaged, so it is not merged: {}", other_path, problems);
  attach_copy(db_, path_, other.db_, other.path_);
  MergeCounts counts;
  begin_transaction();
  try {
    merge_attached(db_, path_, &counts);
    std::vector<std::pair<int64_t, int64_t>> pairs;
    {
      Statement s(db_, path_, "merge the best trials",
                  "SELECT DISTINCT problem_id, device_id FROM temp.merge_trials");
      while (s.step()) pairs.emplace_back(s.int_at(0), s.int_at(1));
    }
    for (auto [problem_id, device_id] : pairs) update_best(problem_id, device_id);
    exec(db_, path_, "finish the merge", "DROP TABLE temp.merge_map; DROP TABLE temp.merge_trials");
    commit();
  } catch (const Error& e) {
    rollback();
    sqlite3_exec(db_, "DROP TABLE IF EXISTS temp.merge_map; DROP TABLE IF EXISTS temp.merge_trials",
                 nullptr, nullptr, nullptr);
    sqlite3_exec(db_, fmt::format("DETACH {}", kMergeSchema).c_str(), nullptr, nullptr, nullptr);
    // A row this file's schema refuses (a CHECK, a reference) comes from the other file.
    fail("cannot merge tuning database '{}': {}", other_path, e.what());
  }
  exec(db_, path_, "detach the merged file", fmt::format("DETACH {}", kMergeSchema).c_str());
  return counts;
}

}  // namespace tgemm
