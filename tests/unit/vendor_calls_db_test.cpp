// The vendor library as a contender (src/core/vendor_call.h) in the database: a cublasLt
// algorithm survives its round trip through parameters, schema 8 migrates a file with nothing
// lost (every kernel of ours marked 'tgemm'), and a vendor call faster than every kernel of
// ours is the problem's best, shown as such with our own fastest kernel beside it, until a
// cuBLAS upgrade makes its time stale.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "db/tuning_db.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/templates/build_versions.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::query_text;
using testing::TempDir;

TEST(VendorCall, a_cublaslt_algorithm_round_trips_through_its_parameters) {
  LtAlgoConfig algo;
  algo.algo_id = 21;
  algo.tile_id = 18;
  algo.stages_id = 9;
  algo.splitk_num = 4;
  algo.reduction_scheme = 2;
  algo.cta_swizzling = 1;
  algo.custom_option = 3;
  algo.inner_shape_id = 5;
  algo.cluster_shape_id = 7;
  const KernelConfig call = cublaslt_call(algo);
  EXPECT_TRUE(is_vendor_call(call));
  EXPECT_EQ(lt_algo_of(KernelConfig::from_params_text(kCublasLtCall, call.params_text())), algo);
  EXPECT_NE(describe_vendor_call(call).find("algorithm 21, tile 18, stages 9, 4 K split(s)"),
            std::string::npos);
  EXPECT_EQ(lt_algo_of(cublas_default_call()), std::nullopt);
  KernelConfig short_one = call;
  short_one.params.pop_back();
  EXPECT_EQ(lt_algo_of(short_one), std::nullopt);
  EXPECT_FALSE(is_vendor_call(testing::sgemm_config()));
  EXPECT_EQ(library_of("sgemm_simt"), kTgemmLibrary);
  EXPECT_EQ(library_of(kCublasCall), kCublasCall);
  EXPECT_NE(cublas_version().rfind("cuBLAS ", 0), std::string::npos) << cublas_version();
  EXPECT_EQ(this_build(0).template_hashes.at(kCublasCall), cublas_version());
}

// Every value cuBLASLt can report is storable (ALGO_ID and SPLITK_NUM are int32; cuBLASLt
// reports SPLITK_NUM -1 for some algorithms), and values past each attribute's C type are not.
TEST(VendorCall, stored_cublaslt_parameters_are_checked_against_their_c_types) {
  LtAlgoConfig algo;
  algo.splitk_num = -1;
  algo.algo_id = 66;
  EXPECT_EQ(vendor_call_rejection(cublaslt_call(algo)), std::nullopt);
  algo.splitk_num = int64_t(INT32_MIN) - 1;
  ASSERT_TRUE(vendor_call_rejection(cublaslt_call(algo)));
  EXPECT_NE(vendor_call_rejection(cublaslt_call(algo))->find("SPLITK_NUM=-2147483649 is out of"),
            std::string::npos);
  algo.splitk_num = 1;
  algo.tile_id = -1;
  EXPECT_TRUE(vendor_call_rejection(cublaslt_call(algo)));
  algo.tile_id = UINT32_MAX;
  EXPECT_EQ(vendor_call_rejection(cublaslt_call(algo)), std::nullopt);
  algo.cluster_shape_id = UINT16_MAX + 1;
  EXPECT_TRUE(vendor_call_rejection(cublaslt_call(algo)));
}

TEST(VendorCallsDb, schema_7_file_migrates_with_every_kernel_marked_ours) {
  TempDir dir{"vendor_migrate"};
  const std::string path = dir.file("s4.db");
  const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                              "/tests/data/databases/fp32_h200_s4.db.gz' > '" + path + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const int64_t kernels = query_int(path, "select count(*) from kernels");
  const int64_t bests = query_int(path, "select count(*) from best");
  const std::string bytes = testing::read_bytes(path);
  {
    TuningDb reader(path, TuningDb::Mode::read_only);  // a migrated copy in memory
    ASSERT_FALSE(reader.best_entries().empty());
    for (const BestEntry& e : reader.best_entries()) EXPECT_FALSE(e.tgemm_best);
  }
  EXPECT_EQ(testing::read_bytes(path), bytes);  // the reader never wrote it
  { TuningDb db(path, TuningDb::Mode::read_write); }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), TuningDb::schema_version());
  EXPECT_EQ(query_int(path, "select count(*) from kernels where library = 'tgemm'"), kernels);
  EXPECT_EQ(query_int(path, "select count(*) from best_kernels where library = 'tgemm'"), bests);
  EXPECT_EQ(query_int(path, "select count(*) from tgemm_best_kernels"), bests);
}

