// The limits every YAML input of the tuner shares (shape and space files, embedded text):
// regular files only, a size cap, a nesting cap and an alias-expansion cap, each named.
#include "src/core/yaml_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/error.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

std::string text_error(const std::string& text) {
  try {
    load_yaml_text(text, "<test>", "shape file");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// `depth` lists inside each other: "[[[]]]" is three.
std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(YamlInput, nesting_up_to_the_limit_loads) { EXPECT_EQ(text_error(nested(kMaxYamlDepth)), ""); }

TEST(YamlInput, nesting_past_the_limit_names_origin_line_and_limit) {
  const std::string msg = text_error("a: 1\nb: " + nested(kMaxYamlDepth));
  EXPECT_HAS(msg, "<test>:2:");
  EXPECT_HAS(msg, "nested deeper than 64 levels");
}

TEST(YamlInput, nesting_past_yaml_cpps_own_limit_is_named_the_same_way) {
  const std::string msg = text_error(nested(10000));
  EXPECT_HAS(msg, "<test>:1:");
  EXPECT_HAS(msg, "nested deeper than 64 levels");
}

TEST(YamlInput, aliases_that_expand_beyond_the_file_are_refused) {
  // Each level refers to the previous one ten times: 10^8 nodes from a few hundred bytes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += (j ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  const std::string msg = text_error(bomb);
  EXPECT_HAS(msg, "<test>: its aliases expand to more than");
}

TEST(YamlInput, text_over_the_size_limit_is_refused) {
  const std::string msg = text_error("# " + std::string(kMaxYamlBytes, 'x'));
  EXPECT_HAS(msg, "<test>: the shape file is larger than 16 MiB");
}

// A second document ("---") would be silently dropped by a one-document load: refuse it.
TEST(YamlInput, a_second_document_is_refused_with_its_line) {
  EXPECT_EQ(text_error("shapes:\n  - [1, 2, 3]\n"), "");
  EXPECT_EQ(text_error("---\nshapes:\n  - [1, 2, 3]\n"), "");
  const std::string msg = text_error("shapes:\n  - [1, 2, 3]\n---\nshapes:\n  - [4, 5, 6]\n");
  EXPECT_HAS(msg, "<test>:4: a second YAML document");
  EXPECT_HAS(msg, "a shape file is one document");
}

TEST(YamlInput, malformed_text_names_origin_line_and_column) {
  const std::string msg = text_error("shapes:\n  - [1, 2\n");
  EXPECT_HAS(msg, "<test>:");
  EXPECT_HAS(msg, "malformed YAML");
}

std::string file_error(const std::string& path) {
  try {
    load_yaml_file(path, "shape file");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(YamlInput, a_directory_is_named_as_one) {
  EXPECT_HAS(file_error(fs::temp_directory_path().string()),
             "is a directory; expected a YAML file");
}

TEST(YamlInput, a_device_is_not_a_regular_file) {
  EXPECT_HAS(file_error("/dev/zero"), "'/dev/zero' is not a regular file");
  EXPECT_HAS(file_error("/dev/null"), "'/dev/null' is not a regular file");
}

TEST(YamlInput, a_missing_file_gets_the_systems_reason) {
  EXPECT_HAS(file_error("/nonexistent/shapes.yaml"),
             "cannot open shape file '/nonexistent/shapes.yaml': No such file or directory");
}

TEST(YamlInput, a_file_over_the_size_limit_is_refused_naming_it) {
  const std::string path =
      (fs::temp_directory_path() / ("tgemm_yaml_big_" + std::to_string(::getpid()) + ".yaml"))
          .string();
  std::ofstream(path) << "# " << std::string(kMaxYamlBytes, 'x') << "\n";
  const std::string msg = file_error(path);
  fs::remove(path);
  EXPECT_HAS(msg, path + ": the shape file is larger than 16 MiB");
}

}  // namespace
}  // namespace tgemm
