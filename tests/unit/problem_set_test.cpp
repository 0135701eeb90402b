// Shape files: every example in configs/shapes loads, and every bad input names the file,
// the line and what is wrong.
#include "tuner/input/problem_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/error.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = TGEMM_SOURCE_DIR;

// A shape file in a fresh temporary folder, named after the test so messages show which.
class ShapeFile {
 public:
  explicit ShapeFile(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tgemm_shapes_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "shapes.yaml").string();
    std::ofstream(path_) << text;
  }
  ~ShapeFile() { fs::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  fs::path dir_;
  std::string path_;
};

// The message of the Error that loading `text` throws, or "" when it loads.
std::string load_error(const std::string& text, std::string* path = nullptr) {
  ShapeFile file(text);
  if (path) *path = file.path();
  try {
    load_problem_set(file.path());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

TEST(ProblemSet, loads_short_and_long_forms_with_defaults) {
  ShapeFile file(
      "defaults: {dtype: f32, layout: NT}\n"
      "shapes:\n"
      "  - [4096, 2048, 1024]\n"
      "  - {m: 16, n: 4096, k: 4096, layout: TN, name: decode}\n"
      "  - {m: 3, n: 5, k: 7, dtype: tf32}\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].name, "4096x2048x1024");
  EXPECT_EQ(problems[0].problem.m, 4096);
  EXPECT_EQ(problems[0].problem.n, 2048);
  EXPECT_EQ(problems[0].problem.k, 1024);
  EXPECT_EQ(problems[0].problem.layout(), "NT");
  EXPECT_EQ(problems[0].problem.types, GemmTypes{});
  EXPECT_EQ(problems[1].name, "decode");
  EXPECT_EQ(problems[1].problem.layout(), "TN");
  EXPECT_EQ(problems[1].problem.m, 16);
  EXPECT_EQ(problems[2].name, "3x5x7");
  EXPECT_EQ(problems[2].problem.types, gemm_types("tf32"));
  EXPECT_EQ(problems[2].problem.layout(), "NT");
}

TEST(ProblemSet, defaults_are_f32_nn_without_a_defaults_block) {
  ShapeFile file("shapes:\n  - [1, 2, 3]\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].problem.types, GemmTypes{});
  EXPECT_EQ(problems[0].problem.layout(), "NN");
}

TEST(ProblemSet, builds_packed_problems) {
  ShapeFile file("shapes:\n  - {m: 30, n: 50, k: 70, layout: TT}\n");
  const Problem p = load_problem_set(file.path()).at(0).problem;
  const Problem expected = Problem::packed(GemmTypes{}, Op::T, Op::T, 30, 50, 70);
  EXPECT_EQ(p.key(), expected.key());
  EXPECT_EQ(p.lda, 30);  // A stored k x m
  EXPECT_EQ(p.ldb, 70);  // B stored n x k
  EXPECT_EQ(p.ldc, 50);
  EXPECT_TRUE(p.beta_zero);
}

TEST(ProblemSet, loads_every_example_shape_file) {
  struct Expected {
    const char* file;
    size_t count;
    const char* first_name;
    const char* layout;  // of the first shape
    const char* types;   // of the first shape
  };
  const Expected expected[] = {
      {"square.yaml", 6, "256x256x256", "NN", "f32"},
      {"irregular.yaml", 8, "1000x1000x1000", "NN", "f32"},
      {"deepbench.yaml", 16, "1760x16x1760", "NN", "f32"},
      {"llm.yaml", 8, "decode-qkvo", "NT", "f32"},
      {"quick.yaml", 3, "128x128x128", "NN", "f32"},
      {"tensor.yaml", 21, "4096x4096x4096", "NN", "f16"},
      {"f32x3.yaml", 8, "1024x1024x1024", "NN", "f32x3"},
      {"heldout.yaml", 12, "tiny-mn-huge-k", "NN", "f32"},
      {"hopper.yaml", 13, "l3-8b-qkv", "NT", "bf16"},
      {"attention_batched.yaml", 42, "qk-f16-64x128", "NT", "f16"},
      {"llm_epilogue.yaml", 32, "decode-qkvo-bf16-gelu", "NT", "bf16"},
      {"fp8.yaml", 24, "square-4096", "NT", "e4m3_out_bf16"},
      {"moe_grouped.yaml", 8, "mixtral-up-decode", "NT", "bf16"},
  };
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kSourceDir + "/configs/shapes"))
    if (entry.path().extension() == ".yaml") ++files;
  EXPECT_EQ(files, std::size(expected)) << "a new example shape file needs a line here";
  for (const auto& e : expected) {
    SCOPED_TRACE(e.file);
    const auto problems = load_problem_set(kSourceDir + "/configs/shapes/" + e.file);
    ASSERT_EQ(problems.size(), e.count);
    EXPECT_EQ(problems[0].name, e.first_name);
    EXPECT_EQ(problems[0].problem.layout(), e.layout);
    EXPECT_EQ(problems[0].problem.types.name(), e.types);
    for (const auto& p : problems) EXPECT_NO_THROW(p.problem.validate());
  }
}

TEST(ProblemSet, example_fields_match_the_file) {
  const auto llm = load_problem_set(kSourceDir + "/configs/shapes/llm.yaml");
  EXPECT_EQ(llm[3].name, "decode16-down");
  EXPECT_EQ(llm[3].problem.m, 16);
  EXPECT_EQ(llm[3].problem.n, 4096);
  EXPECT_EQ(llm[3].problem.k, 11008);
  const auto deepbench = load_problem_set(kSourceDir + "/configs/shapes/deepbench.yaml");
  EXPECT_EQ(deepbench[11].name, "512x8x500000");  // the large-K one
  EXPECT_EQ(deepbench[11].problem.k, 500000);
  const auto irregular = load_problem_set(kSourceDir + "/configs/shapes/irregular.yaml");
  EXPECT_EQ(irregular[6].problem.m, 127);
  EXPECT_EQ(irregular[6].problem.n, 257);
  EXPECT_EQ(irregular[6].problem.k, 509);
}

TEST(ProblemSet, loads_test_fixture) {
  const auto problems = load_problem_set(kSourceDir + "/tests/data/shapes/tiny.yaml");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[1].name, "odd");
  EXPECT_EQ(problems[1].problem.layout(), "NT");
}

TEST(ProblemSet, rejects_zero_m_fixture_naming_file_and_line) {
  const std::string path = kSourceDir + "/tests/data/shapes/zero_m.yaml";
  try {
    load_problem_set(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":5: m must be >= 1, got 0");
  }
}

TEST(ProblemSet, rejects_missing_file_naming_it) {
  try {
    load_problem_set("/nonexistent/dir/shapes.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "/nonexistent/dir/shapes.yaml");
    EXPECT_HAS(e.what(), "No such file");
  }
}

TEST(ProblemSet, rejects_a_directory) {
  const std::string dir = fs::temp_directory_path().string();
  try {
    load_problem_set(dir);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), dir);
  }
}

