// Kernel templates embedded at build time (cmake/embed_templates.cmake), looked up by name.
#pragma once

#include <string>
#include <vector>

namespace tgemm {

struct EmbeddedTemplate {
  const char* name;    // file stem, e.g. "sgemm_simt"
  const char* source;  // the .cuh text
};

// Defined in the generated embedded_templates.cpp.
const std::vector<EmbeddedTemplate>& embedded_templates();

struct KernelSource {
  std::string name;
  std::string text;
  std::string hash;  // stable_hash(text): the template's version
};

// Throws Error naming the known templates when `name` is not one.
KernelSource kernel_source(const std::string& name);
std::vector<std::string> template_names();

}  // namespace tgemm
