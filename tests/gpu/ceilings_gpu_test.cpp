// The measured device ceilings on a real GPU: the worker's numbers are sane and tgemm-tune
// stores them once per device (a second run measures nothing again). Skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"
#include "tuner/evaluate/ceiling_probe.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::query_text;
using testing::run_tool;
using testing::TempDir;

TEST(CeilingsGpu, measured_ceilings_are_sane) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const CeilingMeasurements m = measure_ceilings(0);
  ASSERT_TRUE(m.ok) << m.error;
  EXPECT_GT(m.copy_bytes_per_s, 100e9);
  EXPECT_LT(m.copy_bytes_per_s, 20e12);
  EXPECT_GT(m.ffma_flops, 1e12);
  EXPECT_LT(m.ffma_flops, 200e12);
  EXPECT_EQ(m.ffma_source, "nvrtc_ffma_kernel") << m.error;
  for (double tensor : {m.f16_flops, m.bf16_flops, m.tf32_flops}) {
    EXPECT_GT(tensor, m.ffma_flops * 0.9);  // tensor cores beat (or, pre-Volta, match) FFMA
    EXPECT_LT(tensor, 5000e12);
  }
  EXPECT_EQ(ceiling_rows(m).size(), 5u);
}

TEST(CeilingsGpu, tune_stores_the_ceilings_once_per_device) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("ceilings_gpu");
  const std::string db = dir.file("t.db");
  const std::string args = testing::tiny_tune_args("tiny_sgemm_simt", db);
  auto first = run_tool("tgemm-tune", args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(query_int(db, "select count(*) from device_ceilings"), 5) << first.output;
  const std::string when = query_text(db,
                                      "select max(measured_at) || max(run_id) "
                                      "from device_ceilings");
  auto second = run_tool("tgemm-tune", args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(query_int(db, "select count(*) from device_ceilings"), 5);
  EXPECT_EQ(query_text(db, "select max(measured_at) || max(run_id) from device_ceilings"), when)
      << "measured again on a device that had ceilings";
  EXPECT_EQ(query_int(db,
                      "select count(*) from device_ceilings where kind = 'copy_bandwidth' "
                      "and value between 100e9 and 20e12"),
            1);
  auto listed = run_tool("tgemm-db", "--db " + db + " ceilings");
  EXPECT_NE(listed.output.find("copy_bandwidth"), std::string::npos) << listed.output;
}

}  // namespace
}  // namespace tgemm
