#include "db/db_connection.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "db/schema.h"
#include "db/sqlite_statement.h"

namespace tgemm {

namespace {

// Two tuners may write the same file; a writer waits this long for the other's transaction
// (set_busy_timeout_ms changes it per connection).
constexpr int kBusyTimeoutMs = 10000;

// "file:" URI of a path for sqlite3_open_v2 (SQLITE_OPEN_URI): absolute, and every byte
// but the plainest percent-encoded, so '?', '#' and '%' in a name stay part of it.
std::string file_uri(const std::string& path) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).string();
  if (ec) abs = path;
  std::string uri = "file://";
  for (unsigned char c : abs) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~')
      uri += char(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}

// SQLite would wait forever on a FIFO (or read a device) given as the database or found beside
// it as its journal, and refuses a linked journal with only "unable to open database file".
void refuse_special_files(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail("tuning database '{}' is not a regular file (a FIFO, device or socket); name a file",
         path);
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    const std::string side = path + suffix;
    if (::lstat(side.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail(
          "'{}' beside tuning database '{}' is not a regular file (a link, FIFO, device or "
          "socket); SQLite keeps its journal there: remove it",
          side, path);
  }
}

bool non_empty_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > 0;
}

}  // namespace

DbConnection::DbConnection(const std::string& path, Mode mode, FileMigration migrate_file)
    : path_(path), mode_(mode) {
  namespace fs = std::filesystem;
  if (path.empty()) fail("tuning database path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) fail("tuning database '{}' is a directory, not a file", path);
  refuse_special_files(path);
  if (!fs::exists(st)) {
    if (!migrate_file) fail("tuning database '{}' does not exist", path);
    // SQLite says only "unable to open database file"; say which part of the path is wrong.
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const fs::file_status dir_st = fs::status(dir, ec);
    if (!fs::exists(dir_st))
      fail("cannot create tuning database '{}': directory '{}' does not exist", path, dir.string());
    if (!fs::is_directory(dir_st))
      fail("cannot create tuning database '{}': '{}' is not a directory", path, dir.string());
  }
  connect(false, migrate_file != nullptr);
  try {
    open_checks(migrate_file);
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

void DbConnection::connect(bool immutable, bool create) {
  // Readers open by URI: mode=ro, and immutable=1 for an install nobody writes (see
  // read_only_version); writers by plain path.
  const bool ro = mode_ == Mode::read_only;
  const std::string name =
      ro ? file_uri(path_) + "?mode=ro" + (immutable ? "&immutable=1" : "") : path_;
  const int flags = ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                       : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    const int err = db_ ? sqlite3_system_errno(db_) : 0;
    if (err != 0) message += fmt::format(" ({})", std::strerror(err));
    sqlite3_close_v2(db_);
    db_ = nullptr;
    fail("cannot {} tuning database '{}': {}", create ? "open or create" : "open", path_, message);
  }
  sqlite3_extended_result_codes(db_, 1);
  busy_ms_ = kBusyTimeoutMs;
  sqlite3_busy_timeout(db_, busy_ms_);
  register_checksum_function(db_, path_);
}

// The schema version, for a reader. A WAL-mode file in a folder this user cannot write (an
// install: root-owned /opt/app, mode 644) fails the first read, since SQLite cannot create
// the -shm index beside it. Without a -wal log the main file holds every commit, so it is
// read as immutable (which assumes nobody writes it meanwhile: an install, not a folder a
// tuner is working in); a log that cannot be read is named rather than silently skipped.
int DbConnection::read_only_version() {
  int64_t version = 0;
  int rc = SQLITE_OK;
  {
    sqlite3_stmt* stmt = nullptr;
    rc = sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) version = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  if (rc == SQLITE_ROW) return checked_schema_version(version, path_);
  const int primary = rc & 0xff;
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path_).parent_path();
  if (dir.empty()) dir = ".";
  const bool cannot_write_folder = ::access(dir.c_str(), W_OK) != 0;
  if ((primary != SQLITE_READONLY && primary != SQLITE_CANTOPEN) || !cannot_write_folder)
    fail_sqlite(db_, path_, rc, "read the schema version");
  if (non_empty_file(path_ + "-wal"))
    fail(
        "cannot read tuning database '{}': its write-ahead log '{}-wal' holds changes, but "
        "'{}-shm' is missing or unreadable and this user cannot write the folder '{}' to "
        "rebuild it; install the three files together, or open the database once read-write "
        "(e.g. with tgemm-tune) so the log is folded into the file",
        path_, path_, path_, dir.string());
  sqlite3_close_v2(db_);
  db_ = nullptr;
  connect(true, false);
  return user_version(db_, path_);
}

// Everything after sqlite3_open: nothing here writes before the file is known to be an
// undamaged tgemm database of a version this build understands, so a refused file keeps its
// bytes.
void DbConnection::open_checks(FileMigration migrate_file) {
  if (mode_ == Mode::read_write && sqlite3_db_readonly(db_, "main") == 1)
    fail(
        "cannot open tuning database '{}' for writing: permission denied (tgemm-db and the "
        "dispatcher can still read it)",
        path_);
  exec(db_, path_, "enable foreign keys", "PRAGMA foreign_keys = ON");

  // The first read: "not a database" shows here.
  const int version = mode_ == Mode::read_only ? read_only_version() : user_version(db_, path_);
  if (version > schema_version())
    fail(
        "tuning database '{}' has schema version {}, newer than this build of tgemm supports "
        "(version {}); use a newer tgemm, or another database file",
        path_, version, schema_version());
  check_integrity();
  if (version > 0) refuse_foreign_objects(db_, path_);

  if (mode_ == Mode::read_only) {
    if (version == 0)
      fail("'{}' is not a tgemm tuning database (it has no tgemm schema; tgemm-tune creates one)",
           path_);
    if (version < kOldestReadableVersion)
      fail(
          "tuning database '{}' has schema version {} but this build reads versions {} to {}; "
          "open it once read-write (e.g. with tgemm-tune) to migrate it",
          path_, version, kOldestReadableVersion, schema_version());
    if (version < schema_version()) migrate_a_copy_in_memory(version);
    // A reader writes nothing, not even to the migrated copy it may be reading.
    exec(db_, path_, "make the connection read-only", "PRAGMA query_only = ON");
    return;
  }
  // A current file needs no write lock, so opening never waits behind a running tuner.
  if (version < schema_version()) {
    if (!migrate_file)
      fail(
          "tuning database '{}' has schema version {}, older than this build's ({}); open it "
          "once with tgemm-tune or tgemm-db to migrate it before anything else writes to it",
          path_, version, schema_version());
    migrate_file(db_, path_);
  }
  // WAL lets the dispatcher read while a tuner writes; NORMAL sync is safe under WAL. The last
  // writer to close goes back to a rollback journal (leave_wal_mode).
  enter_wal_mode();
  exec(db_, path_, "set synchronous mode", "PRAGMA synchronous = NORMAL");
}

std::string integrity_report(sqlite3* db, const std::string& path, const char* pragma) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, pragma, -1, &stmt, nullptr);
  std::string problems;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) break;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    const std::string line = text ? text : "";
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
    fail_sqlite(db, path, rc, fmt::format("check it for damage ({})", pragma));
  if (rc != SQLITE_DONE)
    problems += (problems.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db));
  return problems;
}

