// The PTX NVRTC makes of a family's template for one config and problem variant on a virtual
// arch ("compute_75", "compute_90a"): the CPU tests read it for the instructions a build uses.
#pragma once

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <string>
#include <vector>

#include "src/templates/gemm_template.h"

namespace tgemm::testing {

inline std::string template_ptx(const GemmTemplate& family, const KernelConfig& config,
                                const Problem& variant, const std::string& virtual_arch) {
  const KernelSource& source = family.source();
  std::vector<const char*> names, texts;
  for (const NamedHeader& h : source.headers) {
    names.push_back(h.include_name.c_str());
    texts.push_back(h.text.c_str());
  }
  nvrtcProgram program;
  const std::string file = family.name() + ".cu";
  EXPECT_EQ(nvrtcCreateProgram(&program, source.text.c_str(), file.c_str(), int(names.size()),
                               texts.data(), names.data()),
            NVRTC_SUCCESS);
  std::vector<std::string> opts = {"-arch=" + virtual_arch, "-std=c++17"};
  for (const std::string& d : family.defines(config, variant)) opts.push_back(d);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  std::string ptx;
  if (nvrtcCompileProgram(program, int(argv.size()), argv.data()) == NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetPTXSize(program, &size);
    ptx.resize(size);
    nvrtcGetPTX(program, ptx.data());
  } else {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    ADD_FAILURE() << "PTX compile failed: " << log;
  }
  nvrtcDestroyProgram(&program);
  return ptx;
}

}  // namespace tgemm::testing
