// TuningDb against real SQLite files in a temp folder: schema, upserts, binaries, trials, best,
// read-only use beside a writer, and refusal of files it must not touch.
#include "db/tuning_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/core/error.h"
#include "tests/common/fake_cubin.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql: the version-1 baseline

namespace {

namespace fs = std::filesystem;

using testing::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A second, plain SQLite connection: what `sqlite3 tgemm.db` or another process sees.
class RawDb {
 public:
  explicit RawDb(const std::string& path, int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK)
      ADD_FAILURE() << "cannot open " << path;
    sqlite3_busy_timeout(db_, 2000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (err ? err : "?");
      sqlite3_free(err);
    }
  }
  // Rows of text cells ("NULL" for NULL), one binding for ?1 when given.
  std::vector<std::vector<std::string>> query(const std::string& sql, const std::string& arg = {}) {
    sqlite3_stmt* stmt = nullptr;
    std::vector<std::vector<std::string>> rows;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    if (!arg.empty()) sqlite3_bind_text(stmt, 1, arg.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      auto& row = rows.emplace_back();
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        row.push_back(text ? text : "NULL");
      }
    }
    sqlite3_finalize(stmt);
    return rows;
  }
  std::string scalar(const std::string& sql, const std::string& arg = {}) {
    auto rows = query(sql, arg);
    return rows.empty() || rows[0].empty() ? "<none>" : rows[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

DeviceInfo h200() {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.arch = "sm_90";
  d.sm_count = 132;
  d.l2_bytes = 60 << 20;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.limits.smem_per_block_optin = 232448;
  d.limits.smem_per_sm = 233472;
  return d;
}

DeviceInfo t4() {
  DeviceInfo d = h200();
  d.name = "Tesla T4";
  d.arch = "sm_75";
  d.sm_count = 40;
  d.l2_bytes = 4 << 20;
  return d;
}

KernelConfig config(int64_t label) { return testing::labelled_sgemm_config(label); }

Problem square(int64_t n) { return Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n); }

CompiledKernel compiled(const std::string& key, Op op_a = Op::N, Op op_b = Op::N,
                        const std::string& arch = "sm_90", const std::string& nvrtc = "13.0") {
  CompiledKernel c;
  c.ok = true;
  c.entry = "sgemm_simt_kernel";
  c.arch = arch;
  c.op_a = op_a;
  c.op_b = op_b;
  c.nvrtc_version = nvrtc;
  c.options = "--gpu-architecture=" + arch + " -DBM=128 -DBN=128";
  c.cache_key = key;
  // Every byte value, NULs included, so a text round trip would show.
  std::vector<char> code;
  for (int rep = 0; rep < 3; ++rep)
    for (int b = 0; b < 256; ++b) code.push_back(char(b));
  code.insert(code.end(), key.begin(), key.end());
  c.cubin = testing::fake_cubin(arch, c.entry, code);
  c.resources = {true, 96, 16384, 8, 4, 12};
  c.compile_ms = 321.5;
  c.log = "ptxas info    : Used 96 registers";
  return c;
}

TrialResult ok_trial(const KernelConfig& cfg, double median_us) {
  TrialResult t;
  t.config = cfg;
  t.status = TrialStatus::ok;
  t.time_min_us = median_us * 0.98;
  t.time_median_us = median_us;
  t.time_max_us = median_us * 1.05;
  t.runs = 50;
  t.tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (median_us * 1e6);
  t.max_rel_error = 1.5e-7;
  return t;
}

TrialResult failed_trial(const KernelConfig& cfg, TrialStatus status, const std::string& error,
                         double median_us = 0) {
  TrialResult t;
  t.config = cfg;
  t.status = status;
  t.error = error;
  t.time_median_us = median_us;  // a wrong kernel may well be fast
  return t;
}

// The ids one problem / device / kernel set needs.
struct Ids {
  int64_t run, device, problem;
};

Ids seed(TuningDb& db, const DeviceInfo& device, const Problem& problem) {
  Ids ids;
  ids.run = db.begin_run("tgemm-tune --test", "tgemm 0.1.0", device.arch);
  ids.device = db.upsert_device(device);
  ids.problem = db.upsert_problem(problem);
  return ids;
}

std::string expect_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected tgemm::Error";
  return "";
}

// --- opening --------------------------------------------------------------------------

TEST(TuningDbOpen, creates_file_with_current_schema_in_wal_mode_while_open) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    EXPECT_EQ(RawDb(path).scalar("PRAGMA journal_mode"), "wal");
  }
  ASSERT_TRUE(fs::exists(path));
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(TuningDb::schema_version()));
  EXPECT_EQ(raw.scalar("PRAGMA journal_mode"), "delete");  // closed: one self-contained file
  for (const char* table :
       {"runs", "devices", "kernels", "binaries", "problems", "trials", "cublas_times", "best"})
    EXPECT_EQ(
        raw.scalar("SELECT count(*) FROM sqlite_schema WHERE type='table' AND name=?1", table), "1")
        << table;
  for (const char* view : {"best_kernels", "trial_details"})
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM sqlite_schema WHERE type='view' AND name=?1", view),
              "1")
        << view;
}

TEST(TuningDbOpen, reopen_keeps_ids_and_upserts_are_idempotent) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  int64_t device, kernel, problem;
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    device = db.upsert_device(h200());
    kernel = db.upsert_kernel(config(128), "hash1");
    problem = db.upsert_problem(square(4096));
    EXPECT_EQ(db.upsert_device(h200()), device);
    EXPECT_EQ(db.upsert_kernel(config(128), "hash1"), kernel);
    EXPECT_EQ(db.upsert_problem(square(4096)), problem);
    EXPECT_NE(db.upsert_kernel(config(128), "hash2"), kernel);  // edited template: new kernel
    EXPECT_NE(db.upsert_kernel(config(64), "hash1"), kernel);
    EXPECT_NE(db.upsert_problem(square(1024)), problem);
  }
  TuningDb db(path, TuningDb::Mode::read_write);
  EXPECT_EQ(db.upsert_device(h200()), device);
  EXPECT_EQ(db.upsert_kernel(config(128), "hash1"), kernel);
  EXPECT_EQ(db.upsert_problem(square(4096)), problem);
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM devices"), "1");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM kernels"), "3");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "2");
  EXPECT_EQ(raw.scalar("SELECT params FROM kernels WHERE id = ?1", std::to_string(kernel)),
            config(128).params_text());
}

