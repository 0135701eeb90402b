// Batched shape files through the tools: tgemm-tune --compile-only records each batch as a
// problem of its own (batch and strides stored, the plain shape beside it), and a bad batch or
// overlapping stride_c is refused naming the file, the line and the field, writing nothing.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

class BatchShapesCli : public ::testing::Test {
 protected:
  TempDir dir_{"batch_shapes_cli"};
  std::string db_ = dir_.file("t.db");
  testing::CliResult compile_only(const std::string& shapes) {
    return run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + shapes + " --db " +
                                      db_ + " --strategy random --budget 2 --jobs 2");
  }
};

TEST_F(BatchShapesCli, compile_only_records_a_batch_beside_its_plain_shape) {
  const std::string shapes =
      dir_.write("batched.yaml",
                 "shapes:\n"
                 "  - {m: 128, n: 128, k: 64, batch: 8}\n"
                 "  - {m: 128, n: 128, k: 64}\n"
                 "  - {m: 64, n: 64, k: 64, batch: 4, stride_a: 0, stride_c: 4160}\n");
  const auto r = compile_only(shapes);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(query_int(db_, "select count(*) from problems"), 3);
  EXPECT_EQ(query_int(db_, "select batch from problems where key like 'f32_NN_m128_n128_k64_x8_%'"),
            8);
  EXPECT_EQ(query_int(db_, "select batch from problems where key like 'f32_NN_m128_n128_k64_b%'"),
            1);
  EXPECT_EQ(query_int(db_, "select stride_c from problems where batch = 4"), 4160);
  EXPECT_EQ(query_int(db_, "select stride_a from problems where batch = 4"), 0);
  EXPECT_EQ(query_int(db_, "select stride_b from problems where batch = 4"), 64 * 64);
}

TEST_F(BatchShapesCli, the_shipped_attention_set_compiles_only) {
  const auto r = compile_only(TGEMM_SOURCE_DIR "/configs/shapes/attention_batched.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(query_int(db_, "select count(*) from problems where batch > 1"), 42);
}

TEST_F(BatchShapesCli, a_bad_batch_is_refused_naming_file_line_and_field) {
  for (const auto& [text, field] :
       {std::pair{"shapes:\n  - [8, 8, 8]\n  - {m: 4, n: 4, k: 4, batch: 0}\n", "batch"},
        std::pair{"shapes:\n  - [8, 8, 8]\n  - {m: 4, n: 4, k: 4, batch: 3, stride_c: 12}\n",
                  "stride_c = 12"}}) {
    const std::string shapes = dir_.write("bad.yaml", text);
    const auto r = compile_only(shapes);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("bad.yaml:3:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(field), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace tgemm
