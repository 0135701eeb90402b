// Staleness by machine code: a database tuned with one text of sgemm_simt is judged by this
// build's text. A refactor that changes no instruction is re-keyed by refresh_by_code and
// `tgemm-db refresh` and is not stale for `tgemm-db stale`; a changed constant stays stale.
// Bad input to `tgemm-db refresh` is an error that changes no file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "db/tuning_db.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/build_versions.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/devices.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/sql_edit.h"
#include "tests/common/template_edits.h"
#include "tuner/compile/code_refresh.h"

namespace tgemm {
namespace {

using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

const Problem kVariant = Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1);

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A database at `path` tuned with sgemm_simt built from `text` for sm_80: one kernel, its
// binary, one ok trial of a 1024^3 problem on an A100 (driver not recorded) and its best.
void tune_with(const std::string& path, const std::string& text) {
  const auto family = make_template("sgemm_simt", kernel_source_from_text("sgemm_simt", text));
  const KernelConfig config = testing::sgemm_config();
  const CompiledKernel compiled = build_kernel(*family, config, kVariant, "sm_80");
  ASSERT_TRUE(compiled.ok) << compiled.error;
  TuningDb db(path, TuningDb::Mode::read_write);
  const int64_t device = db.upsert_device(testing::device("NVIDIA A100", "sm_80", 108));
  const int64_t problem =
      db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1024));
  const int64_t kernel = db.upsert_kernel(config, family->source().hash);
  const int64_t binary = db.store_binary(0, kernel, compiled, BinaryStatus::ok, "");
  TrialResult trial;
  trial.config = config;
  trial.status = TrialStatus::ok;
  trial.time_min_us = trial.time_median_us = trial.time_max_us = 100;
  trial.runs = 10;
  db.record_trial(0, problem, kernel, device, binary, trial, {NvrtcCompiler::version(), 0});
  db.update_best(problem, device);
}

// Why this build does not serve the database's one best entry, or nullopt.
std::optional<std::string> why_stale(TuningDb& db) {
  const std::vector<BestEntry> bests = db.best_entries();
  EXPECT_EQ(bests.size(), 1u);
  if (bests.empty()) return "no best";
  const BestEntry& e = bests[0];
  return this_build(0).stale_reason(e.config.template_name, e.template_hash, e.measured_with);
}

RefreshOptions this_builds_options() {
  RefreshOptions options;
  options.family = [](const std::string& name) { return find_template(name); };
  options.current = [](const DeviceInfo& d) { return this_build(d.driver_version); };
  return options;
}

TEST(RefreshByCode, a_comment_edit_is_rekeyed_and_served_again) {
  TempDir dir("code_refresh");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  TuningDb db(path, TuningDb::Mode::read_write);
  ASSERT_TRUE(why_stale(db));  // by the text hash
  const std::string old_code = db.trial_binaries().at(0).binary.compiled.code_hash;
  ASSERT_FALSE(old_code.empty());

  const RefreshCounts counts = refresh_by_code(db, this_builds_options());
  EXPECT_EQ(counts.rekeyed, 1);
  EXPECT_EQ(counts.changed + counts.not_built + counts.superseded, 0);
  EXPECT_EQ(why_stale(db), std::nullopt);
  ASSERT_EQ(db.trials().size(), 1u);
  EXPECT_EQ(db.trials()[0].trial.time_median_us, 100);  // the measurement kept
  // The dispatcher finds the cubin under this build's template hash.
  const std::string now = template_named("sgemm_simt").source().hash;
  const auto binary =
      db.find_binary_for(testing::sgemm_config(), now, kVariant, "sm_80", NvrtcCompiler::version());
  ASSERT_TRUE(binary);
  EXPECT_FALSE(binary->compiled.cubin.empty());
  EXPECT_EQ(binary->compiled.code_hash, old_code);
  // Done once: nothing is left to re-key.
  EXPECT_EQ(refresh_by_code(db, this_builds_options()).rekeyed, 0);
}

TEST(RefreshByCode, moved_code_is_rekeyed_also_from_a_file_without_code_hashes) {
  TempDir dir("code_refresh");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_code_moved());
  testing::edit_database(path, "UPDATE binaries SET code_hash = NULL");  // as before version 9
  TuningDb db(path, TuningDb::Mode::read_write);
  ASSERT_EQ(db.trial_binaries().at(0).binary.compiled.code_hash, "");
  EXPECT_EQ(refresh_by_code(db, this_builds_options()).rekeyed, 1);  // its cubin hashed
  EXPECT_EQ(why_stale(db), std::nullopt);
}

TEST(RefreshByCode, a_pruned_cubin_is_judged_by_the_code_hash_recorded_at_compile_time) {
  TempDir dir("code_refresh");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  testing::edit_database(path, "UPDATE binaries SET cubin = NULL, checksum = NULL");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    EXPECT_EQ(refresh_by_code(db, this_builds_options()).rekeyed, 1);
    EXPECT_EQ(why_stale(db), std::nullopt);
  }
  // A recorded hash of other code (as a changed constant gives) leaves the trial stale.
  tune_with(dir.file("other.db"), testing::sgemm_simt_comment_edited());
  testing::edit_database(dir.file("other.db"),
                         "UPDATE binaries SET cubin = NULL, checksum = NULL, code_hash = "
                         "'0123456789abcdef'");
  TuningDb db(dir.file("other.db"), TuningDb::Mode::read_write);
  EXPECT_EQ(refresh_by_code(db, this_builds_options()).changed, 1);
  EXPECT_TRUE(why_stale(db));
}