TEST(TuningDbOpen, device_upsert_keeps_id_and_records_new_driver) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  DeviceInfo d = h200();
  const int64_t id = db.upsert_device(d);
  d.driver_version = 13010;
  EXPECT_EQ(db.upsert_device(d), id);
  EXPECT_NE(db.upsert_device(t4()), id);
  RawDb raw(db.path());
  EXPECT_EQ(raw.scalar("SELECT driver_version FROM devices WHERE name = ?1", "NVIDIA H200"),
            "13010");
}

TEST(TuningDbOpen, rejects_newer_schema_without_touching_file) {
  TempDir dir;
  const std::string path = dir.file("future.db");
  { TuningDb db(path, TuningDb::Mode::read_write); }
  const int newer = TuningDb::schema_version() + 5;
  { RawDb(path).exec("PRAGMA user_version = " + std::to_string(newer)); }
  const std::string before = read_bytes(path);
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    const std::string message = expect_error([&] { TuningDb db(path, mode); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("schema version " + std::to_string(newer)), std::string::npos)
        << message;
    EXPECT_NE(message.find("(version " + std::to_string(TuningDb::schema_version()) + ")"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
  }
  EXPECT_EQ(read_bytes(path), before);
}

TEST(TuningDbOpen, rejects_corrupt_file_without_touching_file) {
  TempDir dir;
  const std::string path = dir.file("corrupt.db");
  std::string garbage;
  std::mt19937 rng(42);
  for (int i = 0; i < 8192; ++i) garbage.push_back(char(rng() & 0xff));
  write_bytes(path, garbage);
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    const std::string message = expect_error([&] { TuningDb db(path, mode); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("not a SQLite database"), std::string::npos) << message;
  }
  EXPECT_EQ(read_bytes(path), garbage);
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST(TuningDbOpen, reports_missing_directory_and_creates_nothing) {
  TempDir dir;
  const std::string missing_dir = dir.file("no_such_dir");
  const std::string path = missing_dir + "/tgemm.db";
  const std::string message = expect_error([&] { TuningDb db(path, TuningDb::Mode::read_write); });
  EXPECT_NE(message.find("cannot create tuning database '" + path + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("directory '" + missing_dir + "' does not exist"), std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(missing_dir));
}

TEST(TuningDbOpen, reports_path_below_a_regular_file) {
  TempDir dir;
  write_bytes(dir.file("plain"), "x");
  const std::string path = dir.file("plain") + "/tgemm.db";
  const std::string message = expect_error([&] { TuningDb db(path, TuningDb::Mode::read_write); });
  EXPECT_NE(message.find("'" + dir.file("plain") + "' is not a directory"), std::string::npos)
      << message;
}

TEST(TuningDbOpen, reports_directory_given_as_database) {
  TempDir dir;
  const std::string message =
      expect_error([&] { TuningDb db(dir.file(""), TuningDb::Mode::read_write); });
  EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
}

TEST(TuningDbOpen, reports_unwritable_directory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  TempDir dir;
  const std::string locked = dir.file("locked");
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string message =
      expect_error([&] { TuningDb db(locked + "/tgemm.db", TuningDb::Mode::read_write); });
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_NE(message.find(locked + "/tgemm.db"), std::string::npos) << message;
}

TEST(TuningDbOpen, read_only_refuses_missing_file_and_creates_nothing) {
  TempDir dir;
  const std::string path = dir.file("absent.db");
  const std::string message = expect_error([&] { TuningDb db(path, TuningDb::Mode::read_only); });
  EXPECT_EQ(message, "tuning database '" + path + "' does not exist");
  EXPECT_FALSE(fs::exists(path));
}

TEST(TuningDbOpen, migrates_empty_v0_file_to_current_schema) {
  TempDir dir;
  const std::string empty = dir.file("empty.db");
  write_bytes(empty, "");
  // A valid SQLite file at user_version 0 without tables (created, then emptied).
  const std::string blank = dir.file("blank.db");
  { RawDb(blank).exec("CREATE TABLE t (x); DROP TABLE t;"); }
  ASSERT_GT(fs::file_size(blank), 0u);
  for (const std::string& path : {empty, blank}) {
    {
      TuningDb db(path, TuningDb::Mode::read_write);
      db.upsert_problem(square(64));
    }
    RawDb raw(path);
    EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(TuningDb::schema_version()));
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "1");
  }
}

TEST(TuningDbOpen, read_only_refuses_v0_file_without_writing) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  write_bytes(path, "");
  const std::string message = expect_error([&] { TuningDb db(path, TuningDb::Mode::read_only); });
  EXPECT_NE(message.find("not a tgemm tuning database"), std::string::npos) << message;
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST(TuningDbOpen, refuses_foreign_sqlite_database_without_adding_tables) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  { RawDb(path).exec("CREATE TABLE inventory (item TEXT); INSERT INTO inventory VALUES ('x');"); }
  const std::string before = read_bytes(path);
  const std::string message = expect_error([&] { TuningDb db(path, TuningDb::Mode::read_write); });
  EXPECT_NE(message.find("not a tgemm tuning database"), std::string::npos) << message;
  EXPECT_NE(message.find("inventory"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), before);
}

// --- runs and binaries -----------------------------------------------------------------

TEST(TuningDbRuns, finish_run_records_summary_and_end_time) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("tgemm-tune --arch sm_90", "tgemm 0.1.0", "sm_90");
  RawDb raw(db.path());
  EXPECT_EQ(raw.scalar("SELECT finished_at IS NULL FROM runs WHERE id = ?1", std::to_string(run)),
            "1");
  db.finish_run(run, "3 trials");
  auto rows = raw.query(
      "SELECT command_line, tool_version, arch, summary, finished_at IS NOT NULL "
      "FROM runs WHERE id = ?1",
      std::to_string(run));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"tgemm-tune --arch sm_90", "tgemm 0.1.0", "sm_90",
                                               "3 trials", "1"}));
  EXPECT_NE(expect_error([&] { db.finish_run(run + 100, "x"); }).find("no run"), std::string::npos);
}

