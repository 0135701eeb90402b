// tgemm-db on a problem whose best is a vendor call (src/core/vendor_call.h): list, best,
// explain and report show it as such, with our own fastest kernel's ratio beside it.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "db/tuning_db.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/templates/build_versions.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::TempDir;

// 4096^3 f32 on the H200: two sgemm_simt kernels (2900 us the faster), cuBLAS at 2700 us and
// cuBLASLt's algorithm 66 at 2600 us, the best.
class VendorBestCli : public ::testing::Test {
 protected:
  void SetUp() override {
    TuningDb db(path_, TuningDb::Mode::read_write);
    DeviceInfo h200;
    h200.name = "NVIDIA H200";
    h200.arch = "sm_90";
    h200.sm_count = 132;
    const int64_t device = db.upsert_device(h200);
    const int64_t problem =
        db.upsert_problem(Problem::packed(gemm_types("f32"), Op::N, Op::N, 4096, 4096, 4096));
    const CurrentBuild now = this_build(0);
    const auto record = [&](const KernelConfig& config, const std::string& hash, double us) {
      TrialResult t;
      t.config = config;
      t.status = TrialStatus::ok;
      t.time_min_us = t.time_median_us = t.time_max_us = us;
      t.runs = 10;
      t.tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (us * 1e6);
      db.record_trial(0, problem, db.upsert_kernel(config, hash), device, std::nullopt, t);
    };
    record(testing::sgemm_config(), now.template_hashes.at("sgemm_simt"), 3000);
    record(testing::sgemm_config({{"BK", 16}}), now.template_hashes.at("sgemm_simt"), 2900);
    record(cublas_default_call(), cublas_version(), 2700);
    LtAlgoConfig algo;
    algo.algo_id = 66;
    algo.tile_id = 18;
    record(cublaslt_call(algo), cublas_version(), 2600);
    db.record_cublas_time(0, problem, device, 2700);
    db.update_best(problem, device, &now);
  }
  std::string db(const std::string& args) {
    auto r = run_tool("tgemm-db", "--db " + path_ + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }
  TempDir dir_{"vendor_best_cli"};
  std::string path_ = dir_.file("t.db");
  const std::string lt_name_ = "cublasLt_algo_id66_tile_id18";
  const std::string ours_ = testing::sgemm_config({{"BK", 16}}).canonical_name();
};

TEST_F(VendorBestCli, list_shows_the_vendor_best_and_our_own_ratio_beside_it) {
  const std::string out = db("list");
  EXPECT_NE(out.find("ours vs cuBLAS"), std::string::npos) << out;
  EXPECT_NE(out.find(lt_name_), std::string::npos) << out;
  EXPECT_NE(out.find("1.038"), std::string::npos) << out;  // 2700 / 2600: served
  EXPECT_NE(out.find("0.931"), std::string::npos) << out;  // 2700 / 2900: ours
}

TEST_F(VendorBestCli, best_names_the_vendor_call_with_its_algorithm_and_our_fastest_kernel) {
  const std::string out = db("best --m 4096 --n 4096 --k 4096");
  EXPECT_NE(out.find("vendor call:   cuBLASLt (cublasLtMatmul, algorithm 66, tile 18"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("with " + cublas_version()), std::string::npos) << out;
  EXPECT_NE(out.find("ours:          " + ours_ + ", 2900.00 us median (vs cuBLAS 0.931)"),
            std::string::npos)
      << out;
}

TEST_F(VendorBestCli, explain_says_the_vendor_call_is_served_and_by_which_rule) {
  const std::string out = db("explain --m 4096 --n 4096 --k 4096");
  EXPECT_NE(out.find("the dispatcher serves its tuned best, the vendor call cuBLASLt "
                     "(cublasLtMatmul, algorithm 66"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("fastest tuned on this problem (2600.0 us)"), std::string::npos) << out;
  EXPECT_NE(out.find("beat every kernel of ours"), std::string::npos) << out;
}

TEST_F(VendorBestCli, report_shows_the_served_ratio_with_ours_beside_it) {
  const std::string html = dir_.file("report.html");
  db("report --out " + html);
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("1.038 (served by cublasLt; ours 0.931)"), std::string::npos);
}

}  // namespace
}  // namespace tgemm
