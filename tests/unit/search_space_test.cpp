// Search spaces: loading and its errors, C integer semantics of the expressions, rejection
// reasons with values, and the sgemm_simt space against its template's static_asserts.
#include "src/templates/search_space.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "src/core/error.h"
#include "src/jit/kernel_source.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = TGEMM_SOURCE_DIR;
const std::string kSgemmSpace = kSourceDir + "/configs/spaces/sgemm_simt.yaml";

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

// A space file in a fresh temporary folder, named after the test.
class SpaceFile {
 public:
  explicit SpaceFile(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tgemm_space_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "space.yaml").string();
    std::ofstream(path_) << text;
  }
  ~SpaceFile() { fs::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  fs::path dir_;
  std::string path_;
};

// A template text declaring each of `names` as a tunable (#ifndef / #define with a default).
std::string template_declaring(const std::vector<std::string>& names) {
  std::string text = "// a test template\n";
  for (const auto& name : names)
    text += "#ifndef " + name + "\n#define " + name + " 1  // a tunable\n#endif\n";
  return text + "#ifndef TGEMM_OP_A\n#define TGEMM_OP_A 0\n#endif\n";
}

// Spaces of the made-up template `t`, checked against a template declaring their names.
SearchSpace load_test_space(const std::string& path) {
  static const std::string text =
      template_declaring({"A", "B", "C", "D", "S", "BM", "BN", "TM", "TN", "WARP_N"});
  return SearchSpace::load(path, text);
}

std::string load_error(const std::string& text, std::string* path = nullptr) {
  SpaceFile file(text);
  if (path) *path = file.path();
  try {
    load_test_space(file.path());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The error of loading `text` as a space of the embedded templates ("" when it loads).
std::string embedded_load_error(const std::string& text, std::string* path = nullptr) {
  SpaceFile file(text);
  if (path) *path = file.path();
  try {
    SearchSpace::load(file.path());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A one-point space whose derived values are the expressions under test.
std::map<std::string, int64_t> evaluate(const std::string& params, const std::string& derived) {
  SpaceFile file("template: t\nparameters:\n" + params + "derived:\n" + derived);
  SearchSpace space = load_test_space(file.path());
  return space.derived_values(space.config_at(0), arch_limits("sm_90"));
}

// ---- The sgemm_simt template's own rules, restated in C++ --------------------------------

// The static_asserts of kernel_templates/sgemm_simt.cuh, evaluated with C++ integer math;
// returns the first one that fails, or "" when the template would compile.
std::string template_violation(const KernelConfig& c) {
  const int64_t BM = c.get("BM"), BN = c.get("BN"), BK = c.get("BK"), TM = c.get("TM"),
                TN = c.get("TN"), WARP_N = c.get("WARP_N"), VEC = c.get("VEC"),
                STAGES = c.get("STAGES"), SPLIT_K = c.get("SPLIT_K"), SWIZZLE = c.get("SWIZZLE"),
                MIN_BLOCKS = c.get_or("MIN_BLOCKS", 1);
  if (TM < 1 || TN < 1 || WARP_N < 1 || VEC < 1) return "non-positive divisor";
  const int64_t THREADS_M = BM / TM, THREADS_N = BN / TN, THREADS = THREADS_M * THREADS_N;
  const int64_t WARP_M = 32 / WARP_N;
  const int64_t SUB_M = TM < 4 ? TM : 4, SUB_N = TN < 4 ? TN : 4;
  if (BM % TM != 0) return "BM % TM";
  if (BN % TN != 0) return "BN % TN";
  if (TM % SUB_M != 0 || TN % SUB_N != 0) return "TM/TN vs SUB";
  if (THREADS % 32 != 0) return "THREADS % 32";
  if (THREADS > 1024) return "THREADS <= 1024";
  if (32 % WARP_N != 0) return "32 % WARP_N";
  if (WARP_M == 0 || THREADS_N % WARP_N != 0) return "THREADS_N % WARP_N";
  if (THREADS_M % WARP_M != 0) return "THREADS_M % WARP_M";
  if (VEC != 1 && VEC != 2 && VEC != 4) return "VEC";
  if (BK % VEC != 0 || BM % VEC != 0 || BN % VEC != 0) return "multiples of VEC";
  if ((BM * BK) % (THREADS * VEC) != 0) return "A tile";
  if ((BN * BK) % (THREADS * VEC) != 0) return "B tile";
  if (STAGES != 1 && STAGES != 2) return "STAGES";
  if (SPLIT_K < 1) return "SPLIT_K";
  if (SWIZZLE < 1) return "SWIZZLE";
  if (MIN_BLOCKS < 1) return "MIN_BLOCKS";
  return "";
}

// Dynamic shared memory the kernel carves (As and Bs, STAGES buffers each).
int64_t smem_bytes(const KernelConfig& c) {
  return c.get("STAGES") * c.get("BK") *
         (c.get("BM") + c.get("PAD_A") + c.get("BN") + c.get("PAD_B")) * 4;
}

using testing::sgemm_config;

int64_t threads(const KernelConfig& c) {
  return (c.get("BM") / c.get("TM")) * (c.get("BN") / c.get("TN"));
}

// enumerate() is the slow part; share one result per arch across the tests.
const SearchSpace::Enumeration& sgemm_enumeration(const std::string& arch) {
  static std::map<std::string, SearchSpace::Enumeration> cache;
  auto it = cache.find(arch);
  if (it == cache.end())
    it = cache.emplace(arch, SearchSpace::load(kSgemmSpace).enumerate(arch_limits(arch))).first;
  return it->second;
}

// ---- Loading the shipped space -----------------------------------------------------------

TEST(SearchSpace, loads_sgemm_simt_space) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  EXPECT_EQ(space.template_name(), "sgemm_simt");
  EXPECT_EQ(space.path(), kSgemmSpace);
  std::vector<std::string> names;
  for (const auto& p : space.parameters()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"BM", "BN", "BK", "TM", "TN", "WARP_N", "VEC", "PAD_A",
                                             "PAD_B", "STAGES", "SPLIT_K", "SPLIT_MODE", "SWIZZLE",
                                             "MIN_BLOCKS"}));
  EXPECT_EQ(space.parameters()[0].values, (std::vector<int64_t>{16, 32, 64, 128, 256}));
  EXPECT_EQ(space.cartesian_size(), 576000u);
  ASSERT_EQ(space.derived().size(), 1u);
  EXPECT_EQ(space.derived()[0].first, "SMEM_BYTES");  // THREADS is the host side's
  EXPECT_FALSE(space.constraints().empty());
  for (const auto& c : space.constraints()) EXPECT_FALSE(c.reason.empty()) << c.expression;
}

TEST(SearchSpace, loads_test_fixtures) {
  const SearchSpace tiny =
      SearchSpace::load(kSourceDir + "/tests/data/spaces/tiny_sgemm_simt.yaml");
  EXPECT_EQ(tiny.cartesian_size(), 16u);
  const auto e = tiny.enumerate(arch_limits("sm_75"));
  EXPECT_EQ(e.legal.size(), 9u);
  for (const auto& c : e.legal) EXPECT_EQ(template_violation(c), "") << c.canonical_name();
}

// The reduced spaces for comparing strategies with an exhaustive run on the device: small
// enough to measure whole (about 120 configs on sm_90), and inside the shipped spaces, so what
// they find the shipped spaces hold too.
TEST(SearchSpace, comparison_spaces_are_small_subsets_of_the_shipped_ones) {
  const ArchLimits h200 = arch_limits("sm_90");
  size_t total = 0;
  for (const char* family : {"sgemm_warp", "gemv_simt"}) {
    SCOPED_TRACE(family);
    const SearchSpace reduced =
        SearchSpace::load(kSourceDir + "/tests/data/spaces/comparison/" + family + ".yaml");
    const SearchSpace shipped =
        SearchSpace::load(kSourceDir + "/configs/spaces/" + family + ".yaml");
    EXPECT_EQ(reduced.template_name(), family);
    const auto legal = reduced.enumerate(h200).legal;
    total += legal.size();
    for (const KernelConfig& c : legal)
      EXPECT_EQ(shipped.rejection(c, h200), std::nullopt) << c.canonical_name();
  }
  // The exhaustive half of the device's `strategies` stage measures every one that a deepbench
  // shape can run: 282 legal, 120 of them runnable, took 4 minutes on the H200 (S10-D).
  EXPECT_GE(total, 60u);
  EXPECT_LE(total, 300u);
}

TEST(SearchSpace, rejects_unknown_template_naming_line_and_the_known_ones) {
  std::string path;
  const std::string msg =
      embedded_load_error("template: no_such_template\nparameters:\n  A: [1]\n", &path);
  EXPECT_HAS(msg, path + ":1:");
  EXPECT_HAS(msg, "unknown kernel template 'no_such_template' (known: ");
  EXPECT_HAS(msg, "gemm_naive, ");  // every family, sorted
  EXPECT_HAS(msg, "sgemm_simt");
}

// ---- Parameters the template declares --------------------------------------------------

TEST(SearchSpace, declared_tunables_are_the_ifndef_define_pairs_without_tgemm_names) {
  EXPECT_EQ(
      declared_tunables(kernel_source("sgemm_simt").text),
      (std::vector<std::string>{"BM", "BN", "BK", "TM", "TN", "WARP_N", "VEC", "PAD_A", "PAD_B",
                                "STAGES", "SPLIT_K", "SPLIT_MODE", "SWIZZLE", "MIN_BLOCKS"}));
  const std::string text =
      "#pragma once\n#ifndef GUARD_H\n#define GUARD_H\n"  // an include guard has no default
      "#ifndef X\n#define X 3  // x\n#endif\n"
      "#  ifndef   Y\n#  define Y (2 * 4)\n#endif\n"
      "#ifndef TGEMM_Z\n#define TGEMM_Z 0\n#endif\n"
      "#ifndef W\n#define V 1\n#endif\n"  // not a pair
      "#ifndef X\n#define X 4\n#endif\n"  // repeated
      "#endif\n";
  EXPECT_EQ(declared_tunables(text), (std::vector<std::string>{"X", "Y"}));
}

TEST(SearchSpace, rejects_parameter_the_template_does_not_declare) {
  const std::string path = kSourceDir + "/tests/data/spaces/misspelled_parameter.yaml";
  try {
    SearchSpace::load(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), path + ":16:");
    EXPECT_HAS(e.what(), "parameter 'SWIZZEL' is not a tunable of template sgemm_simt");
    EXPECT_HAS(e.what(),
               "(its tunables: BM, BN, BK, TM, TN, WARP_N, VEC, PAD_A, PAD_B, STAGES, SPLIT_K, "
               "SPLIT_MODE, SWIZZLE, MIN_BLOCKS)");
  }
}

