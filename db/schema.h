// The tuning database's schema as this build knows it: its version, the checksum function the
// migrations call, the migrations themselves, and the check that a file holds tgemm's schema
// and nothing else.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tgemm {

int schema_version();  // the user_version this build writes

// The oldest schema a reader opens (through a copy migrated in memory).
inline constexpr int kOldestReadableVersion = 1;

// The checksum stored beside every cubin (binaries.checksum): a stable hash of its bytes.
std::string cubin_checksum(const std::vector<char>& cubin);
// tgemm_checksum(blob) in SQL: cubin_checksum of the bytes, NULL for NULL.
void register_checksum_function(sqlite3* db, const std::string& path);

// A file's schema version as read (PRAGMA user_version); a negative one is refused.
int checked_schema_version(int64_t version, const std::string& path);
int user_version(sqlite3* db, const std::string& path);

// Takes a database from schema version `from` to this build's and records the new version;
// the transaction around it is the caller's.
void apply_migrations(sqlite3* db, const std::string& path, int from);

// Refuses a file holding schema objects tgemm does not create (a trigger, a view, an unknown
// table: they would run SQL inside the tools) or a view or index changed from tgemm's own.
void refuse_foreign_objects(sqlite3* db, const std::string& path);

}  // namespace tgemm