TEST(TuningDbBinaries, stores_and_finds_binary_by_cache_key_byte_exact) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  const CompiledKernel stored = compiled("key-1", Op::T, Op::N);
  int64_t kernel, id;
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("cmd", "v", "sm_90");
    kernel = db.upsert_kernel(config(128), "hash");
    id = db.store_binary(run, kernel, stored, BinaryStatus::ok, "");
  }
  TuningDb db(path, TuningDb::Mode::read_only);
  auto found = db.find_binary("key-1");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->kernel_id, kernel);
  EXPECT_EQ(found->status, BinaryStatus::ok);
  EXPECT_EQ(found->reason, "");
  const CompiledKernel& c = found->compiled;
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.cubin, stored.cubin);
  EXPECT_GT(c.cubin.size(), 768u);
  EXPECT_EQ(c.entry, stored.entry);
  EXPECT_EQ(c.arch, "sm_90");
  EXPECT_EQ(c.op_a, Op::T);
  EXPECT_EQ(c.op_b, Op::N);
  EXPECT_EQ(c.nvrtc_version, "13.0");
  EXPECT_EQ(c.options, stored.options);
  EXPECT_EQ(c.cache_key, "key-1");
  EXPECT_EQ(c.resources.registers, 96);
  EXPECT_EQ(c.resources.smem_bytes, 16384);
  EXPECT_EQ(c.resources.stack_frame_bytes, 8);
  EXPECT_EQ(c.resources.spill_store_bytes, 4);
  EXPECT_EQ(c.resources.spill_load_bytes, 12);
  EXPECT_TRUE(c.resources.found);
  EXPECT_DOUBLE_EQ(c.compile_ms, 321.5);
  EXPECT_EQ(c.log, stored.log);
  EXPECT_FALSE(db.find_binary("key-2"));
}

TEST(TuningDbBinaries, keeps_compile_failures_so_they_are_not_retried) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t kernel = db.upsert_kernel(config(256), "hash");
  CompiledKernel failed;
  failed.cache_key = "bad";
  failed.arch = "sm_90";
  failed.error = "sgemm_simt_bm256: error: static assertion failed\nline 2";
  db.store_binary(0, kernel, failed, BinaryStatus::compile_failed, "");
  auto found = db.find_binary("bad");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, BinaryStatus::compile_failed);
  EXPECT_EQ(found->reason, failed.error);  // the compiler's error when no reason is given
  EXPECT_FALSE(found->compiled.ok);
  EXPECT_EQ(found->compiled.error, failed.error);
  EXPECT_TRUE(found->compiled.cubin.empty());

  CompiledKernel big = compiled("big");
  db.store_binary(0, kernel, big, BinaryStatus::resource_exceeded, "uses 300 registers");
  found = db.find_binary("big");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, BinaryStatus::resource_exceeded);
  EXPECT_EQ(found->reason, "uses 300 registers");
  EXPECT_TRUE(found->compiled.ok);  // it compiled; it was pruned
}

TEST(TuningDbBinaries, storing_same_cache_key_again_replaces_row_and_keeps_id) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  CompiledKernel first = compiled("k");
  const int64_t id = db.store_binary(0, kernel, first, BinaryStatus::ok, "");
  CompiledKernel second = compiled("k");
  second.cubin = testing::fake_cubin("sm_90", second.entry, {'n', 'e', 'w'});
  EXPECT_EQ(db.store_binary(0, kernel, second, BinaryStatus::ok, ""), id);
  EXPECT_EQ(db.find_binary("k")->compiled.cubin, second.cubin);
  EXPECT_EQ(RawDb(db.path()).scalar("SELECT count(*) FROM binaries"), "1");
}

TEST(TuningDbBinaries, refuses_ok_binary_without_cubin) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  CompiledKernel empty = compiled("k");
  empty.cubin.clear();
  EXPECT_NE(expect_error([&] {
              db.store_binary(0, kernel, empty, BinaryStatus::ok, "");
            }).find("no cubin"),
            std::string::npos);
  EXPECT_FALSE(db.find_binary("k"));
}

TEST(TuningDbBinaries, find_binary_for_matches_kernel_layout_arch_and_nvrtc_version) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t k128 = db.upsert_kernel(config(128), "hash");
  const int64_t k64 = db.upsert_kernel(config(64), "hash");
  const int64_t nn90 = db.store_binary(0, k128, compiled("a"), BinaryStatus::ok, "");
  const int64_t nt90 = db.store_binary(0, k128, compiled("b", Op::N, Op::T), BinaryStatus::ok, "");
  const int64_t nn80 =
      db.store_binary(0, k128, compiled("c", Op::N, Op::N, "sm_80"), BinaryStatus::ok, "");
  const int64_t nn90_old =
      db.store_binary(0, k128, compiled("d", Op::N, Op::N, "sm_90", "12.8"), BinaryStatus::ok, "");
  db.store_binary(0, k64, compiled("e"), BinaryStatus::resource_exceeded, "too many registers");

  auto id_of = [&](const KernelConfig& cfg, const std::string& hash, Op a, Op b,
                   const std::string& arch, const std::string& nvrtc) -> int64_t {
    auto found =
        db.find_binary_for(cfg, hash, Problem::packed(GemmTypes{}, a, b, 1, 1, 1), arch, nvrtc);
    return found ? found->id : -1;
  };
  EXPECT_EQ(id_of(config(128), "hash", Op::N, Op::N, "sm_90", "13.0"), nn90);
  EXPECT_EQ(id_of(config(128), "hash", Op::N, Op::T, "sm_90", "13.0"), nt90);
  EXPECT_EQ(id_of(config(128), "hash", Op::N, Op::N, "sm_80", "13.0"), nn80);
  EXPECT_EQ(id_of(config(128), "hash", Op::N, Op::N, "sm_90", "12.8"), nn90_old);
  EXPECT_EQ(id_of(config(128), "hash", Op::T, Op::T, "sm_90", "13.0"), -1);
  EXPECT_EQ(id_of(config(128), "other", Op::N, Op::N, "sm_90", "13.0"), -1);
  EXPECT_EQ(id_of(config(64), "hash", Op::N, Op::N, "sm_90", "13.0"), -1);  // pruned: no cubin
  // Any NVRTC version: the newest binary.
  EXPECT_EQ(id_of(config(128), "hash", Op::N, Op::N, "sm_90", ""), nn90_old);
  EXPECT_EQ(db.find_binary_for(config(128), "hash",
                               Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 1, 1), "sm_90", "13.0")
                ->compiled.cubin,
            compiled("b").cubin);
  // Another element type's cubin of the same kernel is not this one.
  EXPECT_FALSE(db.find_binary_for(config(128), "hash",
                                  Problem::packed(gemm_types("tf32"), Op::N, Op::N, 1, 1, 1),
                                  "sm_90", "13.0"));
  // Nor is the build that reads pointer arrays (TGEMM_BATCH=2), and it is found itself.
  Problem pointers = Problem::packed(GemmTypes{}, Op::T, Op::T, 1, 1, 1);
  pointers.batch_pointers = true;
  EXPECT_FALSE(db.find_binary_for(config(128), "hash", pointers, "sm_90", "13.0"));
  CompiledKernel reads_arrays = compiled("f", Op::T, Op::T);
  reads_arrays.batch_form = BatchForm::pointers;
  const int64_t tt_arrays = db.store_binary(0, k128, reads_arrays, BinaryStatus::ok, "");
  EXPECT_EQ(db.find_binary_for(config(128), "hash", pointers, "sm_90", "13.0")->id, tt_arrays);
  EXPECT_TRUE(
      db.find_binary_for(config(128), "hash", pointers, "sm_90", "13.0")->compiled.batch_form ==
      BatchForm::pointers);
  EXPECT_EQ(id_of(config(128), "hash", Op::T, Op::T, "sm_90", "13.0"), -1);
}

