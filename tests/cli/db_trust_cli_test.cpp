// The tools against a hostile tuning database: a FIFO in its place, a planted trigger, a copy
// that is damaged where the quick check on open does not look, rows that break the schema's
// rules. Each is refused or skipped by name, never hangs, never copied as good.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/common/result_databases.h"
#include "tests/common/sql_edit.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::edit_database;
using testing::query_int;
using testing::run_shell;
using testing::run_tool;
using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

struct Tuned {
  TempDir dir{"db_trust_cli"};
  std::string path = testing::unpack_tuned_database(dir);
};

// A tool run that must end by itself within 20 s (exit 124 when it hung).
CliResult run_bounded(const std::string& tool, const std::string& args) {
  return run_shell("timeout 20 " + std::string(TGEMM_TOOLS_DIR) + "/" + tool + " " + args);
}

TEST(DbTrustCli, a_fifo_as_a_database_is_refused_by_every_tool_at_once) {
  Tuned db;
  const std::string fifo = db.dir.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::pair<const char*, std::string> runs[] = {
      {"tgemm-db", "--db " + fifo + " list"},
      {"tgemm-db", "merge " + db.dir.file("out.db") + " " + fifo},
      {"tgemm-db", "--db " + db.path + " replay --against " + fifo},
      {"tgemm-simulate", "--db " + fifo},
  };
  for (const auto& [tool, args] : runs) {
    const CliResult r = run_bounded(tool, args);
    EXPECT_NE(r.exit_code, 124) << tool << " " << args << " hung";
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_HAS(r.output, "'" + fifo + "' is not a regular file");
  }
  EXPECT_FALSE(fs::exists(db.dir.file("out.db")));
}

TEST(DbTrustCli, a_planted_trigger_is_refused_and_runs_nowhere) {
  Tuned db;
  edit_database(db.path,
                "CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM best; DELETE FROM "
                "trials; END");
  const CliResult tune = run_bounded(
      "tgemm-tune", testing::tiny_tune_args("tiny_sgemm_simt", db.path, "--compile-only"));
  EXPECT_NE(tune.exit_code, 0) << tune.output;
  EXPECT_HAS(tune.output, "trigger 'wipe'");
  for (const std::string& args :
       {"--db " + db.path + " list", "merge " + db.dir.file("out.db") + " " + db.path,
        "--db " + db.path + " vacuum " + db.dir.file("out.db")}) {
    const CliResult r = run_bounded("tgemm-db", args);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_HAS(r.output, "trigger 'wipe'");
  }
  EXPECT_EQ(query_int(db.path, "SELECT count(*) FROM trials"), 435);
  EXPECT_EQ(query_int(db.path, "SELECT count(*) FROM best"), 5);
  EXPECT_FALSE(fs::exists(db.dir.file("out.db")));
}

// Damage the quick check on open does not see is found before anything is written: in the
// input, and in the copy before it is moved into place.
TEST(DbTrustCli, prune_vacuum_and_merge_refuse_to_copy_a_damaged_file) {
  const std::pair<const char*, std::function<void(const std::string&)>> damages[] = {
      {"an index that disagrees with its table",
       [](const std::string& path) {
         testing::change_behind_index(
             path, "trials_by_problem",
             "UPDATE trials SET time_median_us = time_median_us + 1 WHERE id = 1");
       }},
      {"a best pointing at a missing trial",
       [](const std::string& path) { edit_database(path, "DELETE FROM trials WHERE id = 65"); }},
      {"a problem breaking a CHECK",
       [](const std::string& path) { edit_database(path, "UPDATE problems SET m = 0"); }},
  };
  for (const auto& [what, damage] : damages) {
    for (const char* command : {"--db IN prune OUT", "--db IN vacuum OUT", "merge OUT IN"}) {
      Tuned db;
      damage(db.path);
      const std::set<std::string> before{fs::path(db.path).filename()};
      std::string args = command;
      args.replace(args.find("IN"), 2, db.path);
      args.replace(args.find("OUT"), 3, db.dir.file("out.db"));
      const CliResult r = run_bounded("tgemm-db", args);
      EXPECT_NE(r.exit_code, 0) << what << ", " << command << "\n" << r.output;
      EXPECT_FALSE(fs::exists(db.dir.file("out.db"))) << what << ", " << command;
      std::set<std::string> after;
      for (const auto& e : fs::directory_iterator(fs::path(db.path).parent_path()))
        after.insert(e.path().filename());
      EXPECT_EQ(after, before) << what << ", " << command;
    }
  }
}

TEST(DbTrustCli, readers_skip_rows_breaking_the_schema_with_a_warning) {
  Tuned db;
  edit_database(db.path, "UPDATE problems SET m = 0 WHERE id = 2");  // m8192's
  const CliResult list = run_bounded("tgemm-db", "--db " + db.path + " list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(list.output.find("m=0"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("8192"), std::string::npos) << list.output;
  EXPECT_HAS(list.output, "4096");
  EXPECT_HAS(list.output, "skipped 1 row(s)");
  EXPECT_HAS(list.output, "table problems, row id 2: column m");
  const CliResult best =
      run_bounded("tgemm-db", "--db " + db.path + " best --m 0 --n 8192 --k 8192 --dtype tf32");
  EXPECT_NE(best.exit_code, 0) << best.output;
}

// The warning about a skipped row goes to stderr: stdout is the answer another program reads.
TEST(DbTrustCli, a_skipped_rows_warning_leaves_stdout_to_the_answer) {
  Tuned db;
  edit_database(db.path, "UPDATE problems SET m = 0 WHERE id = 2");
  const std::string err = db.dir.file("stderr");
  const CliResult json = run_shell("(" + std::string(TGEMM_TOOLS_DIR) + "/tgemm-db --db " +
                                   db.path + " export --format json 2>" + err + ")");
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_TRUE(nlohmann::json::accept(json.output)) << json.output.substr(0, 2000);
  EXPECT_HAS(testing::read_bytes(err), "table problems, row id 2: column m");
}

}  // namespace
}  // namespace tgemm
