// A cubin read from a tuning database is loaded only when it is an ELF for NVIDIA CUDA, built
// for the arch, defining every entry: a checksum recomputed over planted bytes proves nothing.
#include "src/jit/cubin_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/result_databases.h"

namespace tgemm {
namespace {

using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// A gemm_wgmma cubin NVRTC built for the H200 (sm_90a), as stored in a real database.
struct StoredCubin {
  TempDir dir{"cubin_check"};
  std::string db = testing::unpack_tuned_database(dir);
  std::vector<char> bytes = [this] {
    TuningDb reader(db, TuningDb::Mode::read_only);
    return reader
        .find_binary(testing::query_text(db, "SELECT cache_key FROM binaries WHERE id = 2"))
        ->compiled.cubin;
  }();
  std::string key = testing::query_text(db, "SELECT cache_key FROM binaries WHERE id = 2");
};

TEST(CubinCheck, a_real_cubin_passes_for_its_arch_and_entries) {
  StoredCubin c;
  ASSERT_GT(c.bytes.size(), 1000u);
  EXPECT_EQ(cubin_problem(c.bytes, "sm_90", {"gemm_wgmma", "gemm_wgmma_pack_a"}), "");
}

TEST(CubinCheck, another_arch_or_a_missing_entry_is_named) {
  StoredCubin c;
  EXPECT_EQ(cubin_problem(c.bytes, "sm_80", {"gemm_wgmma"}), "it is built for sm_90, not sm_80");
  EXPECT_EQ(cubin_problem(c.bytes, "sm_90", {"gemm_wgmma", "sgemm_simt"}),
            "it defines no kernel 'sgemm_simt'");
  EXPECT_HAS(cubin_problem(c.bytes, "sm_9x", {"gemm_wgmma"}), "bad arch");
}

TEST(CubinCheck, empty_truncated_foreign_and_random_bytes_are_refused) {
  StoredCubin c;
  EXPECT_EQ(cubin_problem({}, "sm_90", {"gemm_wgmma"}), "it is empty");
  for (size_t size :
       {size_t(1), size_t(63), size_t(64), size_t(4096), c.bytes.size() / 2, c.bytes.size() - 1}) {
    const std::vector<char> cut(c.bytes.begin(), c.bytes.begin() + ptrdiff_t(size));
    EXPECT_HAS(cubin_problem(cut, "sm_90", {"gemm_wgmma"}), "not a whole 64-bit ELF file");
  }
  std::vector<char> x86 = c.bytes;
  x86[18] = 62;  // e_machine = EM_X86_64
  x86[19] = 0;
  EXPECT_HAS(cubin_problem(x86, "sm_90", {"gemm_wgmma"}), "machine 62, not NVIDIA CUDA");
  std::vector<char> far = c.bytes;
  std::memset(far.data() + 40, 0xff, 8);  // e_shoff near 2^64: must not wrap around
  EXPECT_HAS(cubin_problem(far, "sm_90", {"gemm_wgmma"}), "not a whole 64-bit ELF file");
  std::mt19937 rng(42);
  std::vector<char> noise(c.bytes.size());
  for (char& b : noise) b = char(rng());
  EXPECT_NE(cubin_problem(noise, "sm_90", {"gemm_wgmma"}), "");
  // Flipped bytes anywhere: an answer, never a crash.
  for (int i = 0; i < 3000; ++i) {
    std::vector<char> flipped = c.bytes;
    for (int k = 0; k < 4; ++k) flipped[rng() % flipped.size()] ^= char(1 << (rng() % 8));
    cubin_problem(flipped, "sm_90", {"gemm_wgmma", "gemm_wgmma_pack_a"});
  }
}

// The database hands out no bytes that fail the check, even with a checksum that matches them.
TEST(CubinCheck, planted_bytes_with_a_matching_checksum_are_never_handed_out) {
  StoredCubin c;
  std::vector<std::vector<char>> plants = {
      std::vector<char>(c.bytes.begin(), c.bytes.begin() + ptrdiff_t(c.bytes.size() / 2)),
      std::vector<char>(5000, 'x'), std::vector<char>{'\x7f', 'E', 'L', 'F'}};
  for (const auto& plant : plants) {
    {
      sqlite3* raw = nullptr;
      ASSERT_EQ(sqlite3_open(c.db.c_str(), &raw), SQLITE_OK);
      sqlite3_stmt* stmt = nullptr;
      ASSERT_EQ(
          sqlite3_prepare_v2(raw, "UPDATE binaries SET cubin = ?1, checksum = ?2 WHERE id = 2", -1,
                             &stmt, nullptr),
          SQLITE_OK);
      const std::string sum = cubin_checksum(plant);
      sqlite3_bind_blob(stmt, 1, plant.data(), int(plant.size()), SQLITE_TRANSIENT);
      sqlite3_bind_text(stmt, 2, sum.c_str(), -1, SQLITE_TRANSIENT);
      EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
      sqlite3_finalize(stmt);
      sqlite3_close(raw);
    }
    TuningDb reader(c.db, TuningDb::Mode::read_only);
    const auto found = reader.find_binary(c.key);
    ASSERT_TRUE(found);
    EXPECT_FALSE(found->checksum_ok);
    EXPECT_TRUE(found->compiled.cubin.empty());
    EXPECT_NE(found->cubin_rejected, "");
  }
}

}  // namespace
}  // namespace tgemm
