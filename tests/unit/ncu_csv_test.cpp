// The ncu raw CSV reader on output shaped like `ncu --csv --page raw --metrics ...` prints it:
// ==PROF== lines and the application's own output first, a quoted header row, a units row,
// one row per kernel (numbers with thousands separators, scaled units), then more messages.
#include "tuner/profile/ncu_csv.h"

#include <gtest/gtest.h>

#include <string>

#include "src/core/error.h"

namespace tgemm {
namespace {

const char* const kTwoKernels =
    R"csv(==PROF== Connected to process 4242 (/opt/tgemm/tgemm-profile-target)
profile target: sgemm_simt BM=128 launched 3 times before the profiled one
==PROF== Profiling "sgemm_simt_kernel" - 0: 0%....50%....100% - 38 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","launch__registers_per_thread","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","smsp__sass_sectors_mem_global.sum","smsp__sass_sectors_mem_global_ideal.sum","sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active","sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","Mbyte","Kbyte","usecond","register/thread","%","%","","","","","","sector","sector","%","%"
"0","4242","tgemm-profile-target","127.0.0.1","sgemm_simt_kernel","1","13","(256, 1, 1)","(16, 16, 1)","0","9.0","50.33","16,777.22","1,234.5","128","87.61","12.40","0.85","3.25","1","0.40","1.10","2,097,152","1,048,576","0","n/a"
"1","4242","tgemm-profile-target","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)","1","13","(256, 1, 1)","(8, 16, 3)","0","9.0","48","17","1200","","91","10.5","0.2","2.5","1","0.7","0.1","","","12.5","30"
==PROF== Disconnected from process 4242
)csv";

TEST(NcuCsv, reads_one_row_per_kernel_after_the_units_row) {
  const auto rows = parse_ncu_raw_csv(kTwoKernels);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel_name, "sgemm_simt_kernel");
  EXPECT_EQ(rows[1].kernel_name,
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)");
  EXPECT_EQ(rows[0].values.at("Block Size"), "(256, 1, 1)");
  EXPECT_EQ(rows[0].units.at("dram__bytes_read.sum"), "Mbyte");
}

TEST(NcuCsv, numbers_drop_thousands_separators_and_scale_to_base_units) {
  const auto rows = parse_ncu_raw_csv(kTwoKernels);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*rows[0].number("dram__bytes_read.sum"), 50.33e6);
  EXPECT_DOUBLE_EQ(*rows[0].number("dram__bytes_write.sum"), 16777.22e3);
  EXPECT_DOUBLE_EQ(*rows[0].number("gpu__time_duration.sum"), 1234.5e3);  // in ns
  EXPECT_FALSE(
      rows[0].number("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_"
                     "active"));                                 // n/a
  EXPECT_FALSE(rows[1].number("launch__registers_per_thread"));  // empty
  EXPECT_FALSE(rows[0].number("Block Size"));                    // text
  EXPECT_FALSE(rows[0].number("no_such_metric"));
}

TEST(NcuCsv, profile_takes_the_metrics_and_the_largest_stalls_without_selected) {
  const auto rows = parse_ncu_raw_csv(kTwoKernels);
  ASSERT_EQ(rows.size(), 2u);
  const KernelProfile p = profile_from_row(rows[0], 3);
  EXPECT_EQ(p.kernel_name, "sgemm_simt_kernel");
  EXPECT_DOUBLE_EQ(*p.duration_us, 1234.5);
  EXPECT_DOUBLE_EQ(*p.sm_throughput_pct, 87.61);
  EXPECT_DOUBLE_EQ(*p.achieved_occupancy_pct, 12.40);
  EXPECT_DOUBLE_EQ(*p.registers, 128);
  EXPECT_DOUBLE_EQ(*p.global_excess_sectors, 1048576);
  EXPECT_DOUBLE_EQ(*p.tensor_pipe_pct, 0);
  EXPECT_FALSE(p.fma_pipe_pct);  // not in this output
  ASSERT_EQ(p.stalls.size(), 3u);
  EXPECT_EQ(p.stalls[0].name, "long_scoreboard");
  EXPECT_DOUBLE_EQ(p.stalls[0].value, 3.25);
  EXPECT_EQ(p.stalls[1].name, "wait");
  EXPECT_EQ(p.stalls[2].name, "barrier");
  // cuBLAS on Hopper: the busier of the two tensor pipes.
  EXPECT_DOUBLE_EQ(*profile_from_row(rows[1]).tensor_pipe_pct, 30);
  EXPECT_FALSE(profile_from_row(rows[1]).global_excess_sectors);
}

TEST(NcuCsv, output_without_a_profiled_kernel_has_no_rows) {
  EXPECT_TRUE(parse_ncu_raw_csv("==PROF== Connected to process 1\n==WARNING== No kernels were "
                                "profiled.\n")
                  .empty());
}

TEST(NcuCsv, rejects_a_row_with_the_wrong_cell_count_naming_its_line) {
  const std::string text =
      "==PROF== x\n\"ID\",\"Kernel Name\",\"m\"\n\"\",\"\",\"byte\"\n"
      "\"0\",\"k\"\n";
  try {
    parse_ncu_raw_csv(text);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 4: 2 cells where the header has 3"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcuCsv, rejects_an_unterminated_quote_and_a_header_without_kernel_names) {
  EXPECT_THROW(parse_ncu_raw_csv("\"ID\",\"Kernel Name\"\n\"\",\"\n"), Error);
  EXPECT_THROW(parse_ncu_raw_csv("\"ID\",\"Name\"\n"), Error);
}

TEST(NcuCsv, finds_the_metrics_ncu_does_not_know) {
  const auto missing = missing_metrics(
      "==PROF== Connected to process 7\n==ERROR== Failed to find metric "
      "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active\n"
      "==ERROR== Failed to find metric smsp__sass_sectors_mem_global_ideal.sum\n");
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(missing[1], "smsp__sass_sectors_mem_global_ideal.sum");
  EXPECT_TRUE(missing_metrics("==PROF== Disconnected\n").empty());
}

TEST(NcuCsv, reads_the_version_of_ncu) {
  EXPECT_EQ(ncu_version_of("NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) "
                           "2018-2025 NVIDIA Corporation\nVersion 2025.1.0.0 (build 35237751) "
                           "(public-release)\n"),
            "2025.1.0.0");
  EXPECT_EQ(ncu_version_of("something else\n\n"), "something else");
}

}  // namespace
}  // namespace tgemm
