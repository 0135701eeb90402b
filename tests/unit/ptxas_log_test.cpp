#include "src/jit/ptxas_log.h"

#include <gtest/gtest.h>

namespace tgemm {
namespace {

const char* kLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'sgemm_simt_prepare_c' for 'sm_90'
ptxas info    : Function properties for sgemm_simt_prepare_c
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 512 bytes smem
ptxas info    : Compiling entry function 'sgemm_simt' for 'sm_90'
ptxas info    : Function properties for sgemm_simt
ptxas         .     24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 0 bytes smem
)";

TEST(PtxasLog, reads_the_named_entry_not_its_neighbour) {
  auto r = parse_ptxas_log(kLog, "sgemm_simt");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.smem_bytes, 0);
  EXPECT_EQ(r.stack_frame_bytes, 24);
  EXPECT_EQ(r.spill_store_bytes, 16);
  EXPECT_EQ(r.spill_load_bytes, 8);
  auto p = parse_ptxas_log(kLog, "sgemm_simt_prepare_c");
  EXPECT_EQ(p.registers, 12);
  EXPECT_EQ(p.smem_bytes, 512);
  EXPECT_EQ(p.spill_store_bytes, 0);
}

TEST(PtxasLog, missing_entry_is_reported_not_found) {
  EXPECT_FALSE(parse_ptxas_log(kLog, "other").found);
  EXPECT_FALSE(parse_ptxas_log("", "sgemm_simt").found);
}

// The C7515 note comes before the entry's report and names the function it is about.
TEST(PtxasLog, reads_serialized_wgmmas_of_the_named_entry_only) {
  const std::string log =
      std::string(
          "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are "
          "serialized due to non wgmma instructions defining accumulator registers of a wgmma "
          "between start and end of the pipeline stage in the function 'sgemm_simt'\n") +
      kLog;
  EXPECT_TRUE(parse_ptxas_log(log, "sgemm_simt").wgmma_serialized);
  EXPECT_FALSE(parse_ptxas_log(log, "sgemm_simt_prepare_c").wgmma_serialized);
  EXPECT_FALSE(parse_ptxas_log(kLog, "sgemm_simt").wgmma_serialized);
}

}  // namespace
}  // namespace tgemm
