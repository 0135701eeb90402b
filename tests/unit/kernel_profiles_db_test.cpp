// The schema 7 kernel_profiles table: a schema-5 database migrates with nothing lost, a
// reader of one sees no profiles without writing it, storing a problem's profiles replaces
// only that problem's, the values come back as stored (missing metrics stay missing), a
// forgotten problem takes its profiles along and a merge carries them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::read_bytes;
using testing::TempDir;

const char* const kTables[] = {"runs",   "devices", "kernels",      "binaries",       "problems",
                               "trials", "best",    "cublas_times", "device_ceilings"};

void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// The kept session-4 database (schema 4) taken to schema 5 by the migrations before this one:
// what a tgemm of schema 5 left on disk, with ceilings stored.
std::string schema_5_file(const TempDir& dir) {
  const std::string path = dir.file("s5.db");
  const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                              "/tests/data/databases/fp32_h200_s4.db.gz' > '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    db.store_ceilings(0, db.upsert_device(db.devices().front()),
                      {{kCopyBandwidthCeiling, 4.1e12, "cudaMemcpyAsync", "1 GiB"}});
  }
  exec_sql(path,
           "DROP INDEX trials_by_binary; ALTER TABLE binaries DROP COLUMN code_hash; "
           "DROP VIEW tgemm_best_kernels; DROP VIEW best_kernels; "
           "ALTER TABLE kernels DROP COLUMN library; "
           "DROP TABLE kernel_profiles; ALTER TABLE trials DROP COLUMN nvrtc_version; "
           "ALTER TABLE trials DROP COLUMN driver_version; ALTER TABLE problems DROP COLUMN batch; "
           "ALTER TABLE problems DROP COLUMN batch_pointers; "
           "ALTER TABLE problems DROP COLUMN stride_a; ALTER TABLE problems DROP COLUMN stride_b; "
           "ALTER TABLE problems DROP COLUMN stride_c; ALTER TABLE binaries DROP COLUMN "
           "batch_form; ALTER TABLE problems DROP COLUMN epilogue; "
           "ALTER TABLE binaries DROP COLUMN epilogue; PRAGMA user_version = 5;");
  return path;
}

KernelProfile profile(const std::string& contender, double us) {
  KernelProfile p;
  p.contender = contender;
  p.config = contender == kTgemmContender ? "sgemm_simt_BM128_BN128" : "";
  p.kernel_name = contender == kTgemmContender ? "sgemm_simt_kernel" : "sm90_xmma_gemm_f32f32";
  p.ncu_version = "2025.1.0.0";
  p.duration_us = us;
  p.sm_throughput_pct = 80.5;
  p.dram_read_bytes = 5.0e7;
  p.registers = 128;
  p.stalls = {{"long_scoreboard", 3.25}, {"barrier", 0.5}};
  return p;
}

struct Fixture {
  TempDir dir{"profiles_db"};
  std::string path = dir.file("t.db");
  TuningDb db{path, TuningDb::Mode::read_write};
  int64_t device = 0, p1 = 0, p2 = 0;
  Fixture() {
    DeviceInfo h200;
    h200.name = "NVIDIA H200";
    h200.arch = "sm_90";
    h200.sm_count = 132;
    device = db.upsert_device(h200);
    p1 = db.upsert_problem(Problem::packed(gemm_types("f32"), Op::N, Op::N, 2048, 2048, 2048));
    p2 = db.upsert_problem(Problem::packed(gemm_types("f32"), Op::N, Op::N, 4096, 4096, 4096));
  }
};

TEST(KernelProfilesDb, schema_5_file_migrates_to_the_current_version_with_nothing_lost) {
  TempDir dir{"profiles_migrate"};
  const std::string path = schema_5_file(dir);
  ASSERT_EQ(query_int(path, "PRAGMA user_version"), 5);
  std::vector<int64_t> before;
  for (const char* t : kTables)
    before.push_back(query_int(path, std::string("select count(*) from ") + t));
  ASSERT_EQ(before.back(), 1);  // the ceiling
  const int64_t cubins = query_int(path, "select sum(length(cubin)) from binaries");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    EXPECT_TRUE(db.profiles().empty());
  }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), TuningDb::schema_version());
  for (size_t i = 0; i < std::size(kTables); ++i)
    EXPECT_EQ(query_int(path, std::string("select count(*) from ") + kTables[i]), before[i])
        << kTables[i];
  EXPECT_EQ(query_int(path, "select sum(length(cubin)) from binaries"), cubins);
  EXPECT_EQ(query_int(path, "select count(*) from kernel_profiles"), 0);
}