// --- trials and best -------------------------------------------------------------------

TEST(TuningDbTrials, rerun_skips_recorded_trial) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  int64_t kernel;
  Ids ids;
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    ids = seed(db, h200(), square(4096));
    kernel = db.upsert_kernel(config(128), "hash");
    EXPECT_FALSE(db.has_trial(ids.problem, kernel, ids.device));
    db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                    ok_trial(config(128), 100));
    EXPECT_TRUE(db.has_trial(ids.problem, kernel, ids.device));
  }
  // A second tuner run sees the trial; another device or kernel is still to do.
  TuningDb db(path, TuningDb::Mode::read_write);
  EXPECT_TRUE(db.has_trial(db.upsert_problem(square(4096)), db.upsert_kernel(config(128), "hash"),
                           db.upsert_device(h200())));
  EXPECT_FALSE(db.has_trial(ids.problem, kernel, db.upsert_device(t4())));
  EXPECT_FALSE(db.has_trial(ids.problem, db.upsert_kernel(config(64), "hash"), ids.device));
}

TEST(TuningDbTrials, recording_same_trial_again_replaces_it_and_keeps_id) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(4096));
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  const int64_t first = db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                                        failed_trial(config(128), TrialStatus::timeout, "hung"));
  const int64_t second = db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                                         ok_trial(config(128), 80));
  EXPECT_EQ(first, second);
  RawDb raw(db.path());
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM trials"), "1");
  EXPECT_EQ(raw.scalar("SELECT status FROM trials"), "ok");
}

TEST(TuningDbTrials, record_trial_rejects_unknown_problem) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(64));
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  const std::string message = expect_error([&] {
    db.record_trial(ids.run, ids.problem + 99, kernel, ids.device, std::nullopt,
                    ok_trial(config(128), 10));
  });
  EXPECT_NE(message.find("FOREIGN KEY"), std::string::npos) << message;
  EXPECT_NE(message.find(db.path()), std::string::npos) << message;
}

TEST(TuningDbTrials, upsert_problem_rejects_zero_dimension) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Problem p = square(64);
  p.m = 0;
  EXPECT_NE(expect_error([&] { db.upsert_problem(p); }).find("m must be >= 1"), std::string::npos);
}

TEST(TuningDbTrials, update_best_picks_fastest_ok_trial_and_ignores_failed) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(4096));
  auto record = [&](const KernelConfig& cfg, const TrialResult& t) {
    db.record_trial(ids.run, ids.problem, db.upsert_kernel(cfg, "hash"), ids.device, std::nullopt,
                    t);
  };
  record(config(128), ok_trial(config(128), 120));
  record(config(64), ok_trial(config(64), 100));
  record(config(32), failed_trial(config(32), TrialStatus::wrong_result, "max rel error 0.3", 50));
  record(config(16), failed_trial(config(16), TrialStatus::crashed, "illegal address"));
  record(config(256), ok_trial(config(256), 140));
  db.record_cublas_time(ids.run, ids.problem, ids.device, 90);
  db.update_best(ids.problem, ids.device);

  auto best = db.best_entries();
  ASSERT_EQ(best.size(), 1u);
  const BestEntry& e = best[0];
  EXPECT_EQ(e.config, config(64));
  EXPECT_EQ(e.template_hash, "hash");
  EXPECT_EQ(e.trial.status, TrialStatus::ok);
  EXPECT_DOUBLE_EQ(e.trial.time_median_us, 100);
  EXPECT_DOUBLE_EQ(e.trial.time_min_us, 98);
  EXPECT_EQ(e.trial.runs, 50);
  EXPECT_DOUBLE_EQ(e.trial.max_rel_error, 1.5e-7);
  EXPECT_DOUBLE_EQ(e.cublas_median_us, 90);
  EXPECT_EQ(e.trial_count, 5);
  EXPECT_EQ(e.device_name, "NVIDIA H200");
  EXPECT_EQ(e.arch, "sm_90");
  EXPECT_EQ(e.problem.key(), square(4096).key());

  // A faster kernel recorded later takes over.
  record(config(8), ok_trial(config(8), 95));
  db.update_best(ids.problem, ids.device);
  EXPECT_EQ(db.best_entries()[0].config, config(8));
}

TEST(TuningDbTrials, update_best_leaves_no_best_when_no_trial_is_ok) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(512));
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                  failed_trial(config(128), TrialStatus::launch_failed, "too many resources"));
  db.update_best(ids.problem, ids.device);
  EXPECT_TRUE(db.best_entries().empty());

  db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt, ok_trial(config(128), 7));
  db.update_best(ids.problem, ids.device);
  ASSERT_EQ(db.best_entries().size(), 1u);
  // Re-measured as wrong: the best row goes away rather than pointing at a failure.
  db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                  failed_trial(config(128), TrialStatus::wrong_result, "NaN in C"));
  db.update_best(ids.problem, ids.device);
  EXPECT_TRUE(db.best_entries().empty());
  EXPECT_EQ(RawDb(db.path()).scalar("SELECT count(*) FROM best"), "0");
}

