// Reading the tuner's YAML inputs (shape sets, search spaces) with errors that name the file
// and the line: shared by ProblemSet and SearchSpace.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace tgemm {

// 1-based line of a node, as editors show it (yaml-cpp counts from 0; 0 when unknown).
inline int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

// Parses `path`; `what` names the kind of file in messages ("shape file"). A missing file
// gets the system's reason, malformed YAML its line and column.
YAML::Node load_yaml_file(const std::string& path, const char* what);

// Throws Error at the first key of `map` not in `allowed`, or repeated, naming its line.
void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::initializer_list<std::string_view> allowed, const char* what);

}  // namespace tgemm
