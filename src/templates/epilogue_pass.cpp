#include "src/templates/epilogue_pass.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_templates/common/gemm_params.h"
#include "src/core/error.h"
#include "src/jit/kernel_source.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

std::vector<std::string> EpiloguePass::defines(const Epilogue& epilogue, DType out, DType bias) {
  Epilogue math = epilogue.build();
  math.bias_f32 = false;  // the bias type is given below, whatever C's
  std::vector<std::string> out_defines = math.defines();
  out_defines.push_back(fmt::format("-DTGEMM_TYPE_C={}", element_code(out)));
  out_defines.push_back(fmt::format("-DTGEMM_BIAS_TYPE={}", element_code(bias)));
  return out_defines;
}

EpiloguePass::EpiloguePass(const Epilogue& epilogue, DType out, DType bias,
                           const std::string& arch) {
  const KernelSource source =
      kernel_source_from_text("epilogue_pass", "#include \"common/epilogue_pass.cuh\"\n");
  const CompiledKernel compiled =
      NvrtcCompiler::compile(source, defines(epilogue, out, bias), "epilogue_pass", arch,
                             "epilogue_pass_" + epilogue.name());
  if (!compiled.ok) fail("{}", compiled.error);
  library_ = std::make_unique<CudaLibrary>(compiled.cubin);
  kernel_ = library_->kernel("epilogue_pass");
}

cudaError_t EpiloguePass::launch(int64_t m, int64_t n, const EpilogueParams& e,
                                 cudaStream_t stream) const {
  if (m == 0 || n == 0) return cudaSuccess;
  GemmParams p{};  // alpha 1, beta 0: the output's value is the GEMM's
  p.m = int(m);
  p.n = int(n);
  p.alpha = 1.0f;
  void* args[] = {&p, const_cast<EpilogueParams*>(&e)};
  const unsigned blocks = unsigned(std::clamp<int64_t>((m * n + 255) / 256, 1, 65535));
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks), dim3(256), args, 0,
                          stream);
}

}  // namespace tgemm