TEST(KernelProfilesDb, reader_of_schema_5_sees_no_profiles_and_never_writes) {
  TempDir dir{"profiles_reader"};
  const std::string path = schema_5_file(dir);
  const std::string bytes = read_bytes(path);
  {
    TuningDb db(path, TuningDb::Mode::read_only);
    EXPECT_TRUE(db.profiles().empty());
    EXPECT_FALSE(db.best_entries().empty());
  }
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(KernelProfilesDb, profiles_come_back_as_stored_with_missing_metrics_missing) {
  Fixture f;
  f.db.store_profiles(f.p1, f.device,
                      {profile(kTgemmContender, 1200), profile(kCublasContender, 1000)});
  const auto got = f.db.profiles();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].contender, kTgemmContender);  // tgemm first
  EXPECT_EQ(got[0].problem_key, "f32_NN_m2048_n2048_k2048_b0_a16.16.16");
  EXPECT_EQ(got[0].device_name, "NVIDIA H200");
  EXPECT_EQ(got[0].config, "sgemm_simt_BM128_BN128");
  EXPECT_EQ(got[0].kernel_name, "sgemm_simt_kernel");
  EXPECT_EQ(got[0].ncu_version, "2025.1.0.0");
  EXPECT_DOUBLE_EQ(*got[0].duration_us, 1200);
  EXPECT_DOUBLE_EQ(*got[0].dram_read_bytes, 5.0e7);
  EXPECT_DOUBLE_EQ(*got[0].registers, 128);
  EXPECT_FALSE(got[0].tensor_pipe_pct);
  EXPECT_FALSE(got[0].global_excess_sectors);
  ASSERT_EQ(got[0].stalls.size(), 2u);
  EXPECT_EQ(got[0].stalls[0].name, "long_scoreboard");
  EXPECT_DOUBLE_EQ(got[0].stalls[0].value, 3.25);
  EXPECT_FALSE(got[0].profiled_at.empty());
  EXPECT_EQ(got[1].contender, kCublasContender);
  EXPECT_EQ(got[1].config, "");
  EXPECT_TRUE(f.db.profiles("NVIDIA A100").empty());
}

TEST(KernelProfilesDb, reprofiling_replaces_that_problems_rows_only) {
  Fixture f;
  f.db.store_profiles(f.p1, f.device,
                      {profile(kTgemmContender, 1200), profile(kCublasContender, 1000)});
  f.db.store_profiles(f.p2, f.device,
                      {profile(kTgemmContender, 9000), profile(kCublasContender, 8000)});
  f.db.store_profiles(f.p1, f.device, {profile(kTgemmContender, 1100)});
  EXPECT_EQ(query_int(f.path, "select count(*) from kernel_profiles"), 3);
  EXPECT_EQ(query_int(f.path, "select count(*) from kernel_profiles where problem_id = " +
                                  std::to_string(f.p1)),
            1);
  EXPECT_EQ(query_int(f.path,
                      "select cast(duration_us as int) from kernel_profiles where "
                      "problem_id = " +
                          std::to_string(f.p1)),
            1100);
  EXPECT_EQ(query_int(f.path, "select count(*) from kernel_profiles where problem_id = " +
                                  std::to_string(f.p2)),
            2);
}

TEST(KernelProfilesDb, rejects_an_unknown_contender_and_keeps_the_old_rows) {
  Fixture f;
  f.db.store_profiles(f.p1, f.device, {profile(kTgemmContender, 1200)});
  EXPECT_THROW(f.db.store_profiles(f.p1, f.device, {profile("cutlass", 1)}), Error);
  EXPECT_EQ(query_int(f.path, "select count(*) from kernel_profiles"), 1);
}

TEST(KernelProfilesDb, forgetting_a_problem_removes_its_profiles) {
  Fixture f;
  f.db.store_profiles(f.p1, f.device, {profile(kTgemmContender, 1200)});
  f.db.store_profiles(f.p2, f.device, {profile(kTgemmContender, 9000)});
  f.db.forget_problem("f32_NN_m2048_n2048_k2048_b0_a16.16.16");
  EXPECT_EQ(query_int(f.path, "select count(*) from kernel_profiles"), 1);
}

TEST(KernelProfilesDb, merge_fills_the_problems_this_file_has_no_profiles_of) {
  TempDir dir{"profiles_merge"};
  std::string other_path;
  {
    Fixture other;
    other.db.store_profiles(other.p1, other.device,
                            {profile(kTgemmContender, 1200), profile(kCublasContender, 1000)});
    other.db.store_profiles(other.p2, other.device, {profile(kTgemmContender, 9000)});
    other_path = dir.file("other.db");
    other.db.copy_to(other_path);
  }
  Fixture here;
  here.db.store_profiles(here.p1, here.device, {profile(kTgemmContender, 1111)});
  const MergeCounts counts = here.db.merge_from(other_path);
  EXPECT_EQ(counts.profiles, 1);  // p2's; p1 keeps this file's single profile
  const auto got = here.db.profiles();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(*got[0].duration_us, 1111);
  EXPECT_DOUBLE_EQ(*got[1].duration_us, 9000);
}

}  // namespace
}  // namespace tgemm
