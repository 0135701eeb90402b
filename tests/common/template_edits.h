// Edits of sgemm_simt's template text for the tests of staleness by machine code: refactors
// that change no instruction, and one that changes a constant of the arithmetic.
#pragma once

#include <stdexcept>
#include <string>

#include "src/templates/template_registry.h"

namespace tgemm::testing {

// `text` with its one occurrence of `from` replaced by `to`; throws when there is not one.
inline std::string replaced_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos)
    throw std::runtime_error("not exactly one '" + from + "' in the template");
  return text.replace(at, from.size(), to);
}

inline const std::string& sgemm_simt_text() { return template_named("sgemm_simt").source().text; }

// A comment reworded and one added above a kernel: every line after it moves.
inline std::string sgemm_simt_comment_edited() {
  return replaced_once(
      replaced_once(sgemm_simt_text(), "// Reads COUNT floats of one shared-memory row",
                    "// Copies COUNT floats of one shared-memory row"),
      "extern \"C\" __global__ void sgemm_simt_prepare_c",
      "// A note that changes no instruction.\n// And a second line.\n"
      "extern \"C\" __global__ void sgemm_simt_prepare_c");
}

// The beta pre-pass kernel moved after the main kernel (the symbols come in another order),
// and a device helper renamed.
inline std::string sgemm_simt_code_moved() {
  const std::string prepare =
      "extern \"C\" __global__ void sgemm_simt_prepare_c(const tgemm::GemmParams p) {\n"
      "  tgemm::scale_c_by_beta<float>(p);\n}\n";
  std::string text = replaced_once(sgemm_simt_text(), prepare, "") + "\n" + prepare;
  for (size_t at; (at = text.find("read_fragment<")) != std::string::npos;)
    text.replace(at, 13, "load_row_part");
  return replaced_once(text, "void read_fragment(", "void load_row_part(");
}

// A constant of the epilogue's arithmetic changed: other machine code.
inline std::string sgemm_simt_constant_changed() {
  return replaced_once(sgemm_simt_text(), "p.beta != 0.0f ? p.beta * c_row[col + j] : 0.0f;",
                       "p.beta != 0.0f ? p.beta * c_row[col + j] : 1.0f;");
}

}  // namespace tgemm::testing
