// The steps that take a tuning database from one schema version to the next: db/schema.sql
// (version 1) first, then each later change as one more step, never an edit of an earlier one.
#pragma once

#include <span>

namespace tgemm {

// Step i takes a database from user_version i to i + 1, in the same transaction as the new
// user_version; a new file runs them all. tgemm_checksum is the SQL function every connection
// registers (register_checksum_function).
struct MigrationStep {
  const char* what;  // "migrate the schema from version i to i + 1: <what>"
  const char* sql;
};
std::span<const MigrationStep> migration_steps();

}  // namespace tgemm
