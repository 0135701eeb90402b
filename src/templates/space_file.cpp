#include "src/templates/space_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "src/core/error.h"
#include "src/core/yaml_input.h"
#include "src/templates/integer_expression.h"
#include "src/templates/space_evaluator.h"

namespace tgemm {

namespace {

using detail::is_identifier;
using detail::kArchLimitNames;
using detail::kExactLimit;
using detail::kFunctionNames;

class SpaceFileReader {
 public:
  // `path` names the file in messages; `text`, when given, is its content (else it is read).
  SpaceFileReader(const std::string& path, const std::string* text) : path_(path), text_(text) {}

  SpaceFile read() {
    const YAML::Node root = text_ ? load_yaml_text(*text_, path_, "search-space file")
                                  : load_yaml_file(path_, "search-space file");
    if (root.IsNull()) fail("{}: the search-space file is empty", path_);
    if (!root.IsMap())
      fail("{}:{}: expected a map with template, parameters, derived and constraints", path_,
           line_of(root));
    check_keys(root, {"template", "source", "dtypes", "parameters", "derived", "constraints"},
               "top-level key");
    if (const YAML::Node node = root["source"]) {
      if (!node.IsScalar() || node.Scalar().empty())
        fail("{}:{}: `source:` must be the path of a .cuh file", path_, line_of(node));
      file_.source = node.Scalar();
    }

    const YAML::Node tmpl = root["template"];
    if (!tmpl)
      fail("{}:{}: no `template:` (the kernel template this space tunes)", path_, line_of(root));
    if (!tmpl.IsScalar() || !is_identifier(tmpl.Scalar()))
      fail(
          "{}:{}: `template:` must name a template family (the stem of "
          "kernel_templates/<name>.cuh)",
          path_, line_of(tmpl));
    file_.template_name = tmpl.Scalar();
    read_dtypes(root["dtypes"]);
    file_.template_line = line_of(tmpl);

    const YAML::Node params = root["parameters"];
    if (!params) fail("{}:{}: no `parameters:`", path_, line_of(root));
    if (!params.IsMap() || params.size() == 0)
      fail("{}:{}: `parameters:` must be a non-empty map of name -> [values]", path_,
           line_of(params));
    file_.parameters_line = line_of(params);
    for (const auto& entry : params) {
      const std::string name = declare_name(entry.first, "parameter");
      file_.parameter_lines.push_back(line_of(entry.first));
      file_.parameters.push_back({name, read_values(name, entry.second)});
    }

    if (const YAML::Node node = root["derived"]; node && !node.IsNull()) {
      if (!node.IsMap())
        fail("{}:{}: `derived:` must be a map of name -> expression", path_, line_of(node));
      for (const auto& entry : node) {
        const std::string name = declare_name(entry.first, "derived name");
        file_.derived_lines.push_back(line_of(entry.second));
        file_.derived.emplace_back(name, expression(entry.second, name.c_str()));
      }
    }

    if (const YAML::Node node = root["constraints"]; node && !node.IsNull()) {
      if (!node.IsSequence())
        fail("{}:{}: `constraints:` must be a list of {{expr: .., reason: ..}}", path_,
             line_of(node));
      for (const auto& item : node) {
        if (!item.IsMap())
          fail("{}:{}: a constraint must be {{expr: .., reason: ..}}", path_, line_of(item));
        check_keys(item, {"expr", "reason"}, "key in a constraint");
        if (!item["expr"]) fail("{}:{}: constraint has no `expr`", path_, line_of(item));
        if (!item["reason"]) fail("{}:{}: constraint has no `reason`", path_, line_of(item));
        const YAML::Node reason = item["reason"];
        if (!reason.IsScalar() || reason.Scalar().empty())
          fail("{}:{}: `reason` must be a sentence saying why", path_, line_of(reason));
        file_.constraint_lines.push_back(line_of(item));
        file_.constraints.push_back({expression(item["expr"], "expr"), reason.Scalar()});
      }
    }
    return std::move(file_);
  }