TEST(SearchSpace, rejects_parameter_fixed_by_the_problem) {
  std::string path;
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\n  TGEMM_OP_A: [0, 1]\n", &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "parameter 'TGEMM_OP_A' is set by the tuner from the problem's layout");
}

TEST(SearchSpace, rejects_parameter_absent_from_a_given_template_text) {
  std::string path;
  const std::string msg = load_error("template: t\nparameters:\n  A: [1]\n  Z: [1]\n", &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "parameter 'Z' is not a tunable of template t (its tunables: A, B, C,");
}

// `source:` names device code for the family's host side; its parameters are declared there.
TEST(SearchSpace, a_space_with_its_own_source_declares_its_parameters_there) {
  const SearchSpace fault =
      SearchSpace::load(kSourceDir + "/tests/data/spaces/fault_sgemm_simt.yaml");
  EXPECT_EQ(fault.parameters().back().name, "FAULT");
  EXPECT_EQ(fault.source_path(), kSourceDir + "/tests/data/templates/fault_sgemm_simt.cuh");
  EXPECT_EQ(fault.template_name(), "sgemm_simt");
}

TEST(SearchSpace, config_at_is_mixed_radix_last_parameter_fastest) {
  SpaceFile file("template: t\nparameters:\n  A: [1, 2]\n  B: [10, 20, 30]\n");
  const SearchSpace space = load_test_space(file.path());
  ASSERT_EQ(space.cartesian_size(), 6u);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 10}, {1, 20}, {1, 30},
                                                             {2, 10}, {2, 20}, {2, 30}};
  for (uint64_t i = 0; i < 6; ++i) {
    const KernelConfig c = space.config_at(i);
    EXPECT_EQ(c.template_name, "t");
    ASSERT_EQ(c.params.size(), 2u);
    EXPECT_EQ(c.params[0].first, "A");
    EXPECT_EQ(c.params[1].first, "B");
    EXPECT_EQ(c.params[0].second, expected[i].first) << i;
    EXPECT_EQ(c.params[1].second, expected[i].second) << i;
  }
  EXPECT_THROW(space.config_at(6), Error);
}

