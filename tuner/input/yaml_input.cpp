#include "tuner/input/yaml_input.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "src/core/error.h"

namespace tgemm {

YAML::Node load_yaml_file(const std::string& path, const char* what) {
  // Read the whole file first so a missing file gets the system's reason, not yaml-cpp's.
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {} '{}': {}", what, path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("cannot read {} '{}'", what, path);
  try {
    return YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    fail("{}:{}:{}: malformed YAML: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::initializer_list<std::string_view> allowed, const char* what) {
  std::map<std::string, int> seen;
  for (const auto& entry : map) {
    const YAML::Node& key_node = entry.first;
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "(a list or map)";
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail("{}:{}: unknown {} '{}' (expected {})", path, line_of(key_node), what, key,
           fmt::join(allowed, ", "));
    auto [it, fresh] = seen.emplace(key, line_of(key_node));
    if (!fresh)
      fail("{}:{}: key '{}' repeats the one on line {}", path, line_of(key_node), key, it->second);
  }
}

}  // namespace tgemm