TEST(TuningDbTrials, best_entries_filter_by_problem_device_and_arch) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("cmd", "v", "sm_90");
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  for (const DeviceInfo& device : {h200(), t4()}) {
    const int64_t dev = db.upsert_device(device);
    for (int64_t n : {1024, 4096}) {
      const int64_t problem = db.upsert_problem(square(n));
      db.record_trial(run, problem, kernel, dev, std::nullopt, ok_trial(config(128), double(n)));
      db.update_best(problem, dev);
    }
  }
  EXPECT_EQ(db.best_entries().size(), 4u);
  EXPECT_EQ(db.best_entries(square(4096).key()).size(), 2u);
  EXPECT_EQ(db.best_entries("", "Tesla T4").size(), 2u);
  EXPECT_EQ(db.best_entries("", "", "sm_90").size(), 2u);
  auto one = db.best_entries(square(1024).key(), "NVIDIA H200", "sm_90");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].problem.n, 1024);
  EXPECT_EQ(one[0].device_name, "NVIDIA H200");
  EXPECT_TRUE(db.best_entries(square(2048).key()).empty());
  EXPECT_TRUE(db.best_entries("", "NVIDIA H200", "sm_75").empty());
  EXPECT_DOUBLE_EQ(one[0].cublas_median_us, 0);  // not measured
}

TEST(TuningDbTrials, best_entries_reconstruct_the_problem) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Problem p = Problem::packed(gemm_types("bf16"), Op::T, Op::N, 100, 202, 37);
  p.lda = 104;
  p.ldc = 210;
  p.align_a = 4;
  p.align_b = 2;
  p.align_c = 2;
  p.beta_zero = false;
  Ids ids = seed(db, h200(), p);
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  db.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt, ok_trial(config(128), 3));
  db.update_best(ids.problem, ids.device);
  auto best = db.best_entries(p.key());
  ASSERT_EQ(best.size(), 1u);
  const Problem& q = best[0].problem;
  EXPECT_EQ(q.key(), p.key());
  EXPECT_EQ(q.types, gemm_types("bf16"));
  EXPECT_EQ(q.op_a, Op::T);
  EXPECT_EQ(q.op_b, Op::N);
  EXPECT_EQ(q.m, 100);
  EXPECT_EQ(q.n, 202);
  EXPECT_EQ(q.k, 37);
  EXPECT_EQ(q.lda, 104);
  EXPECT_EQ(q.ldb, p.ldb);
  EXPECT_EQ(q.ldc, 210);
  EXPECT_EQ(q.align_a, 4);
  EXPECT_EQ(q.align_b, 2);
  EXPECT_EQ(q.align_c, 2);
  EXPECT_FALSE(q.beta_zero);
}

TEST(TuningDbTrials, best_kernels_view_answers_plain_sql) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    Ids ids = seed(db, h200(), square(4096));
    const int64_t slow = db.upsert_kernel(config(64), "hash");
    const int64_t fast = db.upsert_kernel(config(128), "hash");
    db.record_trial(ids.run, ids.problem, slow, ids.device, std::nullopt,
                    ok_trial(config(64), 2000));
    db.record_trial(ids.run, ids.problem, fast, ids.device, std::nullopt,
                    ok_trial(config(128), 1000));
    db.record_cublas_time(ids.run, ids.problem, ids.device, 900);
    db.update_best(ids.problem, ids.device);
  }
  RawDb raw(path, SQLITE_OPEN_READONLY);
  auto rows = raw.query(
      "SELECT device, arch, dtype, layout, m, n, k, kernel, us, tflops, cublas_us, vs_cublas, "
      "trials FROM best_kernels WHERE m=4096 AND n=4096 AND k=4096");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"NVIDIA H200", "sm_90", "f32", "NN", "4096", "4096",
                                               "4096", config(128).canonical_name(), "1000.0",
                                               "137.44", "900.0", "0.9", "2"}));
  EXPECT_EQ(
      raw.scalar("SELECT count(*) FROM trial_details WHERE problem_key = ?1", square(4096).key()),
      "2");
}

TEST(TuningDbTrials, trials_list_ok_by_median_then_failures) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(256));
  auto record = [&](const KernelConfig& cfg, const TrialResult& t) {
    db.record_trial(ids.run, ids.problem, db.upsert_kernel(cfg, "hash"), ids.device, std::nullopt,
                    t);
  };
  record(config(16), failed_trial(config(16), TrialStatus::timeout, "watchdog", 1));
  record(config(32), ok_trial(config(32), 30));
  record(config(64), ok_trial(config(64), 10));
  record(config(128), ok_trial(config(128), 20));
  const Ids other = seed(db, h200(), square(512));
  db.record_trial(ids.run, other.problem, db.upsert_kernel(config(8), "hash"), ids.device,
                  std::nullopt, ok_trial(config(8), 1));

  auto all = db.trials(square(256).key());
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].trial.config, config(64));
  EXPECT_EQ(all[1].trial.config, config(128));
  EXPECT_EQ(all[2].trial.config, config(32));
  EXPECT_EQ(all[3].trial.status, TrialStatus::timeout);
  EXPECT_EQ(all[3].trial.error, "watchdog");
  EXPECT_EQ(all[0].device_name, "NVIDIA H200");
  EXPECT_EQ(all[0].template_hash, "hash");
  EXPECT_FALSE(all[0].created_at.empty());
  EXPECT_EQ(db.trials().size(), 5u);
  EXPECT_TRUE(db.trials("", "Tesla T4").empty());
}

TEST(TuningDbTrials, trial_table_and_json_hold_every_trial) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  Ids ids = seed(db, h200(), square(256));
  db.record_trial(ids.run, ids.problem, db.upsert_kernel(config(64), "hash"), ids.device,
                  std::nullopt, ok_trial(config(64), 10));
  db.record_trial(ids.run, ids.problem, db.upsert_kernel(config(32), "hash"), ids.device,
                  std::nullopt,
                  failed_trial(config(32), TrialStatus::compile_failed, "error: \"x\", line 2\n"));
  TextTable table = db.trial_table();
  ASSERT_EQ(table.rows.size(), 2u);
  auto col = [&](const std::string& name) {
    auto it = std::find(table.columns.begin(), table.columns.end(), name);
    EXPECT_NE(it, table.columns.end()) << name;
    return size_t(it - table.columns.begin());
  };
  EXPECT_EQ(table.rows[0][col("kernel")], config(64).canonical_name());
  EXPECT_EQ(table.rows[0][col("device")], "NVIDIA H200");
  EXPECT_EQ(table.rows[1][col("status")], "compile_failed");
  EXPECT_EQ(table.rows[1][col("cublas_us")], std::nullopt);  // NULL stays NULL

  const std::string json = db.trial_table_json();
  RawDb raw(":memory:");
  EXPECT_EQ(raw.scalar("SELECT json_valid(?1)", json), "1");
  EXPECT_EQ(raw.scalar("SELECT json_array_length(?1)", json), "2");
  EXPECT_EQ(raw.scalar("SELECT json_extract(?1, '$[1].error')", json), "error: \"x\", line 2\n");
  EXPECT_EQ(raw.scalar("SELECT json_extract(?1, '$[0].median_us')", json), "10.0");
}

