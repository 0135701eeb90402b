// The library reads a tuning database and writes the cubins it compiles back into it only when
// the application opts in (DispatcherOptions::write_back_cubins or TGEMM_DB_WRITE_BACK=1).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/core/tuning_records.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/fake_cubin.h"
#include "tests/common/result_databases.h"
#include "tests/common/sql_edit.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql: the version-1 baseline

namespace {

using testing::TempDir;

CompiledKernel compiled_miss() {
  CompiledKernel c;
  c.ok = true;
  c.arch = "sm_90";
  c.nvrtc_version = "13.0";
  c.entry = "sgemm_simt_kernel";
  c.cache_key = "compiled-on-a-miss";
  c.cubin = testing::fake_cubin("sm_90", c.entry);
  return c;
}

const KernelConfig kConfig{"sgemm_simt", {{"BM", 64}, {"BN", 64}}};

TEST(CubinWriteBack, is_off_by_default_and_the_file_keeps_its_bytes) {
  TempDir dir{"write_back"};
  const std::string db = testing::unpack_tuned_database(dir);
  const std::string before = testing::read_bytes(db);
  auto records = open_tuning_records(db);
  try {
    records->write_back(kConfig, "hash", compiled_miss());
    ADD_FAILURE() << "write_back wrote with write-back off";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TGEMM_DB_WRITE_BACK=1"), std::string::npos) << e.what();
  }
  records.reset();
  EXPECT_EQ(testing::read_bytes(db), before);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

TEST(CubinWriteBack, stores_the_cubin_when_turned_on) {
  TempDir dir{"write_back_on"};
  const std::string db = testing::unpack_tuned_database(dir);
  TuningDb(db, TuningDb::Mode::read_write);  // a tool migrates the file (schema 7) first
  open_tuning_records(db, CubinWriteBack::on)->write_back(kConfig, "hash", compiled_miss());
  const auto found = TuningDb(db, TuningDb::Mode::read_only).find_binary("compiled-on-a-miss");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->compiled.cubin, compiled_miss().cubin);
}

// The library reads an older file through a copy migrated in memory, but never migrates the
// file itself: the write-back is refused and the next process compiles again.
TEST(CubinWriteBack, is_refused_on_an_older_schema_and_the_file_keeps_its_bytes) {
  TempDir dir{"write_back_older"};
  const std::string db = dir.file("v1.db");
  testing::edit_database(db, std::string(kSchemaSql) + ";PRAGMA user_version = 1;");
  const std::string before = testing::read_bytes(db);
  auto records = open_tuning_records(db, CubinWriteBack::on);
  try {
    records->write_back(kConfig, "hash", compiled_miss());
    ADD_FAILURE() << "write_back migrated an older file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("older than this build's"), std::string::npos) << e.what();
  }
  records.reset();
  EXPECT_EQ(testing::read_bytes(db), before);
}

}  // namespace
}  // namespace tgemm
