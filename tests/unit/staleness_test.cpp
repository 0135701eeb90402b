// Stale tuning results: CurrentBuild's reasons, the dispatcher's filter (drop_stale), the
// database recording what each trial was measured with, a best that skips stale trials, and
// prune.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/current_build.h"
#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::TempDir;

CurrentBuild build_now() {
  CurrentBuild b;
  b.template_hashes = {{"sgemm_simt", "hash-now"}};
  b.nvrtc_version = "13.0";
  b.driver_version = 13000;
  return b;
}

KernelConfig config(int64_t label) { return testing::labelled_sgemm_config(label); }

TrialResult ok_trial(int64_t bm, double us) {
  TrialResult t;
  t.config = config(bm);
  t.status = TrialStatus::ok;
  t.time_min_us = t.time_median_us = t.time_max_us = us;
  t.runs = 10;
  return t;
}

DeviceInfo gpu(int driver) {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.arch = "sm_90";
  d.sm_count = 132;
  d.driver_version = driver;
  return d;
}

std::string scalar(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "<none>";
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW) {
    auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    out = text ? text : "NULL";
  }
  sqlite3_finalize(s);
  sqlite3_close_v2(db);
  return out;
}

TEST(CurrentBuild, same_hash_nvrtc_and_driver_is_current) {
  EXPECT_FALSE(build_now().stale_reason("sgemm_simt", "hash-now", {"13.0", 13000}));
}

TEST(CurrentBuild, a_changed_template_source_is_stale_and_named) {
  auto why = build_now().stale_reason("sgemm_simt", "hash-old", {"13.0", 13000});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("device code of 'sgemm_simt' changed"), std::string::npos) << *why;
}

TEST(CurrentBuild, a_family_missing_from_the_build_is_stale) {
  auto why = build_now().stale_reason("sgemm_gone", "hash-now", {"13.0", 13000});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'sgemm_gone' is not in this build"), std::string::npos) << *why;
}

TEST(CurrentBuild, another_nvrtc_or_driver_is_stale) {
  auto nvrtc = build_now().stale_reason("sgemm_simt", "hash-now", {"12.8", 13000});
  ASSERT_TRUE(nvrtc);
  EXPECT_NE(nvrtc->find("NVRTC 12.8"), std::string::npos) << *nvrtc;
  auto driver = build_now().stale_reason("sgemm_simt", "hash-now", {"13.0", 12080});
  ASSERT_TRUE(driver);
  EXPECT_NE(driver->find("driver 12080"), std::string::npos) << *driver;
}

TEST(CurrentBuild, versions_not_recorded_or_not_known_are_not_held_against_a_trial) {
  EXPECT_FALSE(build_now().stale_reason("sgemm_simt", "hash-now", {}));
  CurrentBuild no_gpu = build_now();
  no_gpu.driver_version = 0;
  EXPECT_FALSE(no_gpu.stale_reason("sgemm_simt", "hash-now", {"13.0", 12080}));
}

TEST(CurrentBuild, this_build_holds_every_registered_family_and_its_hash) {
  const CurrentBuild b = this_build(13000);
  // And the two vendor calls, whose "source" is the cuBLAS version (vendor_call.h).
  ASSERT_EQ(b.template_hashes.size(), all_templates().size() + 2);
  for (const GemmTemplate* t : all_templates())
    EXPECT_EQ(b.template_hashes.at(t->name()), t->source().hash) << t->name();
  EXPECT_FALSE(b.nvrtc_version.empty());
  EXPECT_EQ(b.driver_version, 13000);
}

TEST(DropStale, removes_only_stale_entries_and_trials_and_names_the_first) {
  BestEntry fresh, old;
  fresh.problem = old.problem = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64);
  fresh.config = old.config = config(64);
  fresh.template_hash = "hash-now";
  old.template_hash = "hash-old";
  TrialRecord t_fresh, t_old;
  t_fresh.trial.config = t_old.trial.config = config(64);
  t_fresh.template_hash = t_old.template_hash = "hash-now";
  t_old.measured_with = {"13.0", 12000};
  std::vector<BestEntry> entries{fresh, old};
  std::vector<TrialRecord> trials{t_fresh, t_old};
  const StaleDropped d = drop_stale(build_now(), &entries, &trials);
  EXPECT_EQ(d.entries, 1u);
  EXPECT_EQ(d.trials, 1u);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].template_hash, "hash-now");
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].measured_with.driver_version, 0);
  EXPECT_NE(d.example.find(fresh.problem.key()), std::string::npos) << d.example;
}

