// The ceilings probe's FFMA peak kernel compiles through NVRTC for every target arch (on a
// GPU, an option NVRTC refuses once sent the probe to its cuBLAS fallback without notice).
#include <gtest/gtest.h>

#include <string>

#include "tuner/evaluate/ceiling_probe.h"

namespace tgemm {
namespace {

TEST(FfmaProbe, the_peak_kernel_compiles_for_sm_75_80_and_90) {
  for (auto [major, minor] : {std::pair{7, 5}, {8, 0}, {9, 0}}) {
    const std::vector<char> cubin = ffma_probe_cubin(major, minor);
    EXPECT_GT(cubin.size(), 100u) << major << minor;
    const std::string bytes(cubin.begin(), cubin.end());
    EXPECT_NE(bytes.find("ffma_peak"), std::string::npos) << "the entry is in the cubin";
  }
}

}  // namespace
}  // namespace tgemm
