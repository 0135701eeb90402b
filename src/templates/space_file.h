// A search-space file (configs/spaces/*.yaml) as written: its entries in order with the line of
// each, checked for shape (keys, names, integer values) but not for meaning (the expressions,
// the template's tunables: SearchSpace).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "src/templates/search_space.h"

namespace tgemm {

struct SpaceFile {
  std::string template_name;
  std::string source;                                       // `source:` as written; empty when none
  std::vector<std::pair<std::string, std::string>> dtypes;  // type name, lowest arch
  std::vector<SpaceParameter> parameters;
  std::vector<std::pair<std::string, std::string>> derived;  // name, expression
  std::vector<SpaceConstraint> constraints;
  int template_line = 0, parameters_line = 0;
  std::vector<int> parameter_lines, derived_lines, constraint_lines;

  int line_of_expression(bool in_derived, size_t index) const {
    return in_derived ? derived_lines.at(index) : constraint_lines.at(index);
  }
};

// Reads `path`, or `text` when given (`path` then names it in messages); throws Error naming
// path:line for malformed YAML, unknown or repeated keys, bad names and values.
SpaceFile read_space_file(const std::string& path, const std::string* text);

}  // namespace tgemm