// --- copies and leaving a problem out ------------------------------------------------

TEST(TuningDbCopy, copy_without_one_problem_keeps_the_source_and_the_other_problems) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("cmd", "v", "sm_90");
  const int64_t dev = db.upsert_device(h200());
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  db.store_binary(run, kernel, compiled("k1"), BinaryStatus::ok, "");
  for (int64_t n : {1024, 4096}) {
    const int64_t problem = db.upsert_problem(square(n));
    db.record_trial(run, problem, kernel, dev, std::nullopt, ok_trial(config(128), double(n)));
    db.record_trial(run, problem, db.upsert_kernel(config(64), "hash"), dev, std::nullopt,
                    ok_trial(config(64), double(n) + 1));
    db.record_cublas_time(run, problem, dev, double(n));
    db.update_best(problem, dev);
  }
  const std::string copy_path = dir.file("copy.db");
  write_bytes(copy_path, "somebody's file");
  EXPECT_NE(expect_error([&] { db.copy_to(copy_path); }).find("exists"), std::string::npos);
  EXPECT_EQ(read_bytes(copy_path), "somebody's file");
  fs::remove(copy_path);
  db.copy_to(copy_path);
  {
    TuningDb copy(copy_path, TuningDb::Mode::read_write);
    EXPECT_EQ(copy.forget_problem(square(1024).key()), 2);
    EXPECT_EQ(copy.forget_problem(square(1024).key()), 0);  // already gone
    EXPECT_EQ(copy.forget_problem("f32_NN_m3_n3_k3_a111_b0"), 0);
    auto best = copy.best_entries();
    ASSERT_EQ(best.size(), 1u);
    EXPECT_EQ(best[0].problem.key(), square(4096).key());
    EXPECT_DOUBLE_EQ(best[0].cublas_median_us, 4096);
    EXPECT_EQ(copy.trials().size(), 2u);
    EXPECT_TRUE(copy.trials(square(1024).key()).empty());
    EXPECT_TRUE(copy.find_binary("k1").has_value());  // kernels and binaries stay
  }
  RawDb raw(copy_path);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "1");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM cublas_times"), "1");
  EXPECT_EQ(raw.scalar("PRAGMA foreign_key_check"), "<none>");  // no dangling reference
  // The source is untouched.
  EXPECT_EQ(db.best_entries().size(), 2u);
  EXPECT_EQ(db.trials().size(), 4u);
}

TEST(TuningDbCopy, read_only_database_refuses_to_forget_and_copy_reports_bad_target) {
  TempDir dir;
  {
    TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
    seed(db, h200(), square(512));
  }
  TuningDb reader(dir.file("tgemm.db"), TuningDb::Mode::read_only);
  EXPECT_NE(expect_error([&] { reader.forget_problem(square(512).key()); }).find("read-only"),
            std::string::npos);
  EXPECT_EQ(RawDb(dir.file("tgemm.db")).scalar("SELECT count(*) FROM problems"), "1");
  const std::string message =
      expect_error([&] { reader.copy_to(dir.file("no/such/folder/copy.db")); });
  EXPECT_NE(message.find("cannot copy"), std::string::npos) << message;
  EXPECT_NE(message.find("no/such/folder/copy.db"), std::string::npos) << message;
}

TEST(TuningDbTransactions, rollback_discards_and_commit_keeps_writes) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  db.begin_transaction();
  db.upsert_problem(square(64));
  db.rollback();
  RawDb raw(db.path());
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "0");
  db.begin_transaction();
  db.upsert_problem(square(64));
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "0");  // not visible before commit
  db.commit();
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "1");
  db.rollback();  // no transaction open: nothing to undo, no error
  EXPECT_NE(expect_error([&] { db.commit(); }).find(db.path()), std::string::npos);
}

// --- read-only use ---------------------------------------------------------------------

TEST(TuningDbReadOnly, read_only_open_cannot_write) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    seed(db, h200(), square(64));
  }
  const std::string before = read_bytes(path);
  TuningDb db(path, TuningDb::Mode::read_only);
  const std::string message = expect_error([&] { db.begin_run("cmd", "v", "sm_90"); });
  EXPECT_NE(message.find("read-only"), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  expect_error([&] { db.upsert_problem(square(128)); });
  expect_error([&] { db.update_best(1, 1); });
  EXPECT_EQ(db.best_entries().size(), 0u);  // reading works
  EXPECT_EQ(read_bytes(path), before);
}

TEST(TuningDbReadOnly, reader_is_not_blocked_by_a_writer_transaction) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  TuningDb writer(path, TuningDb::Mode::read_write);
  Ids ids = seed(writer, h200(), square(64));
  const int64_t kernel = writer.upsert_kernel(config(128), "hash");
  writer.record_trial(ids.run, ids.problem, kernel, ids.device, std::nullopt,
                      ok_trial(config(128), 5));
  writer.update_best(ids.problem, ids.device);

  writer.begin_transaction();  // holds the write lock from here
  const int64_t p2 = writer.upsert_problem(square(128));
  writer.record_trial(ids.run, p2, kernel, ids.device, std::nullopt, ok_trial(config(128), 6));
  writer.update_best(p2, ids.device);

  const auto start = std::chrono::steady_clock::now();
  {
    TuningDb reader(path, TuningDb::Mode::read_only);
    EXPECT_EQ(reader.best_entries().size(), 1u);  // the committed state only
    EXPECT_EQ(reader.trials().size(), 1u);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0) << "the reader waited for the writer";

  writer.commit();
  TuningDb reader(path, TuningDb::Mode::read_only);
  EXPECT_EQ(reader.best_entries().size(), 2u);
}

// --- two writers -----------------------------------------------------------------------

