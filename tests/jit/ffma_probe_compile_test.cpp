// The measuring kernels compile through NVRTC for every target arch: the ceilings probe's FFMA
// peak (on a GPU, an option NVRTC refuses once sent the probe to its cuBLAS fallback without
// notice) and the timer's L2 flush, which reads a buffer and writes nothing back.
#include <gtest/gtest.h>

#include <string>

#include "src/core/error.h"
#include "tuner/evaluate/ceiling_probe.h"
#include "tuner/evaluate/interleaved_timer.h"

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

// A measuring kernel NVRTC refuses is an Error naming its file, never an empty cubin.
TEST(ProbeCubin, a_source_nvrtc_refuses_throws_naming_its_file) {
  try {
    probe_cubin("extern \"C\" __global__ void k( { }", "broken_probe.cu", 9, 0);
    ADD_FAILURE() << "a broken source compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC could not compile broken_probe.cu"),
              std::string::npos)
        << e.what();
  }
}

TEST(L2FlushKernel, compiles_for_sm_75_80_and_90) {
  for (auto [major, minor] : {std::pair{7, 5}, {8, 0}, {9, 0}}) {
    const std::vector<char> cubin = L2Flusher::cubin(major, minor);
    EXPECT_GT(cubin.size(), 100u) << major << minor;
    const std::string bytes(cubin.begin(), cubin.end());
    EXPECT_NE(bytes.find("l2_flush_read"), std::string::npos) << "the entry is in the cubin";
  }
}

}  // namespace
}  // namespace tgemm
