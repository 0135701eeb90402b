#include "src/templates/kernel_build.h"

#include "src/jit/nvrtc_compiler.h"

namespace tgemm {

std::string kernel_cache_key(const GemmTemplate& family, const KernelConfig& config,
                             const Problem& variant, const std::string& arch) {
  return NvrtcCompiler::cache_key(family.source(), family.defines(config, variant),
                                  family.nvrtc_arch(arch));
}

Problem built_variant(const CompiledKernel& kernel) {
  return build_variant(kernel.types, kernel.op_a, kernel.op_b, kernel.batch_form, kernel.epilogue);
}

CompiledKernel build_kernel(const GemmTemplate& family, const KernelConfig& config,
                            const Problem& variant, const std::string& arch) {
  CompiledKernel out;
  try {
    out = NvrtcCompiler::compile(family.source(), family.defines(config, variant),
                                 family.entries(config, variant.types).front(),
                                 family.nvrtc_arch(arch), config.canonical_name());
  } catch (const std::exception& e) {  // a template's host side refusing the config
    out.error = e.what();
  }
  out.arch = arch;  // an sm_90a cubin is sm_90's in the database and the dispatcher
  out.op_a = variant.op_a;
  out.op_b = variant.op_b;
  out.types = variant.types;
  out.batch_form = variant.batch_form();
  out.epilogue = variant.epilogue.build();
  return out;
}

}  // namespace tgemm
