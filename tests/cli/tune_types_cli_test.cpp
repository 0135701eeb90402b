// tgemm-tune over typed problems without a GPU: every 16-bit type and output compiles
// through the families that declare it, and a type no family computes on the target arch is
// a clear error naming the type and the arch, before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

const std::string kData = TGEMM_SOURCE_DIR "/tests/data";

TEST(TuneTypesCli, compile_only_builds_every_16_bit_type_for_sm_75) {
  TempDir dir("tune_types");
  const std::string db = dir.file("t.db");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kData +
                                      "/shapes/typed.yaml --budget 2 --jobs 2 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* types : {"f16", "bf16", "f16_out_f32", "bf16_out_f32"})
    EXPECT_GT(query_int(db, std::string("select count(*) from binaries where status = 'ok' and "
                                        "length(cubin) > 0 and arch = 'sm_75' and types = '") +
                                types + "'"),
              0)
        << types << "\n"
        << r.output;
  // Only the families that declare these types on sm_75 compiled anything: gemm_naive, and
  // gemm_mma for f16 alone (its bf16 needs sm_80).
  EXPECT_EQ(query_int(db,
                      "select count(*) from binaries b join kernels k on k.id = b.kernel_id "
                      "where k.template not in ('gemm_naive', 'gemm_mma')"),
            0);
  EXPECT_EQ(query_int(db,
                      "select count(*) from binaries b join kernels k on k.id = b.kernel_id "
                      "where k.template = 'gemm_mma' and b.types like 'bf16%'"),
            0);
  EXPECT_EQ(query_int(db, "select count(*) from problems"), 4);
}

// gemm_wgmma's space allows what fits one pass; f32x3's second accumulator set and second
// plane do not fit every such config. The tuner leaves those out before compiling, so none
// is compiled to fail its static_assert (or counted against the budget).
TEST(TuneTypesCli, f32x3_leaves_out_the_configs_it_cannot_run_before_compiling) {
  TempDir dir("tune_f32x3");
  const std::string db = dir.file("t.db");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_90 --shapes " + kData +
                                      "/shapes/f32x3_one.yaml --space " TGEMM_SOURCE_DIR
                                      "/configs/spaces/gemm_wgmma.yaml --strategy exhaustive "
                                      "--jobs 2 --db " +
                                      db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot run f32x3 (left out)"), std::string::npos) << r.output;
  EXPECT_EQ(query_int(db, "select count(*) from binaries where status = 'compile_failed'"), 0)
      << r.output;
  EXPECT_GE(query_int(db,
                      "select count(*) from binaries where status = 'ok' and types = "
                      "'f32x3'"),
            10)
      << r.output;
}

// gemm_mma's space is type-blind: split-K into a 16-bit C, PACK=2 of 16-bit operands and
// 2-byte copies of f32 ones are legal points that those types' static_asserts refuse. The
// tuner leaves them out before compiling (a random sample of the shipped space had compiled 5
// such configs to fail).
TEST(TuneTypesCli, gemm_mma_leaves_out_what_a_type_cannot_build_before_compiling) {
  TempDir dir("tune_mma_types");
  const std::string db = dir.file("t.db");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_90 --shapes " + kData +
                                      "/shapes/f16_tf32_one.yaml --space " + kData +
                                      "/spaces/gemm_mma_type_rules.yaml --strategy exhaustive "
                                      "--jobs 2 --db " +
                                      db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot run f16 (left out)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot run tf32 (left out)"), std::string::npos) << r.output;
  EXPECT_EQ(query_int(db, "select count(*) from binaries where status = 'compile_failed'"), 0)
      << r.output;
  const auto built = [&](const std::string& types, const std::string& where) {
    return query_int(db,
                     "select count(*) from binaries b join kernels k on k.id = b.kernel_id "
                     "where b.status = 'ok' and b.types = '" +
                         types + "' and " + where);
  };
  EXPECT_EQ(built("f16", "k.params like '%SPLIT_K=4%'"), 0);
  EXPECT_EQ(built("f16", "k.params like '%PACK=2%'"), 0);
  EXPECT_GT(built("f16", "k.params like '%SPLIT_K=1%'"), 0);
  EXPECT_EQ(built("tf32", "k.params like '%VEC_BYTES=2,%'"), 0);
  EXPECT_GT(built("tf32", "k.params like '%SPLIT_K=4%PACK=2%'"), 0);
}

