// The plug-in rule of docs/design.md, checked on the source tree: no file outside a
// family's own three files names the family, and src/ includes nothing from db/ or tuner/.
// The registry and the family interface are tested beside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = TGEMM_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every file of the generic code: what the tuner, compiler, evaluator, database and
// dispatcher are built from, plus the build, the headers shared by the device code and the
// scripts. Tests and docs may name families; so may the shipped defaults table, which
// is data naming kernels as a database row does.
std::vector<fs::path> generic_files() {
  std::vector<fs::path> files = {kRoot / "CMakeLists.txt"};
  for (const char* dir : {"src", "db", "tuner", "include", "kernel_templates", "cmake", "scripts",
                          "configs/spaces", "configs/shapes", "examples"})
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir))
      if (entry.is_regular_file() && entry.path().extension() != ".md")
        files.push_back(entry.path());
  return files;
}

TEST(PluginBoundaries, no_file_outside_a_family_names_it) {
  ASSERT_GE(all_templates().size(), 2u);
  for (const GemmTemplate* family : all_templates()) {
    const std::string& name = family->name();
    const std::set<fs::path> own = {kRoot / "kernel_templates" / (name + ".cuh"),
                                    kRoot / "configs/spaces" / (name + ".yaml"),
                                    kRoot / "src/templates" / (name + ".cpp")};
    for (const fs::path& own_file : own) EXPECT_TRUE(fs::exists(own_file)) << own_file;
    for (const fs::path& file : generic_files()) {
      if (own.count(file)) continue;
      const std::string text = read_file(file);
      const size_t at = text.find(name);
      if (at == std::string::npos) continue;
      const size_t line = size_t(std::count(text.begin(), text.begin() + long(at), '\n')) + 1;
      ADD_FAILURE() << fs::relative(file, kRoot).string() << ":" << line << " names the family "
                    << name << "; only its own three files may";
    }
  }
}

TEST(PluginBoundaries, src_includes_nothing_from_db_or_tuner) {
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "src")) {
    if (!entry.is_regular_file()) continue;
    std::istringstream lines(read_file(entry.path()));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number)
      if (line.rfind("#include \"db/", 0) == 0 || line.rfind("#include \"tuner/", 0) == 0)
        ADD_FAILURE() << fs::relative(entry.path(), kRoot).string() << ":" << number << ": "
                      << line;
  }
}

TEST(TemplateRegistry, lists_every_family_in_name_order_and_names_them_for_an_unknown_one) {
  std::vector<std::string> names;
  for (const GemmTemplate* t : all_templates()) names.push_back(t->name());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& name : names) {
    EXPECT_EQ(find_template(name)->name(), name);
    EXPECT_EQ(&template_named(name), find_template(name));
    EXPECT_FALSE(find_template(name)->source().hash.empty());
    EXPECT_FALSE(find_template(name)->source().headers.empty());
  }
  EXPECT_EQ(find_template("no_such_family"), nullptr);
  try {
    template_named("no_such_family");
    FAIL() << "no throw";
  } catch (const Error& e) {
    for (const std::string& name : names)
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

// A family made over another text of its device code has another version (hash), and the
// same host behaviour.
TEST(TemplateRegistry, a_family_over_other_device_code_has_its_own_version) {
  for (const GemmTemplate* t : all_templates()) {
    auto other = make_template(
        t->name(), kernel_source_from_text(t->name(), t->source().text + "\n// edited\n"));
    EXPECT_EQ(other->name(), t->name());
    EXPECT_NE(other->source().hash, t->source().hash);
  }
  EXPECT_THROW(make_template("no_such_family", kernel_source_from_text("x", "")), Error);
}

// A family's version covers the common headers it includes (through others too) and no other,
// so adding or editing a header one family uses leaves the others' tuned entries current.
TEST(TemplateRegistry, a_version_covers_the_included_headers_only) {
  const std::vector<NamedHeader> headers{{"common/a.h", "#include \"common/b.h\"\nint a;"},
                                         {"common/b.h", "int b;"},
                                         {"common/unused.h", "int u;"}};
  const auto used = included_headers("  #  include \"common/a.h\"\nint main;", headers);
  ASSERT_EQ(used.size(), 2u);
  EXPECT_EQ(used[0]->include_name, "common/a.h");
  EXPECT_EQ(used[1]->include_name, "common/b.h");
  EXPECT_TRUE(included_headers("int none;", headers).empty());
  // The shipped families: gemm_naive does not include the pack headers gemm_mma does.
  auto names = [](const GemmTemplate& t) {
    std::vector<std::string> out;
    for (const NamedHeader* h : included_headers(t.source().text, t.source().headers))
      out.push_back(h->include_name);
    return out;
  };
  const auto naive = names(template_named("gemm_naive"));
  const auto mma = names(template_named("gemm_mma"));
  EXPECT_EQ(std::count(naive.begin(), naive.end(), "common/pack_operand.cuh"), 0);
  EXPECT_EQ(std::count(mma.begin(), mma.end(), "common/pack_operand.cuh"), 1);
  EXPECT_EQ(std::count(mma.begin(), mma.end(), "common/pack_layout.h"), 1)
      << "through pack_operand";
  EXPECT_EQ(std::count(naive.begin(), naive.end(), "common/gemm_params.h"), 1);
}

// Every family answers for every valid type: supported, or why not, never a throw.
TEST(TemplateRegistry, every_family_says_which_types_it_computes_on_each_arch) {
  for (const GemmTemplate* t : all_templates())
    for (const char* types : {"f32", "tf32", "f32x3", "f16", "bf16", "f16_out_f32"})
      for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
        auto why = t->types_unsupported(parse_gemm_types(types), arch);
        if (why) {
          EXPECT_FALSE(why->empty()) << t->name() << " " << types << " " << arch;
        }
      }
  const GemmTemplate& naive = template_named("gemm_naive");
  for (const char* types : {"f32", "tf32", "f16", "bf16", "bf16_out_f32"})
    EXPECT_EQ(naive.types_unsupported(parse_gemm_types(types), "sm_75"), std::nullopt) << types;
  EXPECT_TRUE(template_named("sgemm_simt").types_unsupported(gemm_types("f16"), "sm_90"));
}

}  // namespace
}  // namespace tgemm