TEST(TuningDbWriters, second_writer_waits_for_the_first_to_commit) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  TuningDb first(path, TuningDb::Mode::read_write);
  first.begin_transaction();
  first.upsert_problem(square(64));
  // Opening a current file takes no write lock, so this does not wait.
  TuningDb second(path, TuningDb::Mode::read_write);
  std::thread committer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    first.commit();
  });
  const auto start = std::chrono::steady_clock::now();
  second.begin_transaction();  // waits (busy timeout) instead of failing
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  committer.join();
  second.upsert_problem(square(128));
  second.commit();
  EXPECT_GT(waited, 0.2);
  EXPECT_EQ(RawDb(path).scalar("SELECT count(*) FROM problems"), "2");
}

TEST(TuningDbWriters, write_behind_a_held_lock_fails_as_locked_after_the_timeout) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  TuningDb first(path, TuningDb::Mode::read_write);
  first.begin_transaction();
  first.upsert_problem(square(64));
  TuningDb second(path, TuningDb::Mode::read_write);
  second.set_busy_timeout_ms(100);
  std::string message = expect_error([&] { second.begin_transaction(); });
  EXPECT_NE(message.find("'" + path + "' is locked by another writer"), std::string::npos)
      << message;
  message = expect_error([&] { second.upsert_problem(square(128)); });
  EXPECT_NE(message.find("locked"), std::string::npos) << message;
  first.commit();
  EXPECT_EQ(RawDb(path).scalar("SELECT count(*) FROM problems"), "1");  // nothing lost
}

// --- cubin checksums and the version-2 migration ----------------------------------------

TEST(TuningDbChecksum, schema_version_is_current_with_a_checksum_per_cubin) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  TuningDb db(path, TuningDb::Mode::read_write);
  EXPECT_GE(TuningDb::schema_version(), 9);
  const int64_t kernel = db.upsert_kernel(config(128), "hash");
  db.store_binary(0, kernel, compiled("a"), BinaryStatus::ok, "");
  CompiledKernel failed = compiled("b");
  failed.ok = false;
  failed.cubin.clear();
  db.store_binary(0, kernel, failed, BinaryStatus::compile_failed, "boom");
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("SELECT checksum FROM binaries WHERE cache_key = 'a'"),
            cubin_checksum(compiled("a").cubin));
  EXPECT_EQ(raw.scalar("SELECT checksum FROM binaries WHERE cache_key = 'b'"), "NULL");
  EXPECT_TRUE(db.find_binary("a")->checksum_ok);
  EXPECT_TRUE(db.find_binary("b")->checksum_ok);  // nothing to verify
}

TEST(TuningDbChecksum, planted_garbage_cubin_is_never_handed_out) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  const int64_t kernel = [&] {
    TuningDb db(path, TuningDb::Mode::read_write);
    const int64_t k = db.upsert_kernel(config(128), "hash");
    db.store_binary(0, k, compiled("a"), BinaryStatus::ok, "");
    return k;
  }();
  RawDb(path).exec("UPDATE binaries SET cubin = X'7f454c46deadbeef' WHERE cache_key = 'a'");
  for (auto mode : {TuningDb::Mode::read_only, TuningDb::Mode::read_write}) {
    TuningDb db(path, mode);
    auto found = db.find_binary("a");
    ASSERT_TRUE(found);
    EXPECT_FALSE(found->checksum_ok);
    EXPECT_TRUE(found->compiled.cubin.empty());
    auto for_kernel = db.find_binary_for(
        config(128), "hash", Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1), "sm_90", "13.0");
    ASSERT_TRUE(for_kernel);
    EXPECT_FALSE(for_kernel->checksum_ok);
    EXPECT_TRUE(for_kernel->compiled.cubin.empty());
  }
  // A cubin with its checksum removed is just as unverifiable.
  RawDb(path).exec("UPDATE binaries SET checksum = NULL");
  EXPECT_FALSE(TuningDb(path, TuningDb::Mode::read_only).find_binary("a")->checksum_ok);
  // Storing the real cubin again (a recompile) heals the row in place.
  TuningDb db(path, TuningDb::Mode::read_write);
  const int64_t id = db.find_binary("a")->id;
  EXPECT_EQ(db.store_binary(0, kernel, compiled("a"), BinaryStatus::ok, ""), id);
  EXPECT_TRUE(db.find_binary("a")->checksum_ok);
  EXPECT_EQ(db.find_binary("a")->compiled.cubin, compiled("a").cubin);
}

// A file as a version-1 build left it: the baseline schema, cubins without checksums.
void make_version_1_file(const std::string& path, const std::vector<char>& cubin) {
  RawDb raw(path);
  raw.exec(kSchemaSql);
  raw.exec("PRAGMA user_version = 1");
  raw.exec(
      "INSERT INTO kernels (id, template, template_hash, canonical_name, params) VALUES "
      "(1, 'sgemm_simt', 'hash', '" +
      config(128).canonical_name() + "', '" + config(128).params_text() + "')");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(
                db,
                "INSERT INTO binaries (kernel_id, arch, nvrtc_version, op_a, op_b, entry, options, "
                "cache_key, cubin, registers, smem_bytes, stack_bytes, spill_store_bytes, "
                "spill_load_bytes, resources_found, compile_ms, status, reason, log) VALUES (1, "
                "'sm_90', '13.0', 'N', 'N', 'sgemm_simt_kernel', '', 'v1-key', ?1, 1, 1, 0, 0, 0, "
                "1, 1, 'ok', '', "
                "'')",
                -1, &stmt, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(stmt, 1, cubin.data(), int(cubin.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(TuningDbMigration, version_1_file_is_migrated_with_checksums_for_its_cubins) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  const std::vector<char> cubin = compiled("x").cubin;
  make_version_1_file(path, cubin);
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    auto found = db.find_binary("v1-key");
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->checksum_ok);
    EXPECT_EQ(found->compiled.cubin, cubin);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(TuningDb::schema_version()));
  EXPECT_EQ(raw.scalar("SELECT checksum FROM binaries"), cubin_checksum(cubin));
}

// A reader cannot migrate the file, so it reads a migrated copy in memory: the same answers
// as after a read-write migration, and the file keeps its bytes.
TEST(TuningDbMigration, reader_of_a_version_1_file_reads_a_migrated_copy_and_leaves_the_file) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  make_version_1_file(path, compiled("x").cubin);
  const std::string before = read_bytes(path);
  {
    TuningDb db(path, TuningDb::Mode::read_only);
    EXPECT_EQ(db.best_entries().size(), 0u);
    auto found = db.find_binary("v1-key");
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->checksum_ok);  // checksummed by the migration, as a writer's would be
    EXPECT_EQ(found->compiled.cubin, compiled("x").cubin);
  }
  EXPECT_EQ(read_bytes(path), before);
}

}  // namespace
}  // namespace tgemm

