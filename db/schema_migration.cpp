#include "db/schema_migration.h"

#include "db/schema.h"
#include "db/sqlite_statement.h"

namespace tgemm {

void migrate_file(sqlite3* db, const std::string& path) {
  exec(db, path, "start the schema migration", "BEGIN IMMEDIATE");
  try {
    // Read again under the write lock: another tuner may have created or migrated the schema
    // since the first look, and only now can the check and the creation not be split.
    const int version = user_version(db, path);
    if (version > schema_version())
      fail(
          "tuning database '{}' has schema version {}, newer than this build of tgemm supports "
          "(version {})",
          path, version, schema_version());
    if (version == 0) {
      Statement objects(db, path, "inspect the schema",
                        "SELECT type, name FROM sqlite_schema ORDER BY type = 'table' DESC, name "
                        "LIMIT 1");
      if (objects.step())
        fail(
            "'{}' is a SQLite database but not a tgemm tuning database (user_version 0, has "
            "{} '{}'); refusing to add tables to it",
            path, objects.text("type"), objects.text("name"));
    }
    apply_migrations(db, path, version);
    exec(db, path, "commit the schema migration", "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace tgemm
