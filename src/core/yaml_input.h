// Reading the tuner's YAML inputs (shape sets, search spaces) with errors that name the file
// and the line: shared by ProblemSet and SearchSpace.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace tgemm {

// 1-based line of a node, as editors show it (yaml-cpp counts from 0; 0 when unknown).
inline int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

// Limits of every YAML input: far above what a shape or space file needs, far below what
// exhausts memory or the stack.
constexpr size_t kMaxYamlBytes = size_t(16) << 20;
constexpr int kMaxYamlDepth = 64;  // lists and maps inside each other

// Parses `path`; `what` names the kind of file in messages ("shape file"). A missing file
// gets the system's reason; a directory, a device or FIFO, a file over kMaxYamlBytes,
// nesting over kMaxYamlDepth and malformed YAML are errors naming the file (and line).
YAML::Node load_yaml_file(const std::string& path, const char* what);
// The same for text from elsewhere (an embedded file); `origin` names it in messages.
YAML::Node load_yaml_text(const std::string& text, const std::string& origin, const char* what);

// Throws Error at the first key of `map` not in `allowed`, or repeated, naming its line.
void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::initializer_list<std::string_view> allowed, const char* what);
void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::span<const std::string_view> allowed, const char* what);

}  // namespace tgemm
