// TuningDb::merge_from: two databases built through TuningDb's API merge into their union
// (natural keys deduplicated, ids remapped, runs kept), with the best recomputed, duplicate
// trials resolved to the faster ok one, the latest cuBLAS time kept, inputs never written.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/common/devices.h"
#include "tests/common/fake_cubin.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql: the version-1 baseline

namespace {

namespace fs = std::filesystem;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("tgemm_merge_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// Rows of one query as text, "NULL" for NULL.
std::multiset<std::vector<std::string>> rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::multiset<std::vector<std::string>> out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
      row.push_back(text ? text : "NULL");
    }
    out.insert(row);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

std::string scalar(const std::string& path, const std::string& sql) {
  auto r = rows(path, sql);
  return r.empty() ? "<none>" : r.begin()->front();
}

DeviceInfo device(const std::string& name, const std::string& arch, int sms) {
  DeviceInfo d = testing::device(name, arch, sms);
  d.l2_bytes = 50 << 20;
  return d;
}

KernelConfig config(int64_t label) { return testing::labelled_sgemm_config(label); }

Problem square(int64_t n) { return Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n); }

CompiledKernel compiled(const std::string& key) {
  CompiledKernel c;
  c.ok = true;
  c.entry = "sgemm_simt_kernel";
  c.arch = "sm_90";
  c.nvrtc_version = "13.0";
  c.options = "--gpu-architecture=sm_90 " + key;
  c.cache_key = key;
  c.cubin =
      testing::fake_cubin(c.arch, c.entry, {'c', 'u', 'b', char(0), key.empty() ? 'x' : key[0]});
  c.resources = {true, 96, 16384, 8, 4, 12};
  return c;
}

TrialResult trial(int64_t bm, TrialStatus status, double median_us) {
  TrialResult t;
  t.config = config(bm);
  t.status = status;
  t.error = status == TrialStatus::ok ? "" : "it failed";
  t.time_min_us = median_us * 0.9;
  t.time_median_us = median_us;
  t.time_max_us = median_us * 1.1;
  t.runs = 10;
  return t;
}

// Builds a database through TuningDb the way tgemm-tune fills one.
class Builder {
 public:
  explicit Builder(const std::string& path) : db_(path, TuningDb::Mode::read_write) {
    run_ = db_.begin_run("tgemm-tune --shard", "tgemm 0.1.0", "sm_90");
  }
  // One trial of kernel `bm` (compiled as binary `key`) on an n^3 problem.
  void add(const DeviceInfo& d, int64_t n, int64_t bm, const std::string& key, TrialStatus status,
           double median_us) {
    const int64_t device = db_.upsert_device(d);
    const int64_t problem = db_.upsert_problem(square(n));
    const int64_t kernel = db_.upsert_kernel(config(bm), "hash1");
    auto found = db_.find_binary(key);
    const int64_t binary =
        found ? found->id : db_.store_binary(run_, kernel, compiled(key), BinaryStatus::ok, "");
    db_.record_trial(run_, problem, kernel, device, binary, trial(bm, status, median_us));
    db_.update_best(problem, device);
  }
  void cublas(const DeviceInfo& d, int64_t n, double us) {
    db_.record_cublas_time(run_, db_.upsert_problem(square(n)), db_.upsert_device(d), us);
  }
  TuningDb& db() { return db_; }

 private:
  TuningDb db_;
  int64_t run_ = 0;
};

const DeviceInfo kH200 = device("NVIDIA H200", "sm_90", 132);
const DeviceInfo kT4 = device("Tesla T4", "sm_75", 40);
const DeviceInfo kA100 = device("NVIDIA A100", "sm_80", 108);

// Each trial by what it means, not by id: problem, device, kernel, status, time, binary.
const char* const kTrialRows =
    "SELECT p.key, d.name, k.canonical_name, t.status, t.time_median_us, b.cache_key, "
    "r.command_line FROM trials t JOIN problems p ON p.id = t.problem_id JOIN devices d ON "
    "d.id = t.device_id JOIN kernels k ON k.id = t.kernel_id LEFT JOIN binaries b ON b.id = "
    "t.binary_id LEFT JOIN runs r ON r.id = t.run_id";
