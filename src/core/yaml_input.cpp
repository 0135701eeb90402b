#include "src/core/yaml_input.h"

#include <fmt/ranges.h>
#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "src/core/error.h"

namespace tgemm {

namespace {

// Lists and maps inside each other deeper than this are refused; the tuner's files need
// three or four levels. Checked on the parsed tree, which yaml-cpp caps at 2000 levels.
void check_depth(const YAML::Node& node, int depth, uint64_t* nodes, uint64_t max_nodes,
                 const std::string& origin, const char* what) {
  if (++*nodes > max_nodes)
    fail(
        "{}: its aliases expand to more than {} nodes; a {} needs no more nodes than it has "
        "bytes",
        origin, max_nodes, what);
  if (!node.IsMap() && !node.IsSequence()) return;
  if (depth > kMaxYamlDepth)
    fail("{}:{}: lists and maps are nested deeper than {} levels (a {} needs a few)", origin,
         line_of(node), kMaxYamlDepth, what);
  for (const auto& entry : node) {
    if (node.IsMap()) {
      check_depth(entry.first, depth + 1, nodes, max_nodes, origin, what);
      check_depth(entry.second, depth + 1, nodes, max_nodes, origin, what);
    } else {
      check_depth(entry, depth + 1, nodes, max_nodes, origin, what);
    }
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::string& path, const char* what) {
  // A directory, a device such as /dev/zero or a FIFO would read as empty or never end.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    fail("{} '{}' is a directory; expected a YAML file", what, path);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    fail("{} '{}' is not a regular file (a device, FIFO or socket); expected a YAML file", what,
         path);
  // Read the whole file first so a missing file gets the system's reason, not yaml-cpp's.
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {} '{}': {}", what, path, std::strerror(errno));
  // In chunks, stopping one byte past the limit: the file may grow while it is read.
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxYamlBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, size_t(in.gcount()));
  if (in.bad()) fail("cannot read {} '{}'", what, path);
  return load_yaml_text(text, path, what);
}

YAML::Node load_yaml_text(const std::string& text, const std::string& origin, const char* what) {
  if (text.size() > kMaxYamlBytes)
    fail("{}: the {} is larger than {} MiB; a {} is at most that", origin, what,
         kMaxYamlBytes >> 20, what);
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    fail("{}:{}: lists and maps are nested deeper than {} levels (a {} needs a few)", origin,
         e.mark.line + 1, kMaxYamlDepth, what);
  } catch (const YAML::ParserException& e) {
    fail("{}:{}:{}: malformed YAML: {}", origin, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  // A one-document load would silently drop what follows a second "---".
  if (documents.size() > 1)
    fail("{}:{}: a second YAML document (after '---'); a {} is one document", origin,
         line_of(documents[1]), what);
  const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  uint64_t nodes = 0;
  check_depth(root, 1, &nodes, 2 * text.size() + 16, origin, what);
  return root;
}

void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::initializer_list<std::string_view> allowed, const char* what) {
  check_yaml_keys(path, map, std::span<const std::string_view>(allowed.begin(), allowed.size()),
                  what);
}

void check_yaml_keys(const std::string& path, const YAML::Node& map,
                     std::span<const std::string_view> allowed, const char* what) {
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