TEST(ProblemSet, rejects_malformed_yaml_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n  - [4, 5, 6\n", &path);
  EXPECT_HAS(msg, path + ":");
  EXPECT_HAS(msg, "malformed YAML");
}

TEST(ProblemSet, rejects_malformed_yaml_bad_indentation_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n bad: [\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "malformed YAML");
}

TEST(ProblemSet, rejects_empty_file) {
  std::string path;
  const std::string msg = load_error("", &path);
  EXPECT_HAS(msg, path);
  EXPECT_HAS(msg, "empty");
}

TEST(ProblemSet, rejects_file_with_only_comments) {
  const std::string msg = load_error("# nothing here\n");
  EXPECT_HAS(msg, "empty");
}

TEST(ProblemSet, rejects_top_level_list) {
  std::string path;
  const std::string msg = load_error("- [1, 2, 3]\n", &path);
  EXPECT_HAS(msg, path + ":1:");
  EXPECT_HAS(msg, "shapes");
}

TEST(ProblemSet, rejects_missing_shapes_key) {
  std::string path;
  const std::string msg = load_error("defaults: {dtype: f32}\n", &path);
  EXPECT_HAS(msg, path + ":");
  EXPECT_HAS(msg, "no `shapes:`");
}

TEST(ProblemSet, rejects_empty_shape_list_naming_line) {
  std::string path;
  const std::string msg = load_error("defaults: {dtype: f32}\nshapes: []\n", &path);
  EXPECT_HAS(msg, path + ":2:");
  EXPECT_HAS(msg, "non-empty list");
}

TEST(ProblemSet, rejects_null_shapes) {
  const std::string msg = load_error("shapes:\n");
  EXPECT_HAS(msg, "non-empty list");
}

TEST(ProblemSet, rejects_unknown_top_level_key_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\nshape_set: x\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "unknown top-level key 'shape_set'");
}

