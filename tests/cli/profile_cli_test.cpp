// tgemm-db profile / profiles and the report's profile section, without a GPU or ncu: the
// arguments it refuses, a clear error and an untouched database when ncu is absent, the
// stored profiles listed as text, and the side-by-side tables of a fixture database's page.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::read_bytes;
using testing::run_tool;
using testing::TempDir;

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

const Problem kProblem = Problem::packed(gemm_types("f32"), Op::N, Op::N, 2048, 2048, 2048);

KernelProfile profile(const std::string& contender, double us, double sm_pct) {
  KernelProfile p;
  p.contender = contender;
  p.config = contender == kTgemmContender ? "sgemm_simt_BM128_BN64" : "";
  p.kernel_name = contender == kTgemmContender ? "sgemm_simt_kernel"
                                               : "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize";
  p.ncu_version = "2025.1.0.0";
  p.duration_us = us;
  p.sm_throughput_pct = sm_pct;
  p.dram_read_bytes = 48.25e6;
  p.achieved_occupancy_pct = 12.5;
  p.fma_pipe_pct = 71.25;
  p.registers = 128;
  p.shared_load_bank_conflicts = 4096;
  p.stalls = {{"long_scoreboard", 3.25}, {"barrier", 1.5}, {"mio_throttle", 0.75}};
  if (contender == kCublasContender) p.stalls.pop_back();
  return p;
}

// One tuned f32 problem on an H200 with both profiles stored.
std::string fixture(const TempDir& dir, bool with_profiles) {
  const std::string path = dir.file("t.db");
  TuningDb db(path, TuningDb::Mode::read_write);
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.arch = "sm_90";
  h200.sm_count = 132;
  const int64_t device = db.upsert_device(h200);
  const int64_t problem = db.upsert_problem(kProblem);
  TrialResult t;
  t.config = testing::labelled_sgemm_config(1);
  t.status = TrialStatus::ok;
  t.time_min_us = t.time_median_us = t.time_max_us = 1300;
  t.runs = 10;
  t.tflops = kProblem.flops() / 1300 * 1e-6;
  db.record_trial(0, problem, db.upsert_kernel(t.config, "hash"), device, std::nullopt, t);
  db.update_best(problem, device);
  db.record_cublas_time(0, problem, device, 1100);
  if (with_profiles)
    db.store_profiles(
        problem, device,
        {profile(kTgemmContender, 1234.5, 81.5), profile(kCublasContender, 1050, 92)});
  return path;
}

// PATH for one call: an empty folder, so no ncu is found there.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) : old_(std::getenv("PATH")) {
    setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

bool ncu_installed_elsewhere() {
  std::error_code ec;
  return std::filesystem::exists("/usr/local/cuda/bin/ncu", ec) ||
         std::filesystem::exists("/opt/nvidia/nsight-compute", ec);
}

TEST(ProfileCli, without_ncu_says_so_exits_non_zero_and_writes_nothing) {
  if (ncu_installed_elsewhere()) GTEST_SKIP() << "ncu is installed on this machine";
  TempDir dir{"profile_no_ncu"};
  const std::string db = fixture(dir, false);
  const std::string bytes = read_bytes(db);
  testing::CliResult r;
  {
    ScopedPath path(dir.file(""));
    r = run_tool("tgemm-db", "--db " + db + " profile --m 2048 --n 2048 --k 2048");
  }
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ncu was not found"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--ncu PATH"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(db), bytes);
}

