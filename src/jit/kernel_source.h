// Kernel templates embedded at build time (cmake/embed_templates.cmake), looked up by name,
// with the shared headers of kernel_templates/common/ that NVRTC sees as named headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tgemm {

struct EmbeddedTemplate {
  const char* name;    // the file stem of kernel_templates/<name>.cuh
  const char* source;  // the .cuh text
  const char* space;   // its shipped search space (configs/spaces/<name>.yaml)
};

struct EmbeddedHeader {
  const char* include_name;  // "common/gemm_params.h", as templates include it
  const char* text;
};

// Defined in the generated embedded_templates.cpp.
const std::vector<EmbeddedTemplate>& embedded_templates();
const std::vector<EmbeddedHeader>& embedded_common_headers();

struct NamedHeader {
  std::string include_name;
  std::string text;
};

struct KernelSource {
  std::string name;
  std::string text;
  std::vector<NamedHeader> headers;  // what `#include "common/..."` resolves to
  // stable_hash of the text and the headers it includes: the version of everything the
  // device code is built from, part of every cache key and stored with every kernel.
  std::string hash;
};

// The headers `text` includes with `#include "<include_name>"`, directly or through another
// of them, in the order of `headers`.
std::vector<const NamedHeader*> included_headers(const std::string& text,
                                                 const std::vector<NamedHeader>& headers);

// The embedded template with the embedded common headers. Throws Error naming the known
// templates when `name` is not one.
KernelSource kernel_source(const std::string& name);
// A template text from elsewhere (a file under development, a test's variant), with the
// embedded common headers; it may also include the shipped templates by file name
// ("<name>.cuh"), e.g. to wrap one.
KernelSource kernel_source_from_text(const std::string& name, const std::string& text);
std::vector<std::string> template_names();
// Every macro a template declares with a default: an `#ifndef NAME` line followed by
// `#define NAME <default>` (an include guard has no default), in order, each once.
std::vector<std::string> declared_macros(const std::string& source_text);
// The default of a declared macro when it is a decimal integer ("#define VEC 4"), else nullopt.
std::optional<int64_t> declared_integer_default(const std::string& source_text,
                                                const std::string& name);
// declared_macros() without the TGEMM_ names, which the problem or the tests set: the
// parameters a search space may tune.
std::vector<std::string> declared_tunables(const std::string& source_text);

}  // namespace tgemm
