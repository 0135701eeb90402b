// A tuning database is input from anywhere: TuningDb refuses files that would run SQL of their
// own (triggers, views, tables tgemm does not create) or hang it (a FIFO), checks a whole file
// on demand (integrity, references), and skips rows that break the schema's rules as it reads
// them, with one warning, since SQLite checks no CHECK constraint on a read-only connection.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/log_capture.h"
#include "tests/common/open_error.h"
#include "tests/common/result_databases.h"
#include "tests/common/sql_edit.h"
#include "tests/common/temp_dir.h"
#include "tgemm/tgemm_c.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::edit_database;
using testing::LogCapture;
using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// A real tuned database (H200, tf32: 5 problems, 435 trials, 2 cubins, 5 ceilings).
struct Tuned {
  TempDir dir{"db_trust"};
  std::string path = testing::unpack_tuned_database(dir);
};

using testing::open_error;

// --- objects tgemm did not create -------------------------------------------------------

TEST(TuningDbTrust, a_planted_trigger_is_refused_before_it_can_run) {
  Tuned db;
  edit_database(db.path,
                "CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM best; DELETE FROM "
                "trials; END");
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    const std::string message = open_error(db.path, mode);
    EXPECT_HAS(message, db.path);
    EXPECT_HAS(message, "trigger 'wipe'");
    EXPECT_HAS(message, "DROP trigger");
  }
  EXPECT_EQ(testing::query_int(db.path, "SELECT count(*) FROM trials"), 435);
}

TEST(TuningDbTrust, views_tables_and_indexes_tgemm_does_not_create_are_refused) {
  for (const char* plant :
       {"CREATE VIEW mine AS SELECT 1", "CREATE TABLE notes (text TEXT)",
        "CREATE INDEX trials_by_error ON trials (error)",
        // tgemm's own view, made to read something else (or to loop forever)
        "DROP VIEW trial_details; CREATE VIEW trial_details AS WITH RECURSIVE c(x) AS (SELECT 1 "
        "UNION ALL SELECT x + 1 FROM c) SELECT x AS trial_id FROM c",
        "DROP INDEX problems_by_shape; CREATE INDEX problems_by_shape ON problems (k)"}) {
    Tuned db;
    edit_database(db.path, plant);
    const std::string message = open_error(db.path, TuningDb::Mode::read_only);
    EXPECT_HAS(message, "runs no SQL of its own") << plant;
  }
}

TEST(TuningDbTrust, sqlite_statistics_and_comment_edits_are_not_foreign) {
  Tuned db;
  edit_database(db.path, "ANALYZE");
  EXPECT_EQ(open_error(db.path, TuningDb::Mode::read_only), "");
  // The same view with other comments and spacing (as schema.sql's wording changed) is tgemm's.
  edit_database(db.path,
                "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, "
                "'FROM best bs', '/* the bests */ FROM   best bs -- one per pair\n') WHERE name = "
                "'best_kernels'");
  EXPECT_EQ(open_error(db.path, TuningDb::Mode::read_only), "");
}

// --- FIFOs and other files that are not databases ----------------------------------------