const char* const kBestRows =
    "SELECT p.key, d.name, k.canonical_name, t.time_median_us FROM best bs JOIN trials t ON "
    "t.id = bs.trial_id JOIN problems p ON p.id = bs.problem_id JOIN devices d ON d.id = "
    "bs.device_id JOIN kernels k ON k.id = t.kernel_id";

template <typename T>
std::multiset<T> united(const std::multiset<T>& a, const std::multiset<T>& b) {
  std::multiset<T> out = a;
  out.insert(b.begin(), b.end());
  return out;
}

TEST_F(MergeTest, merge_of_two_databases_is_their_union_with_the_best_recomputed) {
  const std::string a = file("a.db"), b = file("b.db"), out = file("out.db");
  {
    Builder x(a);
    x.add(kH200, 1024, 128, "bin128", TrialStatus::ok, 10);
    x.add(kH200, 1024, 64, "bin64", TrialStatus::ok, 12);
    x.add(kT4, 1024, 128, "bin128", TrialStatus::ok, 30);
    x.add(kH200, 2048, 64, "bin64", TrialStatus::wrong_result, 1);
    x.cublas(kH200, 1024, 11);
  }
  {
    Builder y(b);
    y.add(kA100, 4096, 64, "bin64", TrialStatus::ok, 7);  // device and problem new
    y.add(kH200, 2048, 32, "bin32", TrialStatus::ok, 5);  // kernel and binary new
    y.add(kH200, 1024, 32, "bin32", TrialStatus::ok, 8);  // beats a.db's best of 10
    y.add(kT4, 1024, 64, "bin64", TrialStatus::ok, 40);   // slower than a.db's best
  }
  const std::string a_bytes = read_bytes(a), b_bytes = read_bytes(b);
  MergeCounts first, second;
  {
    TuningDb db(out, TuningDb::Mode::read_write);
    first = db.merge_from(a);
    second = db.merge_from(b);
  }
  EXPECT_EQ(read_bytes(a), a_bytes);  // inputs are only read
  EXPECT_EQ(read_bytes(b), b_bytes);
  EXPECT_FALSE(fs::exists(a + "-wal"));

  EXPECT_EQ(first.trials, 4);
  EXPECT_EQ(second.trials, 4);
  EXPECT_EQ(second.duplicate_trials, 0);
  EXPECT_EQ(second.devices, 1);   // the A100
  EXPECT_EQ(second.problems, 1);  // 4096
  EXPECT_EQ(second.kernels, 1);   // BM=32
  EXPECT_EQ(second.binaries, 1);  // bin32

  // Every row of both, by meaning (ids remapped, nothing lost or doubled).
  EXPECT_EQ(rows(out, kTrialRows), united(rows(a, kTrialRows), rows(b, kTrialRows)));
  EXPECT_EQ(rows(out, "SELECT name, arch, sm_count, l2_bytes FROM devices"),
            (std::multiset<std::vector<std::string>>{{"NVIDIA H200", "sm_90", "132", "52428800"},
                                                     {"Tesla T4", "sm_75", "40", "52428800"},
                                                     {"NVIDIA A100", "sm_80", "108", "52428800"}}));
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM problems"), "3");
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM kernels"), "3");
  // Binaries by cache key: the one both files hold (bin64) once.
  const char* binaries = "SELECT cache_key, hex(cubin), checksum, types FROM binaries";
  const auto both = united(rows(a, binaries), rows(b, binaries));
  const std::set<std::vector<std::string>> distinct(both.begin(), both.end());
  EXPECT_EQ(rows(out, binaries),
            (std::multiset<std::vector<std::string>>(distinct.begin(), distinct.end())));
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM binaries"), "3");
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM cublas_times"), "1");
  EXPECT_EQ(scalar(out, "PRAGMA foreign_key_check"), "<none>");

  const std::string h200_1024 = square(1024).key(), h200_2048 = square(2048).key();
  EXPECT_EQ(rows(out, kBestRows),
            (std::multiset<std::vector<std::string>>{
                {h200_1024, "NVIDIA H200", config(32).canonical_name(), "8.0"},
                {h200_1024, "Tesla T4", config(128).canonical_name(), "30.0"},
                {h200_2048, "NVIDIA H200", config(32).canonical_name(), "5.0"},
                {square(4096).key(), "NVIDIA A100", config(64).canonical_name(), "7.0"}}));
  // The dispatcher's view agrees, cubin included.
  TuningDb merged(out, TuningDb::Mode::read_only);
  EXPECT_EQ(merged.best_entries().size(), 4u);
  auto bin = merged.find_binary("bin32");
  ASSERT_TRUE(bin);
  EXPECT_TRUE(bin->checksum_ok);
  EXPECT_EQ(bin->compiled.cubin, compiled("bin32").cubin);
}

