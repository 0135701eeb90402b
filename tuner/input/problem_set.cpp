#include "tuner/input/problem_set.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>

#include "src/core/error.h"
#include "src/core/yaml_input.h"

namespace tgemm {

namespace {

// Kernels index rows and elements of one operand with 32-bit ints, so no operand may hold
// more elements than that.
constexpr int64_t kMaxElements = int64_t(1) << 31;

// A shape's epilogue as written (`epilogue`, `bias_along`, `bias_type`, `aux`, `separate_d`,
// FP8's `scales`), the defaults' first: resolved per shape, since the bias type is read against
// C's.
struct EpilogueFields {
  std::string kind = "none";
  std::string bias_along;  // "" when not given
  std::string bias_type;
  bool aux = false, separate_d = false;
  std::string scales = "tensor";
};
constexpr std::array<std::string_view, 6> kEpilogueKeys = {"epilogue", "bias_along", "bias_type",
                                                           "aux",      "separate_d", "scales"};

class ShapeFileReader {
 public:
  explicit ShapeFileReader(std::string path) : path_(std::move(path)) {}

  std::vector<NamedProblem> read() {
    const YAML::Node root = load_yaml_file(path_, "shape file");
    if (root.IsNull()) fail("{}: the shape file is empty (expected a `shapes:` list)", path_);
    if (!root.IsMap())
      fail("{}:{}: expected a map with `shapes:` (and optional `defaults:`) at the top level",
           path_, line_of(root));
    check_keys(root, {"defaults", "shapes"}, "top-level key");
    if (root["defaults"]) read_defaults(root["defaults"]);

    const YAML::Node shapes = root["shapes"];
    if (!shapes) fail("{}:{}: no `shapes:` list", path_, line_of(root));
    if (!shapes.IsSequence() || shapes.size() == 0)
      fail("{}:{}: `shapes:` must be a non-empty list of [m, n, k] or {{m: .., n: .., k: ..}}",
           path_, line_of(shapes));

    std::vector<NamedProblem> problems;
    std::map<std::string, int> line_by_key, line_by_name;
    for (const auto& shape : shapes) {
      NamedProblem named = read_shape(shape);
      const int line = line_of(shape);
      auto [key_it, new_key] = line_by_key.emplace(named.problem.key(), line);
      if (!new_key && named.problem.batch_form() == BatchForm::grouped)
        fail(
            "{}:{}: grouped shape {} falls in the bucket of line {} ({}): one tuned entry "
            "serves both, list one of them",
            path_, line, named.name, key_it->second, named.problem.key());
      if (!new_key)
        fail("{}:{}: shape {} ({} {}) repeats the shape on line {}", path_, line, named.name,
             named.problem.types.name(), named.problem.layout(), key_it->second);
      // Reports show the name, so two shapes must not share one given by hand. Generated
      // names ("MxNxK") repeat legitimately for other layouts or dtypes.
      const bool named_by_hand = shape.IsMap() && shape["name"];
      auto [name_it, new_name] = named_by_hand ? line_by_name.emplace(named.name, line)
                                               : std::pair{line_by_name.end(), true};
      if (!new_name)
        fail("{}:{}: shape name '{}' is already used on line {}", path_, line, named.name,
             name_it->second);
      problems.push_back(std::move(named));
    }
    return problems;
  }

 private:
  void read_defaults(const YAML::Node& defaults) {
    if (!defaults.IsMap())
      fail("{}:{}: `defaults:` must be a map such as {{dtype: f32, layout: NN}}", path_,
           line_of(defaults));
    check_keys_and_epilogue(defaults, {"dtype", "out", "layout"}, "key in defaults");
    read_epilogue_fields(defaults, &epilogue_);
    if (defaults["dtype"]) dtype_ = scalar(defaults["dtype"], "dtype");
    if (defaults["out"]) out_ = scalar(defaults["out"], "out");
    types_ = read_types(defaults, dtype_, out_);
    if (defaults["layout"]) read_layout(defaults["layout"], &op_a_, &op_b_);
  }