struct VendorBest {
  TempDir dir{"vendor_best"};
  std::string path = dir.file("t.db");
  TuningDb db{path, TuningDb::Mode::read_write};
  int64_t device = 0, problem = 0;
  Problem p = Problem::packed(gemm_types("f32"), Op::N, Op::N, 4096, 4096, 4096);

  VendorBest() {
    DeviceInfo h200;
    h200.name = "NVIDIA H200";
    h200.arch = "sm_90";
    h200.sm_count = 132;
    device = db.upsert_device(h200);
    problem = db.upsert_problem(p);
    const CurrentBuild now = this_build(0);
    record(testing::sgemm_config(), now.template_hashes.at("sgemm_simt"), 3000);
    record(testing::sgemm_config({{"BK", 16}}), now.template_hashes.at("sgemm_simt"), 2900);
    db.record_cublas_time(0, problem, device, 2700);
  }
  void record(const KernelConfig& config, const std::string& hash, double us) {
    TrialResult t;
    t.config = config;
    t.status = TrialStatus::ok;
    t.time_min_us = t.time_median_us = t.time_max_us = us;
    t.runs = 10;
    db.record_trial(0, problem, db.upsert_kernel(config, hash), device, std::nullopt, t);
  }
};

TEST(VendorCallsDb, a_faster_vendor_call_is_the_best_shown_as_such_with_ours_beside_it) {
  VendorBest f;
  const CurrentBuild now = this_build(0);
  f.record(cublas_default_call(), cublas_version(), 2700);
  f.db.update_best(f.problem, f.device, &now);
  const auto entries = f.db.best_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].config, cublas_default_call());
  EXPECT_EQ(entries[0].template_hash, cublas_version());
  ASSERT_TRUE(entries[0].tgemm_best);
  EXPECT_EQ(entries[0].tgemm_best->config, testing::sgemm_config({{"BK", 16}}));
  EXPECT_DOUBLE_EQ(entries[0].tgemm_best->time_median_us, 2900);
  EXPECT_EQ(query_text(f.path, "select library from best_kernels"), "cublas");
  EXPECT_EQ(query_text(f.path, "select library from kernels where template = 'cublas'"), "cublas");
  EXPECT_EQ(query_text(f.path, "select us from tgemm_best_kernels"), "2900.0");
}

TEST(VendorCallsDb, a_vendor_call_timed_with_another_cublas_is_stale) {
  VendorBest f;
  const CurrentBuild now = this_build(0);
  f.record(cublas_default_call(), "cuBLAS 1.0.0", 2700);
  f.db.update_best(f.problem, f.device, &now);
  const auto entries = f.db.best_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].config, testing::sgemm_config({{"BK", 16}}));
  EXPECT_FALSE(entries[0].tgemm_best);  // the best is ours already
}

TEST(VendorCallsDb, a_cublaslt_best_keeps_its_algorithm) {
  VendorBest f;
  LtAlgoConfig algo;
  algo.algo_id = 66;
  algo.tile_id = 18;
  f.record(cublaslt_call(algo), cublas_version(), 2600);
  const CurrentBuild now = this_build(0);
  f.db.update_best(f.problem, f.device, &now);
  const auto entries = f.db.best_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(lt_algo_of(entries[0].config), algo);
  EXPECT_EQ(query_text(f.path, "select library from best_kernels"), "cublasLt");
}

}  // namespace
}  // namespace tgemm