// Runs `fn` in a child process; false when it has not finished within `seconds` (it is
// killed) or failed.
bool finishes_within(int seconds, const std::function<bool()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(fn() ? 0 : 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(TuningDbTrust, a_fifo_as_the_database_or_its_journal_is_refused_at_once) {
  Tuned db;
  const std::string fifo = db.dir.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    EXPECT_TRUE(finishes_within(10, [&] {
      return open_error(fifo, mode).find("is not a regular file") != std::string::npos;
    }));
  }
  // SQLite opens FILE-journal to check for a hot journal: a FIFO there would block it.
  ASSERT_EQ(::mkfifo((db.path + "-journal").c_str(), 0644), 0);
  EXPECT_TRUE(finishes_within(10, [&] {
    const std::string message = open_error(db.path, TuningDb::Mode::read_only);
    return message.find(db.path + "-journal' beside") != std::string::npos;
  }));
}

TEST(TuningDbTrust, the_library_opens_a_fifo_database_without_hanging) {
  Tuned db;
  const std::string fifo = db.dir.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto create = [](const char* path) {
    tgemmHandle_t handle = nullptr;
    const bool ok = tgemmCreate(&handle, path) == TGEMM_STATUS_SUCCESS;
    return ok && tgemmDestroy(handle) == TGEMM_STATUS_SUCCESS;
  };
  EXPECT_TRUE(finishes_within(10, [&] { return create(fifo.c_str()); }));
  EXPECT_TRUE(finishes_within(10, [&] {
    ::setenv("TGEMM_DB", fifo.c_str(), 1);
    return create(nullptr);
  }));
}

// --- whole-file checks -------------------------------------------------------------------

TEST(TuningDbTrust, integrity_problems_finds_an_index_that_disagrees_with_its_table) {
  Tuned db;
  {
    TuningDb good(db.path, TuningDb::Mode::read_write);
    EXPECT_EQ(good.integrity_problems(), "");
  }
  // The quick check on open does not compare an index with its table.
  testing::change_behind_index(db.path, "problems_by_shape",
                               "UPDATE problems SET m = 7 WHERE id = 2");
  const std::string problems = TuningDb(db.path, TuningDb::Mode::read_only).integrity_problems();
  EXPECT_HAS(problems, "PRAGMA integrity_check");
  EXPECT_HAS(problems, "problems_by_shape");
}

TEST(TuningDbTrust, integrity_problems_finds_references_that_do_not_resolve) {
  Tuned db;
  edit_database(db.path, "DELETE FROM trials WHERE id = (SELECT min(trial_id) FROM best)");
  const std::string problems = TuningDb(db.path, TuningDb::Mode::read_only).integrity_problems();
  EXPECT_HAS(problems, "PRAGMA foreign_key_check");
  EXPECT_HAS(problems, "best row");
  EXPECT_HAS(problems, "missing trials row");
}

// --- rows that break the schema's rules, skipped as they are read -------------------------

struct BadRowCase {
  const char* edit;
  const char* named;  // what the warning names
  std::function<size_t(TuningDb&)> read;
  size_t rows;  // what the read gives without the bad row
};

TEST(TuningDbTrust, rows_breaking_the_schemas_checks_are_skipped_with_one_warning) {
  const auto bests = [](TuningDb& db) { return db.best_entries().size(); };
  const auto trials = [](TuningDb& db) { return db.trials().size(); };
  const auto exported = [](TuningDb& db) { return db.trial_table().rows.size(); };
  const auto ceilings = [](TuningDb& db) { return db.ceilings().size(); };
  const BadRowCase cases[] = {
      {"UPDATE problems SET m = 0 WHERE id = 2", "table problems, row id 2: column m", bests, 4},
      {"UPDATE problems SET k = -5 WHERE id = 4", "column k: -5 is below 1", trials, 435 - 87},
      {"UPDATE problems SET beta_zero = 2 WHERE id = 1", "column beta_zero", bests, 4},
      {"UPDATE trials SET status = 'great' WHERE id = 7", "table trials, row id 7", trials, 434},
      {"UPDATE trials SET status = 'great' WHERE id = 7", "table trials, row id 7", exported, 434},
      {"UPDATE device_ceilings SET value = -1 WHERE kind = 'copy_bandwidth'",
       "device_ceilings row 'copy_bandwidth'", ceilings, 4},
      // Infinity passes the schema's CHECK (value > 0), and is no measurement either.
      {"UPDATE device_ceilings SET value = 9e999 WHERE kind = 'tf32'",
       "device_ceilings row 'tf32' of devices row 1: inf is not a positive finite rate", ceilings,
       4},
  };
  for (const BadRowCase& c : cases) {
    Tuned db;
    edit_database(db.path, c.edit);
    TuningDb reader(db.path, TuningDb::Mode::read_only);
    LogCapture log;
    EXPECT_EQ(c.read(reader), c.rows) << c.edit;
    EXPECT_HAS(log.text(), "skipped");
    EXPECT_HAS(log.text(), db.path);
    EXPECT_HAS(log.text(), c.named);
  }
}

TEST(TuningDbTrust, a_binary_row_breaking_a_check_is_a_binary_not_found) {
  Tuned db;
  edit_database(db.path, "UPDATE binaries SET op_a = 'X'");
  TuningDb reader(db.path, TuningDb::Mode::read_only);
  LogCapture log;
  const std::string key = testing::query_text(db.path, "SELECT cache_key FROM binaries LIMIT 1");
  EXPECT_FALSE(reader.find_binary(key));
  EXPECT_HAS(log.text(), "table binaries");
}

}  // namespace
}  // namespace tgemm
