// SearchSpace::parse: a space from text (the shipped spaces embedded in the library) reads
// exactly as the same file does, and its errors name the given origin.
#include <gtest/gtest.h>

#include <string>

#include "src/core/error.h"
#include "src/jit/kernel_source.h"
#include "src/templates/search_space.h"

namespace tgemm {
namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

TEST(SearchSpaceParse, every_embedded_space_equals_its_file) {
  ASSERT_FALSE(embedded_templates().empty());
  for (const EmbeddedTemplate& t : embedded_templates()) {
    const std::string origin = std::string("<embedded ") + t.name + ".yaml>";
    const SearchSpace parsed = SearchSpace::parse(t.space, origin);
    const SearchSpace loaded =
        SearchSpace::load(std::string(TGEMM_SOURCE_DIR) + "/configs/spaces/" + t.name + ".yaml");
    EXPECT_EQ(parsed.path(), origin);
    EXPECT_EQ(parsed.template_name(), loaded.template_name());
    EXPECT_EQ(parsed.cartesian_size(), loaded.cartesian_size()) << t.name;
    ASSERT_EQ(parsed.parameters().size(), loaded.parameters().size()) << t.name;
    for (size_t i = 0; i < parsed.parameters().size(); ++i) {
      EXPECT_EQ(parsed.parameters()[i].name, loaded.parameters()[i].name);
      EXPECT_EQ(parsed.parameters()[i].values, loaded.parameters()[i].values);
    }
    EXPECT_EQ(parsed.derived(), loaded.derived()) << t.name;
    ASSERT_EQ(parsed.constraints().size(), loaded.constraints().size()) << t.name;
  }
}

std::string parse_error(const std::string& text) {
  try {
    SearchSpace::parse(text, "<my space>");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SearchSpaceParse, errors_name_the_origin_and_line) {
  EXPECT_HAS(parse_error("template: sgemm_simt\nparameters:\n  BM: []\n"), "<my space>:3:");
  EXPECT_HAS(parse_error("template: sgemm_simt\nparameters: [1\n"), "<my space>:");
  EXPECT_HAS(parse_error(""), "<my space>: the search-space file is empty");
}

TEST(SearchSpaceParse, nesting_limit_applies_to_text_too) {
  const std::string msg = parse_error("template: sgemm_simt\nparameters: " + std::string(100, '[') +
                                      std::string(100, ']') + "\n");
  EXPECT_HAS(msg, "<my space>:2:");
  EXPECT_HAS(msg, "nested deeper than");
}

}  // namespace
}  // namespace tgemm
