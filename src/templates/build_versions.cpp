#include "src/templates/build_versions.h"

#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/template_registry.h"

namespace tgemm {

CurrentBuild this_build(int driver_version) {
  CurrentBuild build;
  for (const GemmTemplate* family : all_templates())
    build.template_hashes[family->name()] = family->source().hash;
  // A vendor call's time holds while the library is the one it was measured with.
  for (const char* vendor : {kCublasCall, kCublasLtCall})
    build.template_hashes[vendor] = cublas_version();
  build.nvrtc_version = NvrtcCompiler::version();
  build.driver_version = driver_version;
  return build;
}

}  // namespace tgemm
