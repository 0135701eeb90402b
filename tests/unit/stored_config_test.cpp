// stored_config_rejection(): a config read from a database is checked against its family's
// shipped space and host side before any host code divides by one of its parameters.
#include "src/templates/stored_config.h"

#include <gtest/gtest.h>

#include <string>

#include "src/dispatch/kernel_selector.h"

namespace tgemm {
namespace {

KernelConfig sgemm_warp(const std::string& params) {
  return KernelConfig::from_params_text(
      "sgemm_warp", "BM=64,BN=64,BK=8,WM=32,WN=32,TM=8,TN=4,STAGES=4,SPLIT_K=1,TAIL_SPLIT=8," +
                        params + ",SWIZZLE=1,MIN_BLOCKS=2,PACK_B=0");
}

std::string rejection(const KernelConfig& config, const std::string& arch = "sm_90") {
  return stored_config_rejection(config, arch).value_or("");
}

TEST(StoredConfig, accepts_every_shipped_default_kernel) {
  for (const DefaultKernel& d : shipped_default_kernels()) {
    const std::string arch = d.arch == "*" ? "sm_90" : d.arch;
    EXPECT_EQ(rejection(d.config, arch), "") << d.config.canonical_name() << " on " << arch;
  }
}

TEST(StoredConfig, accepts_a_config_that_leaves_out_parameters_with_defaults) {
  // What a space listing fewer parameters (tests/data/spaces/tiny_sgemm_simt.yaml) stores:
  // no SPLIT_MODE, no MIN_BLOCKS.
  EXPECT_EQ(rejection(KernelConfig::from_params_text(
                "sgemm_simt",
                "BM=64,BN=64,BK=8,TM=4,TN=4,WARP_N=8,VEC=1,PAD_A=4,PAD_B=4,"
                "STAGES=2,SPLIT_K=1,SWIZZLE=1")),
            "");
}

TEST(StoredConfig, rejects_a_config_without_a_parameter_the_host_side_needs) {
  const std::string why = rejection({"sgemm_simt", {{"BM", 64}, {"BN", 64}}});
  EXPECT_NE(why.find("has no parameter BK"), std::string::npos) << why;
}

TEST(StoredConfig, rejects_a_zero_the_host_side_divides_by) {
  EXPECT_EQ(rejection(sgemm_warp("VEC=1")), "");
  const std::string why = rejection(sgemm_warp("VEC=0"));
  EXPECT_NE(why.find("VEC must be 1, 2 or 4"), std::string::npos) << why;
}

TEST(StoredConfig, rejects_names_values_and_families_it_does_not_know) {
  EXPECT_NE(rejection(sgemm_warp("VEC=1,VECTOR=4"))
                .find("VECTOR is not a tunable of template "
                      "sgemm_warp"),
            std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=1,VEC=4")).find("VEC is given twice"), std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=-4")).find("VEC=-4 is out of range"), std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=4294967300")).find("out of range"), std::string::npos);
  EXPECT_NE(rejection({"no_such_family", {}}).find("unknown template family 'no_such_family'"),
            std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=1"), "").find("unknown arch ''"), std::string::npos);
}

TEST(StoredConfig, rejects_a_config_illegal_on_the_arch) {
  // Four stages need cp.async: sm_80 on.
  EXPECT_EQ(rejection(sgemm_warp("VEC=1"), "sm_80"), "");
  EXPECT_NE(rejection(sgemm_warp("VEC=1"), "sm_75").find("STAGES must be 2"), std::string::npos);
}

}  // namespace
}  // namespace tgemm
