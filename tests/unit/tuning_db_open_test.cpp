// TuningDb's open and close under stress: many processes creating one new file at once,
// damaged pages found on open, and a closed file left as one self-contained file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/open_error.h"
#include "tests/common/sql_edit.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

std::string scalar(const std::string& path, const std::string& sql) {
  return testing::query_text(path, sql, "<error>");
}

Problem square(int64_t n) { return Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n); }

using testing::open_error;

TEST(TuningDbClose, last_writer_to_close_leaves_one_file_in_rollback_journal_mode) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb first(path, TuningDb::Mode::read_write);
    first.upsert_problem(square(64));
    {
      TuningDb second(path, TuningDb::Mode::read_write);
      second.upsert_problem(square(128));
      EXPECT_EQ(scalar(path, "PRAGMA journal_mode"), "wal");
    }
    // The first is still open, so the second's close leaves WAL to it.
    EXPECT_EQ(scalar(path, "PRAGMA journal_mode"), "wal");
    EXPECT_TRUE(fs::exists(path + "-wal"));
  }
  EXPECT_EQ(scalar(path, "PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-shm"));
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM problems"), "2");
}

TEST(TuningDbClose, closing_a_reader_beside_a_writer_keeps_wal_mode) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  { TuningDb(path, TuningDb::Mode::read_write).upsert_problem(square(64)); }
  TuningDb writer(path, TuningDb::Mode::read_write);
  { TuningDb reader(path, TuningDb::Mode::read_only); }
  EXPECT_EQ(scalar(path, "PRAGMA journal_mode"), "wal");
  writer.upsert_problem(square(128));
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM problems"), "2");
}

// Processes, not threads: each its own connection and locks, released together by a pipe.
TEST(TuningDbConcurrency, many_processes_creating_one_new_file_all_succeed) {
  TempDir dir;
  constexpr int kRounds = 25, kProcesses = 6;
  int failures = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir.file("race" + std::to_string(round) + ".db");
    int gate[2];
    ASSERT_EQ(pipe(gate), 0);
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(gate[1]);
        char c;
        (void)!read(gate[0], &c, 1);  // returns when the parent closes its end
        try {
          TuningDb db(path, TuningDb::Mode::read_write);
          db.upsert_problem(square(64 + p));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "round %d process %d: %s\n", round, p, e.what());
          _exit(1);
        }
        _exit(0);
      }
      children.push_back(pid);
    }
    close(gate[0]);
    close(gate[1]);
    for (pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    }
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM problems"), std::to_string(kProcesses));
  }
  EXPECT_EQ(failures, 0);
}

// Overwrites one page of a table with garbage: what a bad disk or a stray write leaves.
void damage_table_page(const std::string& path, const std::string& table) {
  const int64_t root = std::stoll(scalar(
      path, "SELECT rootpage FROM sqlite_schema WHERE type='table' AND name='" + table + "'"));
  const int64_t page_size = std::stoll(scalar(path, "PRAGMA page_size"));
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((root - 1) * page_size);
  const std::string garbage(size_t(page_size), '\x5a');
  f.write(garbage.data(), std::streamsize(garbage.size()));
}

TEST(TuningDbOpen, damaged_page_is_reported_on_open_naming_the_file) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    for (int n = 1; n <= 50; ++n) db.upsert_problem(square(n));
  }
  damage_table_page(path, "problems");
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    const std::string message = open_error(path, mode);
    EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("quick_check"), std::string::npos) << message;
  }
}

// Only a negative version is no version at all: no migration starts from it.
TEST(TuningDbOpen, a_negative_schema_version_is_named_as_damage_and_nothing_is_written) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  { TuningDb(path, TuningDb::Mode::read_write).upsert_problem(square(64)); }
  testing::edit_database(path, "PRAGMA user_version = -5");
  const std::string before = testing::read_bytes(path);
  for (auto mode : {TuningDb::Mode::read_write, TuningDb::Mode::read_only}) {
    const std::string message = open_error(path, mode);
    EXPECT_NE(message.find("schema version -5, which no tgemm writes"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("migrate"), std::string::npos) << message;
  }
  EXPECT_EQ(testing::read_bytes(path), before);
}

// A journal left beside the file (a writer killed mid-transaction, or a stray file) is "hot":
// a reader may not roll it back, and must say so rather than "attempt to write a readonly
// database".
TEST(TuningDbOpen, a_hot_journal_a_reader_cannot_roll_back_is_named) {
  TempDir dir;
  const std::string path = dir.file("tgemm.db");
  { TuningDb(path, TuningDb::Mode::read_write).upsert_problem(square(64)); }
  std::ofstream(path + "-journal", std::ios::binary) << std::string(4096, '\x5a');
  const std::string message = open_error(path, TuningDb::Mode::read_only);
  EXPECT_NE(message.find("its journal '" + path + "-journal'"), std::string::npos) << message;
  EXPECT_NE(message.find("open the database once read-write"), std::string::npos) << message;
  // The writer's open settles it: the file reads as before.
  { TuningDb writer(path, TuningDb::Mode::read_write); }
  EXPECT_EQ(testing::query_int(path, "SELECT count(*) FROM problems"), 1);
}

}  // namespace
}  // namespace tgemm