  NamedProblem read_shape(const YAML::Node& shape) {
    if (shape.IsMap() && shape["groups"]) return read_grouped_shape(shape);
    GemmTypes types = types_;
    Op op_a = op_a_, op_b = op_b_;
    int64_t m = 0, n = 0, k = 0, calls = 0;
    std::string name;
    EpilogueFields epilogue = epilogue_;
    if (shape.IsSequence()) {
      if (shape.size() != 3)
        fail("{}:{}: a short-form shape must be [m, n, k] (3 integers), got {} values", path_,
             line_of(shape), shape.size());
      m = read_dim("m", shape[0]);
      n = read_dim("n", shape[1]);
      k = read_dim("k", shape[2]);
    } else if (shape.IsMap()) {
      check_keys_and_epilogue(shape,
                              {"m", "n", "k", "dtype", "out", "layout", "name", "calls", "batch",
                               "stride_a", "stride_b", "stride_c"},
                              "key in a shape");
      read_epilogue_fields(shape, &epilogue);
      for (const char* field : {"m", "n", "k"})
        if (!shape[field]) fail("{}:{}: shape has no `{}`", path_, line_of(shape), field);
      m = read_dim("m", shape["m"]);
      n = read_dim("n", shape["n"]);
      k = read_dim("k", shape["k"]);
      if (shape["dtype"] || shape["out"])
        types = read_types(shape, shape["dtype"] ? scalar(shape["dtype"], "dtype") : dtype_,
                           shape["out"] ? scalar(shape["out"], "out") : out_);
      if (shape["layout"]) read_layout(shape["layout"], &op_a, &op_b);
      if (shape["name"]) name = read_name(shape["name"]);
      if (shape["calls"]) calls = read_calls(shape["calls"]);
    } else {
      fail("{}:{}: a shape must be [m, n, k] or {{m: .., n: .., k: ..}}, got '{}'", path_,
           line_of(shape), shape.IsScalar() ? shape.Scalar() : std::string("null"));
    }

    NamedProblem named{name.empty() ? fmt::format("{}x{}x{}", m, n, k) : name,
                       Problem::packed(types, op_a, op_b, m, n, k), calls};
    if (shape.IsMap()) read_batch(shape, &named.problem);
    if (named.problem.batch > 1 && name.empty())
      named.name = fmt::format("{}x{}x{}x{}", named.problem.batch, m, n, k);
    const int line = line_of(shape);
    named.problem.epilogue = resolve_epilogue(epilogue, types, line);
    if (named.problem.epilogue.any() && name.empty())
      named.name += "_" + named.problem.epilogue.name();
    try {
      named.problem.validate();
    } catch (const Error& e) {
      fail("{}:{}: {}", path_, line, e.what());
    }
    check_operands(named.problem, line);
    return named;
  }

  // A grouped GEMM: `groups:`, a list of {m, n, k, count} (count 1 unless given), with the
  // shape's types, layout, name and calls; sizes come from the groups alone.
  NamedProblem read_grouped_shape(const YAML::Node& shape) {
    check_keys(shape, {"groups", "dtype", "out", "layout", "name", "calls"},
               "key in a grouped shape");
    if (epilogue_.kind != "none" || epilogue_.scales != "tensor")
      fail("{}:{}: a grouped shape takes no epilogue or rowwise scales (the defaults give {})",
           path_, line_of(shape),
           epilogue_.kind != "none" ? epilogue_.kind : "scales: " + epilogue_.scales);
    GemmTypes types = types_;
    if (shape["dtype"] || shape["out"])
      types = read_types(shape, shape["dtype"] ? scalar(shape["dtype"], "dtype") : dtype_,
                         shape["out"] ? scalar(shape["out"], "out") : out_);
    Op op_a = op_a_, op_b = op_b_;
    if (shape["layout"]) read_layout(shape["layout"], &op_a, &op_b);
    const Problem layout = Problem::packed(types, op_a, op_b, 1, 1, 1);
    NamedProblem named{
        "", Problem::grouped(types, op_a, op_b, read_groups(shape["groups"], layout)), 0};
    const Problem& p = named.problem;
    named.name = shape["name"] ? read_name(shape["name"])
                               : fmt::format("g{}_{}x{}x{}", p.batch, p.m, p.n, p.k);
    if (shape["calls"]) named.calls = read_calls(shape["calls"]);
    try {
      p.validate();
    } catch (const Error& e) {
      fail("{}:{}: {}", path_, line_of(shape), e.what());
    }
    return named;
  }

  // The `groups:` list of a grouped shape of `layout`'s types and layout.
  std::vector<ProblemGroup> read_groups(const YAML::Node& list, const Problem& layout) {
    if (!list.IsSequence() || list.size() == 0)
      fail("{}:{}: `groups:` must be a non-empty list of {{m: .., n: .., k: .., count: ..}}", path_,
           line_of(list));
    std::vector<ProblemGroup> groups;
    for (const YAML::Node& group : list) {
      if (!group.IsMap())
        fail("{}:{}: a group must be {{m: .., n: .., k: ..}} (and optional count)", path_,
             line_of(group));
      check_keys(group, {"m", "n", "k", "count"}, "key in a group");
      for (const char* field : {"m", "n", "k"})
        if (!group[field]) fail("{}:{}: group has no `{}`", path_, line_of(group), field);
      const ProblemGroup g{
          read_dim("m", group["m"]), read_dim("n", group["n"]), read_dim("k", group["k"]),
          group["count"] ? read_integer("count", group["count"], 1, kMaxGroupedProblems,
                                        "pointer arrays are indexed with ints")
                         : 1};
      check_operands(Problem::packed(layout.types, layout.op_a, layout.op_b, g.m, g.n, g.k),
                     line_of(group));
      groups.push_back(g);
    }
    return groups;
  }