TEST(ProblemSet, rejects_repeated_top_level_key_naming_both_lines) {
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\nshapes:\n  - [4, 5, 6]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "line 1");
}

TEST(ProblemSet, rejects_unknown_key_in_shape_naming_line) {
  std::string path;
  const std::string msg =
      load_error("shapes:\n  - [1, 2, 3]\n  - {m: 1, n: 2, k: 3, lyout: NT}\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "unknown key in a shape 'lyout'");
}

TEST(ProblemSet, rejects_unknown_key_in_defaults_naming_line) {
  const std::string msg =
      load_error("defaults:\n  dtype: f32\n  beta: 1\nshapes:\n  - [1, 2, 3]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "unknown key in defaults 'beta'");
}

TEST(ProblemSet, rejects_defaults_that_are_not_a_map) {
  const std::string msg = load_error("defaults: f32\nshapes:\n  - [1, 2, 3]\n");
  EXPECT_HAS(msg, ":1:");
  EXPECT_HAS(msg, "`defaults:` must be a map");
}

TEST(ProblemSet, rejects_short_form_with_two_values_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n  - [64, 64]\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "[m, n, k] (3 integers), got 2 values");
}

TEST(ProblemSet, rejects_short_form_with_four_values) {
  const std::string msg = load_error("shapes:\n  - [1, 2, 3, 4]\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "got 4 values");
}

TEST(ProblemSet, rejects_scalar_shape) {
  const std::string msg = load_error("shapes:\n  - 4096\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "a shape must be [m, n, k]");
}

TEST(ProblemSet, rejects_non_integer_value_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n  - [64, 6.5, 64]\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "n must be an integer, got '6.5'");
}

TEST(ProblemSet, rejects_text_dimension) {
  const std::string msg = load_error("shapes:\n  - {m: big, n: 2, k: 3}\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "m must be an integer, got 'big'");
}

TEST(ProblemSet, rejects_quoted_dimension) {
  const std::string msg = load_error("shapes:\n  - [\"16\", 2, 3]\n");
  EXPECT_HAS(msg, "m must be an integer");
}

TEST(ProblemSet, rejects_nested_list_dimension) {
  const std::string msg = load_error("shapes:\n  - [[1], 2, 3]\n");
  EXPECT_HAS(msg, "m must be an integer");
}

TEST(ProblemSet, rejects_zero_m_naming_line) {
  std::string path;
  const std::string msg = load_error("shapes:\n  - [128, 128, 128]\n  - [0, 64, 64]\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "m must be >= 1, got 0");
}

TEST(ProblemSet, rejects_negative_k_naming_line) {
  const std::string msg = load_error("shapes:\n  - {m: 1, n: 2,\n     k: -5}\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "k must be >= 1, got -5");
}

TEST(ProblemSet, rejects_missing_dimension_naming_line) {
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n  - {m: 1, k: 3}\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "shape has no `n`");
}

TEST(ProblemSet, rejects_absurd_dimension_naming_line) {
  const std::string msg = load_error("shapes:\n  - [1, 2, 3]\n  - [1, 40000000000, 1]\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "n = 40000000000 is too large");
}

TEST(ProblemSet, rejects_overflowing_dimension) {
  const std::string msg = load_error("shapes:\n  - [99999999999999999999999, 1, 1]\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "m = 99999999999999999999999 is too large");
}

TEST(ProblemSet, rejects_operand_over_2_pow_31_elements_naming_it) {
  // C is 65536 x 65536 = 2^32 elements although each dimension is fine.
  std::string path;
  const std::string msg = load_error("shapes:\n  - [65536, 65536, 16]\n", &path);
  EXPECT_HAS(msg, path + ":2:");
  EXPECT_HAS(msg, "C would hold 65536 x 65536 = 4294967296 elements, more than 2^31");
  EXPECT_HAS(msg, "32-bit");
}

TEST(ProblemSet, rejects_transposed_a_over_2_pow_31_elements) {
  const std::string msg = load_error("shapes:\n  - {m: 16, n: 16, k: 200000000, layout: TN}\n");
  EXPECT_HAS(msg, "A would hold 200000000 x 16");
}

TEST(ProblemSet, accepts_operand_of_exactly_2_pow_31_elements) {
  ShapeFile file("shapes:\n  - [32768, 16, 65536]\n");  // A: 2^31 elements
  EXPECT_EQ(load_problem_set(file.path()).size(), 1u);
}

TEST(ProblemSet, rejects_unknown_dtype_naming_line) {
  std::string path;
  const std::string msg =
      load_error("shapes:\n  - [1, 2, 3]\n  - {m: 1, n: 2, k: 3, dtype: f64}\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "unknown dtype 'f64'");
}

TEST(ProblemSet, rejects_unknown_default_dtype_naming_line) {
  const std::string msg = load_error("defaults:\n  dtype: fp32\nshapes:\n  - [1, 2, 3]\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "unknown dtype 'fp32'");
}

TEST(ProblemSet, rejects_unknown_layout_naming_line) {
  std::string path;
  const std::string msg = load_error("defaults: {layout: NX}\nshapes:\n  - [1, 2, 3]\n", &path);
  EXPECT_HAS(msg, path + ":1:");
  EXPECT_HAS(msg, "unknown layout 'NX'");
}

TEST(ProblemSet, rejects_layout_that_is_a_list) {
  const std::string msg = load_error("shapes:\n  - {m: 1, n: 2, k: 3, layout: [N, T]}\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "`layout` must be a single value");
}

TEST(ProblemSet, rejects_duplicate_shape_naming_both_lines) {
  std::string path;
  const std::string msg = load_error(
      "shapes:\n  - [64, 64, 64]\n  - [128, 128, 128]\n  - {m: 64, n: 64, k: 64, name: again}\n",
      &path);
  EXPECT_HAS(msg, path + ":4:");
  EXPECT_HAS(msg, "repeats the shape on line 2");
}

TEST(ProblemSet, same_size_with_another_layout_is_not_a_duplicate) {
  ShapeFile file("shapes:\n  - [64, 64, 64]\n  - {m: 64, n: 64, k: 64, layout: NT}\n");
  EXPECT_EQ(load_problem_set(file.path()).size(), 2u);
}

TEST(ProblemSet, rejects_duplicate_name_naming_both_lines) {
  const std::string msg =
      load_error("shapes:\n  - {m: 1, n: 2, k: 3, name: a}\n  - {m: 4, n: 5, k: 6, name: a}\n");
  EXPECT_HAS(msg, ":3:");
  EXPECT_HAS(msg, "'a' is already used on line 2");
}

TEST(ProblemSet, rejects_empty_name) {
  const std::string msg = load_error("shapes:\n  - {m: 1, n: 2, k: 3, name: \"\"}\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "`name` must not be empty");
}

TEST(ProblemSet, reads_recorded_call_counts) {
  ShapeFile file("shapes:\n  - {m: 1, n: 2, k: 3, calls: 12}\n  - [4, 5, 6]\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].calls, 12);
  EXPECT_EQ(problems[1].calls, 0);
}

TEST(ProblemSet, rejects_a_call_count_that_is_not_a_count_naming_line) {
  for (const char* calls : {"-1", "x", "1.5", "[1]"}) {
    const std::string msg =
        load_error(std::string("shapes:\n  - {m: 1, n: 2, k: 3, calls: ") + calls + "}\n");
    EXPECT_HAS(msg, ":2:");
    EXPECT_HAS(msg, "calls must be an integer >= 0");
  }
}

TEST(ProblemSet, reads_a_batch_with_packed_strides_and_a_batch_name) {
  ShapeFile file(
      "defaults: {dtype: f16, layout: NT}\n"
      "shapes:\n"
      "  - {m: 128, n: 128, k: 64, batch: 16}\n"
      "  - {m: 128, n: 128, k: 64}\n"
      "  - {m: 128, n: 64, k: 128, layout: NN, batch: 8, name: pv}\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 3u);
  const Problem& qk = problems[0].problem;
  EXPECT_EQ(qk.batch, 16);
  EXPECT_EQ(qk.stride_a, 128 * 64);
  EXPECT_EQ(qk.stride_b, 128 * 64);
  EXPECT_EQ(qk.stride_c, 128 * 128);
  EXPECT_EQ(problems[0].name, "16x128x128x64");
  EXPECT_EQ(problems[1].problem.batch, 1);  // the same shape unbatched is another problem
  EXPECT_NE(problems[1].problem.key(), qk.key());
  EXPECT_EQ(problems[2].name, "pv");
  EXPECT_EQ(problems[2].problem.stride_c, 128 * 64);
}

TEST(ProblemSet, reads_strides_that_are_not_packed) {
  ShapeFile file("shapes:\n  - {m: 4, n: 4, k: 4, batch: 3, stride_a: 0, stride_c: 32}\n");
  const Problem p = load_problem_set(file.path()).at(0).problem;
  EXPECT_EQ(p.stride_a, 0);
  EXPECT_EQ(p.stride_b, 16);  // not given: packed
  EXPECT_EQ(p.stride_c, 32);
}

TEST(ProblemSet, rejects_a_batch_below_one_or_too_large_naming_line) {
  for (const char* batch : {"0", "-2", "x"}) {
    const std::string msg =
        load_error(std::string("shapes:\n  - {m: 1, n: 2, k: 3, batch: ") + batch + "}\n");
    EXPECT_HAS(msg, ":2:");
    EXPECT_HAS(msg, "batch must be");
  }
  const std::string msg = load_error("shapes:\n  - {m: 1, n: 2, k: 3, batch: 65536}\n");
  EXPECT_HAS(msg, "batch = 65536 is too large");
}

TEST(ProblemSet, rejects_a_stride_c_that_overlaps_members_naming_the_field) {
  std::string path;
  const std::string msg =
      load_error("shapes:\n  - [1, 2, 3]\n  - {m: 4, n: 4, k: 4, batch: 2, stride_c: 15}\n", &path);
  EXPECT_HAS(msg, path + ":3:");
  EXPECT_HAS(msg, "stride_c = 15 is smaller than one member of C");
}

TEST(ProblemSet, rejects_strides_without_a_batch_and_negative_strides) {
  std::string msg = load_error("shapes:\n  - {m: 4, n: 4, k: 4, stride_a: 16}\n");
  EXPECT_HAS(msg, ":2:");
  EXPECT_HAS(msg, "`stride_a` is given without `batch:`");
  msg = load_error("shapes:\n  - {m: 4, n: 4, k: 4, batch: 2, stride_b: -1}\n");
  EXPECT_HAS(msg, "stride_b must be >= 0, got -1");
}

TEST(ProblemSet, reads_epilogues_from_defaults_and_shapes_naming_unnamed_ones) {
  ShapeFile file(
      "defaults: {dtype: bf16, layout: NT, epilogue: bias_gelu}\n"
      "shapes:\n"
      "  - {m: 16, n: 4096, k: 4096}\n"
      "  - {m: 16, n: 4096, k: 4096, epilogue: bias_relu, bias_along: m, bias_type: f32}\n"
      "  - {m: 16, n: 4096, k: 4096, epilogue: gelu, aux: true, separate_d: true}\n"
      "  - {m: 16, n: 4096, k: 4096, epilogue: none}\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0].problem.epilogue.name(), "bias_gelu");
  EXPECT_EQ(problems[0].name, "16x4096x4096_bias_gelu");
  EXPECT_EQ(problems[1].problem.epilogue.name(), "bias_relu.m.bf32");
  EXPECT_EQ(problems[2].problem.epilogue.name(), "gelu.aux.d");
  EXPECT_FALSE(problems[3].problem.epilogue.any());
  EXPECT_EQ(problems[3].name, "16x4096x4096");
}

TEST(ProblemSet, reads_rowwise_scales_of_fp8_shapes) {
  ShapeFile file(
      "defaults: {dtype: e4m3, layout: NT, scales: rowwise}\n"
      "shapes:\n"
      "  - {m: 64, n: 4096, k: 4096}\n"
      "  - {m: 64, n: 4096, k: 4096, scales: tensor}\n"
      "  - {m: 64, n: 4096, k: 4096, epilogue: bias}\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].problem.epilogue.name(), "none.rowwise");
  EXPECT_FALSE(problems[1].problem.epilogue.any());
  EXPECT_EQ(problems[2].problem.epilogue.name(), "bias.rowwise");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, dtype: e4m3, scales: column}\n"),
             ":2: scales must be tensor (one per operand) or rowwise");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, dtype: bf16, scales: rowwise}\n"),
             "rowwise scales scale FP8 inputs");
  EXPECT_HAS(load_error("defaults: {dtype: e4m3, scales: rowwise}\n"
                        "shapes:\n  - {groups: [{m: 8, n: 8, k: 16}]}\n"),
             "a grouped shape takes no epilogue or rowwise scales");
}

TEST(ProblemSet, rejects_bad_epilogues_naming_the_line) {
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: tanh}\n"),
             ":2: unknown epilogue 'tanh'");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: relu, bias_along: n}\n"),
             "`bias_along` is given for epilogue relu, which adds no bias");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: bias, bias_along: k}\n"),
             "bias_along must be n (one value per column) or m (per row), got 'k'");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, dtype: f16, epilogue: bias, "
                        "bias_type: bf16}\n"),
             "bias_type must be f32 or C's type (f16), got 'bf16'");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: bias, aux: true}\n"),
             "aux keeps the values before the activation");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: relu, aux: yes}\n"),
             "`aux` must be true or false, got 'yes'");
  EXPECT_HAS(load_error("shapes:\n  - {m: 1, n: 2, k: 3, epilogue: relu, batch: 2}\n"),
             "an epilogue applies to one GEMM");
}