 private:
  // `dtypes:` narrows the types the space tunes to those it names, each from the lowest arch
  // given; a space without one tunes every type its family computes (the family's host side
  // says which: GemmTemplate::types_unsupported).
  void read_dtypes(const YAML::Node& node) {
    if (!node) return;
    if (!node.IsMap() || node.size() == 0)
      fail("{}:{}: `dtypes:` must be a map of type -> lowest arch, e.g. {{f16: sm_75}}", path_,
           line_of(node));
    for (const auto& entry : node) {
      const std::string type = entry.first.IsScalar() ? entry.first.Scalar() : "";
      const std::string arch = entry.second.IsScalar() ? entry.second.Scalar() : "";
      try {
        if (parse_gemm_types(type).name() != type) fail("'{}' is not a type's name", type);
        arch_number(arch);
      } catch (const Error& e) {
        fail("{}:{}: dtypes: {}", path_, line_of(entry.first), e.what());
      }
      file_.dtypes.emplace_back(type, arch);
    }
  }
  std::string declare_name(const YAML::Node& key, const char* what) {
    std::string name = key.IsScalar() ? key.Scalar() : "";
    if (!is_identifier(name))
      fail("{}:{}: {} '{}' is not an identifier (letters, digits, _)", path_, line_of(key), what,
           key.IsScalar() ? name : "(a list or map)");
    for (const char* reserved : kArchLimitNames)
      if (name == reserved)
        fail("{}:{}: {} '{}' is an arch limit's name", path_, line_of(key), what, name);
    for (const char* reserved : kFunctionNames)
      if (name == reserved)
        fail("{}:{}: {} '{}' is a function's name", path_, line_of(key), what, name);
    auto [it, fresh] = declared_.emplace(name, line_of(key));
    if (!fresh)
      fail("{}:{}: {} '{}' is already declared on line {}", path_, line_of(key), what, name,
           it->second);
    return name;
  }

  std::vector<int64_t> read_values(const std::string& name, const YAML::Node& list) {
    if (!list.IsSequence() || list.size() == 0)
      fail("{}:{}: parameter {} needs a non-empty list of integers, such as [32, 64]", path_,
           line_of(list), name);
    std::vector<int64_t> values;
    for (const auto& item : list) {
      const std::string text = item.IsScalar() ? item.Scalar() : "";
      int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (!item.IsScalar() || item.Tag() == "!" || text.empty() || ec != std::errc() || ptr != end)
        fail("{}:{}: parameter {}: '{}' is not an integer", path_, line_of(item), name,
             item.IsScalar() ? text : "(a list or map)");
      if (v < 0)
        fail(
            "{}:{}: parameter {}: {} is negative; a tunable is a count or size from 0 (the "
            "kernel's -D value)",
            path_, line_of(item), name, v);
      if (v >= kExactLimit)
        fail("{}:{}: parameter {}: {} is beyond 2^53 - 1, where the expressions lose exactness",
             path_, line_of(item), name, v);
      if (std::find(values.begin(), values.end(), v) != values.end())
        fail("{}:{}: parameter {} lists {} twice", path_, line_of(item), name, v);
      values.push_back(v);
    }
    return values;
  }

  std::string expression(const YAML::Node& node, const char* what) {
    if (!node.IsScalar() || node.Scalar().empty())
      fail("{}:{}: `{}` must be an expression such as \"BM % TM == 0\"", path_, line_of(node),
           what);
    return node.Scalar();
  }

  // Unknown and repeated keys are errors: a typo such as `constraint:` must not be ignored.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  const char* what) {
    check_yaml_keys(path_, map, allowed, what);
  }

  std::string path_;
  const std::string* text_;
  std::map<std::string, int> declared_;  // parameter and derived names -> line
  SpaceFile file_;
};

}  // namespace

SpaceFile read_space_file(const std::string& path, const std::string* text) {
  return SpaceFileReader(path, text).read();
}

}  // namespace tgemm