  // No operand of a problem may hold 2^31 elements or more (as stored).
  void check_operands(const Problem& p, int line) {
    for (auto [operand, rows, cols] : {std::tuple{"A", p.a_rows(), p.a_cols()},
                                       {"B", p.b_rows(), p.b_cols()},
                                       {"C", p.m, p.n}}) {
      // Both factors are <= 2^31 (read_dim), so the product fits in 64 bits.
      if (rows * cols > kMaxElements)
        fail(
            "{}:{}: shape {}x{}x{}: {} would hold {} x {} = {} elements, more than 2^31; "
            "the kernels index operands with 32-bit ints",
            path_, line, p.m, p.n, p.k, operand, rows, cols, rows * cols);
    }
  }

  // Unknown and repeated keys are errors: a typo such as `lyout:` must not be ignored.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  const char* what) {
    check_yaml_keys(path_, map, allowed, what);
  }
  // `allowed` and the epilogue's keys.
  void check_keys_and_epilogue(const YAML::Node& map,
                               std::initializer_list<std::string_view> allowed, const char* what) {
    std::vector<std::string_view> keys(allowed);
    keys.insert(keys.end(), kEpilogueKeys.begin(), kEpilogueKeys.end());
    check_yaml_keys(path_, map, keys, what);
  }

  // The kernels index m, n and k with 32-bit ints (Problem::validate says the same).
  int64_t read_dim(const char* field, const YAML::Node& node) {
    return read_integer(field, node, 1, INT32_MAX, "the kernels index it with a 32-bit int");
  }

  // A plain integer scalar from `least` to `most` (why the limit: `limit`).
  int64_t read_integer(const char* field, const YAML::Node& node, int64_t least, int64_t most,
                       const char* limit) {
    const std::string text = node.IsScalar() ? node.Scalar() : std::string();
    int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    // A quoted "16" is a string in YAML; accept only plain integer scalars.
    const bool digits =
        !text.empty() && ptr == end &&
        text.find_first_not_of("0123456789", text[0] == '-' ? 1 : 0) == std::string::npos;
    const bool beyond_64_bits = ec == std::errc::result_out_of_range && digits;
    if (!node.IsScalar() || node.Tag() == "!" || text.empty() ||
        (ec != std::errc() && !beyond_64_bits) || ptr != end)
      fail("{}:{}: {} must be an integer, got '{}'", path_, line_of(node), field,
           node.IsScalar() ? text : std::string(node.IsNull() ? "null" : "a list or map"));
    if (beyond_64_bits ? text[0] == '-' : value < least)
      fail("{}:{}: {} must be >= {}, got {}", path_, line_of(node), field, least, text);
    if (beyond_64_bits || value > most)
      fail("{}:{}: {} = {} is too large: {} (at most {})", path_, line_of(node), field, text, limit,
           most);
    return value;
  }

  // `batch:` and `stride_a/b/c:` of a shape map into `p` (packed strides unless given).
  void read_batch(const YAML::Node& shape, Problem* p) {
    if (!shape["batch"]) {
      for (const char* field : {"stride_a", "stride_b", "stride_c"})
        if (shape[field])
          fail("{}:{}: `{}` is given without `batch:` (strides apply to a batch of more than one)",
               path_, line_of(shape[field]), field);
      return;
    }
    const int64_t batch = read_integer("batch", shape["batch"], 1, kMaxBatch,
                                       "the kernels launch one grid layer per member");
    *p = Problem::packed_batch(p->types, p->op_a, p->op_b, p->m, p->n, p->k, batch);
    for (auto [field, stride] : {std::pair{"stride_a", &p->stride_a},
                                 {"stride_b", &p->stride_b},
                                 {"stride_c", &p->stride_c}})
      if (shape[field])
        *stride = read_integer(field, shape[field], 0, INT64_MAX / 16, "offsets are 64-bit bytes");
  }

  // The epilogue keys of `map` (a shape or the defaults) over `fields`.
  void read_epilogue_fields(const YAML::Node& map, EpilogueFields* fields) {
    if (map["epilogue"]) fields->kind = scalar(map["epilogue"], "epilogue");
    if (map["bias_along"]) fields->bias_along = scalar(map["bias_along"], "bias_along");
    if (map["bias_type"]) fields->bias_type = scalar(map["bias_type"], "bias_type");
    if (map["aux"]) fields->aux = read_flag(map["aux"], "aux");
    if (map["separate_d"]) fields->separate_d = read_flag(map["separate_d"], "separate_d");
    if (map["scales"]) fields->scales = scalar(map["scales"], "scales");
  }

