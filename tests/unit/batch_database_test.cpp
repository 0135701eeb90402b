// Batched problems in the tuning database: a file made before batches migrates (every problem
// a batch of one, its keys and bests unchanged, served to plain GEMMs as before), and a batched
// problem's batch and strides are stored and read back; the selector keeps batches apart.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <string>

#include "db/tuning_db.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/template_registry.h"
#include "tests/common/devices.h"
#include "tests/common/result_databases.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

// problems.key by id, as the file holds it (read past TuningDb, which migrates).
std::map<int64_t, std::string> stored_keys(const std::string& path, int* version) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::map<int64_t, std::string> keys;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "SELECT id, key FROM problems", -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW)
    keys[sqlite3_column_int64(s, 0)] = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
  sqlite3_finalize(s);
  sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &s, nullptr);
  sqlite3_step(s);
  *version = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(raw);
  return keys;
}

TEST(BatchDatabase, schema_version_10_adds_the_batch) { EXPECT_EQ(TuningDb::schema_version(), 10); }

TEST(BatchDatabase, a_file_made_before_batches_reads_as_batches_of_one_with_the_same_keys) {
  testing::TempDir dir;
  const std::string path = testing::unpack_tuned_database(dir);
  int version = 0;
  const std::map<int64_t, std::string> keys = stored_keys(path, &version);
  ASSERT_LT(version, 10);
  ASSERT_FALSE(keys.empty());
  TuningDb db(path, TuningDb::Mode::read_only);  // an older file: a copy migrated in memory
  const std::vector<BestEntry> bests = db.best_entries();
  ASSERT_FALSE(bests.empty());
  for (const BestEntry& e : bests) {
    EXPECT_EQ(e.problem.batch, 1) << e.problem.key();
    EXPECT_FALSE(e.problem.batch_pointers);
    EXPECT_EQ(e.problem.stride_c, 0);
    bool stored = false;
    for (const auto& [id, key] : keys) stored = stored || key == e.problem.key();
    EXPECT_TRUE(stored) << e.problem.key() << " is not a key the file holds";
  }
  int after = 0;
  stored_keys(path, &after);
  EXPECT_EQ(after, version);  // reading never rewrote the file
}

// Bests whose config today's family still accepts (a file this old also holds configs a
// family has since refused, which no build serves) are served exactly to plain GEMMs, and a
// batch of the same shape is not that exact entry.
TEST(BatchDatabase, an_old_files_bests_serve_plain_gemms_and_not_blindly_a_batch) {
  testing::TempDir dir;
  TuningDb db(testing::unpack_result_database(dir, "fp32_h200_s4.db.gz"),
              TuningDb::Mode::read_only);
  const std::vector<BestEntry> bests = db.best_entries();
  ASSERT_FALSE(bests.empty());
  const KernelSelector selector(bests, {}, bests[0].arch, 132, db.trials());
  int served = 0;
  for (const BestEntry& e : bests) {
    if (e.device_name != bests[0].device_name ||
        template_named(e.config.template_name).unsupported_reason(e.config, e.problem, e.arch))
      continue;
    ++served;
    const KernelChoice plain = selector.choose(e.problem);
    EXPECT_EQ(plain.path, Selection::exact) << e.problem.key() << ": " << plain.rule;
    Problem batch = Problem::packed_batch(e.problem.types, e.problem.op_a, e.problem.op_b,
                                          e.problem.m, e.problem.n, e.problem.k, 8);
    batch.beta_zero = e.problem.beta_zero;
    EXPECT_NE(selector.choose(batch).path, Selection::exact) << batch.key();
  }
  EXPECT_GT(served, 10);
}

TEST(BatchDatabase, a_batched_problem_keeps_its_batch_and_strides) {
  testing::TempDir dir;
  const std::string path = dir.file("tgemm.db");
  Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::T, 64, 64, 64, 8);
  p.stride_a = 0;
  p.stride_c = 64 * 64 + 32;
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("test", "tgemm", "sm_90");
    const int64_t device = db.upsert_device(testing::device("NVIDIA H200", "sm_90", 132));
    const int64_t problem = db.upsert_problem(p);
    EXPECT_NE(db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 64, 64)), problem);
    TrialResult t;
    t.config = testing::sgemm_config({});
    t.status = TrialStatus::ok;
    t.time_min_us = t.time_median_us = t.time_max_us = 10;
    t.runs = 10;
    db.record_trial(run, problem, db.upsert_kernel(t.config, "h"), device, std::nullopt, t);
    db.update_best(problem, device);
    db.finish_run(run, "fixture");
  }
  TuningDb db(path, TuningDb::Mode::read_only);
  const std::vector<BestEntry> bests = db.best_entries(p.key());
  ASSERT_EQ(bests.size(), 1u);
  const Problem& read = bests[0].problem;
  EXPECT_EQ(read.key(), p.key());
  EXPECT_EQ(read.batch, 8);
  EXPECT_EQ(read.stride_a, 0);
  EXPECT_EQ(read.stride_b, 64 * 64);
  EXPECT_EQ(read.stride_c, 64 * 64 + 32);
}

// Batch is a fourth size axis, and a batch's configs are tuned in a batch's regime: a batch of
// 16 untuned takes the batch-8 entry of its shape over the plain GEMM tuned on the very shape.
TEST(BatchSelector, a_batch_prefers_the_nearest_tuned_batch_over_the_plain_gemm) {
  const auto entry = [](int64_t batch, const KernelConfig& config) {
    BestEntry e;
    e.problem = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 512, 512, 512, batch);
    e.device_name = "NVIDIA H200";
    e.arch = "sm_90";
    e.config = config;
    e.template_hash = "abc";
    e.trial.status = TrialStatus::ok;
    e.trial.time_median_us = e.problem.flops() / (20 * 1e6);
    return e;
  };
  const KernelConfig plain = testing::sgemm_config({{"BM", 128}});
  const KernelConfig batched = testing::sgemm_config({{"BM", 64}});
  const KernelSelector selector({entry(1, plain), entry(8, batched)}, {}, "sm_90", 132);
  const Problem sixteen = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 512, 512, 512, 16);
  const KernelChoice c = selector.choose(sixteen);
  EXPECT_EQ(c.path, Selection::nearest);
  EXPECT_EQ(c.tuned_key, entry(8, batched).problem.key());
  EXPECT_EQ(c.config, batched);
  // The plain GEMM still gets its own.
  EXPECT_EQ(selector.choose(entry(1, plain).problem).config, plain);
}

}  // namespace
}  // namespace tgemm
