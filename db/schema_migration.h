// Creating and migrating tuning database files: the tools' half of the schema. The library
// only reads (an older file through a copy migrated in memory); a tool's writable connection
// passes migrate_file to DbConnection.
#pragma once

#include <sqlite3.h>

#include <string>

namespace tgemm {

// Creates this build's schema in a new, empty file or migrates an older one, atomically under
// the write lock, so concurrent first opens of one file are safe. Refuses a SQLite file that
// holds another program's tables, and a schema newer than this build's.
void migrate_file(sqlite3* db, const std::string& path);

}  // namespace tgemm
