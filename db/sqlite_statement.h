// The statement layer every database piece speaks SQL through: prepared statements with bound
// values, result columns read by name, and errors that name the file and what failed.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/error.h"

namespace tgemm {

// Wraps the connection's last error in a message that names the file and what failed.
[[noreturn]] void fail_sqlite(sqlite3* db, const std::string& path, int rc, std::string_view what);

// Runs SQL without values (pragmas, transaction control, the schema).
void exec(sqlite3* db, const std::string& path, std::string_view what, const std::string& sql);

// One prepared statement; values are always bound, never spliced into the SQL text. A result
// column is read by its name in the SELECT list (an AS alias wherever the query joins tables
// or computes it), so a query's column order is free to change.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, std::string_view what, std::string_view sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, int64_t(value)); }
  Statement& bind(int index, bool value) { return bind(index, int64_t(value ? 1 : 0)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::optional<int64_t> value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind_null(int index);
  // An empty text or blob is stored as NULL: "not known", "no cubin".
  Statement& bind_or_null(int index, const std::string& text) {
    return text.empty() ? bind_null(index) : bind(index, text);
  }
  Statement& bind_blob(int index, const std::vector<char>& bytes);
  // Rows that point at a run keep NULL instead when there is none (id 0).
  Statement& bind_run(int index, int64_t run_id) {
    return run_id > 0 ? bind(index, run_id) : bind_null(index);
  }

  // True when a row is ready, false when the statement is done.
  bool step();
  void run() {
    while (step()) {
    }
  }
  // Ready to be bound and stepped again.
  void reset();
  // Steps to the single row of a one-column result (RETURNING id, count(*)).
  int64_t single_int();

  // The current row's column `name`; a name the SELECT list lacks is a bug and throws.
  bool is_null(std::string_view name) const {
    return sqlite3_column_type(stmt_, index(name)) == SQLITE_NULL;
  }
  int64_t integer(std::string_view name) const { return sqlite3_column_int64(stmt_, index(name)); }
  double real(std::string_view name) const { return sqlite3_column_double(stmt_, index(name)); }
  std::string text(std::string_view name) const { return text_at(index(name)); }
  std::vector<char> blob(std::string_view name) const;
  // NULL as nullopt.
  std::optional<std::string> optional_text(std::string_view name) const;

  // The columns in SELECT order, for exports that copy every column whatever it is.
  int column_count() const { return sqlite3_column_count(stmt_); }
  std::string column_name(int col) const { return sqlite3_column_name(stmt_, col); }
  std::optional<std::string> cell(int col) const;

  const std::string& path() const { return path_; }

 private:
  Statement& check_bind(int rc);
  int index(std::string_view name) const;
  std::string text_at(int col) const;

  sqlite3* db_;
  const std::string& path_;
  std::string_view what_;
  sqlite3_stmt* stmt_ = nullptr;
  mutable std::vector<std::string> names_;  // the SELECT list, read on the first lookup
};

// A row holding a value the reader cannot use (a hand edit, a foreign writer, damage): the
// read skips it (SkippedRows), never trusts it.
struct BadRow : Error {
  using Error::Error;
};

[[noreturn]] void bad_row(const Statement& s, const char* table, int64_t id, const char* column,
                          const std::string& why);

// Runs `decode` on a column of one row; what it cannot use makes the row a BadRow naming the
// file, the table, the row id and the column.
template <typename Decode>
auto decoded(const Statement& s, const char* table, int64_t id, const char* column,
             Decode&& decode) {
  try {
    return decode();
  } catch (const Error& e) {
    bad_row(s, table, id, column, e.what());
  }
}

// The rows one read skipped, told in one warning when the read is done.
class SkippedRows {
 public:
  SkippedRows(const std::string& path, std::string_view what) : path_(path), what_(what) {}
  ~SkippedRows();
  SkippedRows(const SkippedRows&) = delete;
  SkippedRows& operator=(const SkippedRows&) = delete;

  // Runs `read` on one row; false (and counted) when the row is bad.
  template <typename Read>
  bool keep(Read&& read) {
    try {
      read();
      return true;
    } catch (const BadRow& e) {
      if (count_++ == 0) first_ = e.what();
      return false;
    }
  }

 private:
  const std::string& path_;
  std::string_view what_;
  int64_t count_ = 0;
  std::string first_;
};

}  // namespace tgemm