TEST_F(MergeTest, duplicate_trials_keep_the_faster_ok_one_or_the_first) {
  const std::string a = file("a.db"), b = file("b.db"), out = file("out.db");
  {
    Builder x(a);
    x.add(kH200, 512, 128, "k128", TrialStatus::ok, 10);         // b faster: b's
    x.add(kH200, 512, 64, "k64", TrialStatus::wrong_result, 1);  // neither ok: a's
    x.add(kH200, 512, 32, "k32", TrialStatus::crashed, 0);       // only b ok: b's
    x.add(kH200, 512, 16, "k16", TrialStatus::ok, 9);            // a faster: a's
  }
  {
    Builder y(b);
    y.add(kH200, 512, 128, "k128", TrialStatus::ok, 8);
    y.add(kH200, 512, 64, "k64", TrialStatus::launch_failed, 0);
    y.add(kH200, 512, 32, "k32", TrialStatus::ok, 9.5);
    y.add(kH200, 512, 16, "k16", TrialStatus::ok, 11);
  }
  TuningDb db(out, TuningDb::Mode::read_write);
  db.merge_from(a);
  const MergeCounts c = db.merge_from(b);
  EXPECT_EQ(c.duplicate_trials, 4);
  EXPECT_EQ(c.replaced_trials, 2);
  EXPECT_EQ(c.trials, 0);
  const std::string key = square(512).key();
  EXPECT_EQ(
      rows(out,
           "SELECT k.canonical_name, t.status, t.time_median_us FROM trials t JOIN "
           "kernels k ON k.id = t.kernel_id"),
      (std::multiset<std::vector<std::string>>{{config(128).canonical_name(), "ok", "8.0"},
                                               {config(64).canonical_name(), "wrong_result", "1.0"},
                                               {config(32).canonical_name(), "ok", "9.5"},
                                               {config(16).canonical_name(), "ok", "9.0"}}));
  const auto best = db.best_entries();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config.canonical_name(), config(128).canonical_name());
  EXPECT_EQ(best[0].trial.time_median_us, 8);
}

TEST_F(MergeTest, merging_the_same_file_twice_adds_nothing_but_its_run) {
  const std::string a = file("a.db"), out = file("out.db");
  {
    Builder x(a);
    x.add(kH200, 256, 128, "k128", TrialStatus::ok, 3);
  }
  TuningDb db(out, TuningDb::Mode::read_write);
  db.merge_from(a);
  const MergeCounts again = db.merge_from(a);
  EXPECT_EQ(again.runs, 1);
  EXPECT_EQ(again.trials + again.devices + again.problems + again.kernels + again.binaries, 0);
  EXPECT_EQ(again.duplicate_trials, 1);
  EXPECT_EQ(again.replaced_trials, 0);
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM trials"), "1");
  EXPECT_EQ(scalar(out, "SELECT count(*) FROM best"), "1");
}