// A stale best (its family's source changed) with a current ok trial of another kernel on the
// same problem and device: the problem keeps the fastest such trial as its best; a stale best
// with none is dropped. Trials of other problems or devices are not evidence for it.
TEST(DropStale, a_stale_best_takes_its_problems_fastest_current_trial) {
  const Problem kept_p = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64);
  const Problem lost_p = Problem::packed(GemmTypes{}, Op::N, Op::N, 128, 128, 128);
  BestEntry kept, lost;
  kept.problem = kept_p;
  lost.problem = lost_p;
  for (BestEntry* e : {&kept, &lost}) {
    e->device_name = "NVIDIA H200";
    e->arch = "sm_90";
    e->config = config(64);
    e->template_hash = "hash-old";
    e->cublas_median_us = 9.0;
  }
  auto current = [&](const Problem& p, int64_t bm, double us, const char* device) {
    TrialRecord t;
    t.problem = p;
    t.device_name = device;
    t.arch = "sm_90";
    t.template_hash = "hash-now";
    t.trial = ok_trial(bm, us);
    return t;
  };
  std::vector<TrialRecord> trials{
      current(kept_p, 128, 12.0, "NVIDIA H200"), current(kept_p, 32, 11.0, "NVIDIA H200"),
      current(kept_p, 16, 5.0, "NVIDIA A100"),
      current(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 65), 16, 4.0, "NVIDIA H200")};
  trials.push_back(trials[1]);
  trials.back().trial.status = TrialStatus::wrong_result;
  trials.back().trial.time_median_us = 1.0;
  std::vector<BestEntry> entries{kept, lost};
  const StaleDropped d = drop_stale(build_now(), &entries, &trials);
  EXPECT_EQ(d.replaced, 1u);
  EXPECT_EQ(d.entries, 1u);
  EXPECT_EQ(d.trials, 0u);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].problem.key(), kept_p.key());
  EXPECT_EQ(entries[0].config.get("SWIZZLE"), 32);  // the fastest ok one of this problem and device
  EXPECT_EQ(entries[0].template_hash, "hash-now");
  EXPECT_EQ(entries[0].trial.time_median_us, 11.0);
  EXPECT_EQ(entries[0].cublas_median_us, 9.0);
}

class StaleDb : public ::testing::Test {
 protected:
  StaleDb() : path_(dir_.file("tgemm.db")), db_(path_, TuningDb::Mode::read_write) {
    device_ = db_.upsert_device(gpu(13000));
    problem_ = db_.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256));
  }
  int64_t record(int64_t bm, const std::string& hash, double us, const MeasuredWith& with) {
    return db_.record_trial(0, problem_, db_.upsert_kernel(config(bm), hash), device_, std::nullopt,
                            ok_trial(bm, us), with);
  }

  TempDir dir_;
  std::string path_;
  TuningDb db_;
  int64_t device_ = 0, problem_ = 0;
};

TEST_F(StaleDb, a_trial_keeps_the_nvrtc_and_driver_it_was_measured_with) {
  record(64, "hash-now", 5, {"13.0", 13000});
  record(128, "hash-now", 6, {});
  const auto trials = db_.trials();
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].measured_with, (MeasuredWith{"13.0", 13000}));
  EXPECT_EQ(trials[1].measured_with, MeasuredWith{});  // stored as NULL: not known
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM trials WHERE driver_version IS NULL"), "1");
  db_.update_best(problem_, device_);
  EXPECT_EQ(db_.best_entries().front().measured_with, (MeasuredWith{"13.0", 13000}));
  EXPECT_EQ(db_.trial_measured_with(problem_, db_.upsert_kernel(config(64), "hash-now"), device_),
            (MeasuredWith{"13.0", 13000}));
  EXPECT_FALSE(
      db_.trial_measured_with(problem_, db_.upsert_kernel(config(32), "hash-now"), device_));
}

TEST_F(StaleDb, the_best_skips_a_faster_stale_trial_when_told_the_current_build) {
  record(64, "hash-old", 1, {"13.0", 13000});   // fastest, but its template changed
  record(32, "hash-now", 2, {"12.8", 13000});   // another NVRTC
  record(128, "hash-now", 3, {"13.0", 13000});  // current
  const CurrentBuild now = build_now();
  db_.update_best(problem_, device_);
  EXPECT_EQ(db_.best_entries().front().trial.config.get("SWIZZLE"), 64)
      << "without a build: fastest";
  db_.update_best(problem_, device_, &now);
  EXPECT_EQ(db_.best_entries().front().trial.config.get("SWIZZLE"), 128);
}