  bool read_flag(const YAML::Node& node, const char* field) {
    const std::string text = scalar(node, field);
    if (text == "true") return true;
    if (text == "false") return false;
    fail("{}:{}: `{}` must be true or false, got '{}'", path_, line_of(node), field, text);
  }

  // The Epilogue of the fields for a shape of these types (on `line`); Problem::validate then
  // checks what depends on the rest (aux without an activation).
  Epilogue resolve_epilogue(const EpilogueFields& f, const GemmTypes& types, int line) {
    Epilogue e;
    try {
      e = parse_epilogue_kind(f.kind);
    } catch (const Error& error) {
      fail("{}:{}: {}", path_, line, error.what());
    }
    const bool bias = e.bias != BiasAlong::none;
    if (!bias && (!f.bias_along.empty() || !f.bias_type.empty()))
      fail("{}:{}: `{}` is given for epilogue {}, which adds no bias", path_, line,
           f.bias_along.empty() ? "bias_type" : "bias_along", f.kind);
    if (f.bias_along == "m")
      e.bias = BiasAlong::m;
    else if (!f.bias_along.empty() && f.bias_along != "n")
      fail("{}:{}: bias_along must be n (one value per column) or m (per row), got '{}'", path_,
           line, f.bias_along);
    if (!f.bias_type.empty()) {
      const std::string c = to_string(types.c);
      if (f.bias_type != "f32" && f.bias_type != c)
        fail("{}:{}: bias_type must be f32 or C's type ({}), got '{}'", path_, line, c,
             f.bias_type);
      e.bias_f32 = f.bias_type == "f32" && types.c != DType::f32;
    }
    e.aux = f.aux;
    e.separate_d = f.separate_d;
    if (f.scales != "tensor" && f.scales != "rowwise")
      fail(
          "{}:{}: scales must be tensor (one per operand) or rowwise (FP8: one per row of A and "
          "per column of B), got '{}'",
          path_, line, f.scales);
    e.rowwise_scales = f.scales == "rowwise";
    return e;
  }

  // A recorded call count (record mode writes it): an integer >= 0.
  int64_t read_calls(const YAML::Node& node) {
    const std::string text = node.IsScalar() ? node.Scalar() : std::string();
    int64_t value = -1;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (!node.IsScalar() || node.Tag() == "!" || text.empty() || ec != std::errc() || ptr != end ||
        value < 0)
      fail("{}:{}: calls must be an integer >= 0, got '{}'", path_, line_of(node),
           node.IsScalar() ? text : std::string("a list or map"));
    return value;
  }

  // `dtype` (f32, tf32, f32x3, f16, bf16) and `out` (empty, f32 or the input type) of `map`.
  GemmTypes read_types(const YAML::Node& map, const std::string& dtype, const std::string& out) {
    try {
      return gemm_types(dtype, out);
    } catch (const Error& e) {
      fail("{}:{}: {}", path_, line_of(map), e.what());
    }
  }

  void read_layout(const YAML::Node& node, Op* op_a, Op* op_b) {
    try {
      parse_layout(scalar(node, "layout"), op_a, op_b);
    } catch (const Error& e) {
      fail("{}:{}: {}", path_, line_of(node), e.what());
    }
  }

  std::string read_name(const YAML::Node& node) {
    std::string name = scalar(node, "name");
    if (name.empty()) fail("{}:{}: `name` must not be empty", path_, line_of(node));
    return name;
  }

  std::string scalar(const YAML::Node& node, const char* field) {
    if (!node.IsScalar())
      fail("{}:{}: `{}` must be a single value, not a list or map", path_, line_of(node), field);
    return node.Scalar();
  }

  std::string path_;
  std::string dtype_ = "f32", out_;  // the defaults, as written
  GemmTypes types_;
  Op op_a_ = Op::N, op_b_ = Op::N;
  EpilogueFields epilogue_;  // the defaults'
};

}  // namespace

std::vector<NamedProblem> load_problem_set(const std::string& path) {
  return ShapeFileReader(path).read();
}

std::vector<NamedProblem> load_tunable_problem_set(const std::string& path) {
  std::vector<NamedProblem> problems = load_problem_set(path);
  for (const NamedProblem& named : problems)
    if (named.problem.batch_form() == BatchForm::grouped)
      fail(
          "{}: shape {} is a grouped GEMM, which tgemm-tune does not tune yet (the library serves "
          "it from the shipped defaults, else cuBLAS; tgemm-bench times it): tune the other "
          "shapes from a file without it",
          path, named.name);
  return problems;
}

}  // namespace tgemm