TEST(RefreshByCode, a_changed_constant_stays_stale) {
  TempDir dir("code_refresh");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_constant_changed());
  TuningDb db(path, TuningDb::Mode::read_write);
  const RefreshCounts counts = refresh_by_code(db, this_builds_options());
  EXPECT_EQ(counts.rekeyed, 0);
  EXPECT_EQ(counts.changed, 1);
  const auto why = why_stale(db);
  ASSERT_TRUE(why);
  EXPECT_HAS(*why, "device code of 'sgemm_simt' changed");
}

TEST(RefreshByCode, a_stored_cubin_that_fails_its_checksum_gives_no_verdict) {
  TempDir dir("code_refresh");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  testing::edit_database(path, "UPDATE binaries SET code_hash = NULL, checksum = 'planted'");
  TuningDb db(path, TuningDb::Mode::read_write);
  const RefreshCounts counts = refresh_by_code(db, this_builds_options());
  EXPECT_EQ(counts.rekeyed, 0);
  EXPECT_EQ(counts.not_built, 1);
  EXPECT_HAS(counts.example_not_built, "fails its checksum");
  EXPECT_TRUE(why_stale(db));
}

// --- the tools --------------------------------------------------------------------------

testing::CliResult tgemm_db(const std::string& db, const std::string& args) {
  return testing::run_tool("tgemm-db", "--db '" + db + "' " + args);
}

TEST(TgemmDbStale, a_comment_edit_is_stale_by_text_only_and_refresh_serves_it) {
  TempDir dir("code_refresh_cli");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  const std::string before = read_bytes(path);

  auto r = tgemm_db(path, "stale");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "no stale best entries");
  EXPECT_HAS(r.output, "0 of 1 trial(s) stale");
  EXPECT_HAS(r.output, "1 trial(s) whose template text changed still build to the same");
  r = tgemm_db(path, "stale --by-text");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "1 of 1 trial(s) stale");

  const std::string out = dir.file("refreshed.db");
  r = tgemm_db(path, "refresh '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "1 trial(s) re-keyed");
  r = tgemm_db(out, "stale --by-text");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "no stale best entries");
  EXPECT_HAS(r.output, "0 of 1 trial(s) stale");
  EXPECT_EQ(read_bytes(path), before);  // the input only read
}

TEST(TgemmDbStale, a_changed_constant_is_stale_and_refresh_leaves_it) {
  TempDir dir("code_refresh_cli");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_constant_changed());
  auto r = tgemm_db(path, "stale");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "device code of 'sgemm_simt' changed");
  EXPECT_HAS(r.output, "1 of 1 trial(s) stale");
  const std::string out = dir.file("refreshed.db");
  r = tgemm_db(path, "refresh '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "0 trial(s) re-keyed");
  EXPECT_HAS(r.output, "1 left stale as their code changed");
  r = tgemm_db(out, "stale --by-text");
  EXPECT_HAS(r.output, "1 of 1 trial(s) stale");
}

// tgemm-tune keeps a refactored kernel's trials before it compiles, also without a GPU.
TEST(TgemmTune, rekeys_the_trials_whose_code_is_unchanged_before_it_tunes) {
  TempDir dir("code_refresh_cli");
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  // tests/data/spaces/tiny_sgemm_simt.yaml narrowed to one config.
  std::string one =
      read_bytes(std::string(TGEMM_SOURCE_DIR) + "/tests/data/spaces/tiny_sgemm_simt.yaml");
  for (const char* list : {"BM: [64, 128]", "BN: [64, 128]", "TM: [4, 8]", "VEC: [1, 4]"}) {
    const std::string from = list, to = from.substr(0, from.find(',')) + "]";
    one = testing::replaced_once(one, from, to);
  }
  const std::string space = dir.write("one.yaml", one);
  const auto r = testing::run_tool(
      "tgemm-tune", "--compile-only --arch sm_80 --strategy exhaustive --budget 0 --shapes " +
                        std::string(TGEMM_SOURCE_DIR) + "/tests/data/shapes/tiny.yaml --space '" +
                        space + "' --db '" + path + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "1 kept (same machine code)");
  TuningDb db(path, TuningDb::Mode::read_only);
  EXPECT_EQ(why_stale(db), std::nullopt);
}

TEST(TgemmDbRefresh, bad_input_is_an_error_that_changes_no_file) {
  TempDir dir("code_refresh_cli");
  const std::string out = dir.file("refreshed.db");
  const std::string missing = dir.file("missing.db");
  auto r = tgemm_db(missing, "refresh '" + out + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_HAS(r.output, "tuning database '" + missing + "' does not exist");
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string text = dir.write("notes.txt", "not a database\n");
  r = tgemm_db(text, "refresh '" + out + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_HAS(r.output, "is not a SQLite database");
  EXPECT_EQ(read_bytes(text), "not a database\n");
  EXPECT_FALSE(std::filesystem::exists(out));

  // OUT is never replaced, and the input stays as it was.
  const std::string path = dir.file("tuned.db");
  tune_with(path, testing::sgemm_simt_comment_edited());
  const std::string before = read_bytes(path);
  const std::string taken = dir.write("taken.db", "someone else's file\n");
  r = tgemm_db(path, "refresh '" + taken + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(read_bytes(taken), "someone else's file\n");
  EXPECT_EQ(read_bytes(path), before);

  r = tgemm_db(path, "refresh");  // no OUT
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_HAS(r.output, "OUT");
}

}  // namespace
}  // namespace tgemm
