// DbConnection: one SQLite connection to a tuning database, opened only after the file is
// known to be an undamaged tgemm database of a version this build reads, holding nothing but
// tgemm's schema. Every store and the reader run their statements on one.
#pragma once

#include <sqlite3.h>

#include <string>
#include <type_traits>

namespace tgemm {

class DbConnection {
 public:
  enum class Mode { read_write, read_only };
  // Creates the schema in a new file, or brings an older one to this build's, under the write
  // lock (the tools' migrate_file, db/schema_migration.h).
  using FileMigration = void (*)(sqlite3* db, const std::string& path);

  // read_only refuses every write (PRAGMA query_only), and reads a finished file from a folder it
  // cannot write (an install), with or without the -wal/-shm a killed tuner left; a file of an
  // older schema is read through a migrated copy in memory. read_write with `migrate_file` creates
  // a missing file and migrates an older one; without it, it writes only to an existing file of
  // this build's schema. Throws Error naming the path for: a file that is not a SQLite database, a
  // damaged file (PRAGMA quick_check), a schema newer than this build (PRAGMA user_version),
  // schema objects tgemm does not create, a directory, a FIFO or device, a path that cannot be
  // written, a missing file it may not create.
  DbConnection(const std::string& path, Mode mode, FileMigration migrate_file = nullptr);
  // The last read_write connection to close leaves the file in rollback-journal mode, with
  // no -wal/-shm beside it, so a finished database is one file that installs read-only.
  ~DbConnection();
  DbConnection(const DbConnection&) = delete;
  DbConnection& operator=(const DbConnection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }

  // A writer takes the write lock at once (all or nothing on error); a reader gets one
  // consistent snapshot.
  void begin_transaction();
  void commit();
  void rollback();  // nothing to undo when no transaction is open
  // How long a write waits for another connection's write transaction before it fails with
  // a "locked" error (default 10 s).
  void set_busy_timeout_ms(int ms);

 private:
  void connect(bool immutable, bool create);
  void open_checks(FileMigration migrate_file);
  int read_only_version();
  void check_integrity();
  void migrate_a_copy_in_memory(int version);
  void enter_wal_mode();
  void leave_wal_mode();

  std::string path_;
  Mode mode_;
  sqlite3* db_ = nullptr;
  int busy_ms_ = 0;  // the busy timeout (set by connect), also for the journal mode switch
};

// Runs `body` in one transaction of `db`: all of it, or nothing when it throws.
template <typename Body>
auto in_transaction(DbConnection& db, Body&& body) {
  db.begin_transaction();
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      db.commit();
    } else {
      auto result = body();
      db.commit();
      return result;
    }
  } catch (...) {
    db.rollback();
    throw;
  }
}

// What `pragma` (quick_check or integrity_check) finds wrong, "" when nothing. A page too
// damaged to walk fails the check itself (SQLITE_CORRUPT): the same verdict.
std::string integrity_report(sqlite3* db, const std::string& path, const char* pragma);

}  // namespace tgemm
