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
// Every macro a template declares with a default: an `#ifndef NAME` line followed by
// `#define NAME <default>` (an include guard has no default), in order, each once.
std::vector<std::string> declared_macros(const std::string& source_text);
// declared_macros() without the TGEMM_ names, which the problem or the tests set: the
// parameters a search space may tune.
std::vector<std::string> declared_tunables(const std::string& source_text);

}  // namespace tgemm