TEST(SearchSpace, config_at_covers_sgemm_space_in_declared_order) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const KernelConfig first = space.config_at(0);
  EXPECT_EQ(first.canonical_name(),
            "sgemm_simt_bm16_bn16_bk8_tm4_tn4_warp_n4_vec1_pad_a0_pad_b0_stages1_split_k1_"
            "split_mode0_swizzle1_min_blocks1");
  const KernelConfig last = space.config_at(space.cartesian_size() - 1);
  EXPECT_EQ(last.get("BM"), 256);
  EXPECT_EQ(last.get("SWIZZLE"), 8);
  EXPECT_EQ(last.get("MIN_BLOCKS"), 2);
  EXPECT_EQ(space.config_at(1).get("MIN_BLOCKS"), 2);
  EXPECT_EQ(space.config_at(2).get("SWIZZLE"), 8);
  EXPECT_EQ(space.config_at(4).get("SPLIT_MODE"), 1);
  EXPECT_EQ(space.config_at(8).get("SPLIT_K"), 4);
}

// ---- Integer semantics -------------------------------------------------------------------

TEST(SearchSpace, integer_division_truncates) {
  const auto v =
      evaluate("  A: [7]\n  B: [2]\n", "  Q: A / B\n  NQ: -A / B\n  Q3: (A / B) * B\n  R: 1 / 3\n");
  EXPECT_EQ(v.at("Q"), 3);
  EXPECT_EQ(v.at("NQ"), -3);  // toward zero, as C
  EXPECT_EQ(v.at("Q3"), 6);
  EXPECT_EQ(v.at("R"), 0);
}

TEST(SearchSpace, remainder_follows_c) {
  const auto v =
      evaluate("  A: [7]\n  B: [2]\n", "  R: A % B\n  NR: -A % B\n  RN: A % -B\n  Z: 6 % 3\n");
  EXPECT_EQ(v.at("R"), 1);
  EXPECT_EQ(v.at("NR"), -1);  // sign of the dividend
  EXPECT_EQ(v.at("RN"), 1);
  EXPECT_EQ(v.at("Z"), 0);
}

TEST(SearchSpace, kernel_style_expression_matches_c) {
  // (BN / TN) % WARP_N with BN/TN = 96/8 = 12; doubles would give 12 % 8 on 12.0 either way,
  // but 100/8 must be 12, not 12.5.
  const auto v = evaluate("  BN: [100]\n  TN: [8]\n  WARP_N: [8]\n", "  X: (BN / TN) % WARP_N\n");
  EXPECT_EQ(v.at("X"), 4);
}

TEST(SearchSpace, operators_follow_c_precedence) {
  const auto v = evaluate("  A: [2]\n",
                          "  P: A + 3 * 4\n"
                          "  AO: 1 || 0 && 0\n"
                          "  REL: 1 < 2 == 1\n"
                          "  EQ: 3 == 3 < 4\n"
                          "  NOT: \"!0 + 1\"\n"  // quoted: a leading ! is a YAML tag
                          "  PAREN: (A + 3) * 4\n"
                          "  MIN: min(A, 5) + max(A, 5)\n"
                          "  CMP: (A >= 2) + (A <= 1) + (A != 2) + (A > 1)\n");
  EXPECT_EQ(v.at("P"), 14);
  EXPECT_EQ(v.at("AO"), 1);   // && binds tighter than ||
  EXPECT_EQ(v.at("REL"), 1);  // (1 < 2) == 1
  EXPECT_EQ(v.at("EQ"), 0);   // 3 == (3 < 4)
  EXPECT_EQ(v.at("NOT"), 2);
  EXPECT_EQ(v.at("PAREN"), 20);
  EXPECT_EQ(v.at("MIN"), 7);
  EXPECT_EQ(v.at("CMP"), 2);
}

TEST(SearchSpace, derived_values_may_use_earlier_derived_values) {
  const auto v = evaluate("  A: [6]\n", "  B: A * 2\n  C: B + A\n");
  EXPECT_EQ(v.at("A"), 6);
  EXPECT_EQ(v.at("B"), 12);
  EXPECT_EQ(v.at("C"), 18);
}

TEST(SearchSpace, division_by_zero_fails_the_constraint_with_a_reason) {
  SpaceFile file(
      "template: t\nparameters:\n  A: [8]\n  D: [0, 2]\n"
      "constraints:\n  - {expr: \"A / D >= 1\", reason: \"A must hold D\"}\n");
  const SearchSpace space = load_test_space(file.path());
  const auto limits = arch_limits("sm_75");
  const auto reason = space.rejection(space.config_at(0), limits);
  ASSERT_TRUE(reason.has_value());
  EXPECT_HAS(*reason, "A must hold D");
  EXPECT_HAS(*reason, "division or modulo by zero");
  EXPECT_HAS(*reason, "D=0");
  EXPECT_FALSE(space.rejection(space.config_at(1), limits).has_value());
  const auto e = space.enumerate(limits);
  ASSERT_EQ(e.legal.size(), 1u);
  EXPECT_EQ(e.legal[0].get("D"), 2);
  ASSERT_EQ(e.rejected_by_reason.size(), 1u);
  EXPECT_HAS(e.rejected_by_reason.begin()->first, "division or modulo by zero");
}