TEST(ProfileCli, rejects_an_ncu_path_that_is_not_an_executable) {
  TempDir dir{"profile_bad_ncu"};
  const std::string db = fixture(dir, false);
  auto r = run_tool("tgemm-db", "--db " + db + " profile --all --ncu " + dir.file("nothing"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--ncu '" + dir.file("nothing") + "' is not an executable file"),
            std::string::npos)
      << r.output;
}

TEST(ProfileCli, rejects_bad_shape_arguments_before_anything_runs) {
  TempDir dir{"profile_args"};
  const std::string db = fixture(dir, false);
  const std::string bytes = read_bytes(db);
  for (auto [args, message] :
       {std::pair{"profile --all --m 64", "either --all or --m --n --k, not both"},
        {"profile --m 64 --n 64", "needs --m, --n and --k (or --all)"},
        {"profile", "needs --m, --n and --k (or --all)"},
        {"profile --m 0 --n 64 --k 64", "--m must be from 1 to"},
        {"profile --m 64 --n 64 --k 64 --layout XY", "XY"},
        {"profile --all --warmup 101", "--warmup must be from 0 to 100, got 101"}}) {
    auto r = run_tool("tgemm-db", "--db " + db + " " + args + " --ncu /bin/true");
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
  }
  EXPECT_EQ(read_bytes(db), bytes);
}

TEST(ProfileCli, a_missing_database_is_named_and_not_created) {
  TempDir dir{"profile_missing_db"};
  auto r = run_tool("tgemm-db", "--db " + dir.file("none.db") + " profile --all --ncu /bin/true");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("'" + dir.file("none.db") + "' does not exist"), std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
}

TEST(ProfileCli, without_a_gpu_the_target_says_so_and_the_database_is_untouched) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  TempDir dir{"profile_no_gpu"};
  const std::string db = fixture(dir, false);
  const std::string bytes = read_bytes(db);
  auto r = run_tool("tgemm-db", "--db " + db + " profile --all --ncu /bin/true");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("found no GPU to profile on"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(db), bytes);
}

TEST(ProfileCli, profiles_lists_both_contenders_of_each_problem) {
  TempDir dir{"profiles_text"};
  const std::string db = fixture(dir, true);
  auto r = run_tool("tgemm-db", "--db " + db + " profiles");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* text :
       {"f32_NN_m2048_n2048_k2048_b0_a16.16.16", "sgemm_simt_BM128_BN64", "sm90_xmma_gemm_f32f32",
        "1234.50", "1050.00", "81.5", "48.2", "long_scoreboard 3.25", "4096"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  EXPECT_EQ(count_of(r.output, "NVIDIA H200"), 2u) << r.output;
}

TEST(ProfileCli, profiles_of_a_database_without_any_says_how_to_make_them) {
  TempDir dir{"profiles_none"};
  auto r = run_tool("tgemm-db", "--db " + fixture(dir, false) + " profiles");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no kernel profiles stored"), std::string::npos) << r.output;
}

TEST(ProfileCli, report_shows_tgemm_and_cublas_side_by_side_with_stall_bars) {
  TempDir dir{"profiles_report"};
  const std::string db = fixture(dir, true);
  auto r = run_tool("tgemm-db", "--db " + db + " report --out " + dir.file("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_bytes(dir.file("r.html"));
  EXPECT_EQ(count_of(html, "class=\"profile\" data-key=\"f32_NN_m2048_n2048_k2048_b0_a16.16.16\""),
            1u);
  EXPECT_EQ(count_of(html, "class=\"metric-row\""), 15u);
  EXPECT_NE(html.find("<td>ncu time (us)</td><td>1234.50</td><td>1050.00</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>SM throughput (% of peak)</td><td>81.5</td><td>92.0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>tensor pipe (% of peak)</td><td>-</td><td>-</td>"), std::string::npos);
  EXPECT_EQ(count_of(html, "class=\"stall\" "), 5u);  // 3 for tgemm, 2 for cuBLAS
  // One scale for both: the largest stall fills its track.
  EXPECT_NE(html.find("data-reason=\"long_scoreboard\" data-value=\"3.25\"><span "
                      "class=\"stall-name\">long_scoreboard</span><span class=\"stall-track\">"
                      "<span class=\"stall-bar\" style=\"width:100.0%\""),
            std::string::npos);
  EXPECT_NE(html.find("ncu 2025.1.0.0"), std::string::npos);
}

TEST(ProfileCli, report_without_profiles_has_no_profile_section) {
  TempDir dir{"profiles_report_none"};
  const std::string db = fixture(dir, false);
  auto r = run_tool("tgemm-db", "--db " + db + " report --out " + dir.file("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_bytes(dir.file("r.html")).find("Nsight Compute profiles"), std::string::npos);
}

}  // namespace
}  // namespace tgemm