TEST(ProblemSet, the_llm_epilogue_set_is_the_llm_shapes_with_two_epilogues_in_two_types) {
  const auto llm = load_problem_set(TGEMM_SOURCE_DIR "/configs/shapes/llm.yaml");
  const auto fused = load_problem_set(TGEMM_SOURCE_DIR "/configs/shapes/llm_epilogue.yaml");
  ASSERT_EQ(fused.size(), llm.size() * 4);
  for (const char* dtype : {"bf16", "f32"})
    for (const char* kind : {"bias_gelu", "bias_relu"})
      for (const NamedProblem& shape : llm) {
        Problem want = shape.problem;
        want.types = parse_gemm_types(dtype);
        want = Problem::packed(want.types, want.op_a, want.op_b, want.m, want.n, want.k);
        want.epilogue = parse_epilogue_kind(kind);
        const bool listed = std::any_of(fused.begin(), fused.end(), [&](const NamedProblem& f) {
          return f.problem.key() == want.key();
        });
        EXPECT_TRUE(listed) << want.key();
      }
}

TEST(ProblemSet, reads_a_grouped_shape_from_its_groups) {
  ShapeFile file(
      "defaults: {dtype: f16, layout: NT}\n"
      "shapes:\n"
      "  - {groups: [{m: 600, n: 1408, k: 2048}, {m: 3, n: 1408, k: 2048, count: 5}], calls: 4}\n"
      "  - {groups: [{m: 1, n: 8, k: 8}], dtype: bf16, layout: TN, name: tiny}\n");
  const auto problems = load_problem_set(file.path());
  ASSERT_EQ(problems.size(), 2u);
  const Problem& moe = problems[0].problem;
  EXPECT_EQ(moe.batch_form(), BatchForm::grouped);
  ASSERT_EQ(moe.groups.size(), 2u);
  EXPECT_EQ(moe.groups[1], (ProblemGroup{3, 1408, 2048, 5}));
  EXPECT_EQ(moe.key(), "f16_NT_m640_n1536_k2048_x6g_b0_a2.2.2");
  EXPECT_EQ(problems[0].name, "g6_640x1536x2048");  // named after its bucket
  EXPECT_EQ(problems[0].calls, 4);
  EXPECT_EQ(problems[1].name, "tiny");
  EXPECT_EQ(problems[1].problem.types.name(), "bf16");
  EXPECT_EQ(problems[1].problem.layout(), "TN");
}