TEST(TuneTypesCli, a_type_no_family_computes_on_the_arch_names_type_and_arch) {
  TempDir dir("tune_types_arch");
  const std::string db = dir.file("t.db");
  const std::string args = "--compile-only --shapes " + kData + "/shapes/f16_only.yaml --space " +
                           kData + "/spaces/naive_f16_from_sm90.yaml --db " + db + " --arch ";
  auto refused = run_tool("tgemm-tune", args + "sm_75");
  EXPECT_NE(refused.exit_code, 0);
  for (const char* word : {"f16", "sm_75", "sm_90", "no template family computes"})
    EXPECT_NE(refused.output.find(word), std::string::npos) << word << "\n" << refused.output;
  EXPECT_FALSE(std::filesystem::exists(db)) << "refused before opening the database";

  auto accepted = run_tool("tgemm-tune", args + "sm_90");
  ASSERT_EQ(accepted.exit_code, 0) << accepted.output;
  EXPECT_EQ(query_int(db, "select count(*) from binaries where arch = 'sm_90' and types = 'f16'"),
            1);
}

// The first family's configs are all cached, the second's are new: each progress line's
// count stays within its own total (it once added the first family's cache hits to the
// second's count: "compile gemm_naive ...: 12/4").
TEST(TuneTypesCli, progress_counts_never_exceed_their_total) {
  TempDir dir("tune_progress");
  const std::string args =
      "--compile-only --arch sm_75 --budget 3 --jobs 2 --shapes " TGEMM_SOURCE_DIR
      "/configs/shapes/quick.yaml --db " +
      dir.file("t.db");
  ASSERT_EQ(
      run_tool("tgemm-tune", args + " --space " TGEMM_SOURCE_DIR "/configs/spaces/sgemm_simt.yaml")
          .exit_code,
      0);
  auto rerun = run_tool("tgemm-tune", args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  const std::regex count(R"(compile \S+ \S+ \S+ for sm_75: (\d+)/(\d+))");
  int lines = 0;
  for (std::sregex_iterator it(rerun.output.begin(), rerun.output.end(), count), end; it != end;
       ++it, ++lines)
    EXPECT_LE(std::stoi((*it)[1]), std::stoi((*it)[2])) << it->str();
  EXPECT_GE(lines, 2) << rerun.output;  // one per family at least
}

// A space's legal point may be one that no problem of the set can run: for a one-row GEMV
// whose B is stored along N, every SIDE=1 config (small N) and every KLANES != 32 (a loop
// along K only). The tuner leaves those out before compiling; before, it compiled each only
// for every problem to refuse it.
TEST(TuneTypesCli, configs_no_problem_can_run_are_not_compiled) {
  TempDir dir("tune_unrunnable");
  const std::string db = dir.file("t.db");
  const std::string shapes = dir.write("one_row.yaml", "shapes:\n  - [1, 1024, 1024]\n");
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_80 --shapes " + shapes + " --space " +
                                      kData +
                                      "/spaces/comparison/gemv_simt.yaml --strategy exhaustive "
                                      "--budget 0 --jobs 2 --db " +
                                      db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto built = [&](const std::string& where) {
    return query_int(db,
                     "select count(*) from binaries b join kernels k on k.id = b.kernel_id "
                     "where k.template = 'gemv_simt' and " +
                         where);
  };
  EXPECT_GT(built("k.params like 'SIDE=0,%'"), 10) << r.output;
  EXPECT_EQ(built("k.params like 'SIDE=1,%'"), 0) << r.output;
  EXPECT_EQ(built("k.params like '%KLANES=8%'"), 0) << r.output;
}

}  // namespace
}  // namespace tgemm
