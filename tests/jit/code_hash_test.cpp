// The code hash keys a tuned time to the machine code it ran (src/jit/code_hash.h): template
// edits that change no instruction keep it, a changed constant does not, and only the code and
// launch sections of a cubin count, never its notes or symbol tables.
#include "src/jit/code_hash.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/jit/elf_view.h"
#include "src/jit/kernel_source.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/template_edits.h"

namespace tgemm {
namespace {

// sgemm_simt's default test config built from `text` for an NN f32 problem on `arch`.
CompiledKernel build_from(const std::string& text, const std::string& arch) {
  const auto family = make_template("sgemm_simt", kernel_source_from_text("sgemm_simt", text));
  return build_kernel(*family, testing::sgemm_config(),
                      Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1), arch);
}

class CodeHashOnArch : public ::testing::TestWithParam<const char*> {};

TEST_P(CodeHashOnArch, refactors_keep_it_and_a_changed_constant_does_not) {
  const CompiledKernel base = build_from(testing::sgemm_simt_text(), GetParam());
  ASSERT_TRUE(base.ok) << base.error;
  ASSERT_EQ(base.code_hash.size(), 16u);
  EXPECT_EQ(base.code_hash, cubin_code_hash(base.cubin));
  for (const std::string& refactor :
       {testing::sgemm_simt_comment_edited(), testing::sgemm_simt_code_moved()}) {
    const CompiledKernel k = build_from(refactor, GetParam());
    ASSERT_TRUE(k.ok) << k.error;
    EXPECT_NE(k.cache_key, base.cache_key);  // another text: stale by the text hash
    EXPECT_EQ(k.code_hash, base.code_hash);  // the same machine code
  }
  const CompiledKernel changed = build_from(testing::sgemm_simt_constant_changed(), GetParam());
  ASSERT_TRUE(changed.ok) << changed.error;
  EXPECT_NE(changed.code_hash, base.code_hash);
}

INSTANTIATE_TEST_SUITE_P(Archs, CodeHashOnArch, ::testing::Values("sm_75", "sm_80", "sm_90"));

// The file offset of the section `name` of `cubin`.
size_t section_offset(const std::vector<char>& cubin, const std::string& name) {
  const ElfView elf(cubin);
  for (int i = 0; i < elf.sections(); ++i)
    if (elf.section_name(elf.section(i)) == name) return elf.section(i).sh_offset;
  ADD_FAILURE() << "no section " << name;
  return 0;
}

TEST(CodeHash, counts_code_and_launch_sections_only) {
  const CompiledKernel base = build_from(testing::sgemm_simt_text(), "sm_80");
  ASSERT_TRUE(base.ok) << base.error;
  auto flipped = [&](const std::string& section) {
    std::vector<char> bytes = base.cubin;
    bytes[section_offset(bytes, section) + 8] ^= 1;
    return cubin_code_hash(bytes);
  };
  // Tool notes and the call graph say nothing of what runs.
  EXPECT_EQ(flipped(".note.nv.tkinfo"), base.code_hash);
  EXPECT_EQ(flipped(".nv.callgraph"), base.code_hash);
  // An instruction bit, a launch attribute, a byte of the parameter bank do.
  EXPECT_NE(flipped(".text.sgemm_simt"), base.code_hash);
  EXPECT_NE(flipped(".nv.info.sgemm_simt"), base.code_hash);
  EXPECT_NE(flipped(".nv.constant0.sgemm_simt"), base.code_hash);
}

TEST(CodeHash, is_empty_for_what_is_no_elf_file) {
  EXPECT_EQ(cubin_code_hash({}), "");
  EXPECT_EQ(cubin_code_hash({'n', 'o', 't', ' ', 'e', 'l', 'f'}), "");
  const CompiledKernel base = build_from(testing::sgemm_simt_text(), "sm_80");
  ASSERT_TRUE(base.ok) << base.error;
  const std::vector<char> cut(base.cubin.begin(), base.cubin.begin() + 100);
  EXPECT_EQ(cubin_code_hash(cut), "");  // its section table is gone
}

}  // namespace
}  // namespace tgemm