TEST(SearchSpace, modulo_by_zero_fails_the_constraint) {
  SpaceFile file(
      "template: t\nparameters:\n  D: [0]\n"
      "constraints:\n  - {expr: \"8 % D == 0\", reason: \"D must divide 8\"}\n");
  const SearchSpace space = load_test_space(file.path());
  const auto reason = space.rejection(space.config_at(0), arch_limits("sm_75"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "D must divide 8: division or modulo by zero in 8 % D == 0 (D=0)");
}

TEST(SearchSpace, decided_left_side_short_circuits_like_c) {
  SpaceFile file(
      "template: t\nparameters:\n  D: [0]\n"
      "constraints:\n  - {expr: \"D != 0 && 8 % D == 0\", reason: \"D must divide 8\"}\n"
      "  - {expr: \"D == 0 || 8 / D > 0\", reason: \"never fails\"}\n");
  const SearchSpace space = load_test_space(file.path());
  const auto reason = space.rejection(space.config_at(0), arch_limits("sm_75"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "D must divide 8 (D=0)");  // false, not undefined
}

TEST(SearchSpace, derived_division_by_zero_rejects_the_config) {
  SpaceFile file("template: t\nparameters:\n  D: [0, 4]\nderived:\n  Q: 8 / D\n");
  const SearchSpace space = load_test_space(file.path());
  const auto limits = arch_limits("sm_75");
  const auto reason = space.rejection(space.config_at(0), limits);
  ASSERT_TRUE(reason.has_value());
  EXPECT_HAS(*reason, "derived Q = 8 / D divides by zero (D=0)");
  EXPECT_THROW(space.derived_values(space.config_at(0), limits), Error);
  EXPECT_EQ(space.derived_values(space.config_at(1), limits).at("Q"), 2);
}

TEST(SearchSpace, arch_limits_are_variables) {
  SpaceFile file(
      "template: t\nparameters:\n  S: [1]\nderived:\n"
      "  L1: MAX_THREADS_PER_BLOCK\n  L2: MAX_THREADS_PER_SM\n  L3: REGS_PER_SM\n"
      "  L4: SMEM_PER_BLOCK_OPTIN\n  L5: SMEM_PER_SM\n  L6: ARCH\n");
  const SearchSpace space = load_test_space(file.path());
  const ArchLimits sm90 = arch_limits("sm_90");
  const auto v = space.derived_values(space.config_at(0), sm90);
  EXPECT_EQ(v.at("L1"), sm90.max_threads_per_block);
  EXPECT_EQ(v.at("L2"), sm90.max_threads_per_sm);
  EXPECT_EQ(v.at("L3"), sm90.regs_per_sm);
  EXPECT_EQ(v.at("L4"), sm90.smem_per_block_optin);
  EXPECT_EQ(v.at("L5"), sm90.smem_per_sm);
  EXPECT_EQ(v.at("L6"), 90);
}

// ---- Load errors ---------------------------------------------------------------------------

TEST(SearchSpace, rejects_missing_file_naming_it) {
  try {
    SearchSpace::load("/nonexistent/space.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "/nonexistent/space.yaml");
    EXPECT_HAS(e.what(), "No such file");
  }
}

TEST(SearchSpace, rejects_malformed_yaml_naming_line) {
  std::string path;
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1, 2\n  B: [3]\nconstraints: {\n", &path);
  EXPECT_HAS(msg, path + ":");
  EXPECT_HAS(msg, "malformed YAML");
}

TEST(SearchSpace, rejects_empty_file) {
  std::string path;
  const std::string msg = load_error("", &path);
  EXPECT_HAS(msg, path);
  EXPECT_HAS(msg, "empty");
}

TEST(SearchSpace, rejects_unknown_top_level_key_naming_line) {
  std::string path;
  const std::string msg = load_error(
      "template: t\nparameters:\n  A: [1]\nconstraint:\n  - {expr: A, reason: r}\n", &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "unknown top-level key 'constraint'");
}

TEST(SearchSpace, rejects_missing_template) {
  std::string path;
  const std::string msg = load_error("parameters:\n  A: [1]\n", &path);
  EXPECT_HAS(msg, path + ":");
  EXPECT_HAS(msg, "no `template:`");
}

TEST(SearchSpace, rejects_template_that_is_not_a_name) {
  const std::string msg = load_error("template: [a, b]\nparameters:\n  A: [1]\n");
  EXPECT_HAS(msg, ":1:");
  EXPECT_HAS(msg, "`template:` must name a template family");
}

TEST(SearchSpace, rejects_missing_parameters) {
  const std::string msg = load_error("template: t\n");
  EXPECT_HAS(msg, "no `parameters:`");
}

TEST(SearchSpace, rejects_empty_value_list_naming_line) {
  std::string path;
  const std::string msg = load_error("template: t\nparameters:\n  A: [1]\n  B: []\n", &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "parameter B needs a non-empty list of integers");
}

TEST(SearchSpace, rejects_scalar_value_list) {
  const std::string msg = load_error("template: t\nparameters:\n  A: 4\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "parameter A needs a non-empty list");
}

TEST(SearchSpace, rejects_non_integer_value_naming_line) {
  std::string path;
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\n  B:\n    - 2\n    - 2.5\n", &path);
  EXPECT_HAS(msg, path + ":6:");
  EXPECT_HAS(msg, "parameter B: '2.5' is not an integer");
}

// A feature an arch lacks (cp.async before sm_80) is refused there with the space's reason.
TEST(SearchSpace, arch_number_prunes_features_per_arch) {
  SpaceFile file(
      "template: t\nparameters:\n  S: [2, 3]\nconstraints:\n"
      "  - {expr: \"S <= 2 || ARCH >= 80\", reason: \"cp.async stages need sm_80\"}\n");
  const SearchSpace space = load_test_space(file.path());
  const auto on75 = space.rejection(space.config_at(1), arch_limits("sm_75"));
  ASSERT_TRUE(on75.has_value());
  EXPECT_HAS(*on75, "cp.async stages need sm_80");
  EXPECT_FALSE(space.rejection(space.config_at(1), arch_limits("sm_80")).has_value());
  EXPECT_FALSE(space.rejection(space.config_at(0), arch_limits("sm_75")).has_value());
}

TEST(SearchSpace, rejects_repeated_value_naming_line) {
  const std::string msg = load_error("template: t\nparameters:\n  A: [1, 2, 1]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "parameter A lists 1 twice");
}

TEST(SearchSpace, rejects_duplicate_parameter_naming_both_lines) {
  std::string path;
  const std::string msg = load_error("template: t\nparameters:\n  A: [1]\n  A: [2]\n", &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "parameter 'A' is already declared on line 3");
}

TEST(SearchSpace, rejects_derived_name_that_repeats_a_parameter) {
  const std::string msg = load_error("template: t\nparameters:\n  A: [1]\nderived:\n  A: 2 * 3\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "derived name 'A' is already declared on line 3");
}

TEST(SearchSpace, rejects_parameter_named_like_an_arch_limit) {
  const std::string msg = load_error("template: t\nparameters:\n  SMEM_PER_SM: [1]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "arch limit");
}

TEST(SearchSpace, rejects_parameter_name_that_is_not_an_identifier) {
  const std::string msg = load_error("template: t\nparameters:\n  BLOCK-M: [1]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "'BLOCK-M' is not an identifier");
}

TEST(SearchSpace, rejects_derived_expression_that_does_not_parse_naming_line) {
  std::string path;
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nderived:\n  B: A * 2\n  C: (A + \n", &path);
  EXPECT_HAS(msg, path + ":6:");
  EXPECT_HAS(msg,
             "derived C: '(A +' is outside the expression language: the expression ends "
             "early");
}

TEST(SearchSpace, rejects_constraint_that_does_not_parse_naming_line) {
  std::string path;
  const std::string msg = load_error(
      "template: t\nparameters:\n  A: [1]\nconstraints:\n"
      "  - {expr: \"A > 0\", reason: ok}\n  - {expr: \"A % % 2\", reason: bad}\n",
      &path);
  EXPECT_HAS(msg, path + ":6:");
  EXPECT_HAS(msg, "constraint 'A % % 2' is outside the expression language: '%' at column 5");
}

TEST(SearchSpace, rejects_unknown_variable_naming_line_and_name) {
  std::string path;
  const std::string msg = load_error(
      "template: t\nparameters:\n  BM: [1]\nconstraints:\n"
      "  - {expr: \"BM % TM == 0\", reason: r}\n",
      &path);
  EXPECT_HAS(msg, path + ":5:");
  EXPECT_HAS(msg, "unknown variable 'TM'");
  EXPECT_HAS(msg, "known: BM, MAX_THREADS_PER_BLOCK");
}

TEST(SearchSpace, rejects_derived_value_used_before_it_is_declared) {
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nderived:\n  B: C + 1\n  C: A\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "unknown variable 'C'");
}

TEST(SearchSpace, rejects_decimal_literal) {
  const std::string msg = load_error(
      "template: t\nparameters:\n  A: [1]\nconstraints:\n  - {expr: \"A < 1.5\", reason: r}\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "not an integer expression");
}

TEST(SearchSpace, rejects_floating_point_builtins) {
  const std::string msg = load_error(
      "template: t\nparameters:\n  A: [1]\nconstraints:\n  - {expr: \"sqrt(A) < 2\", reason: r}\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "unknown function 'sqrt' (functions: min, max)");
}

TEST(SearchSpace, rejects_constraint_without_reason) {
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nconstraints:\n  - {expr: \"A > 0\"}\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "constraint has no `reason`");
}

TEST(SearchSpace, rejects_unknown_key_in_constraint_naming_line) {
  const std::string msg = load_error(
      "template: t\nparameters:\n  A: [1]\nconstraints:\n"
      "  - expr: \"A > 0\"\n    reason: r\n    why: x\n");
  EXPECT_HAS(msg, ":7:");
  EXPECT_HAS(msg, "unknown key in a constraint 'why'");
}

TEST(SearchSpace, rejects_constraint_that_is_a_bare_string) {
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nconstraints:\n  - \"A > 0\"\n");
  EXPECT_HAS(msg, ":5:");
  EXPECT_HAS(msg, "a constraint must be {expr: .., reason: ..}");
}

TEST(SearchSpace, rejects_constraints_that_are_not_a_list) {
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nconstraints:\n  expr: \"A > 0\"\n");
  EXPECT_HAS(msg, "`constraints:` must be a list");
}

// ---- Only the documented grammar ------------------------------------------------------------

// The load error of a space (A = 1, B = 2) with `expr` as its second constraint (line 7).
std::string constraint_error(const std::string& expr, std::string* path = nullptr) {
  return load_error(
      "template: t\nparameters:\n  A: [1]\n  B: [2]\nconstraints:\n"
      "  - {expr: \"A > 0\", reason: ok}\n"
      "  - {expr: \"" +
          expr + "\", reason: under test}\n",
      path);
}

TEST(SearchSpace, rejects_a_comma_joining_conditions_in_either_order) {
  for (const std::string expr : {"B > 100, A > 0", "A > 0, B > 100"}) {
    std::string path;
    const std::string msg = constraint_error(expr, &path);
    EXPECT_HAS(msg, path + ":7:");
    EXPECT_HAS(msg, "constraint '" + expr + "' is outside the expression language");
    EXPECT_HAS(msg, "',' at column " + std::string(expr[0] == 'B' ? "8" : "6"));
    EXPECT_HAS(msg, "only separates the arguments of min() and max()");
  }
}

TEST(SearchSpace, a_comma_separates_min_and_max_arguments_only) {
  EXPECT_EQ(constraint_error("min(A, max(B, 3)) == 1 && max(A,B) > 0"), "");
  EXPECT_HAS(constraint_error("max((A, B), 1) > 0"), "',' at column 7");
}

TEST(SearchSpace, rejects_the_ternary_operator) {
  std::string path;
  const std::string msg = constraint_error("B / 0 == 1 ? 1 : 1", &path);
  EXPECT_HAS(msg, path + ":7:");
  EXPECT_HAS(msg, "'?' at column 12");
  EXPECT_HAS(msg, "allowed: + - * / % ( ) == != < <= > >= && || ! min() max()");
}

TEST(SearchSpace, rejects_what_the_grammar_does_not_have) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"A = 1", "'=' at column 3"},
      {"A += 1", "'=' at column 4"},
      {"A & B", "'&' at column 3"},
      {"A | B", "'|' at column 3"},
      {"A ^ B", "'^' at column 3"},
      {"'x' == A", "''' at column 1"},
      {"A == 1; B", "';' at column 7"},
      {"min(A) > 0", "min() takes 2 arguments"},
      {"max(A, B, 1) > 0", "max() takes 2 arguments"},
      {"A > 0 B", "'B' at column 7"},
      {"(A > 0", "missing ')'"},
      {"A > 0)", "')' at column 6"},
      {"A >", "ends early"},
      {"A > 0 && ", "ends early"},
      {"A ! B", "'!' at column 3"},
      {std::string(5000, '(') + "A" + std::string(5000, ')'), "nested deeper than 100 levels"},
  };
  for (const auto& [expr, part] : cases) {
    const std::string msg = constraint_error(expr);
    EXPECT_HAS(msg, ":7:");
    EXPECT_HAS(msg, part);
  }
  // Derived values follow the same grammar.
  std::string path;
  const std::string msg =
      load_error("template: t\nparameters:\n  A: [1]\nderived:\n  B: A, 2\n", &path);
  EXPECT_HAS(msg, path + ":5:");
  EXPECT_HAS(msg, "derived B: 'A, 2' is outside the expression language");
}

TEST(SearchSpace, overflow_is_reported_as_overflow_not_division_by_zero) {
  SpaceFile file(
      "template: t\nparameters:\n  A: [3000000, 3]\n"
      "constraints:\n  - {expr: \"A * A * A > 0\", reason: \"A cubed is positive\"}\n");
  const SearchSpace space = load_test_space(file.path());
  const auto limits = arch_limits("sm_90");
  const auto reason = space.rejection(space.config_at(0), limits);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "A cubed is positive: overflow (beyond 2^53) in A * A * A > 0 (A=3000000)");
  const auto e = space.enumerate(limits);
  ASSERT_EQ(e.legal.size(), 1u);
  ASSERT_EQ(e.rejected_by_reason.size(), 1u);
  EXPECT_HAS(e.rejected_by_reason.begin()->first, "overflow (beyond 2^53) in A * A * A > 0");
}

TEST(SearchSpace, derived_overflow_is_named_as_overflow) {
  SpaceFile file("template: t\nparameters:\n  A: [3000000]\nderived:\n  C: A * A * A\n");
  const SearchSpace space = load_test_space(file.path());
  const auto limits = arch_limits("sm_90");
  const auto reason = space.rejection(space.config_at(0), limits);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "derived C = A * A * A overflows (beyond 2^53) (A=3000000)");
  try {
    space.derived_values(space.config_at(0), limits);
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_HAS(err.what(), "derived C = A * A * A is undefined for");
    EXPECT_HAS(err.what(), "(overflow beyond 2^53)");
  }
}

TEST(SearchSpace, a_result_that_rounds_at_2_to_the_53_is_an_overflow) {
  // 2^53 + 1 is no double: it rounds to 2^53, which must not pass as a value.
  SpaceFile file("template: t\nparameters:\n  A: [4503599627370496]\nderived:\n  C: A * 2 + 1\n");
  const SearchSpace space = load_test_space(file.path());
  const auto reason = space.rejection(space.config_at(0), arch_limits("sm_90"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_HAS(*reason, "derived C = A * 2 + 1 overflows (beyond 2^53)");
}

TEST(SearchSpace, constant_division_by_zero_is_still_named) {
  // muParser could fold constant parts when it parses; the cause must survive every Eval.
  SpaceFile file(
      "template: t\nparameters:\n  A: [1, 2]\n"
      "constraints:\n  - {expr: \"A + 1 / 0 > 0\", reason: r}\n");
  const SearchSpace space = load_test_space(file.path());
  for (uint64_t i = 0; i < 2; ++i) {
    const auto reason = space.rejection(space.config_at(i), arch_limits("sm_90"));
    ASSERT_TRUE(reason.has_value());
    EXPECT_HAS(*reason, "r: division or modulo by zero in A + 1 / 0 > 0");
  }
}

// A tunable becomes a -D value the kernel reads as a count or size: never negative.
TEST(SearchSpace, rejects_negative_values_naming_line_and_parameter) {
  const std::string msg = load_error("template: t\nparameters:\n  A: [1, -4]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "parameter A: -4 is negative");
}

TEST(SearchSpace, rejects_values_that_doubles_cannot_hold_exactly) {
  const std::string msg = load_error("template: t\nparameters:\n  A: [1, 9007199254740993]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "parameter A: 9007199254740993 is beyond 2^53");
}

// ---- Rejections and enumeration ------------------------------------------------------------

TEST(SearchSpace, rejection_names_the_reason_and_the_values_it_used) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  // THREADS = (64/4) * (128/8) = 256; BM*BK = 512 is not a multiple of THREADS*VEC = 1024.
  const KernelConfig c = sgemm_config({{"BM", 64}, {"BN", 128}, {"TM", 4}, {"TN", 8}});
  const auto reason = space.rejection(c, arch_limits("sm_90"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason,
            "BM*BK must be a multiple of THREADS*VEC so the A tile splits evenly over the "
            "threads (BM=64, BK=8, THREADS=256, VEC=4)");
}

// 256 K slices are for tiles of 64x64 or less; the same split on 64x64 is legal.
TEST(SearchSpace, rejects_256_k_slices_on_a_big_tile_with_its_reason) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const auto reason = space.rejection(sgemm_config({{"SPLIT_K", 256}}), arch_limits("sm_90"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("256 K slices serve a huge K on tiles of 64x64 or less"),
            std::string::npos)
      << *reason;
  EXPECT_FALSE(
      space
          .rejection(
              sgemm_config(
                  {{"BM", 64}, {"BN", 64}, {"BK", 16}, {"TM", 4}, {"TN", 4}, {"SPLIT_K", 256}}),
              arch_limits("sm_90"))
          .has_value());
}

TEST(SearchSpace, rejection_of_a_legal_config_is_empty) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  EXPECT_FALSE(space.rejection(sgemm_config({}), arch_limits("sm_75")).has_value());
}

TEST(SearchSpace, rejection_reports_the_first_failing_constraint) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  // TM = 3 breaks BM % TM first; later constraints would fail too.
  const auto reason = space.rejection(sgemm_config({{"TM", 3}}), arch_limits("sm_90"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "BM must be a multiple of TM (BM=128, TM=3)");
}

TEST(SearchSpace, rejection_of_a_config_from_another_template_throws) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  KernelConfig c = sgemm_config({});
  c.template_name = "hgemm_mma";
  EXPECT_THROW(space.rejection(c, arch_limits("sm_90")), Error);
}

TEST(SearchSpace, rejection_of_a_config_missing_a_parameter_throws) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  KernelConfig c = sgemm_config({});
  c.params.pop_back();
  try {
    space.rejection(c, arch_limits("sm_90"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "MIN_BLOCKS");
  }
}

TEST(SearchSpace, rejection_names_a_parameter_the_space_does_not_have) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  KernelConfig c = sgemm_config({});
  c.set("UNROLL", 2);
  const auto reason = space.rejection(c, arch_limits("sm_90"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_HAS(*reason, "UNROLL is not a parameter of sgemm_simt");
}

TEST(SearchSpace, derived_values_of_a_sgemm_config) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const auto v = space.derived_values(sgemm_config({}), arch_limits("sm_75"));
  EXPECT_EQ(v.at("THREADS"), 256);
  EXPECT_EQ(v.at("SMEM_BYTES"), 2 * 8 * (128 + 4 + 128 + 4) * 4);
  EXPECT_EQ(v.at("BM"), 128);
}

// THREADS and DYNAMIC_SMEM are the host side's (block_resources), stated nowhere else.
TEST(SearchSpace, threads_and_shared_memory_are_the_host_sides_in_every_shipped_space) {
  for (const EmbeddedTemplate& t : embedded_templates()) {
    const SearchSpace space = SearchSpace::parse(t.space, t.name);
    for (const auto& [name, expression] : space.derived())
      EXPECT_TRUE(name != "THREADS" && name != "DYNAMIC_SMEM") << t.name << ": " << name;
    const KernelConfig first = space.enumerate(arch_limits("sm_90")).legal.front();
    const BlockResources host = template_named(t.name).block_resources(first);
    const auto v = space.derived_values(first, arch_limits("sm_90"));
    EXPECT_EQ(v.at("THREADS"), host.threads) << first.canonical_name();
    EXPECT_EQ(v.at("DYNAMIC_SMEM"), int64_t(host.dynamic_smem_bytes)) << first.canonical_name();
  }
}

TEST(SearchSpace, a_family_space_may_not_define_what_the_host_side_gives) {
  for (const char* name : {"THREADS", "DYNAMIC_SMEM"}) {
    std::string path;
    const std::string msg = embedded_load_error(
        std::string("template: sgemm_simt\nparameters:\n  BM: [64]\nderived:\n  ") + name +
            ": BM * 2\n",
        &path);
    EXPECT_HAS(msg, path + ":5:");
    EXPECT_HAS(msg, std::string("the family's host side gives ") + name);
  }
  // A space of no registered family has no host side: there they are plain derived names.
  EXPECT_EQ(load_error("template: t\nparameters:\n  BM: [64]\nderived:\n  THREADS: BM * 2\n"), "");
}

// A divisor of the host side listed at 0 is refused for those points, not divided by.
TEST(SearchSpace, points_the_host_side_refuses_are_pruned_with_its_reason) {
  const SearchSpace space = SearchSpace::parse(
      "template: sgemm_simt\nparameters:\n  TM: [0, 8]\n"
      "constraints:\n  - {expr: \"THREADS >= 1\", reason: \"a block needs threads\"}\n",
      "<host refusal>");
  const SearchSpace::Enumeration e = space.enumerate(arch_limits("sm_90"));
  ASSERT_EQ(e.legal.size(), 1u);
  EXPECT_EQ(e.legal[0].get("TM"), 8);
  ASSERT_EQ(e.rejected_by_reason.size(), 1u);
  EXPECT_HAS(e.rejected_by_reason.begin()->first,
             "a block needs threads: the host side refuses the config");
  const auto why = space.rejection(KernelConfig{"sgemm_simt", {{"TM", 0}}}, arch_limits("sm_90"));
  ASSERT_TRUE(why.has_value());
  EXPECT_HAS(*why, "THREADS=undefined");
  try {
    space.derived_values(KernelConfig{"sgemm_simt", {{"TM", 0}}}, arch_limits("sm_90"));
    ADD_FAILURE() << "derived values of a config the host side refuses";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "the host side of sgemm_simt refuses");
  }
}

TEST(SearchSpace, enumerate_finds_legal_configs_on_sm_75_and_sm_90) {
  for (const char* arch : {"sm_75", "sm_90"}) {
    const auto& e = sgemm_enumeration(arch);
    EXPECT_GT(e.legal.size(), 100u) << arch;
    uint64_t rejected = 0;
    for (const auto& [reason, count] : e.rejected_by_reason) {
      rejected += count;
      EXPECT_EQ(reason.find('='), std::string::npos) << "counted without values: " << reason;
    }
    EXPECT_EQ(e.legal.size() + rejected, 576000u) << arch;
  }
}

TEST(SearchSpace, every_legal_config_satisfies_the_template) {
  for (const char* arch : {"sm_75", "sm_90"}) {
    const ArchLimits limits = arch_limits(arch);
    const auto& e = sgemm_enumeration(arch);
    std::set<std::string> names;
    for (const KernelConfig& c : e.legal) {
      ASSERT_EQ(template_violation(c), "") << arch << " " << c.canonical_name();
      ASSERT_EQ(threads(c) % 32, 0) << c.canonical_name();
      ASSERT_GE(threads(c), 64) << c.canonical_name();
      ASSERT_LE(threads(c), limits.max_threads_per_block) << c.canonical_name();
      ASSERT_LE(smem_bytes(c), limits.smem_per_block_optin) << arch << " " << c.canonical_name();
      ASSERT_LE(c.get("TM") * c.get("TN"), 128) << c.canonical_name();
      ASSERT_EQ(c.template_name, "sgemm_simt");
      ASSERT_EQ(c.params.size(), 14u);
      names.insert(c.canonical_name());
    }
    EXPECT_EQ(names.size(), e.legal.size()) << "no config twice";
  }
}

TEST(SearchSpace, configs_the_template_rejects_are_not_legal) {
  // The converse: walk the whole space and check that every point the kernel would refuse
  // is pruned (the space may prune more, e.g. THREADS >= 64, smem).
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const auto& legal = sgemm_enumeration("sm_90").legal;
  std::set<std::string> legal_names;
  for (const auto& c : legal) legal_names.insert(c.canonical_name());
  uint64_t refused = 0;
  for (uint64_t i = 0; i < space.cartesian_size(); ++i) {
    const KernelConfig c = space.config_at(i);
    if (template_violation(c).empty()) continue;
    ++refused;
    ASSERT_EQ(legal_names.count(c.canonical_name()), 0u) << c.canonical_name();
  }
  EXPECT_GT(refused, 0u);
}

TEST(SearchSpace, legal_set_is_in_config_at_order) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const auto& legal = sgemm_enumeration("sm_75").legal;
  ASSERT_FALSE(legal.empty());
  const auto limits = arch_limits("sm_75");
  size_t next = 0;
  for (uint64_t i = 0; i < space.cartesian_size() && next < legal.size(); ++i) {
    const KernelConfig c = space.config_at(i);
    if (space.rejection(c, limits)) continue;
    ASSERT_EQ(c, legal[next]) << i;
    ++next;
  }
  EXPECT_EQ(next, legal.size());
}

TEST(SearchSpace, sm_75_smem_limit_prunes_configs_that_sm_90_accepts) {
  const auto& sm75 = sgemm_enumeration("sm_75");
  const auto& sm90 = sgemm_enumeration("sm_90");
  EXPECT_LT(sm75.legal.size(), sm90.legal.size());
  // The archs differ only in shared memory for this space: sm_75's legal set is a subset,
  // and the rest needs more than sm_75's 64 KiB.
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const std::string smem_reason = "shared memory per block over the arch's limit";
  std::set<std::string> sm75_names;
  for (const auto& c : sm75.legal) sm75_names.insert(c.canonical_name());
  size_t only_sm90 = 0;
  for (const auto& c : sm90.legal) {
    if (sm75_names.count(c.canonical_name())) continue;
    ++only_sm90;
    // sm_75 has 64 KiB of shared memory per block and 1024 threads per SM (sm_90: 2048).
    const auto reason = space.rejection(c, arch_limits("sm_75"));
    ASSERT_TRUE(reason.has_value());
    if (threads(c) * c.get("MIN_BLOCKS") > 1024) {
      ASSERT_NE(reason->find("MIN_BLOCKS"), std::string::npos) << *reason;
    } else {
      ASSERT_GT(smem_bytes(c), 64 * 1024) << c.canonical_name();
      ASSERT_EQ(reason->rfind(smem_reason, 0), 0u) << *reason;
    }
  }
  EXPECT_EQ(only_sm90, sm90.legal.size() - sm75.legal.size());
  ASSERT_TRUE(sm75.rejected_by_reason.count(smem_reason));
  // One that needs more than 64 KiB: legal on sm_90, rejected on sm_75 with the numbers.
  const KernelConfig big = sgemm_config({{"BM", 256},
                                         {"BN", 128},
                                         {"BK", 32},
                                         {"TM", 16},
                                         {"TN", 8},
                                         {"WARP_N", 8},
                                         {"VEC", 4},
                                         {"STAGES", 2}});
  ASSERT_GT(smem_bytes(big), 64 * 1024);
  EXPECT_FALSE(space.rejection(big, arch_limits("sm_90")).has_value());
  const auto reason = space.rejection(big, arch_limits("sm_75"));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, smem_reason + " (SMEM_BYTES=" + std::to_string(smem_bytes(big)) +
                         ", SMEM_PER_BLOCK_OPTIN=65536)");
}

TEST(SearchSpace, space_with_no_legal_config_throws_naming_file_arch_and_reasons) {
  const std::string path = kSourceDir + "/tests/data/spaces/no_legal_config.yaml";
  const SearchSpace space = SearchSpace::load(path);
  try {
    space.enumerate(arch_limits("sm_75"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "no legal config in " + path + " for sm_75");
    EXPECT_HAS(e.what(), "BM must be a multiple of TM (4 of 4)");
  }
}

TEST(SearchSpace, no_legal_config_lists_the_top_reasons_by_count) {
  SpaceFile file(
      "template: t\nparameters:\n  A: [1, 2, 3, 4]\n  B: [1, 2]\n"
      "constraints:\n  - {expr: \"A > 1\", reason: \"A too small\"}\n"
      "  - {expr: \"B > 2\", reason: \"B too small\"}\n");
  const SearchSpace space = load_test_space(file.path());
  try {
    space.enumerate(arch_limits("sm_90"));
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_HAS(msg, "for sm_90");
    const size_t b = msg.find("B too small (6 of 8)"), a = msg.find("A too small (2 of 8)");
    ASSERT_NE(b, std::string::npos) << msg;
    ASSERT_NE(a, std::string::npos) << msg;
    EXPECT_LT(b, a) << "most common first";
  }
}

// A guard against a pruning regression, not a timing: the bound leaves room for a loaded
// two-core CI machine.
TEST(SearchSpace, enumerate_visits_the_sgemm_space_quickly) {
  const SearchSpace space = SearchSpace::load(kSgemmSpace);
  const auto start = std::chrono::steady_clock::now();
  const auto e = space.enumerate(arch_limits("sm_90"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[          ] sgemm_simt sm_90: %zu legal of %llu in %.3f s\n", e.legal.size(),
              static_cast<unsigned long long>(space.cartesian_size()), seconds);
  EXPECT_LT(seconds, 10.0);
}

TEST(SearchSpace, copies_evaluate_independently) {
  std::optional<SearchSpace> original(SearchSpace::load(kSgemmSpace));
  const KernelConfig legal = sgemm_config({});
  const KernelConfig bad = sgemm_config({{"TM", 3}});
  EXPECT_FALSE(original->rejection(legal, arch_limits("sm_75")).has_value());
  SearchSpace copy = *original;
  original.reset();  // the copy must not read the original's variable storage
  EXPECT_FALSE(copy.rejection(legal, arch_limits("sm_75")).has_value());
  EXPECT_TRUE(copy.rejection(bad, arch_limits("sm_75")).has_value());
  SearchSpace assigned = SearchSpace::load(kSourceDir + "/tests/data/spaces/no_legal_config.yaml");
  assigned = copy;
  EXPECT_FALSE(assigned.rejection(legal, arch_limits("sm_75")).has_value());
  SearchSpace moved = std::move(copy);
  EXPECT_TRUE(moved.rejection(bad, arch_limits("sm_75")).has_value());
}

// ---- Spaces too large to enumerate -------------------------------------------------------

// "[0, 1, .., count - 1]"
std::string value_list(int count) {
  std::string text = "[0";
  for (int v = 1; v < count; ++v) text += ", " + std::to_string(v);
  return text + "]";
}

// `count` parameters P0.. with `values` values each, then `rest` verbatim.
std::string wide_space(int count, int values, const std::string& rest = "") {
  std::string text = "template: t\nparameters:\n";
  for (int p = 0; p < count; ++p)
    text += "  P" + std::to_string(p) + ": " + value_list(values) + "\n";
  return text + rest;
}

SearchSpace load_wide(const std::string& path, int count) {
  std::vector<std::string> names;
  for (int p = 0; p < count; ++p) names.push_back("P" + std::to_string(p));
  return SearchSpace::load(path, template_declaring(names));
}

TEST(SearchSpace, refuses_a_space_too_large_to_enumerate_naming_its_size) {
  // The issue's case: 15 x 16 values whose one constraint never holds.
  SpaceFile file(wide_space(15, 16, "constraints:\n  - {expr: \"P0 < 0\", reason: never}\n"));
  try {
    load_wide(file.path(), 15);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), file.path() + ":");
    EXPECT_HAS(e.what(), "1152921504606846976 points");
    EXPECT_HAS(e.what(), "at most 50000000 can be enumerated");
  }
}

TEST(SearchSpace, refuses_a_space_beyond_2_to_the_64) {
  SpaceFile file(wide_space(17, 16));
  try {
    load_wide(file.path(), 17);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "more than 18446744073709551615 points");
    EXPECT_HAS(e.what(), "at most 50000000 can be enumerated");
  }
}

TEST(SearchSpace, refuses_more_legal_configs_than_it_keeps) {
  // 1001 x 1000 points, all legal: more than the 1,000,000 configs a legal list may hold.
  SpaceFile file("template: t\nparameters:\n  P0: " + value_list(1001) +
                 "\n  P1: " + value_list(1000) + "\n");
  const SearchSpace space = load_wide(file.path(), 2);
  ASSERT_EQ(space.cartesian_size(), 1001000u);
  try {
    space.enumerate(arch_limits("sm_90"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), file.path());
    EXPECT_HAS(e.what(), "more than 1000000 legal configs");
  }
}

TEST(SearchSpace, enumeration_reports_progress_with_counts) {
  SpaceFile file(wide_space(2, 300, "constraints:\n  - {expr: \"P0 < 100\", reason: r}\n"));
  const SearchSpace space = load_wide(file.path(), 2);
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  spdlog::set_level(spdlog::level::info);
  const auto e = space.enumerate(arch_limits("sm_90"), std::chrono::milliseconds(0));
  spdlog::set_default_logger(previous);
  EXPECT_EQ(e.legal.size(), 30000u);
  EXPECT_HAS(log.str(), "enumerating " + file.path() + ": 65536 of 90000 points, 30000 legal");
}

}  // namespace
}  // namespace tgemm
