// A hand-edited database with a value the reader cannot decode: the row is skipped, never
// trusted, and one warning names the file, the table and the row id, and what the column may
// hold.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/common/log_capture.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/sql_edit.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

class TuningDbRows : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tgemm_db_rows_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "edited.db").string();
    TuningDb db(path_, TuningDb::Mode::read_write);
    DeviceInfo device;
    device.name = "NVIDIA H200";
    device.arch = "sm_90";
    device.sm_count = 132;
    const int64_t run = db.begin_run("test", "tgemm", "sm_90");
    const int64_t device_id = db.upsert_device(device);
    // Two rows each, so the bad one is not simply the first.
    for (int64_t n : {64, 128}) {
      const int64_t problem =
          db.upsert_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n));
      const KernelConfig config = testing::labelled_sgemm_config(n);
      const int64_t kernel = db.upsert_kernel(config, "hash");
      TrialResult trial;
      trial.config = config;
      trial.status = TrialStatus::ok;
      trial.time_median_us = double(n);
      trial.runs = 3;
      db.record_trial(run, problem, kernel, device_id, std::nullopt, trial);
      db.update_best(problem, device_id);
    }
    db.finish_run(run, "seeded");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Edits the file as `sqlite3 edited.db` would, bypassing the schema's CHECKs.
  void edit(const std::string& sql) { testing::edit_database(path_, sql); }

  // The warning a read of the edited database gives; the read keeps the other good row.
  std::string read_warning(const std::function<size_t(TuningDb&)>& read) {
    TuningDb db(path_, TuningDb::Mode::read_only);
    testing::LogCapture log;
    EXPECT_EQ(read(db), 1u);
    return log.text();
  }

  fs::path dir_;
  std::string path_;
};

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

TEST_F(TuningDbRows, unknown_dtype_names_file_table_and_row) {
  edit("UPDATE problems SET dtype = 'f64' WHERE id = 2");
  const std::string msg = read_warning([](TuningDb& db) { return db.best_entries().size(); });
  EXPECT_HAS(msg, path_);
  EXPECT_HAS(msg, "table problems, row id 2");
  EXPECT_HAS(msg, "dtype");
  EXPECT_HAS(msg, "f64");
}

TEST_F(TuningDbRows, unknown_layout_names_file_table_and_row) {
  edit("UPDATE problems SET layout = 'XY' WHERE id = 1");
  const std::string msg = read_warning([](TuningDb& db) { return db.trials().size(); });
  EXPECT_HAS(msg, path_);
  EXPECT_HAS(msg, "table problems, row id 1");
  EXPECT_HAS(msg, "layout 'XY'");
  EXPECT_HAS(msg, "NN, NT, TN or TT");
}

TEST_F(TuningDbRows, unknown_trial_status_names_file_table_and_row) {
  edit("UPDATE trials SET status = 'great' WHERE id = 2");
  const std::string msg = read_warning([](TuningDb& db) { return db.trials().size(); });
  EXPECT_HAS(msg, path_);
  EXPECT_HAS(msg, "table trials, row id 2");
  EXPECT_HAS(msg, "status 'great'");
  EXPECT_HAS(msg, "ok, ");  // lists what is allowed
}

TEST_F(TuningDbRows, bad_kernel_params_name_file_table_and_row) {
  edit("UPDATE kernels SET params = 'BM=lots' WHERE id = 1");
  const std::string msg = read_warning([](TuningDb& db) { return db.best_entries().size(); });
  EXPECT_HAS(msg, path_);
  EXPECT_HAS(msg, "table kernels, row id 1");
  EXPECT_HAS(msg, "BM=lots");
}

TEST_F(TuningDbRows, unknown_binary_status_names_file_table_and_row) {
  {
    TuningDb db(path_, TuningDb::Mode::read_write);
    CompiledKernel c;
    c.ok = true;
    c.arch = "sm_90";
    c.entry = "e";
    c.cache_key = "key-1";
    c.cubin = {'x'};
    db.store_binary(0, 1, c, BinaryStatus::ok, "");
    c.cache_key = "key-2";
    db.store_binary(0, 1, c, BinaryStatus::ok, "");
  }
  edit("UPDATE binaries SET status = 'shiny' WHERE cache_key = 'key-1'");
  const std::string msg = read_warning([](TuningDb& db) {
    return size_t(!db.find_binary("key-1")) * size_t(db.find_binary("key-2").has_value());
  });
  EXPECT_HAS(msg, path_);
  EXPECT_HAS(msg, "table binaries, row id 1");
  EXPECT_HAS(msg, "'shiny'");
  EXPECT_HAS(msg, "ok, compile_failed or resource_exceeded");
}

}  // namespace
}  // namespace tgemm
