#include "db/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "db/migrations.h"
#include "db/sqlite_statement.h"
#include "src/core/hash.h"

namespace tgemm {

namespace {

void sql_checksum(sqlite3_context* context, int, sqlite3_value** args) {
  if (sqlite3_value_type(args[0]) == SQLITE_NULL) return sqlite3_result_null(context);
  const auto* data = static_cast<const char*>(sqlite3_value_blob(args[0]));
  const std::string sum = stable_hash(std::string_view(data, size_t(sqlite3_value_bytes(args[0]))));
  sqlite3_result_text(context, sum.c_str(), int(sum.size()), SQLITE_TRANSIENT);
}

// SQL without its comments and with single spaces, so schema texts that differ only there
// (schema.sql's comments were reworded over time) compare equal.
std::string normalized_sql(std::string_view sql) {
  std::string out;
  char quote = 0;
  auto space = [&out] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      out += c;
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
      out += c;
    } else if (sql.substr(i, 2) == "--") {
      i = std::min(sql.find('\n', i), sql.size());
      space();
    } else if (sql.substr(i, 2) == "/*") {
      i = std::min(sql.find("*/", i + 2), sql.size()) + 1;
      space();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      space();
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct SchemaObject {
  std::string type;           // table, index, view
  std::set<std::string> sql;  // normalized_sql at each schema version; empty for SQLite's own
};

// Every object tgemm creates, by name, with its text at every schema version (a file of an
// older version still holds the views and indexes of its day): a new file, made in memory and
// migrated one version at a time.
const std::map<std::string, SchemaObject>& tgemm_schema() {
  static const std::map<std::string, SchemaObject> objects = [] {
    const std::string path = ":memory:";
    sqlite3* memory = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &memory, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
    std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(memory, sqlite3_close);
    if (rc != SQLITE_OK) fail_sqlite(memory, path, rc, "make this build's schema in memory");
    register_checksum_function(memory, path);
    std::map<std::string, SchemaObject> out;
    for (int v = 0; v < schema_version(); ++v) {
      exec(memory, path, fmt::format("make schema version {}", v + 1),
           migration_steps()[size_t(v)].sql);
      Statement s(memory, path, "read this build's schema",
                  "SELECT type, name, coalesce(sql, '') AS sql FROM sqlite_schema");
      while (s.step()) {
        SchemaObject& object = out[s.text("name")];
        object.type = s.text("type");
        object.sql.insert(normalized_sql(s.text("sql")));
      }
    }
    return out;
  }();
  return objects;
}

}  // namespace

int schema_version() { return int(migration_steps().size()); }

std::string cubin_checksum(const std::vector<char>& cubin) {
  return stable_hash(std::string_view(cubin.data(), cubin.size()));
}

void register_checksum_function(sqlite3* db, const std::string& path) {
  const int rc =
      sqlite3_create_function(db, "tgemm_checksum", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                              sql_checksum, nullptr, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(db, path, rc, "register the checksum function");
}

// tgemm writes 0 (a new file) to schema_version(): a negative one is damage or another
// program's, and no migration starts from it.
int checked_schema_version(int64_t version, const std::string& path) {
  if (version < 0)
    fail(
        "tuning database '{}' has schema version {}, which no tgemm writes (a damaged file, or "
        "another program's); use another database file",
        path, version);
  return int(version);
}

int user_version(sqlite3* db, const std::string& path) {
  return checked_schema_version(
      Statement(db, path, "read the schema version", "PRAGMA user_version").single_int(), path);
}

void apply_migrations(sqlite3* db, const std::string& path, int from) {
  const auto steps = migration_steps();
  for (int v = from; v < schema_version(); ++v)
    exec(db, path,
         fmt::format("migrate the schema from version {} to {}: {}", v, v + 1,
                     steps[size_t(v)].what),
         steps[size_t(v)].sql);
  // PRAGMA takes no bound values; the number is this build's constant.
  if (from < schema_version())
    exec(db, path, "record the schema version",
         fmt::format("PRAGMA user_version = {}", schema_version()));
}

// A tuning database holds only what tgemm creates: a trigger would run its SQL inside the
// tuner, a changed view or index would change what queries read. Such a file is refused
// before any statement runs on it. Tables are matched by name (an older schema has fewer
// columns); what their rows hold is checked as they are read.
void refuse_foreign_objects(sqlite3* db, const std::string& path) {
  const auto& expected = tgemm_schema();
  Statement s(db, path, "inspect the schema",
              "SELECT type, name, coalesce(sql, '') AS sql FROM sqlite_schema ORDER BY rowid");
  while (s.step()) {
    const std::string type = s.text("type"), name = s.text("name");
    // SQLite's own statistics (an ANALYZE in the sqlite3 shell).
    if (type == "table" && (name == "sqlite_stat1" || name == "sqlite_stat4")) continue;
    const auto it = expected.find(name);
    const bool foreign = it == expected.end() || it->second.type != type;
    if (foreign || (type != "table" && !it->second.sql.count(normalized_sql(s.text("sql")))))
      fail(
          "tuning database '{}' holds {} '{}' {}; a tuning database runs no SQL of its own: "
          "remove it (sqlite3 '{}' 'DROP {} \"{}\"') or use another file",
          path, type, name, foreign ? "that tgemm does not create" : "changed from tgemm's own",
          path, type, name);
  }
}

}  // namespace tgemm