// PRAGMA quick_check: damaged pages are reported on open, not when a query happens on them.
void DbConnection::check_integrity() {
  const std::string problems = integrity_report(db_, path_, "PRAGMA quick_check(3)");
  if (!problems.empty())
    fail(
        "tuning database '{}' is damaged (PRAGMA quick_check: {}); restore it from a copy, or "
        "move it aside and tune again",
        path_, problems);
}

// A reader of an older file (an installed database, read-only) reads a migrated copy held in
// memory, so every query sees this build's schema and the file itself is never written.
void DbConnection::migrate_a_copy_in_memory(int version) {
  sqlite3* memory = nullptr;
  int rc =
      sqlite3_open_v2(":memory:", &memory, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(memory);
    fail("cannot open an in-memory copy of tuning database '{}' to migrate it", path_);
  }
  sqlite3_backup* copy = sqlite3_backup_init(memory, "main", db_, "main");
  rc = copy ? sqlite3_backup_step(copy, -1) : sqlite3_errcode(memory);
  if (copy) sqlite3_backup_finish(copy);
  if (rc != SQLITE_DONE) {
    sqlite3_close_v2(memory);
    fail_sqlite(db_, path_, rc, "copy the database into memory to migrate it");
  }
  sqlite3_close_v2(db_);
  db_ = memory;
  sqlite3_extended_result_codes(db_, 1);
  register_checksum_function(db_, path_);
  exec(db_, path_, "enable foreign keys", "PRAGMA foreign_keys = ON");
  apply_migrations(db_, path_, version);
}

DbConnection::~DbConnection() {
  if (!db_) return;
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (mode_ == Mode::read_write) leave_wal_mode();
  sqlite3_close_v2(db_);
}

// Changing the journal mode needs the file to itself for a moment, and SQLite fails it as
// busy without calling the busy handler; so wait here, as long as any other write would.
void DbConnection::enter_wal_mode() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms_);
  while (true) {
    const int rc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
      fail_sqlite(db_, path_, rc, "switch to WAL mode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A finished file in rollback-journal mode is one self-contained file that any user can read
// from a read-only folder. Only the last connection can switch (it needs the file to itself),
// so any other one fails at once and leaves it to that one.
void DbConnection::leave_wal_mode() {
  sqlite3_busy_timeout(db_, 0);
  sqlite3_exec(db_, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
}

void DbConnection::set_busy_timeout_ms(int ms) {
  busy_ms_ = ms;
  sqlite3_busy_timeout(db_, ms);
}

void DbConnection::begin_transaction() {
  // IMMEDIATE takes the write lock now (waiting up to the busy timeout), so a writer never
  // fails halfway through; a reader's plain BEGIN gives one consistent snapshot.
  if (mode_ == Mode::read_write)
    exec(db_, path_, "begin a write transaction", "BEGIN IMMEDIATE");
  else
    exec(db_, path_, "begin a read transaction", "BEGIN");
}

void DbConnection::commit() { exec(db_, path_, "commit", "COMMIT"); }

void DbConnection::rollback() {
  // Called from error paths: with no open transaction (SQLite may have rolled back already)
  // there is nothing to undo.
  if (sqlite3_get_autocommit(db_)) return;
  exec(db_, path_, "roll back", "ROLLBACK");
}

}  // namespace tgemm
