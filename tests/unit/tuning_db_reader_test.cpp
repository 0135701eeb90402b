// The library's side of a tuning database: a read-only connection that refuses every write,
// an older file served from a copy migrated in memory, a writer that neither creates nor
// migrates a file unless a tool hands it the migration, and columns read by name.
#include "db/tuning_db_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "db/db_connection.h"
#include "db/sqlite_statement.h"
#include "src/core/error.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/result_databases.h"
#include "tests/common/sql_edit.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql: the version-1 baseline

namespace {

using testing::TempDir;

std::string error_of(const auto& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TuningDbReader, a_read_only_connection_refuses_a_write_and_the_file_keeps_its_bytes) {
  TempDir dir{"reader_refuses"};
  const std::string path = testing::unpack_tuned_database(dir);
  const std::string before = testing::read_bytes(path);
  {
    DbConnection db(path, DbConnection::Mode::read_only);
    for (const char* sql : {"INSERT INTO runs (command_line, tool_version, arch) VALUES "
                            "('planted', 'x', 'sm_90')",
                            "DELETE FROM best", "UPDATE trials SET time_median_us = 1"}) {
      const std::string error = error_of([&] { exec(db.handle(), db.path(), "write", sql); });
      EXPECT_NE(error.find("it is open read-only"), std::string::npos) << sql << ": " << error;
    }
    EXPECT_FALSE(TuningDbReader(db).best_entries().empty());
  }
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(TuningDbReader, an_older_file_is_served_from_a_copy_migrated_in_memory) {
  TempDir dir{"reader_older"};
  const std::string path = dir.file("v1.db");
  testing::edit_database(path, std::string(kSchemaSql) + ";PRAGMA user_version = 1;");
  const std::string before = testing::read_bytes(path);
  {
    DbConnection db(path, DbConnection::Mode::read_only);
    Statement version(db.handle(), db.path(), "read the version", "PRAGMA user_version");
    EXPECT_GT(version.single_int(), 1);
    EXPECT_TRUE(TuningDbReader(db).ceilings().empty());  // a table added by a later version
  }
  EXPECT_EQ(testing::read_bytes(path), before);
}

TEST(TuningDbReader, a_writer_without_migration_neither_creates_nor_migrates_a_file) {
  TempDir dir{"writer_no_migration"};
  const std::string missing = dir.file("missing.db");
  EXPECT_NE(error_of([&] {
              DbConnection(missing, DbConnection::Mode::read_write);
            }).find("does not exist"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));

  const std::string old = dir.file("v1.db");
  testing::edit_database(old, std::string(kSchemaSql) + ";PRAGMA user_version = 1;");
  const std::string before = testing::read_bytes(old);
  EXPECT_NE(error_of([&] {
              DbConnection(old, DbConnection::Mode::read_write);
            }).find("older than this build's"),
            std::string::npos);
  EXPECT_EQ(testing::read_bytes(old), before);
}

TEST(Statement, reads_columns_by_name_and_names_a_column_the_query_lacks) {
  TempDir dir{"statement_names"};
  const std::string path = testing::unpack_tuned_database(dir);
  DbConnection db(path, DbConnection::Mode::read_only);
  Statement s(db.handle(), db.path(), "read a device",
              "SELECT arch AS second, name AS first FROM devices ORDER BY id LIMIT 1");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text("second"), "sm_90");
  EXPECT_FALSE(s.text("first").empty());
  const std::string error = error_of([&] { (void)s.text("sm_count"); });
  EXPECT_NE(error.find("has no column 'sm_count'"), std::string::npos) << error;
}

}  // namespace
}  // namespace tgemm
