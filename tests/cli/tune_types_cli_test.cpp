// tgemm-tune over typed problems without a GPU: every 16-bit type and output compiles
// through the families that declare it, and a type no family computes on the target arch is
// a clear error naming the type and the arch, before anything is written.
#include <gtest/gtest.h>

#include <filesystem>

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
                                      "/shapes/typed.yaml --jobs 2 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* types : {"f16", "bf16", "f16_out_f32", "bf16_out_f32"})
    EXPECT_GT(query_int(db, std::string("select count(*) from binaries where status = 'ok' and "
                                        "length(cubin) > 0 and arch = 'sm_75' and types = '") +
                                types + "'"),
              0)
        << types << "\n"
        << r.output;
  // Only the families that declare these types compiled anything.
  EXPECT_EQ(query_int(db,
                      "select count(*) from binaries b join kernels k on k.id = b.kernel_id "
                      "where k.template != 'gemm_naive'"),
            0);
  EXPECT_EQ(query_int(db, "select count(*) from problems"), 4);
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

}  // namespace
}  // namespace tgemm
