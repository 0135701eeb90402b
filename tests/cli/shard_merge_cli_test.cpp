// The many-machines recipe run locally: tgemm-tune --shard 0/2 and 1/2 as separate processes
// into two files, tgemm-db merge of the two, against one unsharded run; and the refusals of
// both tools (bad --shard values, an existing merge target).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tuner/input/problem_set.h"
#include "tuner/session/tuning_session.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::query_int;
using testing::read_bytes;
using testing::run_tool;
using testing::TempDir;

const std::string kTinySpace = TGEMM_SOURCE_DIR "/tests/data/spaces/tiny_sgemm_simt.yaml";

// Three layouts (so the shards compile different binaries), two shapes each.
const char* const kShapes = R"(defaults: {dtype: f32, layout: NN}
shapes:
  - [128, 128, 128]
  - [96, 160, 64]
  - {m: 128, n: 64, k: 32, layout: TN}
  - {m: 64, n: 64, k: 64, layout: TN}
  - {m: 160, n: 96, k: 32, layout: NT}
  - {m: 32, n: 32, k: 32, layout: NT}
)";

std::string tune_args(const std::string& shapes, const std::string& db) {
  return "--compile-only --arch sm_75 --strategy exhaustive --jobs 2 --log-level warn --space " +
         kTinySpace + " --shapes " + shapes + " --db " + db;
}