TEST_F(StaleDb, a_problem_with_only_stale_trials_has_no_best_under_the_current_build) {
  record(64, "hash-old", 1, {"13.0", 13000});
  db_.update_best(problem_, device_);
  ASSERT_EQ(db_.best_entries().size(), 1u);
  const CurrentBuild now = build_now();
  db_.update_best(problem_, device_, &now);
  EXPECT_TRUE(db_.best_entries().empty());
  EXPECT_EQ(db_.trials().size(), 1u) << "the trial itself is kept";
}

TEST_F(StaleDb, prune_drops_failed_trials_and_unused_cubins_and_keeps_bests) {
  auto store = [&](int64_t bm, const std::string& key, BinaryStatus status = BinaryStatus::ok,
                   int64_t run = 0) {
    CompiledKernel c;
    c.ok = true;
    c.cubin = {'c', 'u', char('0' + bm % 10)};
    c.cache_key = key;
    c.arch = "sm_90";
    c.nvrtc_version = "13.0";
    return db_.store_binary(run, db_.upsert_kernel(config(bm), "hash-now"), c, status, "");
  };
  const int64_t best_bin = store(64, "k64"), slow_bin = store(128, "k128");
  // A dispatcher's write-back (no trial) serves callers; a tuner's cubin that no trial names
  // (as older files store them, or a compile-only run) does not.
  store(256, "written-back", BinaryStatus::ok, db_.begin_run(kCubinWriteBackRun, "tgemm", "sm_90"));
  store(512, "k512");
  store(1024, "compiled-only", BinaryStatus::ok,
        db_.begin_run("tgemm-tune --compile-only", "t", "sm_90"));
  db_.record_trial(0, problem_, db_.upsert_kernel(config(512), "hash-now"), device_, std::nullopt,
                   ok_trial(512, 3));
  db_.record_trial(0, problem_, db_.upsert_kernel(config(64), "hash-now"), device_, best_bin,
                   ok_trial(64, 1));
  db_.record_trial(0, problem_, db_.upsert_kernel(config(128), "hash-now"), device_, slow_bin,
                   ok_trial(128, 2));
  TrialResult failed = ok_trial(32, 0);
  failed.status = TrialStatus::wrong_result;
  db_.record_trial(0, problem_, db_.upsert_kernel(config(32), "hash-now"), device_, std::nullopt,
                   failed);
  // A build that spilled: the trial stays (the dispatcher reads it), its cubin goes.
  const int64_t spilled_bin = store(16, "k16", BinaryStatus::resource_exceeded);
  TrialResult spilled = ok_trial(16, 0);
  spilled.status = TrialStatus::resource_exceeded;
  db_.record_trial(0, problem_, db_.upsert_kernel(config(16), "hash-now"), device_, spilled_bin,
                   spilled);
  db_.update_best(problem_, device_);
  const PruneCounts c = db_.prune({});
  EXPECT_EQ(c.failed_trials, 1);
  EXPECT_EQ(c.cubins, 3);
  EXPECT_EQ(c.kernels, 2)
      << "the failed trial's kernel and the compiled-only one have nothing left";
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM trials"), "4");
  EXPECT_EQ(scalar(path_,
                   "SELECT count(*) FROM binaries WHERE cache_key IN ('k512', "
                   "'compiled-only')"),
            "0");
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM binaries WHERE cache_key = 'written-back'"), "1");
  EXPECT_EQ(scalar(path_, "SELECT binary_id FROM trials WHERE status = 'resource_exceeded'"),
            "NULL");
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM binaries WHERE cache_key = 'k16'"), "0");
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM binaries"), "2");
  EXPECT_EQ(scalar(path_, "SELECT count(*) FROM binaries WHERE cache_key = 'k128'"), "0");
  EXPECT_EQ(scalar(path_, "SELECT binary_id FROM trials WHERE time_median_us = 2"), "NULL");
  ASSERT_EQ(db_.best_entries().size(), 1u);
  EXPECT_EQ(db_.best_entries().front().trial.config.get("SWIZZLE"), 64);
  EXPECT_EQ(scalar(path_, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(scalar(path_, "PRAGMA foreign_key_check"), "<none>");
}

TEST_F(StaleDb, prune_with_a_build_drops_stale_trials_and_recomputes_the_best) {
  record(64, "hash-old", 1, {"13.0", 13000});
  record(128, "hash-now", 3, {"13.0", 13000});
  db_.update_best(problem_, device_);
  PruneOptions options;
  options.stale = [](const DeviceInfo& d) {
    CurrentBuild b = build_now();
    b.driver_version = d.driver_version;
    return b;
  };
  const PruneCounts c = db_.prune(options);
  EXPECT_EQ(c.stale_trials, 1);
  ASSERT_EQ(db_.trials().size(), 1u);
  EXPECT_EQ(db_.best_entries().front().trial.config.get("SWIZZLE"), 128);
}

}  // namespace
}  // namespace tgemm
