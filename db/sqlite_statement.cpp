#include "db/sqlite_statement.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/core/library_log.h"

namespace tgemm {

void fail_sqlite(sqlite3* db, const std::string& path, int rc, std::string_view what) {
  const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      fail("'{}' is not a SQLite database or is corrupt ({}) while trying to {}", path, message,
           what);
    case SQLITE_CORRUPT:
      fail("tuning database '{}' is corrupt ({}) while trying to {}", path, message, what);
    case SQLITE_READONLY:
      // A hot journal: a writer stopped mid-transaction, and only a writer may roll it back.
      if (db && sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK)
        fail(
            "cannot {} in tuning database '{}': its journal '{}-journal' holds a transaction "
            "a writer left unfinished, which a read-only open cannot roll back; open the "
            "database once read-write (e.g. with tgemm-tune), or move the journal away if it "
            "is not this database's",
            what, path, path);
      fail("cannot {} in tuning database '{}': it is open read-only ({})", what, path, message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      fail("tuning database '{}' is locked by another writer; gave up waiting to {} ({})", path,
           what, message);
    default:
      fail("tuning database '{}': cannot {}: {}", path, what, message);
  }
}

void exec(sqlite3* db, const std::string& path, std::string_view what, const std::string& sql) {
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(db, path, rc, what);
}

Statement::Statement(sqlite3* db, const std::string& path, std::string_view what,
                     std::string_view sql)
    : db_(db), path_(path), what_(what) {
  int rc = sqlite3_prepare_v2(db, sql.data(), int(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(db_, path_, rc, what_);
}

Statement& Statement::bind(int index, int64_t value) {
  return check_bind(sqlite3_bind_int64(stmt_, index, value));
}

Statement& Statement::bind(int index, double value) {
  return check_bind(sqlite3_bind_double(stmt_, index, value));
}

Statement& Statement::bind(int index, std::string_view value) {
  return check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

Statement& Statement::bind_null(int index) { return check_bind(sqlite3_bind_null(stmt_, index)); }

Statement& Statement::bind_blob(int index, const std::vector<char>& bytes) {
  if (bytes.empty()) return bind_null(index);
  return check_bind(
      sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
}

Statement& Statement::check_bind(int rc) {
  if (rc != SQLITE_OK) fail_sqlite(db_, path_, rc, what_);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail_sqlite(db_, path_, rc, what_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::single_int() {
  if (!step()) fail("tuning database '{}': {} returned no row", path_, what_);
  if (column_count() != 1)
    fail("tuning database '{}': {} returned {} columns, not one", path_, what_, column_count());
  const int64_t value = sqlite3_column_int64(stmt_, 0);
  run();
  return value;
}

int Statement::index(std::string_view name) const {
  if (names_.empty())
    for (int c = 0; c < column_count(); ++c) names_.push_back(column_name(c));
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end())
    fail("tuning database '{}': the query to {} has no column '{}'", path_, what_, name);
  return int(it - names_.begin());
}

std::string Statement::text_at(int col) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return text ? std::string(text, size_t(sqlite3_column_bytes(stmt_, col))) : std::string();
}

std::vector<char> Statement::blob(std::string_view name) const {
  const int col = index(name);
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  return data ? std::vector<char>(data, data + sqlite3_column_bytes(stmt_, col))
              : std::vector<char>();
}

std::optional<std::string> Statement::optional_text(std::string_view name) const {
  return cell(index(name));
}

std::optional<std::string> Statement::cell(int col) const {
  if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
  return text_at(col);
}

void bad_row(const Statement& s, const char* table, int64_t id, const char* column,
             const std::string& why) {
  throw BadRow(fmt::format("tuning database '{}': table {}, row id {}: column {}: {}", s.path(),
                           table, id, column, why));
}

SkippedRows::~SkippedRows() {
  if (count_ > 0)
    library_log().warn("tgemm: skipped {} row(s) of tuning database '{}' to {}, e.g. {}", count_,
                       path_, what_, first_.substr(first_.find(": table ") + 2));
}

}  // namespace tgemm
