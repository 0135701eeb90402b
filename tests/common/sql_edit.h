// Edits a database file as `sqlite3 FILE` would, past the schema's CHECKs and foreign keys:
// how a test plants the hand edits, damage and foreign objects a reader must survive.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace tgemm::testing {

inline void edit_database(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK) << path;
  const std::string all = "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF; " + sql;
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(raw, all.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << sql << ": " << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(raw);
}

// Runs `change` on the table of `index` while SQLite does not know the index, so the index no
// longer matches its table: damage that PRAGMA quick_check does not see, integrity_check does.
inline void change_behind_index(const std::string& path, const std::string& index,
                                const std::string& change) {
  const std::string hidden = "tgemm_hidden_" + index;
  edit_database(path, "PRAGMA writable_schema = ON; CREATE TEMP TABLE " + hidden +
                          " AS SELECT * FROM sqlite_schema WHERE name = '" + index +
                          "'; DELETE FROM sqlite_schema WHERE name = '" + index + "'; " +
                          "CREATE TABLE " + hidden + " AS SELECT * FROM temp." + hidden);
  edit_database(path, change);
  edit_database(path, "PRAGMA writable_schema = ON; INSERT INTO sqlite_schema SELECT * FROM " +
                          hidden + "; DROP TABLE " + hidden);
}

}  // namespace tgemm::testing
