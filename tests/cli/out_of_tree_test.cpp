// The tools away from the source tree: tgemm-tune and tgemm-worker copied to a folder of
// their own (as an out-of-tree build or an install places them) tune with the shipped
// spaces, which are embedded, and no --space.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::query_int;
using testing::TempDir;

TEST(OutOfTree, copied_tune_compiles_with_the_embedded_spaces_and_no_space_option) {
  TempDir dir("out_of_tree");
  const fs::path bin = dir.file("bin");
  fs::create_directories(bin);
  for (const char* tool : {"tgemm-tune", "tgemm-worker"})
    fs::copy_file(fs::path(TGEMM_TOOLS_DIR) / tool, bin / tool);
  const std::string shapes = dir.write("shapes.yaml", "shapes:\n  - [64, 64, 64]\n");
  const std::string db = dir.file("t.db");
  // From the copy's folder, so neither the working folder nor the executable's is in the tree.
  const std::string command = "cd '" + bin.string() + "' && ./tgemm-tune --compile-only " +
                              "--arch sm_75 --budget 1 --jobs 2 --shapes '" + shapes + "' --db '" +
                              db + "' 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("<embedded sgemm_simt.yaml>"), std::string::npos) << output;
  EXPECT_NE(output.find("<embedded gemm_naive.yaml>"), std::string::npos) << output;
  EXPECT_GT(query_int(db, "select count(*) from binaries where status = 'ok'"), 0) << output;
}

}  // namespace
}  // namespace tgemm