TEST(ProblemSet, rejects_bad_groups_naming_file_line_and_field) {
  std::string path;
  std::string msg = load_error("shapes:\n  - {groups: [{m: 1, n: 2, k: 3}], m: 4}\n", &path);
  EXPECT_HAS(msg, path + ":2: unknown key in a grouped shape 'm'");
  EXPECT_HAS(load_error("shapes:\n  - {groups: []}\n"), "must be a non-empty list");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [[1, 2, 3]]}\n"), "a group must be {m: .., n: ..");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [{m: 1, n: 2}]}\n"), "group has no `k`");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [{m: 0, n: 2, k: 3}]}\n"), "m must be >= 1, got 0");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [{m: 1, n: 2, k: 3, count: 0}]}\n"),
             "count must be >= 1, got 0");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [{m: 1, n: 2, k: 3, size: 2}]}\n"),
             "unknown key in a group 'size'");
  EXPECT_HAS(load_error("shapes:\n  - {groups: [{m: 1, n: 2, k: 3}], epilogue: relu}\n"),
             "unknown key in a grouped shape 'epilogue'");
  EXPECT_HAS(
      load_error("defaults: {epilogue: relu}\nshapes:\n  - {groups: [{m: 1, n: 2, k: 3}]}\n"),
      "a grouped shape takes no epilogue or rowwise scales (the defaults give relu)");
  msg = load_error(
      "shapes:\n  - {groups: [{m: 900, n: 64, k: 64}]}\n  - {groups: [{m: 1000, n: 64, k: 64}]}\n",
      &path);
  EXPECT_HAS(msg, path + ":3: grouped shape g1_1024x64x64 falls in the bucket of line 2");
}

TEST(ProblemSet, tgemm_tune_refuses_a_grouped_shape_naming_it) {
  ShapeFile file("shapes:\n  - [64, 64, 64]\n  - {groups: [{m: 1, n: 2, k: 3}], name: moe}\n");
  try {
    load_tunable_problem_set(file.path());
    ADD_FAILURE() << "a grouped shape was accepted for tuning";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), file.path() + ": shape moe is a grouped GEMM, which tgemm-tune does not");
  }
  ShapeFile plain("shapes:\n  - [64, 64, 64]\n");
  EXPECT_EQ(load_tunable_problem_set(plain.path()).size(), 1u);
}

}  // namespace
}  // namespace tgemm
