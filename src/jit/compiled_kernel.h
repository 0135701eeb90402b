// CompiledKernel: what one NVRTC compile produced (cubin + resources), or why it failed.
#pragma once

#include <string>
#include <vector>

#include "src/core/batch_form.h"
#include "src/core/dtype.h"
#include "src/core/epilogue.h"
#include "src/jit/ptxas_log.h"

namespace tgemm {

struct CompiledKernel {
  bool ok = false;
  std::string error;              // on failure: canonical name, options and the NVRTC log
  std::string entry;              // extern "C" kernel name in the cubin
  std::string arch;               // "sm_90"
  Op op_a = Op::N, op_b = Op::N;  // the layout compiled in
  GemmTypes types;                // the element and compute types compiled in
  BatchForm batch_form = BatchForm::single;  // how the build finds its matrices
  Epilogue epilogue{};  // what the build applies to its result (Epilogue::build(); none: plain)
  std::string nvrtc_version;
  std::string options;    // every NVRTC option, space separated
  std::string cache_key;  // stable_hash(template hash, options, arch, NVRTC version)
  std::vector<char> cubin;
  std::string code_hash;  // cubin_code_hash(cubin): what it runs, whatever the source text
  PtxasResources resources;
  double compile_ms = 0;       // wall time of the NVRTC call
  double compile_cpu_ms = 0;   // CPU time of the compiling thread over it
  double compile_wait_ms = 0;  // time it was runnable but not running (no free core): wall -
                               // CPU - wait is time blocked (a lock, I/O)
  std::string log;
};

}  // namespace tgemm