TEST_F(MergeTest, latest_cublas_time_of_a_problem_and_device_wins) {
  const std::string a = file("a.db"), b = file("b.db"), out = file("out.db");
  {
    Builder x(a);
    x.add(kH200, 256, 128, "k128", TrialStatus::ok, 3);
    x.cublas(kH200, 256, 4.0);
  }
  {
    Builder y(b);
    y.add(kH200, 256, 64, "k64", TrialStatus::ok, 5);
    y.cublas(kH200, 256, 4.5);
  }
  exec_sql(a, "UPDATE cublas_times SET measured_at = '2025-03-01T00:00:00Z'");
  exec_sql(b, "UPDATE cublas_times SET measured_at = '2025-01-01T00:00:00Z'");
  {
    TuningDb db(out, TuningDb::Mode::read_write);
    db.merge_from(b);
    db.merge_from(a);  // later measurement, merged second
  }
  EXPECT_EQ(scalar(out, "SELECT median_us FROM cublas_times"), "4.0");
  const std::string out2 = file("out2.db");
  {
    TuningDb db(out2, TuningDb::Mode::read_write);
    db.merge_from(a);
    db.merge_from(b);  // older measurement, merged second: does not replace
  }
  EXPECT_EQ(scalar(out2, "SELECT median_us FROM cublas_times"), "4.0");
}

TEST_F(MergeTest, older_schema_input_is_read_through_a_migrated_copy_and_left_alone) {
  const std::string old = file("v1.db"), out = file("out.db");
  exec_sql(old, std::string(kSchemaSql) + ";PRAGMA user_version = 1;");
  exec_sql(old,
           "INSERT INTO kernels (id, template, template_hash, canonical_name, params) VALUES (1, "
           "'sgemm_simt', 'hash1', '" +
               config(128).canonical_name() +
               "', 'BM=128');"
               "INSERT INTO binaries (kernel_id, arch, nvrtc_version, op_a, op_b, entry, "
               "options, cache_key, cubin, registers, smem_bytes, stack_bytes, "
               "spill_store_bytes, spill_load_bytes, resources_found, compile_ms, status, "
               "reason, log) VALUES (1, 'sm_90', '13.0', 'N', 'N', 'e', '', 'v1-key', " +
               testing::sql_blob(testing::fake_cubin("sm_90", "e", {1, 2})) +
               ", 1, 1, 0, 0, 0, 1, 1, 'ok', '', '')");
  const std::string bytes = read_bytes(old);
  TuningDb db(out, TuningDb::Mode::read_write);
  const MergeCounts c = db.merge_from(old);
  EXPECT_EQ(c.binaries, 1);
  EXPECT_EQ(read_bytes(old), bytes);
  auto found = db.find_binary("v1-key");
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->checksum_ok);  // the migration's checksum came along
  EXPECT_EQ(found->compiled.cubin, testing::fake_cubin("sm_90", "e", {1, 2}));
}

TEST_F(MergeTest, failed_merge_leaves_the_target_as_it_was) {
  const std::string out = file("out.db");
  TuningDb db(out, TuningDb::Mode::read_write);
  std::ofstream(file("junk.db")) << "not a database at all, just text";
  EXPECT_THROW(db.merge_from(file("junk.db")), Error);
  EXPECT_THROW(db.merge_from(file("missing.db")), Error);
  // The connection is still usable, with nothing attached or half-written.
  Builder(file("a.db")).add(kH200, 128, 64, "k64", TrialStatus::ok, 2);
  EXPECT_EQ(db.merge_from(file("a.db")).trials, 1);
}

TEST_F(MergeTest, read_only_target_is_refused) {
  Builder(file("a.db")).add(kH200, 128, 64, "k64", TrialStatus::ok, 2);
  TuningDb reader(file("a.db"), TuningDb::Mode::read_only);
  try {
    reader.merge_from(file("a.db"));
    ADD_FAILURE() << "merged into a read-only database";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tgemm
