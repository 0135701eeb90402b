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

}  // namespace
}  // namespace tgemm