namespace tgemm {
namespace {

// The database session 2 tuned on the H200 with the code before typed problems (schema 1):
// it must open, serve the same kernels and upgrade with nothing lost.
std::string unpack_session_2_database(const TempDir& dir) {
  const std::string path = dir.file("session2.db");
  const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                              "/tests/data/databases/all_h200_s2.db.gz' > '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

TEST(TuningDbMigration, a_tuned_version_1_database_serves_read_only_and_upgrades_losing_nothing) {
  TempDir dir;
  const std::string path = unpack_session_2_database(dir);
  std::map<std::string, std::string> counts;
  const char* tables[] = {"best", "trials", "binaries", "kernels", "problems", "devices", "runs"};
  {
    RawDb raw(path);
    ASSERT_EQ(raw.scalar("PRAGMA user_version"), "1");
    for (const char* t : tables) counts[t] = raw.scalar(std::string("SELECT count(*) FROM ") + t);
  }
  const std::string before = read_bytes(path);
  const std::string key_4096 = "f32_NN_m4096_n4096_k4096_b0_a16.16.16";
  {
    TuningDb reader(path, TuningDb::Mode::read_only);
    const auto best = reader.best_entries();
    EXPECT_EQ(std::to_string(best.size()), counts["best"]);
    auto it = std::find_if(best.begin(), best.end(),
                           [&](const BestEntry& e) { return e.problem.key() == key_4096; });
    ASSERT_NE(it, best.end());
    EXPECT_EQ(it->problem.types, GemmTypes{});
    EXPECT_EQ(it->problem.align_a, 16);  // 4 elements of 4 bytes
    // The tuned cubin is found for the layout and types it was built for.
    auto cubin = reader.find_binary_for(it->config, it->template_hash, it->problem, "sm_90", "");
    ASSERT_TRUE(cubin);
    EXPECT_TRUE(cubin->checksum_ok);
    EXPECT_FALSE(cubin->compiled.cubin.empty());
    // 1023^3 was tuned misaligned: 1 element became 4 bytes.
    EXPECT_EQ(reader.best_entries("f32_NN_m1023_n1023_k1023_b0_a4.4.4").size(), 1u);
  }
  EXPECT_EQ(read_bytes(path), before) << "a reader must not write the file";
  { TuningDb writer(path, TuningDb::Mode::read_write); }
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(TuningDb::schema_version()));
  for (const char* t : tables) {
    if (std::string(t) == "runs") continue;  // opening read-write records no run
    EXPECT_EQ(raw.scalar(std::string("SELECT count(*) FROM ") + t), counts[t]) << t;
  }
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems WHERE key = '" + key_4096 + "'"), "1");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM binaries WHERE types != 'f32'"), "0");
  EXPECT_EQ(raw.scalar("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace tgemm

namespace tgemm {
namespace {

// Session 3's square and DeepBench database (schema 3, before SGEMM errors were stored).
std::string unpack_session_3_database(const TempDir& dir) {
  const std::string path = dir.file("session3.db");
  const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                              "/tests/data/databases/square_deepbench_h200_s3.db.gz' > '" + path +
                              "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

TEST(TuningDbMigration, a_version_3_file_gets_a_null_sgemm_error_per_cublas_time) {
  TempDir dir;
  const std::string path = unpack_session_3_database(dir);
  std::string cublas_rows;
  {
    RawDb raw(path);
    ASSERT_EQ(raw.scalar("PRAGMA user_version"), "3");
    cublas_rows = raw.scalar("SELECT count(*) FROM cublas_times");
  }
  const std::string before = read_bytes(path);
  {
    TuningDb reader(path, TuningDb::Mode::read_only);
    const auto best = reader.best_entries();
    ASSERT_FALSE(best.empty());
    for (const BestEntry& e : best) EXPECT_FALSE(e.cublas_rel_error) << e.problem.key();
    EXPECT_TRUE(std::any_of(best.begin(), best.end(),
                            [](const BestEntry& e) { return e.cublas_median_us > 0; }));
  }
  EXPECT_EQ(read_bytes(path), before) << "a reader must not write the file";
  {
    TuningDb writer(path, TuningDb::Mode::read_write);
    const BestEntry e = writer.best_entries().front();
    const int64_t problem = writer.upsert_problem(e.problem);
    const int64_t device = writer.upsert_device(writer.devices().front());
    writer.record_cublas_time(0, problem, device, 10.0, 1.5e-6);
    EXPECT_EQ(writer.best_entries(e.problem.key()).front().cublas_rel_error, 1.5e-6);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(TuningDb::schema_version()));
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM cublas_times"), cublas_rows);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM cublas_times WHERE sgemm_rel_error IS NOT NULL"), "1");
  EXPECT_EQ(raw.scalar("PRAGMA integrity_check"), "ok");
}

TEST(TuningDbCublas, a_time_without_an_error_keeps_the_stored_sgemm_error) {
  TempDir dir;
  TuningDb db(dir.file("tgemm.db"), TuningDb::Mode::read_write);
  GemmTypes f32x3;
  f32x3.compute = ComputeType::f32x3;
  const Problem p = Problem::packed(f32x3, Op::N, Op::N, 256, 256, 256);
  const int64_t problem = db.upsert_problem(p);
  DeviceInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.arch = "sm_90";
  gpu.sm_count = 132;
  const int64_t device = db.upsert_device(gpu);
  TrialResult t;
  t.config = config(128);
  t.status = TrialStatus::ok;
  t.time_min_us = t.time_median_us = t.time_max_us = 5;
  t.runs = 10;
  db.record_trial(0, problem, db.upsert_kernel(config(128), "hash"), device, std::nullopt, t);
  db.update_best(problem, device);
  db.record_cublas_time(0, problem, device, 9.0, 2e-6);
  db.record_cublas_time(0, problem, device, 8.0);
  const BestEntry e = db.best_entries(p.key()).front();
  EXPECT_EQ(e.cublas_median_us, 8.0);
  EXPECT_EQ(e.cublas_rel_error, 2e-6);
  db.record_cublas_time(0, problem, device, 8.0, 3e-6);
  EXPECT_EQ(db.best_entries(p.key()).front().cublas_rel_error, 3e-6);
}

}  // namespace
}  // namespace tgemm