// Rows of `sql` (a SELECT over one table's natural key) in `a` but not in `b`, plus the
// reverse: 0 when the two files hold the same set.
int64_t set_difference(const std::string& a, const std::string& b, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t count = -1;
  if (sqlite3_open_v2(a.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    const std::string attach = "ATTACH '" + b + "' AS other";
    const std::string other_sql = std::string(sql).replace(sql.find(" FROM "), 6, " FROM other.");
    const std::string diff = "SELECT (SELECT count(*) FROM (" + sql + " EXCEPT " + other_sql +
                             ")) + (SELECT count(*) FROM (" + other_sql + " EXCEPT " + sql + "))";
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_exec(db, attach.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK &&
        sqlite3_prepare_v2(db, diff.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      count = sqlite3_column_int64(stmt, 0);
    else
      ADD_FAILURE() << diff << ": " << sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return count;
}

TEST(ShardMergeCli, two_shards_merged_hold_what_one_unsharded_run_holds) {
  TempDir dir("shard_merge");
  const std::string shapes = dir.write("shapes.yaml", kShapes);
  // Precondition: the hash gives each shard some problems.
  int in_first = 0;
  for (const auto& p : load_problem_set(shapes)) in_first += in_shard(p.problem.key(), {0, 2});
  ASSERT_GT(in_first, 0);
  ASSERT_LT(in_first, 6);

  const std::string whole = dir.file("whole.db"), s0 = dir.file("shard_0.db"),
                    s1 = dir.file("shard_1.db"), all = dir.file("all.db");
  auto r = run_tool("tgemm-tune", tune_args(shapes, whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_tool("tgemm-tune", tune_args(shapes, s0) + " --shard 0/2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_tool("tgemm-tune", tune_args(shapes, s1) + " --shard 1/2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(query_int(s0, "SELECT count(*) FROM problems"), in_first);
  EXPECT_EQ(query_int(s1, "SELECT count(*) FROM problems"), 6 - in_first);

  r = run_tool("tgemm-db", "merge " + all + " " + s0 + " " + s1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 duplicate trial(s)"), std::string::npos) << r.output;

  EXPECT_EQ(query_int(all, "SELECT count(*) FROM problems"), 6);
  EXPECT_GT(query_int(all, "SELECT count(*) FROM binaries WHERE status = 'ok'"), 0);
  EXPECT_EQ(query_int(all, "SELECT count(*) FROM runs"), 2);
  for (const char* sql :
       {"SELECT key, dtype, layout, m, n, k, lda, ldb, ldc, align_a, align_b, align_c, "
        "beta_zero FROM problems",
        "SELECT template, template_hash, canonical_name, params FROM kernels",
        "SELECT cache_key, status, hex(cubin), checksum, op_a, op_b, types FROM binaries"})
    EXPECT_EQ(set_difference(all, whole, sql), 0) << sql;
  for (const char* table : {"problems", "kernels", "binaries"})
    EXPECT_EQ(query_int(all, std::string("SELECT count(*) FROM ") + table),
              query_int(whole, std::string("SELECT count(*) FROM ") + table))
        << table;
  // Each binary belongs to the same kernel in both.
  EXPECT_EQ(query_int(all,
                      "SELECT count(DISTINCT b.cache_key || k.canonical_name) FROM binaries "
                      "b JOIN kernels k ON k.id = b.kernel_id"),
            query_int(whole, "SELECT count(*) FROM binaries"));
}

TEST(ShardMergeCli, shard_with_no_problems_says_so_and_succeeds) {
  TempDir dir("shard_empty");
  const std::string shapes = dir.write("one.yaml", "shapes: [[64, 64, 64]]\n");
  const auto problems = load_problem_set(shapes);
  const bool first = in_shard(problems.front().problem.key(), {0, 2});
  const std::string empty_shard = first ? "1/2" : "0/2";
  const std::string db = dir.file("empty.db");
  auto r = run_tool("tgemm-tune", tune_args(shapes, db) + " --shard " + empty_shard);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("holds none of its 1 problem(s)"), std::string::npos) << r.output;
  // A database with no rows is left, so a merge can list every shard's file.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM problems"), 0);
  r = run_tool("tgemm-db", "merge " + dir.file("all.db") + " " + db);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ShardMergeCli, rejects_bad_shard_values_naming_the_option) {
  TempDir dir("shard_bad");
  const std::string shapes = TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";
  for (const char* bad : {"3/2", "2/2", "-1/2", "a/b", "1/0", "1", "1/2/3"}) {
    const std::string db = dir.file("bad.db");
    auto r = run_tool("tgemm-tune", tune_args(shapes, db) + " --shard=" + bad);
    EXPECT_NE(r.exit_code, 0) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--shard"), std::string::npos) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("0 <= I < N"), std::string::npos) << bad << ": " << r.output;
    EXPECT_FALSE(fs::exists(db)) << bad;
  }
  // The value as a separate word too, as a shell script passes it; and an empty one.
  for (const char* bad : {" -1/2", "=''"}) {
    auto r = run_tool("tgemm-tune", tune_args(shapes, dir.file("bad.db")) + " --shard" + bad);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("--shard"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir.file("bad.db"))) << bad;
  }
}

// A database with one problem, made by a real compile-only run.
std::string small_db(const TempDir& dir, const std::string& name) {
  const std::string shapes = dir.write("one.yaml", "shapes: [[64, 64, 64]]\n");
  const std::string db = dir.file(name);
  auto r = run_tool("tgemm-tune", tune_args(shapes, db));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return db;
}

TEST(ShardMergeCli, merge_into_an_existing_file_is_refused_and_leaves_it_unchanged) {
  TempDir dir("merge_exists");
  const std::string in = small_db(dir, "in.db");
  const std::string out = small_db(dir, "out.db");
  const std::string before = read_bytes(out), in_before = read_bytes(in);
  auto r = run_tool("tgemm-db", "merge " + out + " " + in);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("'" + out + "' exists"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(out), before);
  EXPECT_EQ(read_bytes(in), in_before);
  // Not even a plain file that is no database is replaced.
  const std::string text = dir.write("notes.txt", "keep me");
  r = run_tool("tgemm-db", "merge " + text + " " + in);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_bytes(text), "keep me");
}

TEST(ShardMergeCli, failed_merge_leaves_no_output_file) {
  TempDir dir("merge_fail");
  const std::string in = small_db(dir, "in.db");
  const std::string out = dir.file("all.db");
  auto r = run_tool("tgemm-db", "merge " + out + " " + in + " " + dir.file("missing.db"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("missing.db"), std::string::npos) << r.output;
  for (const auto& entry : fs::directory_iterator(fs::path(out).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find("all.db"), std::string::npos) << entry.path();
  r = run_tool("tgemm-db", "merge " + out);
  EXPECT_NE(r.exit_code, 0) << r.output;  // at least one IN
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace tgemm
